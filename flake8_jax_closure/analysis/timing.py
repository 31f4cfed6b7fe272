"""Can a compiled call follow this change, with the value traced before it?

A change is stale-making when, in some driver's straight-line code (see ``callgraph``), the
compiled object can be traced before the change and called after it:

- *sequence*: the object is called or handed on before the change, and called or handed on
  after it (or handed on at all: whoever holds it may call it at any time);
- *loop*: the change sits in a loop that also uses the object, and the object outlives an
  iteration (it was made before the loop, or it shares the trace cache of a function made
  before it);
- *repetition*: the change and a use sit in a function that runs more than once (called twice,
  in a loop, handed on, or called from outside), the object outlives that function's run, and
  either the use comes before the change or the change can set another value on each run;
- *handed on*: the function making the change is handed on, and the object is handed on too,
  or used after that point more than once;
- *outside*: code outside the module can both make the change and call the object (both are
  reached from functions nothing in the module calls, or were handed on).

An object made inside a function is a new object on every run of that function (a new
function object has an empty cache): its uses count only within that run, unless it is handed
on, after which a change anywhere else counts. Returned to the module's own callers, each call's
result is another object: a change falls between the uses of one result, or counts not at all.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from functools import partial
from typing import TypeVar

from ..diagnostics import Role, WitnessStep
from .blocks import held_by_try_or_with, items_spanning, place_of
from .callgraph.events import Event, EventKind, Reach, level, made_in_its_run
from .callgraph.functions import CONSTRUCTORS
from .callgraph.graph import CallGraph
from .compiled import CompiledFunction, Form
from .constructor_stores import kept_in_self_until
from .eager import runs_eagerly
from .evaluation_order import happens_before, precedes
from .facts.model import BindingKind, Pos, Scope, ScopeKind
from .facts.queries import Facts
from .first_pass import first_pass_only
from .fresh_statics import given_fresh_statics
from .names import NON_ARRAYS_STATIC, OWN_CACHE_TRANSFORMS
from .pass_shapes import PassShapes, reshaped_each_pass
from .reachable import breaks_out, cut_off, run_ended
from .receiver import method_self_name
from .remade import arguments_remade
from .shaped_by_change import shaped_by_change
from .shapes import Shape, call_shapes
from .single_pass import runs_at_most_once
from .static_arguments import (
    StaticParameters,
    StaticValue,
    counter_of_each_pass,
    static_parameters,
    static_values,
    switched_with_change,
)
from .unbindable import cannot_bind


@dataclass
class CompiledLife:
    """Everything that can call one compiled object, and where it is made."""

    reach: Reach
    # The function whose every run makes a new object; None for module and class level.
    home: Scope | None
    # The code that makes the object, the loops around that point there, and whether each pass
    # through that point makes a new object.
    maker: Scope | None
    made_loops: tuple[ast.AST, ...]
    fresh: bool
    # The code that defines the compiled Python function, and the loops around the definition
    # there: a function defined anew in each pass has a new cache in each pass.
    definer: Scope | None = None
    defined_loops: tuple[ast.AST, ...] = ()
    # The compiled function's own ``def`` or ``lambda``, and the expression making the object.
    definition: ast.AST | None = None
    made: ast.AST | None = None
    # The name the object is bound to where it is made (``def step`` decorated, ``step =
    # jax.jit(...)``), if any.
    bound_name: str | None = None
    # The static parameters of the compiled function, whose values key its traces, and
    # whether every argument that is not an array is static (``equinox.filter_jit``).
    static: StaticParameters | None = None
    numbers_static: bool = False


def compiled_life(
    graph: CallGraph, sites: list[CompiledFunction], object_home: Scope | None = None
) -> CompiledLife:
    """Where the compiled object is traced and called. With ``object_home``, a function each
    run of which calls it on an object of its own, which no earlier run's trace was made for
    (a method compiled with ``self`` static, hashed by identity, of an object made there)."""
    first = sites[0]
    definition = first.scope.parent
    assert definition is not None
    definer = definition.function()
    home = definer if definer.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA) else None
    if object_home is not None:
        home = object_home
    if home is not None and memoised(graph, home):
        home = _memo_lifetime(graph, home)  # every call returns the object made by the first
    # A call whose arguments cannot bind raises before any trace: it neither traces nor reuses.
    direct = [e for e in graph.compiled_events(sites) if not _unbindable(graph, sites, e)]
    fresh = all(_fresh(graph, site) for site in sites)
    maker, made_at, made_loops = level(first.site_scope, first.created_at, first.created_loops)
    if (
        first.transform in OWN_CACHE_TRANSFORMS
        and maker.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA)
        and not memoised(graph, maker)
    ):
        home = maker  # each run of the code making the wrapper makes a new cache
    reach = graph.propagate(direct, home)
    # Calls under ``jax.disable_jit()`` run the Python function: they neither trace nor reuse.
    reach.events = [
        e
        for e in reach.events
        if not (
            e.kind is EventKind.RUN
            and e.node is not None
            and runs_eagerly(graph.facts, e.driver, e.node)
        )
    ]
    if len(sites) == 1 and first.bound_name is not None:
        reach.events = _while_named(graph, first, reach.events, maker, made_at, made_loops, fresh)
    reach.events = _after_definition(first.scope, reach.events)
    if graph.holders_outside(sites):
        reach.add_entry(first.scope)
    definer_scope, _, defined_loops = level(definition, first.scope.start, first.scope.loops)
    return CompiledLife(
        reach,
        home,
        maker,
        made_loops,
        fresh,
        definer_scope,
        defined_loops,
        first.scope.node,
        first.site,
        first.bound_name if len(sites) == 1 else None,
        static_parameters(sites),
        all(site.transform in NON_ARRAYS_STATIC for site in sites),
    )


def _unbindable(graph: CallGraph, sites: list[CompiledFunction], event: Event) -> bool:
    """The event is a call (``step(w, lr=0.1)``) that plainly names the compiled object and
    whose arguments bind to none of the sites' compiled functions (see ``unbindable``)."""
    if event.kind is not EventKind.RUN or event.node is None:
        return False
    call = graph.facts.parent(event.node)
    if not isinstance(call, ast.Call) or call.func is not event.node:
        return False
    for site in sites:
        binds_self = _binds_self(graph, site, call, event.driver)
        if binds_self is None or not cannot_bind(site, call, binds_self):
            return False
    return True


def _binds_self(
    graph: CallGraph, site: CompiledFunction, call: ast.Call, driver: Scope
) -> bool | None:
    """Whether the call passes ``self`` first (never, for the shapes judged), for the two call
    shapes that plainly name the compiled object: ``step(...)`` of a name bound once outside a
    class, and ``self.train_step(...)`` in a method of the class whose method stored
    ``self.train_step = jax.jit(train_step)`` on its own ``self`` (an instance attribute,
    stored nowhere else, does not bind). None for any other shape, which is not judged: a
    class attribute or one stored on the class binds as a method, and may be shadowed on an
    instance (``self.apply = partial(self.apply, temp=t)``); ``run = partial(step, w)``;
    ``Model.apply(m, x)``, ``cls.scaled(x)``."""
    func = call.func
    facts = graph.facts
    if site.form is Form.PASSED:
        stored = facts.parent(site.site)
        if not (
            isinstance(stored, ast.Assign)
            and len(stored.targets) == 1
            and isinstance(target := stored.targets[0], ast.Attribute)
            and isinstance(target.value, ast.Name)
            and method_self_name(site.site_scope) == target.value.id
            and isinstance(func, ast.Attribute)
            and func.attr == target.attr
            and isinstance(func.value, ast.Name)
            and driver.parent is site.site_scope.parent
            and method_self_name(driver) == func.value.id
            and len(facts.attribute_changes(target.attr)) == 1
            and _one_definition(graph, site)
            and not _sets_attributes_by_name(facts.tree)
        ):
            return None
        return False
    name = site.bound_name
    if name is None or site.site_scope.kind is ScopeKind.CLASS:
        return None
    if not isinstance(func, ast.Name) or func.id != name:
        return None
    binder = facts.resolve(driver, name)
    if (
        binder is not facts.resolve(site.site_scope, name)
        or len(facts.bindings_of(binder, name)) != 1
    ):
        return None
    return False if _one_definition(graph, site) else None


