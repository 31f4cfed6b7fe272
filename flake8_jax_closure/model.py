"""The capture analysis: what each compiled function reads from outside itself, and which changes
to those values can happen after the compiled function may already have been traced.

A change counts when it can run after a compiled call:
- it sits in another function than the one owning the variable (it can run at any time);
- or it sits later in the owning scope, with a call or escape of the compiled object between the
  definition and the change and a use after it (or an escape, after which anything may call it);
- or it sits in a loop that also uses the compiled object, so the next iteration calls it again.

Work is done backwards, as flake8-bugbear's B023 does: the reads of each compiled function are
collected first, and the timing of changes is worked out only for variables that change at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import libcst as cst

from .compiled import CompiledFunction, Form
from .names import REF_CONSTRUCTORS
from .scopes import (
    Binding,
    BindingKind,
    Mutation,
    Order,
    Read,
    Scope,
    ScopeKind,
    ScopeModel,
    Site,
    paths_overlap,
)

# Binding kinds that make a name refer to a module or a function: in-place changes to those are
# not value changes (``jnp.append(...)`` is a call, not a mutation of ``jnp``).
_DEFINITION_KINDS = frozenset({BindingKind.IMPORT, BindingKind.DEF, BindingKind.CLASS})


@dataclass(frozen=True, eq=False)
class StaleCapture:
    """A compiled function reads ``name`` from ``owner``; the value can change after a trace."""

    compiled: CompiledFunction
    name: str
    owner: Scope
    first_read: Read
    reads: tuple[Read, ...]
    rebinding: Binding | None
    mutation: Mutation | None
    # JC104: the attribute of ``self`` (``name``) that changes, and how the compiled function
    # holds ``self``: a static argument, a bound method, or a closure.
    attribute: str | None = None
    static_self: bool = False
    bound_method: bool = False
    # How the attribute is reached, when not directly: ``helper()`` or a property ``k``.
    read_through: str | None = None

    @property
    def is_global(self) -> bool:
        return self.owner.kind is ScopeKind.MODULE


@dataclass(frozen=True)
class Use:
    """A use of the compiled object (or of something that may call it) in the owning scope."""

    position: Order
    loops: tuple[cst.CSTNode, ...]
    escapes: bool  # anything but a direct call: it may be called later by someone else


@dataclass(frozen=True)
class Creation:
    position: Order
    loops: tuple[cst.CSTNode, ...]
    # The compiled object is made anew each time this point runs (a fresh function object).
    fresh: bool
    uses: tuple[Use, ...]


class CaptureAnalysis:
    def __init__(self, model: ScopeModel) -> None:
        self.model = model
        self._free_names: dict[tuple[int, int], set[str]] = {}
        self._readers: dict[int, dict[str, list[Scope]]] = {}
        self._reads_by_scope: dict[int, list[Read]] = {}
        for read in model.reads:
            self._reads_by_scope.setdefault(id(read.scope), []).append(read)

    def stale_captures(
        self, compiled_functions: Iterable[CompiledFunction]
    ) -> Iterator[StaleCapture]:
        """One capture per (compiled function, name); sites compiling one function are merged,
        since ``jax.jit(f)`` made twice shares f's trace cache."""
        sites: dict[int, list[CompiledFunction]] = {}
        for compiled in compiled_functions:
            sites.setdefault(id(compiled.function), []).append(compiled)
        for group in sites.values():
            yield from self._captures_of(group)

    def _captures_of(self, sites: list[CompiledFunction]) -> Iterator[StaleCapture]:
        compiled = sites[0]
        reads_by_variable: dict[tuple[int, str], list[Read]] = {}
        owners: dict[int, Scope] = {}
        for read in self._reads_within(compiled.scope):
            owner = self.model.resolve(read.scope, read.name)
            if owner.is_within(compiled.scope) or owner.kind is ScopeKind.COMPREHENSION:
                continue
            if read.name == method_self_name(owner):
                continue  # ``self`` of a method: its attributes are JC104's (see methods.py)
            owners[id(owner)] = owner
            reads_by_variable.setdefault((id(owner), read.name), []).append(read)
        for (owner_id, name), reads in reads_by_variable.items():
            owner = owners[owner_id]
            paths = [read.path for read in reads]
            rebinding, mutation = self._first_changes(sites, owner, name, paths)
            if rebinding is None and mutation is None:
                continue
            reads.sort(key=lambda r: r.start)
            yield StaleCapture(compiled, name, owner, reads[0], tuple(reads), rebinding, mutation)

    def _reads_within(self, scope: Scope) -> Iterator[Read]:
        pending = [scope]
        while pending:
            current = pending.pop()
            yield from self._reads_by_scope.get(id(current), ())
            pending.extend(current.children)

    # -- changes ---------------------------------------------------------------------------------

    def _first_changes(
        self,
        sites: list[CompiledFunction],
        owner: Scope,
        name: str,
        paths: list[tuple[str, ...]],
    ) -> tuple[Binding | None, Mutation | None]:
        compiled = sites[0]
        bindings = sorted(self.model.bindings_of(owner, name), key=lambda b: b.start)
        mutations = sorted(self.model.mutations_of(owner, name), key=lambda m: m.start)
        if not bindings and not mutations:
            return None, None
        initial = _initial_binding(bindings, owner)
        rebindings = [b for b in bindings if b is not initial]
        if (
            not bindings
            or all(b.kind in _DEFINITION_KINDS for b in bindings)
            or _holds_ref(self.model, bindings)
        ):
            mutations = []
        # ``CONFIG["clip"] = 1`` does not change what ``CONFIG["scale"]`` reads.
        mutations = [m for m in mutations if any(paths_overlap(m.path, p) for p in paths)]
        candidates: list[Site] = [
            site for site in (*rebindings, *mutations) if not site.scope.is_within(compiled.scope)
        ]
        if not candidates:
            return None, None
        creation: Creation | None = None
        first_rebinding: Binding | None = None
        first_mutation: Mutation | None = None
        for site in candidates:
            if isinstance(site, Binding) and first_rebinding is not None:
                continue
            if isinstance(site, Mutation) and (first_mutation is not None or first_rebinding):
                continue
            level = self.owner_level(site.scope, site.end, site.loops, owner)
            if level is not None:
                creation = creation or merged(self.creation(s, owner) for s in sites)
                if not changes_after_use(self.model, creation, level[0], level[1]):
                    continue
            if isinstance(site, Binding):
                first_rebinding = site
            elif isinstance(site, Mutation):
                first_mutation = site
        return first_rebinding, first_mutation

    def owner_level(
        self,
        scope: Scope,
        position: Order,
        loops: tuple[cst.CSTNode, ...],
        owner: Scope,
    ) -> tuple[Order, tuple[cst.CSTNode, ...]] | None:
        """Where a site runs in ``owner``'s own code, or None when it runs in a nested function.

        Class bodies and comprehensions run where they stand, so a site inside them is placed
        at their position in the owner.
        """
        current = scope
        while current is not owner:
            if current.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA) or current.parent is None:
                return None
            position, loops = current.start, current.loops
            current = current.parent
        return position, loops

    # -- the compiled object's life in the owning scope -------------------------------------------

    def creation(self, compiled: CompiledFunction, owner: Scope) -> Creation:
        """When the compiled object comes to exist in ``owner``'s code, and where it is used."""
        uses: list[Use] = []
        holder = _child_on_path(compiled.site_scope, owner)
        if holder is None:
            position, loops = compiled.created_at, compiled.created_loops
            names = {compiled.bound_name} if compiled.bound_name else set()
            if compiled.form is Form.INLINE:
                uses.append(Use(position, loops, escapes=False))
            elif compiled.form is Form.PASSED:
                uses.append(Use(position, loops, escapes=True))
            function_scope = self.model.scope_of(compiled.function)
            fresh = compiled.form is Form.DECORATOR or isinstance(compiled.function, cst.Lambda)
            if not fresh and function_scope.parent is owner:
                # ``g = jax.jit(f)`` shares f's trace cache: fresh only if f is made anew too.
                fresh = set(loops) <= set(function_scope.loops)
        else:
            # Made inside a function or class of the owner: reached through that name.
            position, loops, fresh = holder.start, holder.loops, True
            names = set()
            if holder.kind in (ScopeKind.FUNCTION, ScopeKind.CLASS):
                names.add(holder.name)
            else:
                uses.append(Use(position, loops, escapes=True))
        uses.extend(self._uses(owner, self._callers(owner, names)))
        return Creation(position, loops, fresh, tuple(uses))

    def _callers(self, owner: Scope, names: set[str]) -> set[str]:
        """``names`` plus the functions and classes of ``owner`` that may reach them when called."""
        readers = self._readers_by_name(owner)
        callers, pending = set(names), list(names)
        while pending:
            for child in readers.get(pending.pop(), ()):
                if child.name not in callers:
                    callers.add(child.name)
                    pending.append(child.name)
        return callers

    def _readers_by_name(self, owner: Scope) -> dict[str, list[Scope]]:
        """For each name of ``owner``, its named child functions and classes that read it."""
        cached = self._readers.get(id(owner))
        if cached is None:
            cached = {}
            for child in owner.children:
                if child.kind in (ScopeKind.FUNCTION, ScopeKind.CLASS):
                    for name in self._free_names_in(child, owner):
                        cached.setdefault(name, []).append(child)
            self._readers[id(owner)] = cached
        return cached

    def _free_names_in(self, scope: Scope, owner: Scope) -> set[str]:
        cached = self._free_names.get((id(scope), id(owner)))
        if cached is None:
            cached = {
                read.name
                for read in self._reads_within(scope)
                if self.model.resolve(read.scope, read.name) is owner
            }
            self._free_names[(id(scope), id(owner))] = cached
        return cached

    def _uses(self, owner: Scope, names: set[str]) -> Iterator[Use]:
        for name in names:
            for read in self.model.reads_of(owner, name):
                if read.scope is owner:
                    yield Use(read.start, read.loops, escapes=not read.called)
                    continue
                # A read inside an anonymous function or a comprehension of the owner.
                child = _child_on_path(read.scope, owner)
                if child is None:
                    continue
                if child.kind is ScopeKind.COMPREHENSION:
                    yield Use(child.start, child.loops, escapes=not read.called)
                elif child.kind is ScopeKind.LAMBDA:
                    yield Use(child.start, child.loops, escapes=True)


