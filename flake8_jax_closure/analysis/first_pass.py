"""Changes a loop makes only in its first pass, before that pass's first compiled call.

Data-dependent set-up inside a training loop is common::

    for step, (x, y) in enumerate(batches):
        if step == 0:
            TARGET_SCALE = float(np.std(y))
        w = train_step(w, x, y)

    for x in data:
        if INPUT_MEAN is None:
            INPUT_MEAN = x.mean(axis=0)
        params = step(params, x)

The change runs once, in the first pass, before any compiled call of that pass: the first trace
in the loop reads the value it sets, and no later pass changes it again. No pass of the loop
reuses a trace made before the change (a call before the loop still can: that path is timed as
any other).

Only plain forms count: an ``if`` that is a statement of the loop's own body, whose test is the
loop's counter against its first value (``step == 0``, ``not step``, also joined by ``and`` to
other tests, over ``range(n)``, ``range(0, n)`` or ``enumerate(xs)`` starting at 0, or a
``while`` loop's counter set to 0 just before it and added to once per pass; or the
``else`` of ``step > 0``, ``step >= 1``, ``step != 0`` or ``if step:``) or the changed name
tested for None (``NAME is None``, alone: ``NAME is None and ready`` may set it in a later
pass), set to a value that is not None and never set back to None in the loop.
"""

from __future__ import annotations

import ast

# Values that may be None: a name, an attribute or a call could hold or return it. A call of
# a library or the project's own is taken to return a value (``x.mean(0)``, ``compute(x)``).
_MAYBE_NONE = (ast.Name, ast.Attribute, ast.IfExp, ast.BoolOp, ast.NamedExpr)


def first_pass_only(node: ast.AST | None, loop: ast.AST, preceding: ast.stmt | None = None) -> bool:
    """Whether the change at ``node`` (its statement, or its target) runs only in the loop's
    first pass, through an ``if`` that is a statement of the loop's body. ``preceding`` is the
    statement just before the loop, where a ``while`` loop's counter starts."""
    if node is None:
        return False
    found = _guard_in_body(node, loop)
    if found is None:
        return False
    guard, in_else = found
    test = guard.test
    first = _tests_later_value if in_else else _tests_first_value
    if isinstance(loop, ast.For):
        counter = _counter(loop)
        if counter is not None and first(test, counter):
            return not _bound_in(loop.body, counter)
    if isinstance(loop, ast.While):
        counter = _while_counter(loop, guard, preceding)
        if counter is not None and first(test, counter):
            return True
    name = _none_tested(test)
    if name is None or in_else:
        return False
    statement = next(
        (s for s in guard.body if any(n is node for n in ast.walk(s))), None
    )  # fmt: skip
    return (
        isinstance(statement, ast.Assign)
        and _sets_not_none(statement, name)
        and not _set_none_in(loop, name)
    )


def _guard_in_body(node: ast.AST, loop: ast.AST) -> tuple[ast.If, bool] | None:
    """The ``if`` statement of the loop's body that holds ``node``, and whether it holds it
    in its ``else`` (an ``elif`` there included)."""
    for statement in getattr(loop, "body", []):
        if not any(n is node for n in ast.walk(statement)):
            continue
        if not isinstance(statement, ast.If):
            return None
        in_else = any(n is node for s in statement.orelse for n in ast.walk(s))
        return statement, in_else
    return None


def _counter(loop: ast.For) -> str | None:
    """``i`` of ``for i in range(n)`` or ``for i, x in enumerate(xs)``, counting from 0."""
    call = loop.iter
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.keywords:
        return _enumerate_counter(loop)
    if call.func.id == "range" and isinstance(loop.target, ast.Name):
        if len(call.args) == 1 or (len(call.args) == 2 and _is_zero(call.args[0])):
            return loop.target.id
        return None
    return _enumerate_counter(loop)


def _enumerate_counter(loop: ast.For) -> str | None:
    call = loop.iter
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return None
    if call.func.id != "enumerate" or not isinstance(loop.target, ast.Tuple):
        return None
    starts = [*call.args[1:], *(k.value for k in call.keywords if k.arg == "start")]
    if len(call.args) < 1 or any(not _is_zero(start) for start in starts):
        return None
    first = loop.target.elts[0] if loop.target.elts else None
    return first.id if isinstance(first, ast.Name) else None