def _one_definition(graph: CallGraph, site: CompiledFunction) -> bool:
    """The compiled function is the only one its name can hold where it is compiled: a
    decorated ``def``, a lambda, or ``jax.jit(update)`` of a name bound once (not ``def update``
    in both branches of an ``if``, where the call may be meant for the other)."""
    if site.form is Form.DECORATOR:
        return True
    call = site.site
    if not isinstance(call, ast.Call) or not call.args:
        return False
    argument = call.args[0]
    if not isinstance(argument, ast.Name):
        return isinstance(argument, ast.Lambda)
    owner = graph.facts.resolve(site.site_scope, argument.id)
    return len(graph.facts.bindings_of(owner, argument.id)) == 1


def _sets_attributes_by_name(tree: ast.AST) -> bool:
    """``setattr(obj, name, value)`` with a computed name, or ``obj.__dict__`` used: the
    module may replace any attribute, whatever ``attribute_changes`` lists."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "__dict__":
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and not (len(node.args) > 1 and isinstance(node.args[1], ast.Constant))
        ):
            return True
    return False


def _every_pass(node: ast.AST, loop: ast.AST, uses: list[Event], name: str | None = None) -> bool:
    """Whether ``node`` runs in every pass of the loop in which the object is used: it sits in
    the loop's body, and every ``if``, ``try``, ``match`` or inner loop around it there also
    holds every use in the loop (``if spmd: def step...; step(x)``). Not so for
    ``if step is None: def step...`` followed by ``step(x)``: defined once, used each pass.
    With ``name``, the name the object is bound to: an ``if`` each of whose branches binds the
    name anew (``if dim == 1: def lap... else: def lap...``) makes a new object for it in every
    pass, whichever branch runs, so no later pass reaches this one's by the name, when every
    use calls it by that name (not ``first = first or step``, which keeps an earlier one)."""
    lines = [u.at[0] for u in uses if loop in u.loops]
    statements: list[ast.stmt] = list(getattr(loop, "body", []))
    while True:
        holder = next((st for st in statements if _contains(st, node)), None)
        if holder is None:
            return False
        if not isinstance(holder, _BRANCHING + (ast.With, ast.AsyncWith)):
            return True
        if isinstance(holder, _BRANCHING):
            first, last = holder.lineno, holder.end_lineno or holder.lineno
            if not all(first <= line <= last for line in lines):
                return (
                    name is not None
                    and isinstance(holder, ast.If)
                    and all(first > line or line > last for line in lines)
                    and _binds_in_every_branch(holder, name)
                    and all(_calls_name(u, name) for u in uses if loop in u.loops)
                )
        statements = [
            inner
            for field in ("body", "orelse", "handlers", "finalbody", "cases")
            for child in getattr(holder, field, [])
            for inner in (child.body if isinstance(child, (ast.ExceptHandler, ast.match_case))
                          else [child])
        ]  # fmt: skip


def _binds_in_every_branch(branch: ast.If, name: str) -> bool:
    """Every way through the ``if`` (its ``elif`` chain and ``else`` included) has a statement
    of its own binding ``name`` to a new object: a ``def``, a ``class`` or ``name = lambda``
    (not ``step = previous`` or ``step = cache[mode]``, which may be an earlier pass's)."""
    if not branch.orelse:
        return False
    ways = [branch.body]
    rest = branch.orelse
    while len(rest) == 1 and isinstance(rest[0], ast.If):
        if not rest[0].orelse:
            return False
        ways.append(rest[0].body)
        rest = rest[0].orelse
    ways.append(rest)
    return all(any(_binds(statement, name) for statement in way) for way in ways)


def _binds(statement: ast.stmt, name: str) -> bool:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return statement.name == name
    if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Lambda):
        return any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)
    return False


def _contains(statement: ast.stmt, node: ast.AST) -> bool:
    first, last = statement.lineno, statement.end_lineno or statement.lineno
    line = getattr(node, "lineno", None)
    if line is None or not first <= line <= last:
        return False
    return any(inner is node for inner in ast.walk(statement))


_BRANCHING = (ast.If, ast.Try, ast.For, ast.AsyncFor, ast.While, ast.Match)


_MEMOISING = frozenset({"functools.lru_cache", "functools.cache"})


def memoised(graph: CallGraph, function: Scope) -> bool:
    """``@functools.lru_cache`` or ``@functools.cache`` on the function making the object."""
    parent = function.parent
    for decorator in getattr(function.node, "decorator_list", []):
        expr = decorator.func if isinstance(decorator, ast.Call) else decorator
        if parent is not None and graph.facts.qualified_name(parent, expr) in _MEMOISING:
            return True
    return False


def _memo_lifetime(graph: CallGraph, function: Scope) -> Scope | None:
    """The function each run of which makes the memoised ``function`` anew, with an empty
    cache (``@lru_cache def compiled_for(d)`` defined inside ``render``: every call of
    ``render`` gets new compiled objects); None when it is made once (at module level)."""
    parent = function.parent
    definer = parent.function() if parent is not None else None
    if definer is None or definer.kind not in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
        return None
    return _memo_lifetime(graph, definer) if memoised(graph, definer) else definer


def _after_definition(function: Scope, events: list[Event]) -> list[Event]:
    """Module code that runs before the top-level statement defining the compiled function
    (or the function or class around it) runs before the object can exist: a notebook's first
    cells cannot call a method of a class defined in a later cell, whatever its name."""
    top = function
    while top.parent is not None and top.parent.kind is not ScopeKind.MODULE:
        top = top.parent
    if top.parent is None:
        return events
    decorators = getattr(top.node, "decorator_list", [])
    begins = min([top.start, *((d.lineno, d.col_offset) for d in decorators)])
    return [
        e
        for e in events
        if not (
            e.driver.kind is ScopeKind.MODULE
            and e.at < begins
            and not set(e.loops) & set(top.loops)
        )
    ]


def _fresh(graph: CallGraph, site: CompiledFunction) -> bool:
    """Whether each pass through the compile site makes an object with a new cache: a decorated
    ``def`` or a lambda is a new function; so is ``jax.jit(jax.grad(f))`` (``grad`` makes a
    new function); ``jax.jit(f)`` shares ``f``'s cache unless ``f`` is made in the same loops.
    ``jax.jit(model.apply)`` in a loop makes a new wrapper of a bound method in each pass,
    which JAX traces again (checked on an object made in each pass, and on one kept across
    passes)."""
    if (
        site.form is Form.DECORATOR
        or isinstance(site.function, ast.Lambda)
        or site.transform in OWN_CACHE_TRANSFORMS
    ):
        return True
    call = site.site
    argument = call.args[0] if isinstance(call, ast.Call) and call.args else None
    if argument is not None and not isinstance(argument, ast.Name):
        if not _static_method_of(site, argument) and not _memoised_call(graph, site, argument):
            return True
    return set(site.created_loops) <= set(site.scope.loops)


