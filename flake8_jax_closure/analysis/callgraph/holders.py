"""Where an object goes once it is made: the names, attributes and call results that hold it,
and the calls and escapes through them.

What is made from an object counts as the object: an alias (``g = f``), a transform of it
(``jax.value_and_grad(f)``, ``jax.vmap(f)``, ``partial(f, ...)``), what a factory returns
(``step = make_step()`` when ``make_step`` returns its compiled function). A later rebinding of
the name in the same straight-line code is a new object: uses after it do not count.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import replace

from ..facts.model import AttributeRef, BindingKind, Pos, Read, Scope, ScopeKind
from ..facts.queries import Facts
from ..names import FUNCTION_TRANSFORMS
from ..unbindable import arguments_cannot_bind, star_imported
from .called_parameter import only_calls, receiving_parameter
from .classes import ObjectClasses
from .events import END, Event, EventKind, event_at

# Functions that call a function they are given before they return, and keep nothing.
_CALLS_NOW = frozenset(
    {"timeit.timeit", "timeit.repeat", "functools.reduce", "numpy.vectorize",
     "numpy.apply_along_axis", "numpy.frompyfunc"}
    # SciPy's solvers and integrators call the function while they run and return a result
    # holding numbers only (``OptimizeResult``, ``OdeResult``), never the function.
    | {f"scipy.optimize.{name}" for name in (
        "minimize", "minimize_scalar", "root", "root_scalar", "least_squares", "curve_fit",
        "fsolve", "brentq", "brenth", "bisect", "ridder", "toms748", "newton", "fixed_point",
        "basinhopping", "differential_evolution", "dual_annealing", "shgo", "direct", "fmin",
        "fmin_bfgs", "fmin_l_bfgs_b", "fmin_cg", "fmin_ncg", "fmin_powell", "fmin_tnc",
        "fmin_slsqp", "leastsq", "line_search", "check_grad", "approx_fprime")}
    | {f"scipy.integrate.{name}" for name in (
        "quad", "dblquad", "tplquad", "nquad", "fixed_quad", "quad_vec", "romberg",
        "quadrature", "solve_ivp", "odeint", "solve_bvp")}
)  # fmt: skip
_BUILTINS_CALLING_NOW = frozenset(
    {"sorted", "min", "max", "list", "tuple", "set", "dict", "sum", "any", "all", "getattr"}
)  # fmt: skip
# Builtins that only look at a function given them: its name, its text, whether it is one.
# ``str(getattr(config, field))`` or ``print(step)`` runs nothing the function does.
_BUILTINS_LOOKING_AT = frozenset(
    {"print", "len", "str", "repr", "format", "isinstance", "callable", "id", "hash", "type"}
)

# Attributes whose reading runs nothing: an array's, which no function or bound method has
# (code reading them holds data; a function there would raise ``AttributeError`` before any
# later call), and a function's names.
_NOT_RUNNING = frozenset(
    {"shape", "dtype", "ndim", "size", "reshape", "astype", "T", "__name__", "__qualname__",
     "__doc__", "__module__", "clear_cache", "_cache_size"}
)  # fmt: skip


class HolderEvents:
    """The events of objects through what holds them."""

    def __init__(
        self,
        facts: Facts,
        classes: ObjectClasses,
        elsewhere: Callable[[str], ast.FunctionDef | None] | None = None,
    ) -> None:
        self.facts = facts
        self.classes = classes
        # The ``def`` of a function another module of the project defines, by qualified name.
        self.elsewhere = elsewhere

    def holder_events(self, binder: Scope, name: str, since: Pos) -> Iterator[Event]:
        """Calls and escapes of the object bound to ``name`` in ``binder`` at ``since``."""
        return self._holder_events(binder, name, since, set())

    def _holder_events(
        self,
        binder: Scope,
        name: str,
        since: Pos,
        seen: set[tuple[int, str]],
        member: str | None = None,
    ) -> Iterator[Event]:
        """Events of the object bound to ``name`` in ``binder`` at ``since`` (with ``member``,
        of what its attribute ``member`` holds: ``tester.step`` for ``Record(step=step)``)."""
        key = (id(binder), name if member is None else f"{name}.{member}")
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
                looked_at = facts.parent(ref.node)
                if (
                    not ref.called
                    and isinstance(looked_at, ast.Call)
                    and self._looks_at(ref.scope, looked_at)
                ):
                    continue  # ``str(getattr(self.config, field))``: text, no call
                kind = EventKind.RUN if ref.called else EventKind.ESCAPE
                yield event_at(ref.scope, ref.node, ref.loops, kind)
            return
        until = self.next_binding(binder, name, since)
        for read in facts.reads_of(binder, name):
            if read.scope.function() is binder.function() and not (since <= read.start < until):
                continue  # straight-line code before the object exists, or after a new one
            attribute = facts.parent(read.node)
            if member is not None and isinstance(attribute, ast.Attribute):
                if attribute.attr != member or _stored(facts, attribute):
                    continue  # another attribute of the record
                if _called(facts, attribute):
                    yield event_at(read.scope, attribute, read.loops, EventKind.RUN)
                else:
                    yield from self.value_use(read.scope, attribute, read.loops, seen)
                continue
            yield from self.read_events(read, seen)

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

    def read_events(self, read: Read, seen: set[tuple[int, str]]) -> Iterator[Event]:
        if read.called:
            yield event_at(read.scope, read.node, read.loops, EventKind.RUN)
            return
        yield from self.value_use(read.scope, read.node, read.loops, seen)

    def value_use(
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
        member = None
        if isinstance(parent, ast.keyword) and parent.arg is not None:
            member = parent.arg
        if isinstance(parent, (ast.Starred, ast.keyword)):
            node, parent = parent, facts.parent(parent)
        if isinstance(parent, ast.Attribute) and parent.attr in _NOT_RUNNING:
            return  # ``value.shape``, ``fn.__name__``: no call
        if isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node:
            if not _stored(facts, parent):
                # ``f.lower(x)``, ``obj.method(x)``, ``fns[0](x)``: may trace or call now.
                yield event_at(scope, node, loops, EventKind.RUN)
            return  # ``obj.attr = value`` changes the object; it does not use it
        kept_in = _kept_in(parent, node)
        if kept_in is not None and isinstance(parent, ast.Call):
            # ``fns.append(fn)``: calls through the list are calls of it; what the list's
            # earlier reads (a later pass of a loop) do with it, the code does not show here.
            since = (parent.end_lineno or 0, parent.end_col_offset or 0)
            yield from self._holder_events(facts.resolve(scope, kept_in), kept_in, since, seen)
            yield event_at(scope, node, loops, EventKind.ESCAPE)
            return
        if isinstance(parent, ast.Call) and parent.func is not node:
            if self._looks_at(scope, parent):
                return
            callee = facts.qualified_name(scope, parent.func)
            if self._raises_on_binding(scope, parent):
                return  # ``TypeError`` before the callee's body runs: nothing uses it
            if (
                self._is_local_function(scope, parent.func)
                or self._calls_now(scope, parent, callee)
                or self._only_called_elsewhere(parent, node, callee)
            ):
                # Passed to a function of this module, or to one that calls it and is done
                # with it (``jax.lax.scan(step, ...)``, ``timeit(lambda: f(x))``, a function
                # of another module of the project whose body only calls it): now.
                yield event_at(scope, node, loops, EventKind.RUN)
                return
            if not _makes_record(parent):
                member = None
            yield from self._result_use(
                scope, parent, loops, seen, callee in FUNCTION_TRANSFORMS, member=member
            )
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
            yield from self.value_use(scope, parent, loops, seen)
            return
        looped = _loop_names(parent, node)
        if looped:
            # ``for name, fn in variants``: the loop's names hold its items in turn.
            assert isinstance(parent, (ast.For, ast.AsyncFor))
            since = (parent.target.end_lineno or 0, parent.target.end_col_offset or 0)
            for name in looped:
                for event in self._holder_events(facts.resolve(scope, name), name, since, seen):
                    # A name holding another item of the tuple (``if check:``, ``f"{name}"``).
                    looked_at = event.node is not None and _only_looked_at(
                        facts.parent(event.node), event.node
                    )
                    if not (event.kind is EventKind.ESCAPE and looked_at):
                        yield event
            return
        yield event_at(scope, node, loops, EventKind.ESCAPE)

    def result_events(
        self,
        function: Scope,
        by_call: bool = False,
        element: int | None = None,
        member: str | None = None,
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
                r
                for r in self.facts.attribute_refs(function.name)
                if self.classes.may_reach(r, parent)
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
                events = self._result_use(ref.scope, call, ref.loops, set(), True, element, member)
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
        member: str | None = None,
    ) -> Iterator[Event]:
        """The result of a call given the object (``jax.vmap(f)``, ``summary.wrap(f)``) is made
        from it: calling that result calls it. With ``member``, the result holds it in that
        attribute (``Record(step=step)``)."""
        made = self.facts.parent(call)
        if isinstance(made, ast.Call) and made.func is call:
            yield event_at(scope, made, loops, EventKind.RUN)
        elif member is not None and isinstance(made, ast.Return) and made.value is call:
            yield replace(event_at(scope, call, loops, EventKind.ESCAPE), member=member)
        elif isinstance(made, (ast.Assign, ast.AnnAssign)) and made.value is call:
            yield from self._kept(scope, made, call, loops, seen, transform, element, member)
        elif isinstance(made, ast.Expr):
            if not transform:
                # ``register(f)``: kept by code this module cannot see.
                yield event_at(scope, call, loops, EventKind.ESCAPE)
        else:
            yield from self.value_use(scope, call, loops, seen)

    def _kept(
        self,
        scope: Scope,
        statement: ast.Assign | ast.AnnAssign,
        value: ast.AST,
        loops: tuple[ast.AST, ...],
        seen: set[tuple[int, str]],
        unpack: bool = True,
        element: int | None = None,
        member: str | None = None,
    ) -> Iterator[Event]:
        """``g = <value>``, ``self.g = <value>``, ``a, b = <value>``. ``unpack``: the names
        of ``a, b = <value>`` may hold the object (a factory's results, not the outputs of
        ``jax.lax.scan(step, ...)``)."""
        facts = self.facts
        target = single_name(statement)
        if target is not None:
            binder = facts.resolve(scope, target)
            since = (statement.end_lineno or 0, statement.end_col_offset or 0)
            yield from self._holder_events(binder, target, since, seen, member)
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
            owner_class = self.classes.object_class(scope, target.value.id, at)
        refs = [
            r
            for r in self.facts.attribute_refs(attribute)
            if not (isinstance(r.node, ast.expr) and _stored(self.facts, r.node))
            and (owner_class is None or self.classes.may_reach(r, owner_class))
        ]
        if not refs:
            # Read by code this module cannot see.
            yield event_at(scope, node, loops, EventKind.ESCAPE)
            return
        for ref in refs:
            if ref.called:
                yield event_at(ref.scope, ref.node, ref.loops, EventKind.RUN)
            else:
                yield from self.ref_use(ref, seen)

    def ref_use(
        self, ref: AttributeRef, seen: set[tuple[int, str]] | None = None
    ) -> Iterator[Event]:
        """How the value ``ref`` takes is used, when the code does not call it there. A
        ``getattr`` with a computed name may take any attribute; one whose value goes into a
        tuple, list or set display (``values = (*values, getattr(record, field))``, fields
        gathered by name) is data as far as the code shows: no run, and nothing handed on.
        Held in a name, a list it is appended to, a dict, or handed to a call, it is followed."""
        parent = self.facts.parent(ref.node)
        if isinstance(parent, ast.Starred):
            parent = self.facts.parent(parent)
        if ref.computed and isinstance(parent, (ast.Tuple, ast.List, ast.Set)):
            return
        yield from self.value_use(ref.scope, ref.node, ref.loops, seen)

    def _calls_now(self, scope: Scope, call: ast.Call, callee: str | None) -> bool:
        if callee is not None:
            return callee in _CALLS_NOW or (
                callee.startswith("jax.") and callee not in FUNCTION_TRANSFORMS
            )
        func = call.func
        return (
            isinstance(func, ast.Name)
            and func.id in _BUILTINS_CALLING_NOW
            and not self.facts.bindings_of(self.facts.resolve(scope, func.id), func.id)
        )

    def _only_called_elsewhere(self, call: ast.Call, argument: ast.AST, callee: str | None) -> bool:
        if callee is None or self.elsewhere is None:
            return False
        definition = self.elsewhere(callee)
        if definition is None:
            return False
        parameter = receiving_parameter(definition, call, argument)
        return parameter is not None and only_calls(definition, parameter)

    def _looks_at(self, scope: Scope, call: ast.Call) -> bool:
        func = call.func
        return (
            isinstance(func, ast.Name)
            and func.id in _BUILTINS_LOOKING_AT
            and not self.facts.bindings_of(self.facts.resolve(scope, func.id), func.id)
        )

    def _raises_on_binding(self, scope: Scope, call: ast.Call) -> bool:
        """``render(fn, key, rays)`` of a ``def render(fn, rng, state, rays)`` of the code,
        undecorated wherever it is defined: Python binds the arguments before the body runs,
        and raises ``TypeError``."""
        callee = call.func
        if not isinstance(callee, ast.Name) or star_imported(self.facts.tree):
            return False
        bindings = self.facts.bindings_of(self.facts.resolve(scope, callee.id), callee.id)
        definitions = [b.node for b in bindings]
        return bool(definitions) and all(
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not node.decorator_list
            and arguments_cannot_bind(node.args, call)
            for node in definitions
        )

    def _is_local_function(self, scope: Scope, callee: ast.expr) -> bool:
        if not isinstance(callee, ast.Name):
            return False
        owner = self.facts.resolve(scope, callee.id)
        return any(b.kind is BindingKind.DEF for b in self.facts.bindings_of(owner, callee.id))


def _only_looked_at(parent: ast.AST | None, node: ast.AST) -> bool:
    """Whether the expression only tests or prints what it holds (``if check:``, ``x is
    None``, ``not x``, ``f"{name}"``): that neither calls it nor keeps it. (A test of the
    object itself tells a memoising ``if self._compiled is None`` apart: kept as a use.)"""
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return parent.test is node
    return isinstance(parent, (ast.Compare, ast.FormattedValue)) or (
        isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
    )


def _kept_in(parent: ast.AST | None, node: ast.AST) -> str | None:
    """The name of the list or set that ``fns.append(node)`` (``add``, ``insert``) keeps it in."""
    if (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and parent.func.attr in ("append", "add", "insert", "appendleft")
        and isinstance(parent.func.value, ast.Name)
        and parent.args
        and parent.args[-1] is node
    ):
        return parent.func.value.id
    return None


def _loop_names(parent: ast.AST | None, node: ast.AST) -> list[str]:
    """The names a ``for`` loop over ``node`` binds, when they are plain names only."""
    if not isinstance(parent, (ast.For, ast.AsyncFor)) or parent.iter is not node:
        return []
    names: list[str] = []
    pending: list[ast.expr] = [parent.target]
    while pending:
        target = pending.pop()
        if isinstance(target, (ast.Tuple, ast.List)):
            pending.extend(target.elts)
        elif isinstance(target, ast.Name):
            names.append(target.id)
        else:
            return []  # ``for self.fn in fns``: kept where the code cannot follow it
    return names


def _makes_record(call: ast.Call) -> bool:
    """``Model(step=step)``: a class by its name (dataclasses, NamedTuples, chex and flax
    structs keep each keyword as the attribute of that name)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name[:1].isupper()


def _called(facts: Facts, node: ast.expr) -> bool:
    call = facts.parent(node)
    return isinstance(call, ast.Call) and call.func is node


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


def _single_target(statement: ast.AST) -> ast.expr | None:
    """The one target of ``target = value`` or ``target: T = value``."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        return statement.targets[0]
    if isinstance(statement, ast.AnnAssign):
        return statement.target
    return None


def _single_attribute(statement: ast.AST) -> str | None:
    """``attr`` for ``<anything>.attr = value``."""
    target = _single_target(statement)
    return target.attr if isinstance(target, ast.Attribute) else None


def single_name(statement: ast.AST) -> str | None:
    target = _single_target(statement)
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