def _while_counter(loop: ast.While, guard: ast.If, preceding: ast.stmt | None) -> str | None:
    """``step`` of ``step = 0`` just before ``while ...:``, whose body adds to it once, by a
    statement of its own after the guard (``step += 1``), binds it nowhere else and never
    skips that statement with ``continue``: 0 in the first pass at the guard, more after."""
    if not (
        isinstance(preceding, ast.Assign)
        and len(preceding.targets) == 1
        and isinstance(preceding.targets[0], ast.Name)
        and _is_zero(preceding.value)
    ):
        return None
    counter = preceding.targets[0].id
    increments = [
        index
        for index, statement in enumerate(loop.body)
        if isinstance(statement, ast.AugAssign)
        and isinstance(statement.op, ast.Add)
        and isinstance(statement.target, ast.Name)
        and statement.target.id == counter
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, int)
        and not isinstance(statement.value.value, bool)
        and statement.value.value > 0
    ]
    if len(increments) != 1 or increments[0] < loop.body.index(guard):
        return None
    others = [s for index, s in enumerate(loop.body) if index != increments[0]]
    if _bound_in(others, counter) or _bound_in([ast.Expr(loop.test)], counter):
        return None
    if any(isinstance(node, ast.Continue) for s in loop.body for node in ast.walk(s)):
        return None
    return counter


def _is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and node.value is not False


def _tests_first_value(test: ast.expr, counter: str) -> bool:
    """``counter == 0``, ``0 == counter`` or ``not counter``, or one of them and more
    (``step == 0 and verbose``: true in the first pass at most)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_tests_first_value(value, counter) for value in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return isinstance(test.operand, ast.Name) and test.operand.id == counter
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    left, right = test.left, test.comparators[0]
    return (isinstance(left, ast.Name) and left.id == counter and _is_zero(right)) or (
        isinstance(right, ast.Name) and right.id == counter and _is_zero(left)
    )


def _tests_later_value(test: ast.expr, counter: str) -> bool:
    """``counter > 0``, ``counter >= 1``, ``counter != 0`` or ``counter`` itself: false in the
    first pass only, so its ``else`` runs there alone."""
    if isinstance(test, ast.Name):
        return test.id == counter
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return False
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(right, ast.Name) and right.id == counter:
        # ``0 < counter`` reads as ``counter > 0``.
        flipped = {ast.Lt: ast.Gt(), ast.LtE: ast.GtE(), ast.NotEq: ast.NotEq()}
        swap = flipped.get(type(op))
        if swap is None:
            return False
        left, op, right = right, swap, left
    if not isinstance(left, ast.Name) or left.id != counter or not isinstance(right, ast.Constant):
        return False
    bound = right.value
    if isinstance(bound, bool) or not isinstance(bound, int):
        return False
    return (isinstance(op, (ast.Gt, ast.NotEq)) and bound == 0) or (
        isinstance(op, ast.GtE) and bound == 1
    )


def _none_tested(test: ast.expr) -> str | None:
    """``name`` of ``name is None``."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.left, ast.Name)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return test.left.id
    return None


def _sets_not_none(node: ast.AST, name: str) -> bool:
    """The change is ``name = value`` of a value that is not None."""
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return False
    target = node.targets[0]
    if not isinstance(target, ast.Name) or target.id != name:
        return False
    value = node.value
    if isinstance(value, ast.Constant):
        return value.value is not None
    return not isinstance(value, _MAYBE_NONE)


def _set_none_in(loop: ast.AST, name: str) -> bool:
    """The loop binds ``name`` to something that may be None (``name = None``), or otherwise
    than by plain assignment (``del``, a loop target, ``global`` elsewhere...)."""
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            parent_assign = _assigned_value(loop, node)
            if parent_assign is None or not _sets_not_none(parent_assign, name):
                return True
    return False


def _assigned_value(loop: ast.AST, target: ast.Name) -> ast.Assign | None:
    for node in ast.walk(loop):
        if isinstance(node, ast.Assign) and any(t is target for t in node.targets):
            return node
    return None


def _bound_in(body: list[ast.stmt], name: str) -> bool:
    """The loop's body binds the counter again."""
    return any(
        isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
        for statement in body
        for node in ast.walk(statement)
    )
