"""The tests an ``if`` puts around a statement: how code that runs once (per object, or while a
value is unset) is told."""

from __future__ import annotations

import ast


def tests_around(function: ast.AST, node: ast.AST) -> list[ast.expr]:
    """The tests of the ``if`` statements in ``function`` whose body holds ``node``."""
    line = getattr(node, "lineno", 0)
    tests: list[ast.expr] = []
    statements: list[ast.stmt] = list(getattr(function, "body", []))
    while statements:
        holder = next(
            (
                st
                for st in statements
                if st.lineno <= line <= (st.end_lineno or st.lineno)
                and any(inner is node for inner in ast.walk(st))
            ),
            None,
        )
        if holder is None or not isinstance(holder, (ast.If, ast.With, ast.For, ast.While)):
            return tests
        inside = [st for st in holder.body if any(inner is node for inner in ast.walk(st))]
        if isinstance(holder, ast.If):
            if not inside:
                return tests  # in the ``else`` branch: not guarded by this test
            tests.append(holder.test)
        statements = inside
    return tests


def unset_flag(test: ast.expr) -> str | None:
    """``F`` for ``self.F is None``, ``not self.F`` and ``not hasattr(self, "F")``."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is):
        if is_none(test.comparators[0]) and isinstance(test.left, ast.Attribute):
            return test.left.attr
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        operand = test.operand
        if isinstance(operand, ast.Attribute):
            return operand.attr
        if (
            isinstance(operand, ast.Call)
            and isinstance(operand.func, ast.Name)
            and operand.func.id == "hasattr"
            and len(operand.args) == 2
            and isinstance(operand.args[1], ast.Constant)
            and isinstance(operand.args[1].value, str)
        ):
            return operand.args[1].value
    return None


def unset_name(test: ast.expr, none_only: bool = False) -> str | None:
    """``x`` for ``x is None`` and (unless ``none_only``) ``not x``."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is):
        if is_none(test.comparators[0]) and isinstance(test.left, ast.Name):
            return test.left.id
    if none_only:
        return None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        if isinstance(test.operand, ast.Name):
            return test.operand.id
    return None


def returns_when_set(statement: ast.stmt, none_only: bool = False) -> str | None:
    """``x`` for ``if x is not None: return x`` (or, unless ``none_only``, ``if x:``), ending
    in ``return`` or ``raise``, with no ``else``: what follows runs only while ``x`` is
    unset."""
    if not isinstance(statement, ast.If) or statement.orelse or not statement.body:
        return None
    if not isinstance(statement.body[-1], (ast.Return, ast.Raise)):
        return None
    test = statement.test
    if isinstance(test, ast.Name):
        return None if none_only else test.id
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.IsNot)
        and is_none(test.comparators[0])
        and isinstance(test.left, ast.Name)
    ):
        return test.left.id
    return None


def is_none(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None