def _memoised_call(graph: CallGraph, site: CompiledFunction, argument: ast.expr) -> bool:
    """``jax.jit(make_update("sgd"))`` of a memoised factory given constants: the function it
    returns is the one its first such call made, so every wrapper shares its traces."""
    factory = site.scope.parent
    return (
        isinstance(argument, ast.Call)
        and all(isinstance(a, ast.Constant) for a in argument.args)
        and not argument.keywords
        and factory is not None
        and memoised(graph, factory)
    )


def _static_method_of(site: CompiledFunction, argument: ast.expr) -> bool:
    """``jax.jit(self._update)`` or ``jax.jit(Trainer._update)`` of a ``@staticmethod``: the
    attribute is the plain function itself each time, not a new bound method, so every such
    wrapper shares that function's traces."""
    function = site.function
    return (
        isinstance(argument, ast.Attribute)
        and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        and argument.attr == function.name
        and any(
            isinstance(decorator, ast.Name) and decorator.id == "staticmethod"
            for decorator in function.decorator_list
        )
    )


def _while_named(
    graph: CallGraph,
    site: CompiledFunction,
    events: list[Event],
    maker: Scope,
    made_at: Pos,
    made_loops: tuple[ast.AST, ...],
    fresh: bool,
) -> list[Event]:
    """In the code that makes the object, only what runs between its making and the next
    rebinding of its name can use it (``def loss`` again in a later notebook cell makes a new
    object); before its making only in a later pass of a loop, if the pass does not make a
    new object."""
    assert site.bound_name is not None
    binder = graph.facts.resolve(site.site_scope, site.bound_name)
    until = graph.next_binding(binder, site.bound_name, site.created_at, site.created_loops)
    kept = []
    for event in events:
        if event.driver is maker:
            if event.at >= until:
                continue
            if event.at < made_at and (fresh or not set(made_loops) & set(event.loops)):
                continue
        kept.append(event)
    return kept


@dataclass(frozen=True)
class StalePath:
    """How a change can fall between a trace and a later compiled call.

    A *witness* is a path the code shows: a compiled call that traces, the change, and a later
    compiled call of the same object, each in code that runs (module statements, a loop, a
    function the code runs more than once). Without one, only code outside the module can order
    the change between two calls: an *API hazard*, through the functions it would call
    (``entries``) or the objects handed to it (``handed_on``)."""

    steps: tuple[WitnessStep, ...] = ()
    # Functions outside code would call: those that make the change, those that use the object.
    changers: tuple[Scope, ...] = ()
    callers: tuple[Scope, ...] = ()
    handed_on: tuple[Event, ...] = ()
    # The code a witness runs in (the change's driver), for the question whether it runs.
    driver: Scope | None = None
    # An API hazard's path inside a function nothing shows running: what a run of it does.
    inside: tuple[WitnessStep, ...] = ()
    # An API hazard of a loop whose passes slice the arguments by what the function is given:
    # stale when two passes get one length (see ``pass_shapes``), along the path ``inside``.
    reshaped: ast.AST | None = None

    @property
    def witnessed(self) -> bool:
        return bool(self.steps)


def stale_path(
    graph: CallGraph,
    life: CompiledLife,
    change: Reach,
    varies: bool = True,
    retraced_by_shape: bool = True,
    steady: Callable[[ast.AST], bool] | None = None,
    reshaped_passes: bool = True,
    rebound: tuple[str, ...] = (),
) -> StalePath | None:
    """How the change (its events, or outside code) can fall between a trace and a call: a
    witness when the code shows one, else an API hazard; None when it cannot.

    ``varies``: the change can set a different value on each run of its code (it depends on
    the function's arguments or on the old value); a change that sets the same value every
    time makes nothing stale by being repeated. ``steady``: whether the change sets the same
    value in every pass of a loop around it. ``retraced_by_shape``: a new trace of the
    compiled function reads the value afresh (not so for a ``lax.scan`` body, whose trace JAX
    keeps while the shapes of its slices stay the same). ``reshaped_passes``: passes of a loop
    that give the compiled calls arguments of their own shapes trace anew (not so for a body
    handed to ``lax.cond`` or ``lax.fori_loop``, whose trace JAX keeps while what the body is
    given keeps its shape, which a new outer shape may leave the same). ``rebound``: the name
    a rebinding binds, when the change is one, and the names its value is a function of
    (``shaped_by_change.sizing_names``): calls given arrays one of them sizes trace anew.

    Witnesses are looked for first: a hazard is kept only in case none turns up."""
    uses = life.reach
    hazard: StalePath | None = None
    used = {id(e) for e in uses.events}

    def order(first: Event, second: Event) -> bool:
        """Whether ``first`` happens before ``second``: one is a use, the other the change. A
        call of an object that the changing statement itself made (``make(3)(x)``, where
        ``make`` changes the value) is no later call of an object traced before it."""
        if id(first) in used:
            return happens_before(graph.facts, first, uses, second, change)
        if _result_called(second, first):
            return False
        return happens_before(graph.facts, first, change, second, uses)

    if change.outside and _outside(uses, change, varies):
        hazard = _hazard(uses, change)
    home = life.home
    if hazard is None and home is not None and uses.handed_on:
        # Handed on out of its home's run: whoever holds it may call it around any change
        # made elsewhere; not around one made in the code around the home before the home
        # exists (that code's later runs make new objects).
        if change.outside or any(
            not e.driver.is_within(home) and not _before_home(graph, e, home) for e in change.events
        ):
            hazard = _hazard(uses, change)
    for event in change.events:
        # A use in a block that ends the program comes after nothing outside it.
        tree = graph.facts.tree
        # In a function each run of which makes a new object that it keeps to itself, a use
        # in a block that returns comes after nothing outside it in that run, and no later
        # run calls the same object.
        ends_run = event.driver is home and _kept_to_its_run(graph, life)
        here = [
            u
            for u in uses.in_driver(event.driver)
            if not (u.at < event.at and cut_off(tree, u.at[0], event.at[0]))
            and not (u.at > event.at and cut_off(tree, event.at[0], u.at[0]))
            and not (ends_run and _run_ended(tree, home, u.at[0], event.at[0]))
        ]
        # Importers' code runs after the module's own, except after a script's main block.
        module_outside = (
            event.driver.kind is ScopeKind.MODULE
            and uses.outside
            and not graph.facts.in_script(event.at[0])
        )
        # A body handed to ``lax.scan``, ``lax.cond`` or ``lax.fori_loop`` keeps its trace
        # through the compiled object's ``clear_cache()``: only ``jax.clear_caches()`` drops it.
        in_body = not (retraced_by_shape and reshaped_passes)
        if event.kind is EventKind.RUN and _cache_cleared_after(
            graph.facts, event, life, here, every_cache=in_body
        ):
            continue  # ``step.clear_cache()`` right after: the next call traces again
        if event.kind is EventKind.ESCAPE:
            # The function making the change is handed on: whoever holds it may run it at any
            # time, which the code does not show.
            after = [u for u in here if u.at > event.at]
            if (
                module_outside
                or any(u.kind is EventKind.ESCAPE for u in here)
                or (after and (len(here) > 1 or any(u.loops for u in after)))
            ):
                hazard = hazard or _hazard(uses, change, (event,))
            continue
        for same_object in _by_object(here):
            # Stored on ``self`` by its constructor before the change, with nothing between
            # that could run it: no holder can call it until the change is made.
            same_object = [u for u in same_object if not kept_in_self_until(graph.facts, u, event)]
            if not same_object:
                continue
            if _sequence(order, event, same_object, module_outside) and not (
                retraced_by_shape
                and (
                    _traced_anew(graph, life, event, same_object)
                    # A new static value or pytree type leaves what a body handed to
                    # ``lax.cond`` or ``lax.fori_loop`` is given as it was: JAX takes back
                    # that body's old trace, with the old value.
                    or (reshaped_passes and _new_static_values(graph, life, event, same_object))
                    or (reshaped_passes and _static_switched(graph, life, event, here, varies))
                    or (reshaped_passes and _new_argument_types(graph, event, same_object))
                    or arguments_remade(graph.facts, event, same_object, reach=uses.events)
                    or any(shaped_by_change(graph.facts, n, event, same_object) for n in rebound)
                    # ``state = TrainState.create(..., tx=optax.adam(lr))`` since the change:
                    # a new optimiser is a new structure, and a new trace.
                    or given_fresh_statics(graph.facts, event, same_object)
                )
            ):
                witness = _sequence_witness(graph, life, order, event, same_object)
                if witness is not None:
                    return witness
                hazard = hazard or _hazard(uses, change)
        loop = _loop(graph.facts, event, here, life)
        if loop is not None and _first_pass_before_uses(event, loop, here):
            loop = None  # set up in the first pass only, before its first compiled call
        if loop is not None and graph.stops_in_first_pass(event.driver, loop):
            loop = None  # the first pass always raises: no pass reuses its trace
        if (
            loop is not None
            and steady is not None
            and _set_first_each_pass(event, loop, here, steady)
        ):
            loop = None
        reshaped = (
            reshaped_each_pass(graph.facts, loop, event, uses)
            if loop is not None and retraced_by_shape and reshaped_passes and not module_outside
            else None
        )
        if loop is not None and reshaped is PassShapes.GIVEN:
            # Each pass slices an argument to its own length from what the function is given,
            # and the module's calls give lengths that differ: a caller outside the module may
            # give two passes one length, along the path the loop would show.
            in_loop = [u for u in here if loop in u.loops]
            use = min(in_loop, key=_at)
            line = loop.lineno  # type: ignore[attr-defined]
            shown = _path(use, event, use, f"next pass of the loop at line {line}")
            hazard = hazard or StalePath(
                changers=(event.driver,), callers=(event.driver,), inside=shown.steps,
                reshaped=loop,
            )  # fmt: skip
        if (
            loop is not None
            and reshaped is None
            and not (
                # Each pass remakes the arguments with the new value before calling (``net =
                # MLP(width); params = net.init(...)``): a new architecture is a new trace.
                retraced_by_shape
                and (
                    arguments_remade(
                        graph.facts,
                        event,
                        [u for u in here if loop in u.loops],
                        whole=True,
                        reach=uses.events,
                    )
                    # Every call's arguments are shaped by the name the pass binds.
                    or any(shaped_by_change(graph.facts, n, event, here) for n in rebound)
                    # Every call of the pass is given a state made with a new optimiser.
                    or given_fresh_statics(
                        graph.facts, event, [u for u in here if loop in u.loops], whole=True
                    )
                    # Every call gives a static argument the pass's own counter (not
                    # for a body handed to ``lax.cond`` or ``lax.fori_loop``, as above).
                    or (
                        reshaped_passes
                        and _static_counter_each_pass(graph, life, loop, event, here)
                    )
                    # The pass that changes the value gives the calls a new static constant.
                    or (reshaped_passes and _static_switched(graph, life, event, here, varies))
                )
            )
        ):
            in_loop = [u for u in here if loop in u.loops]
            # A call shows the trace and its reuse better than handing the object on.
            calls = [u for u in in_loop if u.kind is EventKind.RUN]
            use = min(calls or in_loop, key=_at)
            line = loop.lineno  # type: ignore[attr-defined]
            return _path(use, event, use, f"next pass of the loop at line {line}")
        # A driver each run of which calls only objects it made itself (``fn = make(cfg);
        # fn(x)``) uses a new object when it runs again: no repeat reuses this run's trace.
        if here and _repeats(graph, event.driver, life) and not all(map(made_in_its_run, here)):
            # The next run uses the object traced in this run, before or after the change.
            if varies or any(u.at < event.at for u in here):
                next_run = _next_run(graph, event.driver, _per_object(life))
                if next_run is not None:
                    use = min(here, key=_at)
                    # Run again by the code that calls it: that code shows it runs.
                    return replace(_path(use, event, use, next_run), driver=None)
                hazard = hazard or StalePath(changers=(event.driver,), callers=(event.driver,))
    return hazard


