"""Compiled calls given an optimiser made since the change: ``optimizer = nnx.Optimizer(model,
optax.adam(lr))`` or ``state = TrainState.create(apply_fn=f, params=p, tx=optax.adam(lr))``
right before ``train_step(model, optimizer, batch)``.

An optax transformation is a new object of new functions every time it is made (no two
``optax.adam(1e-3)`` are equal), and flax keeps it as static data: in the graph definition of
an ``nnx.Optimizer``, in the tree structure of a ``TrainState``. JAX keys a trace on that
structure, so a compiled call given such an object made since the change traces anew, and
reads the new value: no trace made before the change is reused.

The code must show it plainly, for every compiled call that could reuse an older trace:

- the call passes, as an argument, a name bound by an assignment that always runs before the
  call in the same code (a statement of the block holding the call, or of a block around it)
  to ``nnx.Optimizer(model, optax...(...))`` (also ``nnx.ModelAndOptimizer``, or ``tx=``), to
  flax's ``TrainState.create(..., tx=optax...(...))``, or to ``flax.jax_utils.replicate`` of
  such a name; the transformation is made there, by a call of a function of ``optax``;
- that binding runs after the change: later in the same pass (a call later than the change),
  or, for a loop's next pass, inside that loop before the call;
- nothing binds or changes the name between the binding and the call (``optimizer.tx = old``
  would give it an older transformation);
- a call of a function of the module (``evaluate(model)``) counts when each compiled call in
  its body passes such a name, made in its body before the call: each run of it comes after
  the change and makes its own.
"""

from __future__ import annotations

import ast

from .blocks import always_runs_before
from .callgraph.events import Event, EventKind
from .facts.model import BindingKind, Scope
from .facts.queries import Facts

# Holders of an optimiser, and where their transformation is given: a position (``None``
# when only ``tx=`` gives it).
_HOLDERS: dict[str, int | None] = {
    "flax.nnx.Optimizer": 1,
    "flax.nnx.ModelAndOptimizer": 1,
    "flax.nnx.optimizer.Optimizer": 1,
    "flax.training.train_state.TrainState.create": None,
}
_REPLICATE = frozenset({"flax.jax_utils.replicate"})
_DEPTH = 3  # names followed back: ``state_dist = replicate(state)`` after ``state = ...``


def new_optimiser_each_call(
    facts: Facts, change: Event, uses: list[Event], reach: list[Event], loop: ast.AST | None
) -> bool:
    """Every compiled call of ``uses`` that could reuse a trace made before ``change`` is
    given an optimiser made since: those after the change in code order, or (``loop``) every
    call in the loop, the next pass of which runs after the change."""
    driver = change.driver
    if loop is None:
        checked = [u for u in uses if u.at > change.at]
    else:
        checked = [u for u in uses if loop in u.loops]
    if not checked:
        return False
    for use in checked:
        if use.kind is not EventKind.RUN or use.driver is not driver or use.node is None:
            return False
        # The holder must be made after the change: later than it in the same pass, or in
        # the loop before the call when the change comes after the call (the next pass).
        if use.via is not None:
            if loop is None and use.at < change.at:
                return False
            if not _made_in_each_run(facts, use.via, reach):
                return False
            continue
        call = facts.parent(use.node)
        if not isinstance(call, ast.Call) or call.func is not use.node:
            return False
        since = change.at if (loop is None or change.at < use.at) else None
        if not any(
            _holds_new(facts, driver, argument, call, since, loop, _DEPTH)
            for argument in _arguments(call)
        ):
            return False
    return True


def _made_in_each_run(facts: Facts, function: Scope, reach: list[Event]) -> bool:
    """Each compiled call in ``function``'s body passes an optimiser it made before the call."""
    inner = [e for e in reach if e.driver is function]
    if not inner:
        return False
    for event in inner:
        call = facts.parent(event.node) if event.node is not None else None
        if (
            event.kind is not EventKind.RUN
            or event.via is not None
            or not isinstance(call, ast.Call)
            or call.func is not event.node
        ):
            return False
        if not any(
            _holds_new(facts, function, argument, call, None, function.node, _DEPTH)
            for argument in _arguments(call)
        ):
            return False
    return True


def _arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords if k.arg is not None)]


def _holds_new(
    facts: Facts,
    scope: Scope,
    argument: ast.expr,
    call: ast.AST,
    since: tuple[int, int] | None,
    within: ast.AST | None,
    depth: int,
) -> bool:
    """``argument`` is a name last bound, before ``call`` and always before it, to an optimiser
    holder made with a new transformation; after ``since`` when given, else inside
    ``within`` (the loop, or the function, whose run makes it)."""
    if depth == 0 or not isinstance(argument, ast.Name):
        return False
    owner = facts.resolve(scope, argument.id)
    if owner is not scope:
        return False  # a global or a closure's variable: any code may bind it
    at = (getattr(call, "lineno", 0), getattr(call, "col_offset", 0))
    bindings = facts.bindings_of(owner, argument.id)
    earlier = [b for b in bindings if b.at < at]
    if not earlier:
        return False
    made = max(earlier, key=lambda b: b.at)
    statement = facts.statement_of(made.node)
    holding = facts.statement_of(call)
    if (
        made.kind is not BindingKind.ASSIGN
        or not isinstance(statement, ast.Assign)
        or len(statement.targets) != 1
        or not isinstance(statement.targets[0], ast.Name)
        or holding is None
        or not always_runs_before(scope.node, statement, holding)
    ):
        return False
    if since is not None and not since < made.at:
        return False
    if since is None and (within is None or not _inside(within, statement)):
        return False
    # Nothing changes what the name holds between the binding and the call.
    if any(made.at < m.start < at for m in facts.mutations_of(owner, argument.id)):
        return False
    value = statement.value
    if not isinstance(value, ast.Call):
        return False
    name = facts.qualified_name(scope, value.func)
    if name in _REPLICATE:
        return len(value.args) == 1 and _holds_new(
            facts, scope, value.args[0], statement, since, within, depth - 1
        )
    return name in _HOLDERS and _new_transformation(facts, scope, value, _HOLDERS[name])


def _new_transformation(facts: Facts, scope: Scope, holder: ast.Call, position: int | None) -> bool:
    """The holder is given a transformation made right there by a function of ``optax``."""
    given = [k.value for k in holder.keywords if k.arg == "tx"]
    if position is not None and len(holder.args) > position:
        given.append(holder.args[position])
    if len(given) != 1 or not isinstance(given[0], ast.Call):
        return False
    made = facts.qualified_name(scope, given[0].func) or ""
    return made.startswith("optax.")


def _inside(outer: ast.AST, node: ast.AST) -> bool:
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    return (
        (getattr(outer, "lineno", 0), getattr(outer, "col_offset", 0)) <= start
        and (getattr(node, "end_lineno", 0) or 0) <= (getattr(outer, "end_lineno", 0) or 0)
        and outer is not node
    )
