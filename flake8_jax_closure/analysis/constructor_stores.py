"""A compiled object a constructor stores on its own ``self``: no other code holds ``self``
until the constructor returns, so nothing can call the object before a change the constructor
makes later, unless the constructor itself runs something that might.

``self.step_env = jax.jit(_step)`` and then ``self.num_inner_steps = n`` in ``__init__``: the
store hands the object on, but its holders get ``self`` only once ``__init__`` is done, after
the change. The statements between may call only functions of imported libraries, none given
``self`` (``self.reset = jax.jit(reset)``); a call of anything else (``self._setup()``,
``super().__init__()``, ``register(self)``) may run the object, and the store stays a handing
on that may come around the change.
"""

from __future__ import annotations

import ast

from .callgraph.events import Event, EventKind
from .facts.model import Scope, ScopeKind
from .facts.queries import Facts


def kept_in_self_until(facts: Facts, use: Event, change: Event) -> bool:
    """``use`` stores the compiled object on ``self`` in a constructor, and ``change`` comes
    later in the same run of that constructor with nothing between that could call it."""
    driver = use.driver
    if (
        use.kind is not EventKind.ESCAPE
        or change.kind is not EventKind.RUN
        or change.driver is not driver
        or driver.kind is not ScopeKind.FUNCTION
        or driver.name != "__init__"
        or driver.parent is None
        or driver.parent.kind is not ScopeKind.CLASS
        or use.loops
        or change.loops
        or use.node is None
        or not use.at < change.at
    ):
        return False
    node = driver.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.args.args:
        return False
    own = node.args.args[0].arg
    statement = facts.statement_of(use.node)
    if not _stores_on(statement, own):
        return False
    assert statement is not None
    end = (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)
    return all(
        _harmless(facts, driver, call, own)
        for call in ast.walk(node)
        if isinstance(call, ast.Call) and end <= (call.lineno, call.col_offset) < change.at
    )


def _stores_on(statement: ast.stmt | None, own: str) -> bool:
    """``self.x = <object>`` (or ``self.x = self.y = ...``): every target an attribute of
    ``self``."""
    if not isinstance(statement, ast.Assign):
        return False
    return all(
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == own
        for target in statement.targets
    )


def _harmless(facts: Facts, driver: Scope, call: ast.Call, own: str) -> bool:
    """A call of an imported library's function (``jax.jit(reset)``) given nothing of
    ``self``: it cannot reach the object stored there."""
    if facts.qualified_name(driver, call.func) is None:
        return False
    return not any(
        isinstance(inner, ast.Name) and inner.id == own
        for argument in (*call.args, *(k.value for k in call.keywords))
        for inner in ast.walk(argument)
    )