def in_running_code(
    graph: CallGraph, path: StalePath, called_elsewhere: Callable[[Scope], bool]
) -> StalePath:
    """The path, when its witness runs in code the project shows running; else the API hazard
    of the function it runs in (``def main(): for ...`` that nothing calls: a caller outside
    the project may run it). ``called_elsewhere``: whether another module of the project calls
    the function."""
    if path.reshaped is not None and called_elsewhere(path.changers[0]):
        # Another module of the project calls the function, with values this module does not
        # show: the path the loop shows stands.
        path = StalePath(path.inside, driver=path.changers[0])
    driver = path.driver
    if driver is None or _runs(graph, driver, called_elsewhere, frozenset()):
        return path
    return StalePath(changers=(driver,), callers=(driver,), inside=path.steps)


def _runs(
    graph: CallGraph,
    function: Scope,
    called_elsewhere: Callable[[Scope], bool],
    seen: frozenset[int],
) -> bool:
    """Whether the code shows ``function`` running: module code, or a function that running
    code calls or hands on, a method Python or a test runner calls by its name (``__init__``,
    ``test_*``), one registered by a decorator, or one another module of the project calls."""
    if function.kind is not ScopeKind.FUNCTION:
        return True
    name = function.name
    if name.startswith("test") or (name.startswith("__") and name.endswith("__")):
        return True
    parent = function.parent
    decorators = getattr(function.node, "decorator_list", [])
    if parent is not None and any(
        not graph.functions.is_compile_or_known(parent, d) for d in decorators
    ):
        return True
    for event in graph.uses_of_function(function).events:
        if event.kind is EventKind.ESCAPE:
            return True  # handed on: whoever holds it may run it
        caller = event.driver
        if caller is function or id(caller) in seen:
            continue
        if _runs(graph, caller, called_elsewhere, seen | {id(function)}):
            return True
    return called_elsewhere(function)


def called_again_path(life: CompiledLife, written: Event) -> StalePath | None:
    """A value the compiled code writes while tracing (``self.n += 1; return self.n``): stale
    from the second compiled call on. A witness when the code calls the object twice or in a
    loop; a hazard when only code it is handed to, or outside code, can."""
    runs = sorted((e for e in life.reach.events if e.kind is EventKind.RUN), key=_at)
    # The one call in a function that another event calls is that event's call, not another:
    # ``solve()`` calling ``train()`` once is one compiled call, however deep.
    callers = {id(e.via) for e in runs if e.via is not None}
    per_driver = Counter(id(e.driver) for e in runs)
    runs = [
        e for e in runs if e.loops or id(e.driver) not in callers or per_driver[id(e.driver)] > 1
    ]
    for run in runs:
        if run.loops:
            line = run.loops[-1].lineno  # type: ignore[attr-defined]
            return _path(run, written, run, f"next pass of the loop at line {line}")
    if len(runs) > 1:
        return _path(runs[0], written, runs[1])
    if life.reach.escapes:
        return StalePath(callers=_in_order(life.reach.entries), handed_on=_handed_on(life.reach))
    return None


def _at(event: Event) -> Pos:
    return event.at


def _path(trace: Event, change: Event, reuse: Event, again: str | None = None) -> StalePath:
    return StalePath(
        (
            _step(Role.TRACE, trace),
            _step(Role.CHANGE, change),
            _step(Role.REUSE, reuse, again),
        ),
        driver=change.driver,
    )


