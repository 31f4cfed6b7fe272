"""Training states made afresh with a new optimiser after the change: ``state =
TrainState.create(apply_fn=model.apply, params=p, tx=optax.adam(lr))`` before the next compiled
``train_step(state, batch)``.

Flax's ``TrainState`` keeps ``apply_fn`` and ``tx`` as static fields: they are part of the
pytree's structure, which JAX keys a trace on. ``optax.adam(lr)`` makes new functions on every
call, equal to no earlier ones, so a state made with a new optimiser has a structure no trace
was made for: the next compiled call given it traces anew and reads the changed value. The
states a compiled step returns, and ``state.apply_gradients(...)`` or ``state.replace(...)``,
keep the optimiser of the state they came from.

The code must show it plainly: every compiled call after the change, in the driver that makes
the change, passes a name last bound since the change to such a state (made there, through a
function of the module that returns one, or replicated across devices with
``flax.jax_utils.replicate``), or bound since then only by steps that keep its optimiser.
"""

from __future__ import annotations

import ast

from .callgraph.events import Event, EventKind
from .facts.model import Pos, Scope, ScopeKind
from .facts.queries import Facts
from .names import dotted_name

_OPTIMISERS = ("optax.",)
# Functions that hand the state on with its structure (one copy per device).
_KEEPING_STRUCTURE = frozenset({"flax.jax_utils.replicate"})
# Methods of a state that return a state with the same static fields.
_KEEPING_METHODS = frozenset({"apply_gradients", "replace"})
_DEPTH = 4  # names followed back from an argument


def given_fresh_statics(
    facts: Facts, change: Event, uses: list[Event], whole: bool = False
) -> bool:
    """Every compiled call of ``uses`` after ``change`` (an event in the driver's own code) is
    given a training state made since the change with an optimiser made then too. ``whole``:
    every call must come after the change (the calls of a loop's pass)."""
    if change.kind is not EventKind.RUN or change.via is not None:
        return False
    after = [u for u in uses if u.at > change.at]
    if not after or (whole and len(after) < len(uses)):
        return False
    for use in after:
        node = use.node
        call = node if isinstance(node, ast.Call) or node is None else facts.parent(node)
        if (
            use.kind is not EventKind.RUN
            or use.via is not None
            or use.driver is not change.driver
            or not isinstance(call, ast.Call)
            or call.func is not use.node
        ):
            return False
        arguments = [*call.args, *(k.value for k in call.keywords)]
        if not any(
            _fresh(facts, use.driver, argument, change.at, use.at, call, _DEPTH)
            for argument in arguments
        ):
            return False
    return True


def _fresh(
    facts: Facts, driver: Scope, value: ast.expr, since: Pos, at: Pos, step: ast.Call, depth: int
) -> bool:
    """``value`` is a state made with a new optimiser between ``since`` and ``at``: made
    there, or a name bound last to one there (``step``, the compiled call, and the state's own
    keeping methods bind it again with the same optimiser)."""
    if depth == 0:
        return False
    if isinstance(value, ast.Call):
        if _creates_state(facts, driver, value, since, at):
            return True
        name = facts.qualified_name(driver, value.func) or ""
        if name in _KEEPING_STRUCTURE and len(value.args) == 1:
            return _fresh(facts, driver, value.args[0], since, at, step, depth - 1)
        return _returns_fresh_state(facts, driver, value.func)
    if not isinstance(value, ast.Name):
        return False
    owner = facts.resolve(driver, value.id)
    if owner is not driver:
        return False
    bound = sorted(
        (b for b in facts.bindings_of(owner, value.id) if b.scope is driver and since < b.at < at),
        key=lambda b: b.at,
        reverse=True,
    )
    for binding in bound:
        statement = facts.statement_of(binding.node)
        if not isinstance(statement, ast.Assign):
            return False
        source = statement.value
        if _keeps_optimiser(source, value.id, step):
            continue  # ``state = train_step(state, batch)``: the same static fields
        return _fresh(facts, driver, source, since, binding.at, step, depth - 1)
    return False


def _keeps_optimiser(source: ast.expr, name: str, step: ast.Call) -> bool:
    """``step(state, ...)`` (the compiled call itself), ``state.apply_gradients(...)`` or
    ``state.replace(...)``: a state with the static fields of ``state``."""
    if not isinstance(source, ast.Call):
        return False
    func = source.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in _KEEPING_METHODS
        and isinstance(func.value, ast.Name)
        and func.value.id == name
    ):
        return True
    called = dotted_name(func)
    return (
        called is not None
        and called == dotted_name(step.func)
        and any(isinstance(a, ast.Name) and a.id == name for a in source.args)
    )


def _creates_state(facts: Facts, driver: Scope, call: ast.Call, since: Pos, at: Pos) -> bool:
    """``TrainState.create(..., tx=optax.adam(lr))``, or ``tx=`` a name the driver bound to an
    optimiser between ``since`` and ``at``."""
    name = facts.qualified_name(driver, call.func) or ""
    if not name.endswith("TrainState.create") or _patched(facts, "create"):
        return False
    tx = next((k.value for k in call.keywords if k.arg == "tx"), None)
    if tx is None:
        return False
    if _optimiser(facts, driver, tx):
        return True
    if not isinstance(tx, ast.Name) or facts.resolve(driver, tx.id) is not driver:
        return False
    bound = [b for b in facts.bindings_of(driver, tx.id) if b.scope is driver and b.at < at]
    if not bound:
        return False
    latest = max(bound, key=lambda b: b.at)
    statement = facts.statement_of(latest.node)
    return (
        since < latest.at
        and isinstance(statement, ast.Assign)
        and _optimiser(facts, driver, statement.value)
    )


def _returns_fresh_state(facts: Facts, driver: Scope, func: ast.expr) -> bool:
    """``create_train_state(rng, cfg)``: a function of the module, bound once, each of whose
    returns is a state it makes with an optimiser it makes (``tx = optax.adam(lr)`` in its body
    before, or given at once)."""
    if not isinstance(func, ast.Name):
        return False
    owner = facts.resolve(driver, func.id)
    if owner.kind is not ScopeKind.MODULE:
        return False
    bindings = facts.bindings_of(owner, func.id)
    if len(bindings) != 1:
        return False
    function = next(
        (s for s in owner.children if s.kind is ScopeKind.FUNCTION and s.name == func.id), None
    )
    if function is None or not isinstance(function.node, ast.FunctionDef):
        return False
    facts.ensure_scope(function)
    returns = _own_returns(function.node)
    start = (function.node.lineno, function.node.col_offset)
    return bool(returns) and all(
        r.value is not None
        and isinstance(r.value, ast.Call)
        and _creates_state(facts, function, r.value, start, (r.lineno, r.col_offset))
        for r in returns
    )


def _patched(facts: Facts, attribute: str) -> bool:
    """The module stores the attribute on some object (``TrainState.create = classmethod(
    keep_first)``): ``create`` may then keep an earlier optimiser."""
    return bool(facts.attribute_changes(attribute) or facts.nested_attribute_changes(attribute))


def _own_returns(function: ast.FunctionDef) -> list[ast.Return]:
    """The function's ``return`` statements, not those of functions or classes inside it."""
    found: list[ast.Return] = []
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
        ):
            pending.extend(ast.iter_child_nodes(node))
    return found


def _optimiser(facts: Facts, driver: Scope, value: ast.expr) -> bool:
    """``optax.adam(lr)``, ``optax.chain(...)``: new functions on every call."""
    if not isinstance(value, ast.Call):
        return False
    return (facts.qualified_name(driver, value.func) or "").startswith(_OPTIMISERS)
