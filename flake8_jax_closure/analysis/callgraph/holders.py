"""Which code runs what, in module order: where a function is called or handed on, and where a
compiled object (or anything made from it) is called or handed on.

Code runs in *drivers*: the module's own statements, or the body of a function, lambda or
method. An event is something happening at a place in a driver's straight-line code: *run*
(the thing happens there, during that statement) or *escape* (a function or object is handed to
code this module cannot see, which may run it at any later time). A function's events in its
callers are found by name: ``f(...)`` runs it, any other use of ``f`` hands it on; a method's by
attribute name (``obj.step(...)``); a module-level function or a method that nothing in the
module names is called from outside, after the module ran (``outside``).

What is made from a compiled object counts as the object: an alias (``g = f``), a transform of
it (``jax.value_and_grad(f)``, ``jax.vmap(f)``, ``partial(f, ...)``), what a factory returns
(``step = make_step()`` when ``make_step`` returns its compiled function). A later rebinding of
the name in the same straight-line code is a new object: uses after it do not count.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from ..compiled import CompiledFunction, Form
from ..facts.model import AttributeRef, Binding, BindingKind, Pos, Read, Scope, ScopeKind
from ..facts.queries import Facts
from ..names import COMPILE_FUNCTIONS, PARTIAL, PASSTHROUGH_TRANSFORMS

# Dunder methods Python calls by itself: nothing in the module needs to name them.
_IMPLICIT = frozenset(
    {"__call__", "__getitem__", "__setitem__", "__iter__", "__next__", "__enter__", "__exit__",
     "__len__", "__contains__", "__add__", "__mul__", "__matmul__", "__repr__", "__str__",
     "__hash__", "__eq__", "__getattr__", "__get__", "__set__", "__del__"}
)  # fmt: skip
# Decorators that keep the function to themselves (they may wrap it, but hand it to nobody).
_HARMLESS_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "property", "wraps", "cache", "lru_cache",
     "cached_property", "abstractmethod", "overload", "partial"}
)  # fmt: skip
CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__"})
# Functions that call a function they are given before they return, and keep nothing.
_CALLS_NOW = frozenset(
    {"timeit.timeit", "timeit.repeat", "functools.reduce", "numpy.vectorize",
     "numpy.apply_along_axis", "numpy.frompyfunc"}
)  # fmt: skip
_BUILTINS_CALLING_NOW = frozenset(
    {"sorted", "min", "max", "list", "tuple", "set", "dict", "sum", "any", "all", "print",
     "len", "str", "repr", "isinstance", "callable", "id", "hash", "type", "getattr"}
)  # fmt: skip
_TRANSFORMS = PASSTHROUGH_TRANSFORMS | COMPILE_FUNCTIONS | {PARTIAL}


END: Pos = (1 << 30, 0)  # after every line of the module


class EventKind(enum.Enum):
    RUN = "run"
    ESCAPE = "escape"


@dataclass(frozen=True, eq=False)
class Event:
    driver: Scope = field(repr=False)
    at: Pos
    loops: tuple[ast.AST, ...] = field(repr=False)
    kind: EventKind
    # For a call or escape of a function that does the thing: that function.
    via: Scope | None = field(default=None, repr=False)
    # The expression that calls or hands on.
    node: ast.AST | None = field(default=None, repr=False)
    # For a use of what a call of the barrier returned: where that call is. Each call of a
    # function that makes the object makes a new one.
    origin: Pos | None = None
    # For ``return a, b``: the position of the thing in the returned tuple.
    element: int | None = None


@dataclass
class Reach:
    """Everywhere something happens: events by driver, and whether outside code can do it."""

    events: list[Event] = field(default_factory=list)
    # Functions that code outside the module calls (nothing in the module names them) and
    # that do the thing.
    entries: list[Scope] = field(default_factory=list)

    def in_driver(self, driver: Scope) -> list[Event]:
        return [e for e in self.events if e.driver is driver]

    @property
    def outside(self) -> bool:
        return bool(self.entries)

    @property
    def handed_on(self) -> bool:
        return any(e.kind is EventKind.ESCAPE for e in self.events)

    @property
    def escapes(self) -> bool:
        return self.outside or self.handed_on

    def add_entry(self, entry: Scope) -> None:
        if all(e is not entry for e in self.entries):
            self.entries.append(entry)


def level(
    scope: Scope, at: Pos, loops: tuple[ast.AST, ...]
) -> tuple[Scope, Pos, tuple[ast.AST, ...]]:
    """The driver whose straight-line code runs a site, and where: class bodies and
    comprehensions run where they stand in the code around them."""
    while scope.kind in (ScopeKind.COMPREHENSION, ScopeKind.CLASS) and scope.parent is not None:
        at, loops = scope.start, scope.loops
        scope = scope.parent
    return scope, at, loops


def event_at(
    site_scope: Scope, node: ast.AST, loops: tuple[ast.AST, ...], kind: EventKind
) -> Event:
    at = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    driver, at, loops = level(site_scope, at, loops)
    return Event(driver, at, loops, kind, node=node)


@dataclass
class Uses:
    """Where a function runs or escapes, as seen from the code that names it."""

    events: list[Event] = field(default_factory=list)
    outside: bool = False


class CallGraph:
    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self._uses: dict[int, Uses] = {}

    # -- functions -------------------------------------------------------------------------------

    def uses_of_function(self, function: Scope) -> Uses:
        cached = self._uses.get(id(function))
        if cached is None:
            cached = self._function_uses(function)
            self._uses[id(function)] = cached
        return cached

    def _function_uses(self, function: Scope) -> Uses:
        facts = self.facts
        node = function.node
        parent = function.parent
        assert parent is not None
        if function.kind is ScopeKind.LAMBDA:
            holder = facts.parent(node)
            if isinstance(holder, ast.Assign) and _single_name(holder) is not None:
                return self._named_uses(function, _single_name(holder) or "", parent.function())
            return Uses(list(self._value_use(parent, node, function.loops, set())))
        if function.kind is not ScopeKind.FUNCTION:
            return Uses()
        decorators = getattr(node, "decorator_list", [])
        if parent.kind is ScopeKind.CLASS:
            uses = self._method_uses(function, parent, decorators)
        else:
            uses = self._named_uses(function, function.name, parent)
        if any(not self._is_compile_or_known(parent, d) for d in decorators):
            # ``@app.route``, ``@register``, ``@pytest.mark...``: code this module cannot see
            # calls it whenever it likes.
            uses.outside = True
        return uses

    def _is_compile_or_known(self, scope: Scope, decorator: ast.expr) -> bool:
        """Decorators that do not hand the function to unknown code."""
        expr = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = self.facts.qualified_name(scope, expr)
        if name is not None and (name in _TRANSFORMS or name.split(".")[0] in ("jax", "equinox")):
            return True
        if isinstance(expr, ast.Call):
            return self._is_compile_or_known(scope, expr)
        word = expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")
        return word in _HARMLESS_DECORATORS

    def _named_uses(self, function: Scope, name: str, binder: Scope) -> Uses:
        facts = self.facts
        uses = Uses()
        # In the code that defines it, only between the definition and the next one
        # (a notebook defining ``opt_step`` again in a later cell).
        until = self.next_binding(binder, name, function.start, function.loops)
        refs = [
            r
            for r in facts.reads_of(binder, name)
            if not r.scope.is_within(function)
            and (r.scope.function() is not binder.function() or function.start < r.start < until)
        ]
        for read in refs:
            uses.events.extend(self._read_events(read, set()))
        if not refs and binder.kind is ScopeKind.MODULE and not self._in_script(function):
            uses.outside = True
        return uses

    def _method_uses(self, function: Scope, cls: Scope, decorators: list[ast.expr]) -> Uses:
        facts = self.facts
        uses = Uses()
        name = function.name
        is_property = any(
            (d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")) in
            ("property", "cached_property", "setter")
            for d in decorators
        )  # fmt: skip
        if name in CONSTRUCTORS:
            binder = cls.parent
            assert binder is not None
            for read in facts.reads_of(binder.function(), cls.name):
                if read.called:
                    uses.events.append(event_at(read.scope, read.node, read.loops, EventKind.RUN))
            return uses
        refs = [
            r
            for r in facts.attribute_refs(name)
            if not r.scope.is_within(function) and self.may_reach(r, cls)
        ]
        for ref in refs:
            if ref.called or is_property:
                uses.events.append(event_at(ref.scope, ref.node, ref.loops, EventKind.RUN))
            else:
                uses.events.extend(self._value_use(ref.scope, ref.node, ref.loops, set()))
        unnamed = not refs and not self._in_script(function)
        if unnamed or name in _IMPLICIT or (name.startswith("__") and name.endswith("__")):
            uses.outside = True
        return uses

    def _in_script(self, scope: Scope) -> bool:
        """Defined in the module's ``if __name__ == "__main__":`` block: no importer sees it."""
        return self.facts.in_script(scope.start[0])

    def propagate(self, direct: Iterable[Event], barrier: Scope | None) -> Reach:
        """Events of ``direct`` plus, for every function where one happens, the calls and
        escapes of that function, up the call graph; never past ``barrier``, whose every call
        makes a new instance of what happens inside. Calling a function that hands the thing
        on hands it on; a function that returns it hands it to its callers, and what they do
        with the result is what happens to it (unless code outside the module calls it)."""
        reach = Reach(list(direct))
        pending = [event.driver for event in reach.events]
        done: set[int] = set()
        followed: set[int] = set()
        while pending:
            while pending:
                driver = pending.pop()
                if id(driver) in done:
                    continue
                done.add(id(driver))
                if driver is barrier or driver.kind is ScopeKind.MODULE:
                    continue
                uses = self.uses_of_function(driver)
                if uses.outside:
                    reach.add_entry(driver)
                for use in uses.events:
                    reach.events.append(replace(use, via=driver))
                    pending.append(use.driver)
            returned = [e for e in reach.events if self._returned(e)]
            for event in returned:
                reach.events.remove(event)
                if id(event.driver) in followed:
                    continue  # its callers' results are in already
                followed.add(id(event.driver))
                results = list(
                    self.result_events(event.driver, event.driver is barrier, event.element)
                )
                reach.events.extend(results)
                pending.extend(e.driver for e in results)
        self._escapes_through_calls(reach)
        return reach

    def _returned(self, event: Event) -> bool:
        """An escape by ``return`` from a function that only this module calls."""
        driver = event.driver
        return (
            event.kind is EventKind.ESCAPE
            and event.node is not None
            and isinstance(self.facts.parent(event.node), ast.Return)
            and driver.kind is ScopeKind.FUNCTION
            and not self.uses_of_function(driver).outside
        )

    def _escapes_through_calls(self, reach: Reach) -> None:
        escaping = {id(e.driver) for e in reach.events if e.kind is EventKind.ESCAPE}
        changed = bool(escaping)
        while changed:
            changed = False
            for index, event in enumerate(reach.events):
                if (
                    event.kind is EventKind.RUN
                    and event.via is not None
                    and id(event.via) in escaping
                ):
                    reach.events[index] = replace(event, kind=EventKind.ESCAPE)
                    if id(event.driver) not in escaping:
                        escaping.add(id(event.driver))
                        changed = True

    # -- objects and their classes ---------------------------------------------------------------

    def object_class(self, scope: Scope, name: str, at: Pos) -> Scope | None:
        """The class of the object ``name`` holds at ``at`` in ``scope``, where the code says:
        ``self`` of a method, or a variable assigned ``SomeClass(...)`` (the class bound to that
        name where the call runs). None when unknown."""
        facts = self.facts
        owner = facts.resolve(scope, name)
        parent = owner.parent
        if parent is not None and parent.kind is ScopeKind.CLASS and owner.params[:1] == (name,):
            return parent if owner.kind is ScopeKind.FUNCTION else None
        bindings = facts.bindings_of(owner, name)
        if scope.function() is owner.function():
            bindings = [b for b in bindings if b.at < at][-1:]
        classes = {id(c): c for c in (self._made_from(b) for b in bindings)}
        if len(classes) == 1 and None not in classes.values():
            return next(iter(classes.values()))
        return None

    def object_class_of_call(self, scope: Scope, call: ast.Call) -> Scope | None:
        """The class ``SomeClass(...)`` makes, where the code says."""
        if not isinstance(call.func, ast.Name):
            return None
        owner = self.facts.resolve(scope, call.func.id)
        bindings = self.facts.bindings_of(owner, call.func.id)
        if bindings and all(b.kind is BindingKind.CLASS for b in bindings):
            return self.facts.scope_of(bindings[-1].node)
        return None

    def _made_from(self, binding: Binding) -> Scope | None:
        value = binding.value
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
            return None
        facts = self.facts
        class_name = value.func.id
        class_owner = facts.resolve(binding.scope, class_name)
        candidates = facts.bindings_of(class_owner, class_name)
        if binding.scope.function() is class_owner.function():
            candidates = [b for b in candidates if b.at < binding.at] or candidates
        if candidates and candidates[-1].kind is BindingKind.CLASS:
            return facts.scope_of(candidates[-1].node)
        return None

    def may_reach(self, ref: AttributeRef, cls: Scope) -> bool:
        """Whether ``<base>.name`` can mean the method ``name`` of ``cls``: not when the base's
        class is known to be another class that defines ``name`` itself."""
        base = ref.base
        if not isinstance(base, ast.Name):
            return True
        known = self.object_class(ref.scope, base.id, ref.start)
        return known is None or self.related(known, cls)

    def related(self, first: Scope, second: Scope) -> bool:
        """Whether one class derives from the other (as far as this module shows)."""
        return second in self._ancestors(first) or first in self._ancestors(second)

    def _ancestors(self, cls: Scope) -> list[Scope]:
        found, pending = [cls], [cls]
        while pending:
            current = pending.pop()
            node = current.node
            parent = current.parent
            if not isinstance(node, ast.ClassDef) or parent is None:
                continue
            for base in node.bases:
                if not isinstance(base, ast.Name):
                    continue
                owner = self.facts.resolve(parent, base.id)
                for binding in self.facts.bindings_of(owner, base.id):
                    if binding.kind is BindingKind.CLASS:
                        scope = self.facts.scope_of(binding.node)
                        if scope not in found:
                            found.append(scope)
                            pending.append(scope)
        return found

    # -- compiled objects ------------------------------------------------------------------------

    def compiled_events(self, sites: list[CompiledFunction]) -> Iterator[Event]:
        """Direct events of a compiled object: calls and escapes of every name holding it, in
        the code that names it."""
        facts = self.facts
        for site in sites:
            if site.form is Form.INLINE:
                yield event_at(site.site_scope, site.site, site.created_loops, EventKind.RUN)
            elif site.form is Form.PASSED:
                yield from self._value_use(site.site_scope, site.site, site.created_loops)
            elif site.bound_name is not None:
                binder = facts.resolve(site.site_scope, site.bound_name)
                yield from self._holder_events(binder, site.bound_name, site.created_at, set())

    def holders_outside(self, sites: list[CompiledFunction]) -> bool:
        """A module-level compiled function that nothing in the module names is called from
        outside; a compiled method that nothing names is called on instances from outside."""
        for site in sites:
            if site.form is Form.DECORATOR:
                decorators = site.function.decorator_list  # type: ignore[union-attr]
                above = decorators[: decorators.index(site.site)]
                if any(not self._is_compile_or_known(site.site_scope, d) for d in above):
                    return True  # ``@register`` above ``@jax.jit``: registered for others
            if site.bound_name is None:
                continue
            binder = self.facts.resolve(site.site_scope, site.bound_name)
            if binder.kind is ScopeKind.MODULE:
                if not self.facts.reads_of(binder, site.bound_name):
                    return True
            elif binder.kind is ScopeKind.CLASS:
                if not self.facts.attribute_refs(site.bound_name):
                    return True
        return False

    def holder_events(self, binder: Scope, name: str, since: Pos) -> Iterator[Event]:
        """Calls and escapes of the object bound to ``name`` in ``binder`` at ``since``."""
        return self._holder_events(binder, name, since, set())

    def _holder_events(
        self, binder: Scope, name: str, since: Pos, seen: set[tuple[int, str]]
    ) -> Iterator[Event]:
        """Events of the object bound to ``name`` in ``binder`` at ``since``."""
        key = (id(binder), name)
        if key in seen:
            return
        seen.add(key)
        facts = self.facts
        if binder.kind is ScopeKind.CLASS:
            # A compiled method, reached through instances: ``obj.step(...)``. In the code that
            # defines the class, only between that definition and the next one (a notebook
            # cell run again makes a new class, whose method is a new function).
            outer = binder.parent
            until = END
            if outer is not None and binder.name:
                until = self.next_binding(outer, binder.name, binder.start)
            for ref in facts.attribute_refs(name):
                same_code = outer is not None and ref.scope.function() is outer.function()
                if same_code and not (binder.start < ref.start < until):
                    continue
                kind = EventKind.RUN if ref.called else EventKind.ESCAPE
                yield event_at(ref.scope, ref.node, ref.loops, kind)
            return
        until = self.next_binding(binder, name, since)
        for read in facts.reads_of(binder, name):
            if read.scope.function() is binder.function() and not (since <= read.start < until):
                continue  # straight-line code before the object exists, or after a new one
            yield from self._read_events(read, seen)

    def next_binding(
        self, binder: Scope, name: str, since: Pos, loops: tuple[ast.AST, ...] = ()
    ) -> Pos:
        """Where the name is next rebound in the same straight-line code: after that, the name
        holds something else (``loops`` is accepted for symmetry with the callers' sites)."""
        later = [
            b.at
            for b in self.facts.bindings_of(binder, name)
            if b.scope.function() is binder.function() and b.at > since
        ]
        return min(later, default=END)

    def _read_events(self, read: Read, seen: set[tuple[int, str]]) -> Iterator[Event]:
        if read.called:
            yield event_at(read.scope, read.node, read.loops, EventKind.RUN)
            return
        yield from self._value_use(read.scope, read.node, read.loops, seen)

    def _value_use(
        self,
        scope: Scope,
        node: ast.AST,
        loops: tuple[ast.AST, ...],
        seen: set[tuple[int, str]] | None = None,
    ) -> Iterator[Event]:
        """How an expression holding the object is used, other than by calling it: through an
        attribute (``f.lower(x)``, ``obj.method()``), passed to a call (whose result is made
        from it), kept in a name, an attribute or a container, or handed on."""
        facts = self.facts
        seen = seen if seen is not None else set()
        parent = facts.parent(node)
        if isinstance(parent, (ast.Starred, ast.keyword)):
            node, parent = parent, facts.parent(parent)
        if isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node:
            if not _stored(facts, parent):
                # ``f.lower(x)``, ``obj.method(x)``, ``fns[0](x)``: may trace or call now.
                yield event_at(scope, node, loops, EventKind.RUN)
            return  # ``obj.attr = value`` changes the object; it does not use it
        if isinstance(parent, ast.Call) and parent.func is not node:
            callee = facts.qualified_name(scope, parent.func)
            if self._is_local_function(scope, parent.func) or self._calls_now(
                scope, parent, callee
            ):
                # Passed to a function of this module, or to one that calls it and is done
                # with it (``jax.lax.scan(step, ...)``, ``timeit(lambda: f(x))``): now.
                yield event_at(scope, node, loops, EventKind.RUN)
                return
            yield from self._result_use(scope, parent, loops, seen, callee in _TRANSFORMS)
            return
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
            yield from self._kept(scope, parent, node, loops, seen)
            return
        if isinstance(parent, ast.Tuple) and isinstance(facts.parent(parent), ast.Return):
            # ``return fast, set_value``: the callers unpack it by position.
            returned = event_at(scope, parent, loops, EventKind.ESCAPE)
            yield replace(returned, element=_index(parent.elts, node))
            return
        if isinstance(parent, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            # A container holding it is made from it.
            yield from self._value_use(scope, parent, loops, seen)
            return
        yield event_at(scope, node, loops, EventKind.ESCAPE)

    def result_events(
        self, function: Scope, by_call: bool = False, element: int | None = None
    ) -> Iterator[Event]:
        """What happens to the value a function returns, at each of its calls (with
        ``by_call``, each event names the call it comes from; with ``element``, to that item
        of a returned tuple)."""
        parent = function.parent
        if function.kind is not ScopeKind.FUNCTION or parent is None:
            return
        refs: list[Read | AttributeRef]
        if parent.kind is ScopeKind.CLASS:
            refs = [
                r for r in self.facts.attribute_refs(function.name) if self.may_reach(r, parent)
            ]
        else:
            # In the code that defines it, only between the definition and the next one.
            until = self.next_binding(parent, function.name, function.start, function.loops)
            refs = [
                r
                for r in self.facts.reads_of(parent, function.name)
                if r.scope.function() is not parent.function() or function.start < r.start < until
            ]
        for ref in refs:
            call = self.facts.parent(ref.node)
            if (
                isinstance(call, ast.Call)
                and call.func is ref.node
                and not ref.scope.is_within(function)
            ):
                events = self._result_use(ref.scope, call, ref.loops, set(), True, element)
                if by_call:
                    origin = (call.lineno, call.col_offset)
                    events = (replace(e, origin=origin) for e in events)
                yield from events

    def _result_use(
        self,
        scope: Scope,
        call: ast.Call,
        loops: tuple[ast.AST, ...],
        seen: set[tuple[int, str]],
        transform: bool,
        element: int | None = None,
    ) -> Iterator[Event]:
        """The result of a call given the object (``jax.vmap(f)``, ``summary.wrap(f)``) is made
        from it: calling that result calls it."""
        made = self.facts.parent(call)
        if isinstance(made, ast.Call) and made.func is call:
            yield event_at(scope, made, loops, EventKind.RUN)
        elif isinstance(made, (ast.Assign, ast.AnnAssign)) and made.value is call:
            yield from self._kept(scope, made, call, loops, seen, transform, element)
        elif isinstance(made, ast.Expr):
            if not transform:
                # ``register(f)``: kept by code this module cannot see.
                yield event_at(scope, call, loops, EventKind.ESCAPE)
        else:
            yield from self._value_use(scope, call, loops, seen)

    def _kept(
        self,
        scope: Scope,
        statement: ast.Assign | ast.AnnAssign,
        value: ast.AST,
        loops: tuple[ast.AST, ...],
        seen: set[tuple[int, str]],
        unpack: bool = True,
        element: int | None = None,
    ) -> Iterator[Event]:
        """``g = <value>``, ``self.g = <value>``, ``a, b = <value>``. ``unpack``: the names
        of ``a, b = <value>`` may hold the object (a factory's results, not the outputs of
        ``jax.lax.scan(step, ...)``)."""
        facts = self.facts
        target = _single_name(statement)
        if target is not None:
            binder = facts.resolve(scope, target)
            since = (statement.end_lineno or 0, statement.end_col_offset or 0)
            yield from self._holder_events(binder, target, since, seen)
            return
        stored = _single_attribute(statement)
        if stored is not None:
            yield from self._attribute_holder(scope, value, loops, stored, seen)
            return
        names = _unpacked_names(statement)
        positional = _flat_names(statement)
        if element is not None and positional is not None and element < len(positional):
            # ``fast, set_value = build()`` with ``return fast, set_value``: by position.
            names = [positional[element]]
        if names:
            # ``f, set_f = make()``, ``state, out = jax.lax.scan(step, ...)``: any of the names
            # may hold it, and a call has already run with it.
            if isinstance(value, ast.Call) and element is None:
                yield event_at(scope, value, loops, EventKind.RUN)
            if not unpack:
                return
            since = (statement.end_lineno or 0, statement.end_col_offset or 0)
            for name in names:
                yield from self._holder_events(facts.resolve(scope, name), name, since, seen)
            return
        yield event_at(scope, value, loops, EventKind.ESCAPE)

    def _attribute_holder(
        self,
        scope: Scope,
        node: ast.AST,
        loops: tuple[ast.AST, ...],
        attribute: str,
        seen: set[tuple[int, str]],
    ) -> Iterator[Event]:
        """``self.fast = <object>``: the object is used wherever ``.fast`` is read."""
        key = (0, attribute)
        if key in seen:
            return
        seen.add(key)
        store = self.facts.parent(node)
        target = (
            store.targets[0] if isinstance(store, ast.Assign) else getattr(store, "target", None)
        )
        owner_class = None
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            at = (target.lineno, target.col_offset)
            owner_class = self.object_class(scope, target.value.id, at)
        refs = [
            r
            for r in self.facts.attribute_refs(attribute)
            if not (isinstance(r.node, ast.expr) and _stored(self.facts, r.node))
            and (owner_class is None or self.may_reach(r, owner_class))
        ]
        if not refs:
            # Read by code this module cannot see.
            yield event_at(scope, node, loops, EventKind.ESCAPE)
            return
        for ref in refs:
            if ref.called:
                yield event_at(ref.scope, ref.node, ref.loops, EventKind.RUN)
            else:
                yield from self._value_use(ref.scope, ref.node, ref.loops, seen)

    def _calls_now(self, scope: Scope, call: ast.Call, callee: str | None) -> bool:
        if callee is not None:
            return callee in _CALLS_NOW or (callee.startswith("jax.") and callee not in _TRANSFORMS)
        func = call.func
        return (
            isinstance(func, ast.Name)
            and func.id in _BUILTINS_CALLING_NOW
            and not self.facts.bindings_of(self.facts.resolve(scope, func.id), func.id)
        )

    def _is_local_function(self, scope: Scope, callee: ast.expr) -> bool:
        if not isinstance(callee, ast.Name):
            return False
        owner = self.facts.resolve(scope, callee.id)
        return any(b.kind is BindingKind.DEF for b in self.facts.bindings_of(owner, callee.id))


def _stored(facts: Facts, node: ast.expr) -> bool:
    """Whether ``node`` is (the base of) an assignment or ``del`` target."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        parent = facts.parent(node)
        if not isinstance(parent, (ast.Attribute, ast.Subscript)) or parent.value is not node:
            return False
        node = parent
    return False


def _unpacked_names(statement: ast.Assign | ast.AnnAssign) -> list[str]:
    """``a, (b, *c) = ...``: the names, when every target is a name."""
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    names: list[str] = []
    pending: list[ast.expr] = list(targets)
    while pending:
        target = pending.pop()
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pending.extend(target.elts)
        elif isinstance(target, ast.Starred):
            pending.append(target.value)
        else:
            return []
    return names


def _single_attribute(statement: ast.AST) -> str | None:
    """``attr`` for ``<anything>.attr = value``."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    elif isinstance(statement, ast.AnnAssign):
        target = statement.target
    else:
        return None
    return target.attr if isinstance(target, ast.Attribute) else None


def _single_name(statement: ast.AST) -> str | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    elif isinstance(statement, ast.AnnAssign):
        target = statement.target
    else:
        return None
    return target.id if isinstance(target, ast.Name) else None


def _index(elements: list[ast.expr], node: ast.AST) -> int | None:
    for index, element in enumerate(elements):
        if element is node:
            return index
    return None


def _flat_names(statement: ast.Assign | ast.AnnAssign) -> list[str] | None:
    """``a, b = ...``: the names in order, when the one target is a flat tuple of names."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0]
    if not isinstance(target, (ast.Tuple, ast.List)):
        return None
    if not all(isinstance(e, ast.Name) for e in target.elts):
        return None
    return [e.id for e in target.elts]  # type: ignore[attr-defined]