def _step(role: Role, event: Event, again: str | None = None) -> WitnessStep:
    """Where the event happens in its driver, and the function called there that does it.
    A change the driver makes itself takes effect where its statement ends (``scale = 2.0``
    binds after the value is made), which is how events are ordered; it is shown where the
    statement starts, which a reader finds."""
    via = event.via.name if event.via is not None else None
    line, column = event.at
    node = event.node
    if (
        role is Role.CHANGE
        and isinstance(node, (ast.stmt, ast.expr))
        and (node.end_lineno, node.end_col_offset) == event.at
    ):
        line, column = node.lineno, node.col_offset
    return WitnessStep(role, line, column, via=via, again=again)


def _result_called(use: Event, change: Event) -> bool:
    """The use calls what an expression making the change returned (``make(3)(x)``): an
    object that expression made, not one traced before it."""
    called = use.node
    made = change.node
    if not isinstance(called, ast.Call) or made is None or made is called:
        return False
    return any(node is made for node in ast.walk(called))


def _sequence_witness(
    graph: CallGraph,
    life: CompiledLife,
    order: Callable[[Event, Event], bool],
    change: Event,
    uses: list[Event],
) -> StalePath | None:
    """The first use before the change and the first after it, when both run in the code (a
    call, or handing the object to a call, which runs it there)."""
    before = [u for u in uses if order(u, change) and _runs_here(graph, u)]
    after = [u for u in uses if order(change, u) and _runs_here(graph, u)]
    if not before or not after:
        return None
    return _path(*_reusing_pair(graph, life, before, after, change))


def _reusing_pair(
    graph: CallGraph,
    life: CompiledLife,
    before: list[Event],
    after: list[Event],
    change: Event,
) -> tuple[Event, Event, Event]:
    """The trace, the change and the reuse to show: the first calls before and after the
    change; but when every call's argument shapes (or static values) are written out, the
    first call after the change given what a call before it was given, and the first such
    call before: a call given new shapes or static values traces anew and reuses nothing."""
    first = (min(before, key=_at), change, min(after, key=_at))
    uses = (*before, *after)
    shapes = {id(u): _written_shapes(graph, life, u) for u in uses}
    statics = {id(u): _static_keys(graph, life, u) for u in uses}
    by_shape = None not in shapes.values()
    by_static = None not in statics.values()
    if not by_shape and not by_static:
        return first

    def shared(traced: Event, reuse: Event) -> bool:
        """The two calls may share a trace: alike in every key written out."""
        if by_shape and shapes[id(traced)] != shapes[id(reuse)]:
            return False
        return not by_static or bool(
            (statics[id(traced)] or frozenset()) & (statics[id(reuse)] or frozenset())
        )

    for reuse in sorted(after, key=_at):
        traced = [u for u in before if shared(u, reuse)]
        if traced:
            return min(traced, key=_at), change, reuse
    return first


def _written_shapes(graph: CallGraph, life: CompiledLife, use: Event) -> tuple[Shape, ...] | None:
    if use.kind is not EventKind.RUN or use.node is None or use.via is not None:
        return None
    return call_shapes(graph.facts, use.node, use.driver, life.numbers_static)


def _runs_here(graph: CallGraph, use: Event) -> bool:
    """A compiled call, or the object handed to a call there (``trainer.fit(step)``), which
    runs it then; not a ``return`` or a store, after which the code does not say when it
    runs."""
    if use.kind is EventKind.RUN or use.via is not None:
        return True
    parent = graph.facts.parent(use.node) if use.node is not None else None
    if isinstance(parent, ast.keyword):
        parent = graph.facts.parent(parent)
    return isinstance(parent, ast.Call) and parent.func is not use.node


def _per_object(life: CompiledLife) -> bool:
    """The compiled object is made by a constructor from a function the constructor itself
    defines (``def unroll...; self.unroll = jax.jit(unroll)`` in ``__init__``): each object
    calls its own, with its own traces. Not ``jax.jit(score)`` of a module's function, whose
    traces JAX keeps with the function, shared by every object."""
    maker = life.maker
    return (
        maker is not None
        and maker.name in CONSTRUCTORS
        and maker.parent is not None
        and maker.parent.kind is ScopeKind.CLASS
        and life.definer is maker
    )


def _next_run(graph: CallGraph, driver: Scope, per_object: bool = False) -> str | None:
    """Where the code runs ``driver`` again: a second call, or a call in a loop. With
    ``per_object`` (each object has its own compiled object), calls in a method and in its
    override are one run per object (see ``_one_per_object``)."""
    runs = sorted(
        (e for e in graph.uses_of_function(driver).events if e.kind is EventKind.RUN), key=_at
    )
    for run in runs:
        if _loops_again(graph, run):
            line = run.loops[-1].lineno  # type: ignore[attr-defined]
            return f"next call of '{driver.name}()' in the loop at line {line}"
    if per_object:
        runs = _one_per_object(graph, runs)
    if len(runs) > 1:
        return f"next call of '{driver.name}()' at line {runs[1].at[0]}"
    return None


def _one_per_object(graph: CallGraph, runs: list[Event]) -> list[Event]:
    """The runs, less those in a method that overrides, or is overridden by, the method of an
    earlier run: for one object only one of the two runs (``Evaluator.run_evaluation`` and
    ``Attacked.run_evaluation`` each calling ``self._run_evaluation()`` once), unless the
    override calls the other through ``super()``. Only for a compiled object each object
    makes for itself: one shared by all objects (a module-level ``@jax.jit``) is traced by
    one object's run and reused by another's."""
    kept: list[Event] = []
    for run in runs:
        if not any(_alternatives(graph, earlier.driver, run.driver) for earlier in kept):
            kept.append(run)
    return kept


def _alternatives(graph: CallGraph, first: Scope, second: Scope) -> bool:
    first_class, second_class = first.parent, second.parent
    if (
        first is second
        or first.name != second.name
        or first_class is None
        or second_class is None
        or first_class is second_class
        or first_class.kind is not ScopeKind.CLASS
        or second_class.kind is not ScopeKind.CLASS
        or not graph.related(first_class, second_class)
    ):
        return False
    return not (_calls_super(first) or _calls_super(second))


def _calls_super(method: Scope) -> bool:
    """``super().<name>(...)``, or ``Base.<name>(self, ...)``, in the method's own body: it
    runs the method it overrides."""
    for node in ast.walk(method.node):
        if not (isinstance(node, ast.Attribute) and node.attr == method.name):
            continue
        if (
            isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "super"
        ):
            return True
        if isinstance(node.value, ast.Name) and node.value.id != (method.params[:1] or ("",))[0]:
            return True  # ``Evaluator.run_evaluation(self, logits)``
    return False


def _hazard(uses: Reach, change: Reach, handed_on: tuple[Event, ...] = ()) -> StalePath:
    """An API hazard: the entry points of the change and of the object, and where either is
    handed to code the module does not show."""
    return StalePath(
        changers=_in_order(change.entries),
        callers=_in_order(uses.entries),
        handed_on=handed_on or _handed_on(uses),
    )


def _in_order(scopes: list[Scope]) -> tuple[Scope, ...]:
    """Each once, in the order they stand in the module."""
    return tuple(sorted({id(s): s for s in scopes}.values(), key=lambda s: s.start))


def _handed_on(uses: Reach) -> tuple[Event, ...]:
    return tuple(e for e in uses.events if e.kind is EventKind.ESCAPE)


def _outside(uses: Reach, change: Reach, varies: bool) -> bool:
    """Outside code calls the module's entry points in any order: a trace by one, the change
    by another, a call by a third. Entry points that both change and call are stale-making
    when they use the object before the change, or change it to another value each run."""
    if uses.handed_on:
        return True
    changers = {id(entry) for entry in change.entries}
    for entry in uses.entries:
        if id(entry) not in changers:
            return True
        before = any(u.at < c.at for u in uses.in_driver(entry) for c in change.in_driver(entry))
        if varies or before:
            return True
    return False


