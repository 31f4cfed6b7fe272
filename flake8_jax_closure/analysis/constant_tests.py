"""Branches the module's own constants decide: ``if False:``, ``if DEBUG and epoch == 1:``.

A test that is a falsy constant, or a name the module binds once, at its top level, to one
(``DEBUG = False``), never lets its ``if`` body run; a truthy one never lets the ``else`` run.
Code there changes nothing and calls nothing. Only names nothing else in the module binds in
any way (a parameter, a loop, a ``global`` statement, an import, a class attribute), in a
module with no ``from m import *``, which may bind any name; the test may join such names and
others with ``and`` (one falsy part is enough) or ``or`` (one truthy part is enough), or
negate one with ``not``.
"""

from __future__ import annotations

import ast
import weakref

_Range = tuple[int, int]
_known: weakref.WeakKeyDictionary[ast.Module, list[_Range]] = weakref.WeakKeyDictionary()
# Unknown: the test's value is not written in the module.
_UNKNOWN = object()


def decided_dead_blocks(tree: ast.Module) -> list[_Range]:
    """The line ranges of the ``if`` bodies and ``else`` blocks (and ``while`` bodies) whose
    test the module's constants decide against them; kept while the tree lives."""
    found = _known.get(tree)
    if found is None:
        found = _dead_blocks(tree, _constants(tree))
        _known[tree] = found
    return found


def _dead_blocks(tree: ast.Module, constants: dict[str, object]) -> list[_Range]:
    dead: list[_Range] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.If, ast.While)):
            continue
        value = _value(node.test, constants)
        if value is _UNKNOWN:
            continue
        block = node.orelse if value else node.body
        if isinstance(node, ast.While) and value:
            continue  # ``while True:``: the body runs; the ``else`` only after a test fails
        if block:
            dead.append((block[0].lineno, block[-1].end_lineno or block[-1].lineno))
    return dead


def _value(test: ast.expr, constants: dict[str, object]) -> object:
    """The truth of the test, as written, or ``_UNKNOWN``."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.Name):
        return bool(constants[test.id]) if test.id in constants else _UNKNOWN
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _value(test.operand, constants)
        return _UNKNOWN if inner is _UNKNOWN else not inner
    if isinstance(test, ast.BoolOp):
        values = [_value(v, constants) for v in test.values]
        deciding = isinstance(test.op, ast.Or)  # ``or`` is decided by a truthy part
        if any(v is not _UNKNOWN and bool(v) is deciding for v in values):
            return deciding
        if all(v is not _UNKNOWN for v in values):
            return not deciding
    return _UNKNOWN


def _constants(tree: ast.Module) -> dict[str, object]:
    """The names bound exactly once in the module, by a top-level ``NAME = <constant>``, and
    in no other way anywhere."""
    bound: dict[str, int] = {}
    candidates: dict[str, object] = {}
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and isinstance(statement.value, ast.Constant)
        ):
            candidates[statement.targets[0].id] = statement.value.value
    if not candidates:
        return {}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names = [node.id]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names = list(node.names) * 2  # bound elsewhere by name
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return {}
            names = [(a.asname or a.name).split(".")[0] for a in node.names]
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            names = [node.name]
        for name in names:
            bound[name] = bound.get(name, 0) + 1
    return {name: value for name, value in candidates.items() if bound.get(name) == 1}
