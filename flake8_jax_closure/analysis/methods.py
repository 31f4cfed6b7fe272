"""Compiled code that holds ``self``: which attributes of ``self`` it reads, and where they change.

Three ways a compiled function holds an object whose attributes JAX never looks at again:
- a method compiled with ``self`` static (``partial(jax.jit, static_argnums=0)``): JAX hashes
  ``self`` by identity, so the cache never notices a changed attribute;
- a bound method compiled in call form (``jax.jit(self.step)``): ``self`` is baked in;
- a compiled closure made inside a method that reads ``self.<attr>``.

Where an attribute changes:
- in another method: methods run in any order once the object exists, except the construction
  phase, which runs before anything can call compiled code: constructors, test set-up
  (``setUp``, ``setUpClass``, ``asyncSetUp``, ``setup_method``, ``setup_class``, pytest
  fixtures), private helpers reached only from those, and lazy initialisation (an attribute
  that construction leaves ``None`` and exactly one other method fills in);
- set-up steps: a method named for loading, restoring, building, creating, configuring or
  initialising the object (``load_params``, ``restore_checkpoint``, ``create_state``) that
  nothing in the module calls, except construction and other set-up steps, and the methods
  only those call. Code outside the module sets an object up before it uses it; where the
  module itself calls such a method, that call is timed like any change;
- on an instance (``obj.attr = ...``, the object resolved to the class it was made from at that
  point): timed like any change, against the uses of that object;
- later in the method that makes a compiled closure: timed in that method's code. A closure is
  made anew on every run of its method, so a change in another method reaches it only during
  that run (the method is called from there) or after the closure was handed on.

Frozen dataclasses, NamedTuples and Flax or Equinox modules cannot change in place.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from .callgraph import CONSTRUCTORS, CallGraph
from .captures import CaptureAnalysis, StaleCapture, method_self_name
from .compiled import CompiledFunction, CompiledFunctionFinder, Form
from .scopes import Facts, Mutation, Read, Scope, ScopeKind
from .structure import sets_split_structure
from .timing import CompiledLife, stale_after

CONSTRUCTION = frozenset(
    {
        "__init__", "__new__", "__post_init__", "__attrs_post_init__", "__setstate__",
        "setup", "setUp", "setUpClass", "asyncSetUp", "setup_method", "setup_class",
    }
)  # fmt: skip
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
# A method named ``<word>`` or ``<word>_...`` (leading underscores aside) sets its object up.
SETUP_WORDS = frozenset(
    {
        "load", "restore", "build", "create", "configure", "initialize", "initialise", "init",
        "setup", "set_up",
    }
)  # fmt: skip


@dataclass
class ClassFacts:
    scope: Scope
    methods: dict[str, Scope] = field(default_factory=dict)
    construction: set[str] = field(default_factory=set)
    # Set-up steps after construction (see the module's docstring).
    setup: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Holder:
    """Compiled code that holds ``self`` of ``method``."""

    site: CompiledFunction
    method: Scope
    self_name: str
    static_self: bool = False
    bound_method: bool = False


class MethodCaptureAnalysis:
    def __init__(
        self,
        facts: Facts,
        graph: CallGraph,
        captures: CaptureAnalysis,
        finder: CompiledFunctionFinder,
    ) -> None:
        self.facts = facts
        self.graph = graph
        self.captures = captures
        self.finder = finder
        self._classes: dict[int, ClassFacts | None] = {}

    # -- classes ---------------------------------------------------------------------------------

    def class_facts(self, scope: Scope) -> ClassFacts | None:
        """Methods and construction phase of a class whose instances can change in place."""
        if id(scope) not in self._classes:
            self._classes[id(scope)] = self._build(scope) if self._mutable(scope) else None
        return self._classes[id(scope)]

    def _mutable(self, scope: Scope) -> bool:
        node = scope.node
        assert isinstance(node, ast.ClassDef)
        parent = scope.parent
        assert parent is not None
        for base in node.bases:
            if self.facts.qualified_name(parent, base) in IMMUTABLE_BASES:
                return False
        for decorator in node.decorator_list:
            callee = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = self.facts.qualified_name(parent, callee)
            if name in FROZEN_DECORATORS:
                return False
            if name in DATACLASS_DECORATORS and isinstance(decorator, ast.Call):
                for keyword in decorator.keywords:
                    value = keyword.value
                    if keyword.arg == "frozen" and isinstance(value, ast.Constant) and value.value:
                        return False
        return True

    def _build(self, scope: Scope) -> ClassFacts:
        facts = ClassFacts(scope)
        for child in scope.children:
            if child.kind is ScopeKind.FUNCTION:
                facts.methods[child.name] = child
        facts.construction = {
            name for name, method in facts.methods.items()
            if name in CONSTRUCTION or _is_fixture(method)
        }  # fmt: skip
        # Private helpers called only from construction are construction too.
        changed = True
        while changed:
            changed = False
            for name in facts.methods:
                if name in facts.construction or not name.startswith("_") or name.endswith("__"):
                    continue
                refs = self.facts.attribute_refs(name)
                callers = {_enclosing_method(ref.scope, scope) for ref in refs}
                if (
                    refs
                    and all(ref.called for ref in refs)
                    and callers
                    and all(
                        caller is not None and caller.name in facts.construction
                        for caller in callers
                    )
                ):
                    facts.construction.add(name)
                    changed = True
        facts.setup = self._setup_steps(facts)
        return facts

    def _setup_steps(self, cls: ClassFacts) -> set[str]:
        """Set-up steps: methods named for setting up that only construction and set-up call
        in this module, then the methods that only those call."""
        phase = set(cls.construction)

        def called_only_in_phase(name: str) -> bool:
            return all(
                ref.called
                and (caller := _enclosing_method(ref.scope, cls.scope)) is not None
                and caller.name in phase
                for ref in self.facts.attribute_refs(name)
            )

        steps = {
            name for name in cls.methods
            if name not in phase and _named_for_setup(name) and called_only_in_phase(name)
        }  # fmt: skip
        phase |= steps
        changed = bool(steps)
        while changed:
            changed = False
            for name in cls.methods:
                if name in phase or name.endswith("__") or not self.facts.attribute_refs(name):
                    continue
                if called_only_in_phase(name):
                    steps.add(name)
                    phase.add(name)
                    changed = True
        return steps

    # -- compiled code holding self --------------------------------------------------------------

    def holders(self, sites: list[CompiledFunction]) -> Iterator[tuple[ClassFacts, Holder]]:
        for site in sites:
            method = _enclosing_method(site.scope, None)
            if method is None or method.parent is None:
                continue
            cls = self.class_facts(method.parent)
            self_name = method_self_name(method)
            if cls is None or self_name is None:
                continue
            if method is site.scope:
                if site.form is Form.DECORATOR and _self_is_static(site, self_name):
                    yield cls, Holder(site, method, self_name, static_self=True)
            else:
                yield cls, Holder(site, method, self_name)
        for scope, call, target, transform in self.finder.bound_methods():
            found = self._bound_method(scope, call, target, transform)
            if found is not None:
                yield found

    def _bound_method(
        self, scope: Scope, call: ast.Call, target: ast.Attribute, transform: str
    ) -> tuple[ClassFacts, Holder] | None:
        """``jax.jit(self.compute)`` or ``jax.jit(obj.compute)``: the method, with its class."""
        assert isinstance(target.value, ast.Name)
        cls = self._class_of(scope, target.value.id, (call.lineno, call.col_offset))
        if cls is None:
            return None
        method = cls.methods.get(target.attr)
        self_name = method_self_name(method) if method is not None else None
        if method is None or self_name is None:
            return None
        probe = self.finder.call_form(scope, call, method.node, (transform, call), ())  # type: ignore[arg-type]
        return cls, Holder(probe, method, self_name, bound_method=True)

    def _class_of(self, scope: Scope, name: str, at: tuple[int, int]) -> ClassFacts | None:
        """The class of ``name`` in ``scope``: ``self`` of a method, or an instance."""
        made = self.graph.object_class(scope, name, at)
        return self.class_facts(made) if made is not None else None

    # -- reads and changes -------------------------------------------------------------------------

    def stale_captures(self, sites: list[CompiledFunction]) -> Iterator[StaleCapture]:
        for cls, holder in self.holders(sites):
            yield from self._captures(cls, holder)

    def _captures(self, cls: ClassFacts, holder: Holder) -> Iterator[StaleCapture]:
        facts = self.facts
        site, method, self_name = holder.site, holder.method, holder.self_name
        reads = [
            r
            for r in facts.reads_within(site.scope)
            if r.name == self_name and facts.resolve(r.scope, self_name) is method
        ]
        by_attribute: dict[str, list[Read]] = {}
        through: dict[str, str] = {}
        for read in reads:
            attribute = _first_attribute(read)
            if attribute is not None and attribute not in cls.methods:
                by_attribute.setdefault(attribute, []).append(read)
                continue
            # ``self.helper()`` or a property ``self.scale``: what that method reads counts.
            called = attribute or self._called_method(read)
            if called is not None and called in cls.methods:
                shown = called if attribute else f"{called}()"
                for inner in sorted(self._attributes_read_by(cls, called)):
                    by_attribute.setdefault(inner, []).append(read)
                    through.setdefault(inner, shown)
        # Attributes the compiled code sets itself under a guard, directly or in the methods
        # it calls, are its own trace-time state (``if rng is None: self.rng, rng =
        # split(self.rng)``). Set unconditionally (``self.n += 1; return self.n``), the value
        # the compiled code returns is stuck: still reported.
        reached = {name for read in reads for name in self._methods_reached(cls, read)}
        for attribute in list(by_attribute):
            own = [
                mutation
                for mutation, changer in self._changes(cls, attribute)
                if mutation.scope.is_within(site.scope)
                or (changer is not None and changer.name in reached)
            ]
            if own and all(mutation.guards for mutation in own):
                del by_attribute[attribute]
        life = self._life(holder)
        setup = self._initialisers(cls, set(by_attribute)) | self._replacers(cls, holder)
        # A static ``self`` hashed by value (``__hash__`` over the attribute): a change gives a
        # new hash, so JAX traces again.
        hashed = self._attributes_read_by(cls, "__hash__") if holder.static_self else set()
        for attribute, attribute_reads in sorted(
            by_attribute.items(), key=lambda item: min(r.start for r in item[1])
        ):
            if attribute in hashed:
                continue
            change = self._first_change(cls, holder, attribute, life, setup)
            if change is None:
                continue
            attribute_reads.sort(key=lambda r: r.start)
            yield StaleCapture(
                site, self_name, method, attribute_reads[0], tuple(attribute_reads), None,
                change, attribute=attribute, static_self=holder.static_self,
                bound_method=holder.bound_method, read_through=through.get(attribute),
            )  # fmt: skip

    def _life(self, holder: Holder) -> CompiledLife:
        site = holder.site
        if holder.static_self or holder.bound_method:
            # Lives with the object; its uses are timed per instance (see _instance_change).
            return CompiledLife(self.graph.propagate([], None), None, None, (), False)
        return self.captures.life([site])

    def _called_method(self, read: Read) -> str | None:
        """``helper`` for ``self.helper(...)`` or a property read ``self.helper``."""
        parent = self.facts.parent(read.node)
        if isinstance(parent, ast.Attribute) and parent.value is read.node:
            return parent.attr
        return None

    def _methods_reached(self, cls: ClassFacts, read: Read) -> set[str]:
        """The methods of the class that a read of ``self`` calls (``self.helper()``), and the
        methods they call in turn."""
        called = self._called_method(read)
        if called is None or called not in cls.methods:
            return set()
        reached = {called}
        pending = [called]
        while pending:
            method = cls.methods[pending.pop()]
            self_name = method_self_name(method)
            for inner in self.facts.reads_within(method):
                if inner.name != self_name:
                    continue
                name = self._called_method(inner)
                if name is not None and name in cls.methods and name not in reached:
                    reached.add(name)
                    pending.append(name)
        return reached

    def _attributes_read_by(
        self, cls: ClassFacts, name: str, seen: frozenset[str] = frozenset()
    ) -> set[str]:
        method = cls.methods.get(name)
        self_name = method_self_name(method) if method is not None else None
        if method is None or self_name is None or name in seen:
            return set()
        attributes: set[str] = set()
        for read in self.facts.reads_within(method):
            if read.name != self_name or self.facts.resolve(read.scope, self_name) is not method:
                continue
            attribute = _first_attribute(read)
            if attribute is not None and attribute not in cls.methods:
                attributes.add(attribute)
                continue
            called = attribute or self._called_method(read)
            if called is not None:
                attributes |= self._attributes_read_by(cls, called, seen | {name})
        return attributes

    def _changes(self, cls: ClassFacts, attribute: str) -> Iterator[tuple[Mutation, Scope | None]]:
        """Changes of the attribute on this class's objects: in a method (with the method), or
        on an instance (with None)."""
        facts = self.facts
        for mutation in facts.attribute_changes(attribute):
            owner = facts.resolve(mutation.scope, mutation.name)
            if owner.parent is cls.scope and method_self_name(owner) == mutation.name:
                yield mutation, owner
            elif (
                self.graph.object_class(mutation.scope, mutation.name, mutation.start) is cls.scope
            ):
                yield mutation, None

    def _first_change(
        self,
        cls: ClassFacts,
        holder: Holder,
        attribute: str,
        life: CompiledLife,
        setup: set[Scope],
    ) -> Mutation | None:
        changes = sorted(self._changes(cls, attribute), key=lambda c: c[0].end)
        lazy = self._lazy_initialiser(cls, attribute, changes)
        for mutation, method in changes:
            if mutation.scope.is_within(holder.site.scope):
                continue  # trace-time work of the compiled function itself
            if _fills_unset(mutation, attribute):
                continue  # ``if self.rng is None: self.rng = ...`` happens once, first
            if sets_split_structure(self.facts, mutation):
                continue
            if (
                method is holder.method
                and method.name in CONSTRUCTORS
                and _before_making(mutation, holder.site, method)
            ):
                continue  # each construction sets a new object up before making the closure
            if method is not None and (
                method.name in cls.construction
                or method.name in cls.setup
                or method is lazy
                or method in setup
            ):
                if method is not holder.method:
                    continue
            if method is None:
                if self._instance_change(holder, mutation, life):
                    return mutation
                continue
            if holder.static_self or holder.bound_method:
                if method is holder.method and holder.bound_method:
                    continue
                return mutation  # methods run in any order once the object exists
            reach = self.captures.change_reach(mutation, None)
            if stale_after(self.graph, life, reach):
                return mutation
        return None

    def _initialisers(self, cls: ClassFacts, attributes: set[str]) -> set[Scope]:
        """Methods that finish building the object: the one method (with the private helpers
        only it calls) that fills in an attribute the compiled code reads and construction
        leaves ``None`` (``load_params``). The compiled code cannot usefully run before it."""
        found: set[Scope] = set()
        for attribute in attributes:
            changes = list(self._changes(cls, attribute))
            constructed = [m for m, method in changes if method is not None
                           and method.name in cls.construction]  # fmt: skip
            if not constructed or not all(_assigns_none(m, attribute) for m in constructed):
                continue
            fillers = {method for _, method in changes
                       if method is not None and method.name not in cls.construction}  # fmt: skip
            leaders = {m for m in fillers if not self._only_called_from(cls, m, fillers)}
            if len(leaders) == 1:
                found |= fillers
        return found

    def _only_called_from(self, cls: ClassFacts, method: Scope, callers: set[Scope]) -> bool:
        """A private method whose every use is ``self.<method>(...)`` inside ``callers``."""
        if not method.name.startswith("_"):
            return False
        refs = self.facts.attribute_refs(method.name)
        return bool(refs) and all(
            ref.called and _enclosing_method(ref.scope, cls.scope) in callers for ref in refs
        )

    def _replacers(self, cls: ClassFacts, holder: Holder) -> set[Scope]:
        """Methods that replace the compiled object kept in ``self.<attr>`` (``self._step =
        None``): what they change reaches only the object made next."""
        statement = self.facts.parent(holder.site.site)
        target = statement.targets[0] if isinstance(statement, ast.Assign) else None
        if not isinstance(target, ast.Attribute):
            return set()
        return {method for _, method in self._changes(cls, target.attr) if method is not None}

    def _lazy_initialiser(
        self, cls: ClassFacts, attribute: str, changes: list[tuple[Mutation, Scope | None]]
    ) -> Scope | None:
        """The one method that fills in an attribute construction leaves ``None``."""
        constructed = [
            m for m, method in changes if method is not None and method.name in cls.construction
        ]
        if not constructed or not all(_assigns_none(m, attribute) for m in constructed):
            return None
        others = {id(method): method for _, method in changes if method is not None
                  and method.name not in cls.construction}  # fmt: skip
        return next(iter(others.values())) if len(others) == 1 else None

    def _instance_change(self, holder: Holder, mutation: Mutation, life: CompiledLife) -> bool:
        """``obj.attr = ...``: timed against the uses of ``obj`` (and of what holds it)."""
        facts = self.facts
        owner = facts.resolve(mutation.scope, mutation.name)
        if not (holder.static_self or holder.bound_method):
            # A closure made in a method reaches the change only if it was handed on.
            reach = self.captures.change_reach(mutation, None)
            return stale_after(self.graph, life, reach)
        events = [
            event
            for binding in facts.bindings_of(owner, mutation.name)
            if isinstance(binding.value, ast.Call)
            for event in self.graph.holder_events(owner, mutation.name, binding.at)
        ]
        home = owner if owner.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA) else None
        uses = self.graph.propagate(events, home)
        instance = CompiledLife(uses, home, None, (), False)
        barrier = owner if owner.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA) else None
        return stale_after(self.graph, instance, self.captures.change_reach(mutation, barrier))


def _before_making(mutation: Mutation, site: CompiledFunction, method: Scope) -> bool:
    """The change runs in ``method`` before the compiled object is made there, outside any loop
    around both."""
    if mutation.scope is not method:
        return False
    if site.site_scope is method:
        made, loops = site.created_at, site.created_loops
    else:
        scope: Scope | None = site.site_scope
        while scope is not None and scope.parent is not method:
            scope = scope.parent
        if scope is None:
            return False
        made, loops = scope.start, scope.loops
    return mutation.end <= made and not set(mutation.loops) & set(loops)


def _named_for_setup(name: str) -> bool:
    bare = name.lstrip("_")
    return any(bare == word or bare.startswith(f"{word}_") for word in SETUP_WORDS)


def _first_attribute(read: Read) -> str | None:
    return read.path[0][1:] if read.path and read.path[0].startswith(".") else None


def _fills_unset(mutation: Mutation, attribute: str) -> bool:
    """The change sits under ``if self.<attribute> is None:`` (or ``if not self.<attribute>``,
    ``if not hasattr(self, "<attribute>")``)."""
    for guard in mutation.guards:
        for node in ast.walk(guard):
            if isinstance(node, ast.Compare) and _is_attribute(node.left, attribute):
                if isinstance(node.ops[0], ast.Is) and _is_none(node.comparators[0]):
                    return True
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                operand = node.operand
                if _is_attribute(operand, attribute):
                    return True
                if (
                    isinstance(operand, ast.Call)
                    and isinstance(operand.func, ast.Name)
                    and operand.func.id == "hasattr"
                    and len(operand.args) == 2
                    and isinstance(operand.args[1], ast.Constant)
                    and operand.args[1].value == attribute
                ):
                    return True
    return False


def _is_attribute(node: ast.expr, attribute: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attribute


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _assigns_none(mutation: Mutation, attribute: str) -> bool:
    value = mutation.value
    return (
        mutation.path == (f".{attribute}",)
        and isinstance(value, ast.Constant)
        and value.value is None
    )


def _is_fixture(method: Scope) -> bool:
    for decorator in getattr(method.node, "decorator_list", []):
        expr = decorator.func if isinstance(decorator, ast.Call) else decorator
        word = expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")
        if word == "fixture":
            return True
    return False


def _self_is_static(site: CompiledFunction, self_name: str) -> bool:
    call = site.transform_call
    if call is None:
        return False
    for keyword in call.keywords:
        value = keyword.value
        elements = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
        constants = [e.value for e in elements if isinstance(e, ast.Constant)]
        if keyword.arg == "static_argnums" and any(
            c == 0 and not isinstance(c, bool) for c in constants
        ):
            return True
        if keyword.arg == "static_argnames" and self_name in constants:
            return True
    return False


def _enclosing_method(scope: Scope, class_scope: Scope | None) -> Scope | None:
    """The method (of ``class_scope``, or of any class) whose body holds ``scope``."""
    current: Scope | None = scope
    while current is not None and current.parent is not None:
        parent = current.parent
        if current.kind is ScopeKind.FUNCTION and parent.kind is ScopeKind.CLASS:
            if class_scope is None or parent is class_scope:
                return current
        current = parent
    return None