def _sequence(
    order: Callable[[Event, Event], bool], change: Event, uses: list[Event], module_outside: bool
) -> bool:
    # Handing the object on within the changing statement (``cell[0] = step``) hands it on
    # with the change made.
    starts = _start(change)
    before = [
        u for u in uses if order(u, change) and not (u.kind is EventKind.ESCAPE and u.at >= starts)
    ]
    if not before:
        return False
    after = any(order(change, u) for u in uses)
    handed_on = module_outside or any(u.kind is EventKind.ESCAPE for u in uses)
    return after or handed_on


def _by_object(uses: list[Event]) -> list[list[Event]]:
    """The uses grouped by object: each call of the function that makes the object (a new
    function, defined in each of its runs) returns another object; uses not traced to one call
    count for every object."""
    origins = {u.origin for u in uses if u.origin is not None}
    if len(origins) < 2:
        return [uses]
    shared = [u for u in uses if u.origin is None]
    return [[u for u in uses if u.origin == origin] + shared for origin in sorted(origins)]


_Key = TypeVar("_Key", bound=Hashable)


def _traced_anew(graph: CallGraph, life: CompiledLife, change: Event, uses: list[Event]) -> bool:
    """Every call after the change passes literal arrays of a shape (or Python numbers of a
    kind, or of a value where they are static) no call before it passed: JAX traces again,
    reading the new value."""
    keys = _keys_around(graph, change, uses, partial(_written_shapes, graph, life))
    return keys is not None and bool(keys[1]) and not keys[0] & keys[1]


def _keys_around(
    graph: CallGraph, change: Event, uses: list[Event], key_of: Callable[[Event], _Key | None]
) -> tuple[set[_Key], set[_Key]] | None:
    """The keys of the calls before the change and of those after it; None when one is not
    known."""
    before: set[_Key] = set()
    after: set[_Key] = set()
    for use in uses:
        key = key_of(use)
        if key is None:
            return None
        (before if precedes(graph.facts, use, change) else after).add(key)
    return before, after


def _static_key(graph: CallGraph, life: CompiledLife, use: Event) -> tuple[StaticValue, ...] | None:
    """What a compiled call gives the static parameters, as constants; None if unknown. Only
    a call by a plain name: ``obj.run(...)`` may bind ``obj`` as a first argument."""
    call = _plain_call(graph, life, use)
    if call is None or life.static is None:
        return None
    return static_values(graph.facts, life.static, call, use.driver)


def _static_keys(
    graph: CallGraph, life: CompiledLife, use: Event
) -> frozenset[tuple[StaticValue, ...]] | None:
    """What the compiled calls a use runs give the static parameters: its own call's, or
    for a call of a plain function of the module that calls the compiled function itself
    (``walk(3, 0.5)``, whose loop calls ``probs(..., temperature=temperature)``), those of
    each of its calls, its parameters given what the use passes; None if one is unknown."""
    if use.via is None:
        key = _static_key(graph, life, use)
        return None if key is None else frozenset({key})
    helper = use.via
    outer = graph.facts.parent(use.node) if use.node is not None else None
    if (
        life.static is None
        or use.kind is not EventKind.RUN
        or helper.kind is not ScopeKind.FUNCTION
        or not isinstance(outer, ast.Call)
        or outer.func is not use.node
        or not isinstance(outer.func, ast.Name)
    ):
        return None
    inner = [e for e in life.reach.events if e.driver is helper]
    keys: set[tuple[StaticValue, ...]] = set()
    for event in inner:
        call = _plain_call(graph, life, event)
        if call is None:
            return None  # handed on, or run through a further function
        key = static_values(graph.facts, life.static, call, helper, (outer, use.driver))
        if key is None:
            return None
        keys.add(key)
    return frozenset(keys) if keys else None


def _plain_call(graph: CallGraph, life: CompiledLife, use: Event) -> ast.Call | None:
    if life.static is None or use.kind is not EventKind.RUN or use.via is not None:
        return None
    call = graph.facts.parent(use.node) if use.node is not None else None
    if not isinstance(call, ast.Call) or call.func is not use.node:
        return None
    return call if isinstance(call.func, ast.Name) else None


def _new_static_values(
    graph: CallGraph, life: CompiledLife, change: Event, uses: list[Event]
) -> bool:
    """Every call after the change gives its static arguments constants no call before it
    gave (``f(x, 2)``, then ``f(x, 3)`` with the second argument static): JAX traces again,
    reading the new value."""
    if life.static is None:
        return False
    keyed = _keys_around(graph, change, uses, partial(_static_keys, graph, life))
    if keyed is None:
        return False
    before = {key for keys in keyed[0] for key in keys}
    after = {key for keys in keyed[1] for key in keys}
    forms = {tuple(how for how, _, _ in key) for key in before | after}
    # One argument given by keyword at one call and by position at another: JAX keys them
    # apart, but which call then reuses which trace is left undecided.
    return bool(after) and len(forms) == 1 and not after & before


def _static_switched(
    graph: CallGraph, life: CompiledLife, change: Event, uses: list[Event], varies: bool
) -> bool:
    """The change's block also binds the name every call gives a static parameter, to a new
    constant (``static_arguments.switched_with_change``): the next call traces again. In a
    loop, only for a change that sets one value each time it runs: a value that differs in
    each run would change again under the new key, whose trace keeps the first of them."""
    if life.static is None or not isinstance(change.node, ast.stmt):
        return False
    if change.loops and varies:
        return False
    calls = [_plain_call(graph, life, u) for u in uses]
    found = [c for c in calls if c is not None]
    if not found or len(found) != len(calls):
        return False
    return switched_with_change(
        graph.facts, life.static, change.node, found, change.driver, change.loops
    )


def _static_counter_each_pass(
    graph: CallGraph, life: CompiledLife, loop: ast.AST, change: Event, uses: list[Event]
) -> bool:
    """Every compiled call in the loop gives a static argument the loop's own counter, with
    no inner loop around both the change and the call."""
    static = life.static
    in_loop = [u for u in uses if loop in u.loops]
    if static is None or not in_loop:
        return False
    for use in in_loop:
        call = _plain_call(graph, life, use)
        if call is None or not counter_of_each_pass(graph.facts, static, call, loop, use.driver):
            return False
        # An inner loop around both the change and the call repeats with the same counter.
        inner = change.loops[change.loops.index(loop) + 1 :] if loop in change.loops else ()
        if any(other in use.loops for other in inner):
            return False
    return True


def _new_argument_types(graph: CallGraph, change: Event, uses: list[Event]) -> bool:
    """Every call after the change passes an object of a class defined again since the calls
    before it (a notebook cell defining ``class Config`` run again, then ``step(Config())``):
    a new class is a new pytree type, or a new static value, so JAX traces again."""
    facts = graph.facts
    before = [u.at for u in uses if precedes(facts, u, change)]
    after = [u for u in uses if precedes(facts, change, u)]
    if not before or not after:
        return False
    traced = max(before)
    for use in after:
        call = facts.parent(use.node) if use.node is not None else None
        if use.kind is not EventKind.RUN or use.via is not None or not isinstance(call, ast.Call):
            return False
        if not any(
            _made_from_new_class(facts, use.driver, argument, traced, use.at)
            for argument in (*call.args, *(k.value for k in call.keywords))
        ):
            return False
    return True