def method_self_name(scope: Scope) -> str | None:
    """The name of ``self`` when ``scope`` is a plain method of a class (not static or class)."""
    node = scope.node
    if scope.parent is None or scope.parent.kind is not ScopeKind.CLASS:
        return None
    if not isinstance(node, cst.FunctionDef):
        return None
    for decorator in node.decorators:
        expr = decorator.decorator
        if isinstance(expr, cst.Name) and expr.value in ("staticmethod", "classmethod"):
            return None
    params = [*node.params.posonly_params, *node.params.params]
    return params[0].name.value if params else None


def merged(creations: Iterable[Creation]) -> Creation:
    ordered = sorted(creations, key=lambda c: c.position)
    first = ordered[0]
    uses = tuple(use for creation in ordered for use in creation.uses)
    return Creation(first.position, first.loops, all(c.fresh for c in ordered), uses)


def _child_on_path(scope: Scope, owner: Scope) -> Scope | None:
    """The child scope of ``owner`` that contains ``scope``; None when ``scope`` is ``owner``."""
    if scope is owner:
        return None
    while scope.parent is not owner and scope.parent is not None:
        scope = scope.parent
    return scope


def _initial_binding(bindings: list[Binding], owner: Scope) -> Binding | None:
    """The binding that first gives the variable a value in its own scope, outside any loop."""
    for binding in bindings:
        if binding.scope is owner:
            return binding if not binding.loops else None
    return None


def _holds_ref(model: ScopeModel, bindings: list[Binding]) -> bool:
    """Whether the variable holds a ``jax.Ref``: compiled code reads its contents live."""
    return any(
        isinstance(b.value, cst.Call)
        and model.qualified_name(b.scope, b.value.func) in REF_CONSTRUCTORS
        for b in bindings
    )


def changes_after_use(
    model: ScopeModel,
    creation: Creation,
    change_at: Order,
    change_loops: tuple[cst.CSTNode, ...],
) -> bool:
    """Whether a change in the owner's own code can happen after a compiled call."""
    uses = creation.uses
    if creation.position < change_at:
        between = [u for u in uses if creation.position <= u.position < change_at]
        if between and (
            any(u.escapes for u in between) or any(u.position > change_at for u in uses)
        ):
            return True
    for loop in change_loops:
        created_before_loop = creation.position < model.order(loop)
        created_in_loop = loop in creation.loops
        uses_in_loop = [u for u in uses if loop in u.loops]
        if not uses_in_loop:
            continue
        # The next iteration calls the same compiled object again after the change. A fresh
        # object per iteration that outlives it is late binding, flake8-bugbear's B023.
        if created_before_loop or (created_in_loop and not creation.fresh):
            return True
    return False
