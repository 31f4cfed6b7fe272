"""Compiled code that holds ``self``: which attributes of ``self`` it reads, and where they change.

Three ways a compiled function holds an object whose attributes JAX never looks at again:
- a method compiled with ``self`` static (``partial(jax.jit, static_argnums=0)``): JAX hashes
  ``self`` by identity, so the cache never notices a changed attribute;
- a bound method compiled in call form (``jax.jit(self.step)``): ``self`` is baked in;
- a compiled closure made inside a method that reads ``self.<attr>``.

An attribute counts as changed when it is assigned, augmented, deleted or mutated in place in
another method of the class (constructors excepted: they run before any other method), later in
the same method after the compiled function may have been called, or on an instance of the
class elsewhere in the module (``obj.attr = ...``). Frozen dataclasses, NamedTuples and Flax or
Equinox modules cannot change in place and are left alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from .compiled import CompiledFunction, Form
from .model import CaptureAnalysis, StaleCapture, changes_after_use, merged, method_self_name
from .scopes import Mutation, Read, Scope, ScopeKind, ScopeModel

# Methods that run before anything else can call the object's other methods.
CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__", "setup", "__setstate__"})
# Bases whose instances are immutable or are passed to compiled code as arguments.
IMMUTABLE_BASES = frozenset(
    {
        "typing.NamedTuple",
        "flax.linen.Module",
        "flax.linen.module.Module",
        "flax.nnx.Module",
        "flax.struct.PyTreeNode",
        "equinox.Module",
    }
)
FROZEN_DECORATORS = frozenset({"flax.struct.dataclass"})
DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass", "chex.dataclass"})


@dataclass
class ClassFacts:
    scope: Scope
    methods: dict[str, Scope] = field(default_factory=dict)
    # attribute -> the sites that change it, with the method they run in (None: outside)
    changes: dict[str, list[tuple[Mutation, Scope | None]]] = field(default_factory=dict)


class MethodCaptureAnalysis:
    def __init__(
        self, model: ScopeModel, captures: CaptureAnalysis, compile_functions: frozenset[str]
    ) -> None:
        self.model = model
        self.captures = captures
        self.compile_functions = compile_functions
        self.classes = [
            self._facts(scope) for scope in _all_scopes(model.module_scope) if self._mutable(scope)
        ]

    # -- classes ---------------------------------------------------------------------------------

    def _mutable(self, scope: Scope) -> bool:
        if scope.kind is not ScopeKind.CLASS:
            return False
        node = scope.node
        assert isinstance(node, cst.ClassDef)
        parent = scope.parent
        assert parent is not None
        for base in node.bases:
            if self.model.qualified_name(parent, base.value) in IMMUTABLE_BASES:
                return False
        for decorator in node.decorators:
            expr = decorator.decorator
            callee = expr.func if isinstance(expr, cst.Call) else expr
            name = self.model.qualified_name(parent, callee)
            if name in FROZEN_DECORATORS:
                return False
            if name in DATACLASS_DECORATORS and isinstance(expr, cst.Call):
                for arg in expr.args:
                    frozen = arg.keyword is not None and arg.keyword.value == "frozen"
                    if frozen and isinstance(arg.value, cst.Name) and arg.value.value == "True":
                        return False
        return True

    def _facts(self, scope: Scope) -> ClassFacts:
        facts = ClassFacts(scope)
        for child in scope.children:
            if child.kind is ScopeKind.FUNCTION:
                facts.methods[child.name] = child
        for method in facts.methods.values():
            self_name = method_self_name(method)
            if self_name is None:
                continue
            for mutation in self.model.mutations_of(method, self_name):
                self._record(facts, mutation, method)
        for instance_owner, name in self._instances(scope):
            for mutation in self.model.mutations_of(instance_owner, name):
                self._record(facts, mutation, None)
        return facts

    @staticmethod
    def _record(facts: ClassFacts, mutation: Mutation, method: Scope | None) -> None:
        if mutation.path and mutation.path[0].startswith("."):
            facts.changes.setdefault(mutation.path[0][1:], []).append((mutation, method))

    def _instances(self, scope: Scope) -> Iterator[tuple[Scope, str]]:
        """Variables bound to ``ClassName(...)`` anywhere in the module."""
        class_owner = scope.parent
        assert class_owner is not None
        for binding in self.model.bindings:
            value = binding.value
            if (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Name)
                and value.func.value == scope.name
                and self.model.resolve(binding.scope, scope.name) is class_owner
            ):
                yield self.model.resolve(binding.scope, binding.name), binding.name

    # -- compiled code holding self --------------------------------------------------------------

    def stale_captures(self, sites: list[CompiledFunction]) -> Iterator[StaleCapture]:
        for facts in self.classes:
            if not facts.changes:
                continue
            yield from self._static_self_methods(facts, sites)
            yield from self._closures_in_methods(facts, sites)
            yield from self._bound_methods(facts)

    def _static_self_methods(
        self, facts: ClassFacts, sites: list[CompiledFunction]
    ) -> Iterator[StaleCapture]:
        for site in sites:
            method = site.scope
            if site.form is not Form.DECORATOR or method.parent is not facts.scope:
                continue
            self_name = method_self_name(method)
            if self_name is None or not _self_is_static(site, self_name):
                continue
            yield from self._captures(facts, site, method, self_name, static_self=True)

    def _closures_in_methods(
        self, facts: ClassFacts, sites: list[CompiledFunction]
    ) -> Iterator[StaleCapture]:
        for site in sites:
            method = _enclosing_method(site.scope, facts.scope)
            if method is None or method is site.scope:
                continue
            self_name = method_self_name(method)
            if self_name is not None:
                yield from self._captures(facts, site, method, self_name)

    def _bound_methods(self, facts: ClassFacts) -> Iterator[StaleCapture]:
        """``jax.jit(self.step)``: the method is compiled with ``self`` baked in."""
        for call_site in self.model.calls:
            call = call_site.node
            assert isinstance(call, cst.Call)
            callee = self.model.qualified_name(call_site.scope, call.func)
            if callee not in self.compile_functions or not call.args:
                continue
            target = call.args[0].value
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
                continue
            method = facts.methods.get(target.attr.value)
            holder = self._holder_class(call_site.scope, target.value.value, facts)
            if method is None or not holder:
                continue
            self_name = method_self_name(method)
            if self_name is None:
                continue
            site = CompiledFunction(
                function=method.node,  # type: ignore[arg-type]
                scope=method,
                transform=callee or "",
                form=Form.PASSED,
                site=call,
                site_scope=call_site.scope,
                created_at=self.model.order(call),
                created_loops=call_site.loops,
                bound_name=None,
                transform_call=call,
            )
            yield from self._captures(facts, site, method, self_name, bound_method=True)

    def _holder_class(self, scope: Scope, name: str, facts: ClassFacts) -> bool:
        """Whether ``name`` in ``scope`` is ``self`` of a method of the class, or an instance."""
        owner = self.model.resolve(scope, name)
        if owner.parent is facts.scope and method_self_name(owner) == name:
            return True
        return any(
            isinstance(b.value, cst.Call)
            and isinstance(b.value.func, cst.Name)
            and b.value.func.value == facts.scope.name
            for b in self.model.bindings_of(owner, name)
        )

    # -- reads and changes -------------------------------------------------------------------------

    def _captures(
        self,
        facts: ClassFacts,
        site: CompiledFunction,
        method: Scope,
        self_name: str,
        *,
        static_self: bool = False,
        bound_method: bool = False,
    ) -> Iterator[StaleCapture]:
        reads = [r for r in self.model.reads_of(method, self_name) if r.scope.is_within(site.scope)]
        by_attribute: dict[str, list[Read]] = {}
        through: dict[str, str] = {}
        for read in reads:
            attribute = read.path[0][1:] if read.path and read.path[0].startswith(".") else None
            if attribute is not None and attribute not in facts.methods:
                by_attribute.setdefault(attribute, []).append(read)
                continue
            # ``self.helper()`` or a property ``self.scale``: what that method reads counts.
            called = attribute or self._called_method(read)
            if called is not None and called in facts.methods:
                shown = called if attribute else f"{called}()"
                for inner in sorted(self._attributes_read_by(facts, called)):
                    by_attribute.setdefault(inner, []).append(read)
                    through.setdefault(inner, shown)
        for attribute, attribute_reads in sorted(
            by_attribute.items(), key=lambda item: min(r.start for r in item[1])
        ):
            change = self._first_change(facts, attribute, site, method)
            if change is None:
                continue
            attribute_reads.sort(key=lambda r: r.start)
            yield StaleCapture(
                site,
                self_name,
                method,
                attribute_reads[0],
                tuple(attribute_reads),
                None,
                change,
                attribute=attribute,
                static_self=static_self,
                bound_method=bound_method,
                read_through=through.get(attribute),
            )

    def _called_method(self, read: Read) -> str | None:
        """``helper`` for ``self.helper(...)`` or a property read ``self.helper``."""
        parent = self.model.parent(read.node)
        if isinstance(parent, cst.Attribute) and parent.value is read.node:
            return parent.attr.value
        return None

    def _attributes_read_by(
        self, facts: ClassFacts, name: str, seen: frozenset[str] = frozenset()
    ) -> set[str]:
        method = facts.methods.get(name)
        self_name = method_self_name(method) if method is not None else None
        if method is None or self_name is None or name in seen:
            return set()
        attributes: set[str] = set()
        for read in self.model.reads_of(method, self_name):
            attribute = read.path[0][1:] if read.path and read.path[0].startswith(".") else None
            if attribute is not None and attribute not in facts.methods:
                attributes.add(attribute)
                continue
            called = attribute or self._called_method(read)
            if called is not None:
                attributes |= self._attributes_read_by(facts, called, seen | {name})
        return attributes

    def _first_change(
        self, facts: ClassFacts, attribute: str, site: CompiledFunction, method: Scope
    ) -> Mutation | None:
        for mutation, where in sorted(facts.changes.get(attribute, []), key=lambda c: c[0].start):
            if mutation.scope.is_within(site.scope):
                continue  # trace-time work of the compiled function itself
            if where is method and site.scope is not method:
                # The closure is made in this method: the usual timing in its own code.
                level = self.captures.owner_level(
                    mutation.scope, mutation.end, mutation.loops, method
                )
                if level is None:
                    return mutation
                creation = merged([self.captures.creation(site, method)])
                if changes_after_use(self.model, creation, level[0], level[1]):
                    return mutation
                continue
            if where is not None and where.name in CONSTRUCTORS:
                continue
            return mutation
        return None


def _self_is_static(site: CompiledFunction, self_name: str) -> bool:
    call = site.transform_call
    if call is None:
        return False
    for arg in call.args:
        if arg.keyword is None:
            continue
        key, value = arg.keyword.value, arg.value
        elements = (
            [e.value for e in value.elements]
            if isinstance(value, (cst.Tuple, cst.List))
            else [value]
        )
        if key == "static_argnums" and any(
            isinstance(e, cst.Integer) and e.value == "0" for e in elements
        ):
            return True
        if key == "static_argnames" and any(
            isinstance(e, cst.SimpleString) and e.value.strip("'\"") == self_name for e in elements
        ):
            return True
    return False


def _enclosing_method(scope: Scope, class_scope: Scope) -> Scope | None:
    current: Scope | None = scope
    while current is not None and current.parent is not None:
        if current.parent is class_scope and current.kind is ScopeKind.FUNCTION:
            return current
        current = current.parent
    return None


def _all_scopes(scope: Scope) -> Iterator[Scope]:
    yield scope
    for child in scope.children:
        yield from _all_scopes(child)