def _made_from_new_class(facts: Facts, driver: Scope, value: ast.expr, since: Pos, at: Pos) -> bool:
    """``Config(...)``, or a name last bound to one before ``at``, where ``Config`` is a class
    the driver defines (again) between ``since`` and ``at``."""
    if isinstance(value, ast.Name):
        owner = facts.resolve(driver, value.id)
        bound = [b for b in facts.bindings_of(owner, value.id) if b.scope is driver and b.at < at]
        if not bound:
            return False
        value = max(bound, key=lambda b: b.at).value  # type: ignore[assignment]
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
        return False
    name = value.func.id
    owner = facts.resolve(driver, name)
    return any(
        b.kind is BindingKind.CLASS and b.scope is driver and since < b.at < at
        for b in facts.bindings_of(owner, name)
    )


def _kept_to_its_run(graph: CallGraph, life: CompiledLife) -> bool:
    """Whether each run of the home makes a new object and only calls it there: the name
    the object is bound to is a local of the home (not ``global``), read only as the callee
    of a call; never returned, stored, appended or handed on, so no later run, and no code
    after the run, can call it."""
    home, name = life.home, life.bound_name
    if home is None or name is None or life.reach.handed_on:
        return False
    facts = graph.facts
    if facts.resolve(home, name) is not home or name in home.declared_global:
        return False
    definition = life.definition
    if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if len(definition.decorator_list) > 1:
            return False  # ``@keep`` beside the compile decorator may store the object
        if not definition.decorator_list and not _only_compiled(facts, home, definition.name):
            return False  # ``run = jax.jit(inner)``: ``inner`` handed on shares the cache
    if any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("locals", "vars", "eval", "exec")
        for node in ast.walk(home.node)
    ):
        return False  # ``return locals()``: every local handed on
    # Read in the home itself: a call inside a ``lambda`` or generator it returns runs later.
    return all(read.called and read.scope is home for read in facts.reads_of(home, name))


def _only_compiled(facts: Facts, home: Scope, name: str) -> bool:
    """Whether the ``def`` named ``name`` in ``home`` is read only as the one argument of a
    compile call there (``run = jax.jit(inner)``)."""
    reads = facts.reads_of(home, name)
    return len(reads) == 1 and isinstance(facts.parent(reads[0].node), ast.Call)


def _run_ended(tree: ast.Module, home: Scope | None, one: int, other: int) -> bool:
    """Whether, of two lines of ``home``, the earlier ends the run before the later runs."""
    return home is not None and run_ended(tree, home.node, min(one, other), max(one, other))


def _before_home(graph: CallGraph, event: Event, home: Scope) -> bool:
    """The event runs in code around the home before that code first runs the home (or hands
    it on): no object exists yet (``cell[0] = fn`` filling a placeholder the home reads)."""
    if not home.is_within(event.driver):
        return False
    runs = graph.propagate(list(graph.uses_of_function(home).events), None)
    starts = _start(event)
    here = [
        r.at
        for r in runs.in_driver(event.driver)
        if not (r.kind is EventKind.ESCAPE and starts <= r.at <= event.at)
    ]
    if not here:
        # Run only from outside the module: after all module code, never during a function.
        return event.driver.kind is ScopeKind.MODULE
    return event.at < min(here)


def _start(event: Event) -> Pos:
    """Where the statement making the change starts."""
    node = event.node
    if node is None or not hasattr(node, "lineno"):
        return event.at
    start: Pos = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    return min(start, event.at)


def _loop(facts: Facts, change: Event, uses: list[Event], life: CompiledLife) -> ast.AST | None:
    """The loop around the change that also uses the object, which outlives an iteration."""
    for loop in change.loops:
        if not any(loop in u.loops for u in uses):
            continue
        if runs_at_most_once(facts, loop, change.driver):
            continue  # ``for a in [0.7414]``: no pass follows the first
        if loop is change.loops[-1] and breaks_out(loop, change.at[0]):
            return None  # the change ends the loop: no pass of it follows
        # A fresh object per iteration that outlives it is late binding (flake8-bugbear B023):
        # made in this loop, or compiling a function defined in it.
        made_here = (
            life.maker is change.driver
            and loop in life.made_loops
            and life.fresh
            and life.made is not None
            and _every_pass(life.made, loop, uses, life.bound_name)
        )
        defined_here = (
            life.definer is change.driver
            and loop in life.defined_loops
            and life.definition is not None
            and _every_pass(life.definition, loop, uses, life.bound_name)
        )
        if not (
            made_here
            or defined_here
            or _made_in_each_pass(loop, uses)
            or _made_again_after(change, life, uses)
        ):
            return loop
    return None


def _cache_cleared_after(
    facts: Facts, change: Event, life: CompiledLife, uses: list[Event], every_cache: bool
) -> bool:
    """The change is followed, in its own block and before any use, with nothing that can
    raise between, by a statement emptying the compiled object's cache: ``step.clear_cache()``
    of the name every use calls it by, or ``jax.clear_caches()``. JAX drops every trace, and
    the next call traces afresh with the new value. ``every_cache``: only
    ``jax.clear_caches()`` counts (the value is read in a body JAX keeps a trace of apart)."""
    node = change.node
    if node is None or not isinstance(getattr(change.driver.node, "body", None), list):
        return False  # a lambda's body is one expression
    statement, _ = _statement_in_block(change.driver.node, node)
    if statement is None or held_by_try_or_with(change.driver.node, statement):
        return False
    later = _runs_next(change.driver.node, statement)
    name = life.bound_name
    for following in later:
        if _clears_cache(facts, change.driver, following, None if every_cache else name, uses):
            cleared_at = (following.lineno, following.col_offset)
            return not any(change.at < use.at < cleared_at for use in uses)
        if not _cannot_raise(following):
            return False
    return False


def _clears_cache(
    facts: Facts, scope: Scope, statement: ast.stmt, name: str | None, uses: list[Event]
) -> bool:
    """``name.clear_cache()``, every use calling ``name``, or ``jax.clear_caches()``."""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return False
    call = statement.value
    if call.args or call.keywords:
        return False
    if facts.qualified_name(scope, call.func) == "jax.clear_caches":
        return True
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "clear_cache"
        and isinstance(func.value, ast.Name)
        and func.value.id == name
        and all(_calls_name(use, name) for use in uses)
    )


def _made_again_after(change: Event, life: CompiledLife, uses: list[Event]) -> bool:
    """The change is followed, in its own block and before any use, with nothing that can
    raise between, by a statement making the object anew (``opt_update =
    optimizers.adam(lr)`` then ``@jax.jit def update``): the calls after the change are the
    new object's, traced with the new value, and the old object is not called again."""
    made = life.made
    node = change.node
    if not life.fresh or made is None or node is None or life.maker is not change.driver:
        return False
    statement, _ = _statement_in_block(change.driver.node, node)
    if statement is None or held_by_try_or_with(change.driver.node, statement):
        return False  # a ``try`` or ``with`` may go on after a statement between them raises
    later = _runs_next(change.driver.node, statement)
    making = next((st for st in later if _contains_expression(st, made)), None)
    if making is None or not _makes_here(making, made):
        return False
    between = later[: next(i for i, st in enumerate(later) if st is making)]
    if not all(_cannot_raise(st) for st in between):
        return False  # ``if skip: continue``, or ``math.log(lr)`` raising to the caller
    definition = life.definition
    if definition is None or not (
        _contains_expression(making, definition) or any(st is definition for st in between)
    ):
        return False  # ``jax.jit(render)`` of a ``render`` defined before: the same cache
    name = life.bound_name
    if name is None or not all(_calls_name(use, name) for use in uses):
        return False  # the old object kept elsewhere (``warmup = warmup or update``)
    made_at = min(
        [(making.lineno, making.col_offset)]
        + [(d.lineno, d.col_offset) for d in getattr(making, "decorator_list", [])]
    )
    return not any(change.at < use.at < made_at for use in uses)


def _runs_next(root: ast.AST, statement: ast.stmt) -> list[ast.stmt]:
    """The statements that run after ``statement``, in order, as long as nothing branches: the
    rest of its block, and when that block is a branch of an ``if``, what follows the ``if``
    (``if dir_enc: mask = a else: mask = b`` then ``def render...``), and so on outwards."""
    following: list[ast.stmt] = []
    current = statement
    while True:
        holder, block = _holder_of(root, current)
        following += block[block.index(current) + 1 :]
        if not isinstance(holder, ast.If):
            return following
        current = holder


def _holder_of(root: ast.AST, statement: ast.stmt) -> tuple[ast.AST | None, list[ast.stmt]]:
    """The node whose statement list holds ``statement``, and that list."""
    for owner, block, item in items_spanning(root, statement.lineno):
        if item is statement:
            return owner, block  # type: ignore[return-value]
    return None, [statement]


def _cannot_raise(statement: ast.stmt) -> bool:
    """``pass``, a docstring, a constant bound to a name, or an undecorated ``def`` whose
    defaults are constants (it only binds a new function): runs straight through, where a
    branch may ``continue`` and any call may raise to a caller that goes on."""
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = statement.args
        defaults = [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
        return not statement.decorator_list and all(
            isinstance(default, ast.Constant) for default in defaults
        )
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant)
    return (
        isinstance(statement, ast.Assign)
        and isinstance(statement.value, ast.Constant)
        and all(isinstance(t, ast.Name) for t in statement.targets)
    )


def _calls_name(use: Event, name: str) -> bool:
    """The use calls the object by the name it is bound to (``update(w)``), runs a function
    that does (``via``), or runs it now through what it makes of the name right there
    (``render_image(partial(render, params), rays)``, ``render_image`` only calling it)."""
    if use.via is not None:
        return True
    node = use.node
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        node = node.func
    return (
        use.kind is EventKind.RUN
        and node is not None
        and any(isinstance(inner, ast.Name) and inner.id == name for inner in ast.walk(node))
    )


def _statement_in_block(root: ast.AST, node: ast.AST) -> tuple[ast.stmt | None, list[ast.stmt]]:
    """The innermost statement holding ``node`` and the statement list it stands in."""
    found: tuple[ast.stmt | None, list[ast.stmt]] = (None, [])
    line = getattr(node, "lineno", None)
    if line is None:
        return found
    for _, block, item in items_spanning(root, line):
        if isinstance(item, ast.stmt) and _contains(item, node):
            found = (item, block)  # type: ignore[assignment]
    return found


def _makes_here(statement: ast.stmt, made: ast.AST) -> bool:
    """The statement itself makes the object: a decorated ``def`` or ``name = jax.jit(...)``,
    not an ``if``, a loop or a function body around the making."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return made is statement or any(
            _contains_expression(decorator, made) for decorator in statement.decorator_list
        )
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        return statement.value is not None and _contains_expression(statement.value, made)
    return False


def _contains_expression(expression: ast.AST, node: ast.AST) -> bool:
    return any(inner is node for inner in ast.walk(expression))


def _first_pass_before_uses(change: Event, loop: ast.AST, uses: list[Event]) -> bool:
    """The change runs only in the loop's first pass (``if step == 0:``, ``if mean is None:``),
    before every use in the loop: the first trace in the loop reads the value it sets."""
    in_loop = [u for u in uses if loop in u.loops]
    if not all(change.at < u.at for u in in_loop):
        return False
    return first_pass_only(change.node, loop, _statement_before(change.driver.node, loop))


def _statement_before(root: ast.AST, statement: ast.AST) -> ast.stmt | None:
    """The statement just before ``statement`` in the block of ``root`` holding it."""
    place = place_of(root, statement)
    index = place.block.index(statement) if place is not None else 0
    before = place.block[index - 1] if place is not None and index > 0 else None
    return before if isinstance(before, ast.stmt) else None


def _set_first_each_pass(
    change: Event, loop: ast.AST, uses: list[Event], steady: Callable[[ast.AST], bool]
) -> bool:
    """The change sets one value in every pass, before each use in the pass: every trace in
    the loop reads the value that every later pass sets again."""
    in_loop = [u for u in uses if loop in u.loops]
    return (
        change.node is not None
        and all(change.at < u.at for u in in_loop)
        and _every_pass(change.node, loop, in_loop)
        and steady(loop)
    )


def _made_in_each_pass(loop: ast.AST, uses: list[Event]) -> bool:
    """Every use in the loop calls an object that a call of the function making it (each run
    of which makes a new object) returned earlier in the same pass, kept in plain names only
    (``fn = make()``, ``variants = [("a", make(a)), ("b", make(b))]``), or used where it is
    made: each pass calls the objects it made itself. Not so when the result goes into a
    container kept across passes (``fns.append(make())``), or the object is handed on."""
    in_loop = [u for u in uses if loop in u.loops]
    if not in_loop:
        return False
    for use in in_loop:
        if use.kind is not EventKind.RUN or use.origin is None or use.origin > use.at:
            return False
        if use.origin == use.at:
            continue  # used where it is made, never kept: ``time_fn(make(kernel), x)``
        statement = _binding_of_result(loop, use.origin)
        same_object = [u for u in in_loop if u.origin == use.origin]
        if statement is None or not _every_pass(statement, loop, same_object):
            return False
    return True


def _binding_of_result(loop: ast.AST, origin: Pos) -> ast.Assign | None:
    """The statement of the loop binding plain names to what the call at ``origin`` returns,
    directly or in literal tuples, lists and dicts."""
    for node in ast.walk(loop):
        if isinstance(node, ast.Assign) and all(_plain(t) for t in node.targets):
            pending: list[ast.AST] = [node.value]
            while pending:
                value = pending.pop()
                if isinstance(value, ast.Call):
                    if (value.lineno, value.col_offset) == origin:
                        return None if _read_before(loop, node) else node
                elif isinstance(value, (ast.Tuple, ast.List, ast.Set)):
                    pending.extend(value.elts)
                elif isinstance(value, ast.Dict):
                    pending.extend(value.values)
    return None


def _read_before(loop: ast.AST, binding: ast.Assign) -> bool:
    """Whether the loop reads a name the binding binds before it (``if fn is not None:
    fn(x)`` ahead of ``fn = make()``): the next pass calls the object of the pass before."""
    names = {n.id for t in binding.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    start = (binding.lineno, binding.col_offset)
    return any(
        isinstance(n, ast.Name)
        and isinstance(n.ctx, ast.Load)
        and n.id in names
        and (n.lineno, n.col_offset) < start
        for n in ast.walk(loop)
    )


def _plain(target: ast.expr) -> bool:
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_plain(t) for t in target.elts)
    return isinstance(target, ast.Name)


def _repeats(graph: CallGraph, driver: Scope, life: CompiledLife) -> bool:
    """The driver runs more than once while the object lives on."""
    if driver.kind is ScopeKind.MODULE:
        return False
    if life.home is not None and life.home.is_within(driver):
        return False
    uses = graph.uses_of_function(driver)
    return (
        uses.outside
        or len(uses.events) > 1
        or any(_loops_again(graph, e) or e.kind is EventKind.ESCAPE for e in uses.events)
    )


def _loops_again(graph: CallGraph, event: Event) -> bool:
    """The event sits in a loop that can run a second pass (its body does not always raise
    in the first)."""
    return bool(event.loops) and not graph.stops_in_first_pass(event.driver, event.loops[-1])
