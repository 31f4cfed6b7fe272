"""Where a statement sits: the blocks from a function's (or the module's) body in to it.

Each step of the way is a statement list and the part that holds it: an ``if``'s body or its
``else``, a loop's body or its ``else``, a ``try``'s body, a handler, its ``else`` or its
``finally``, a ``with``'s body, a ``match`` case. Rules that ask whether one statement always
runs before another, or whether an error may be caught around a read, read it from there.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator
from dataclasses import dataclass

# The fields of a statement, or of a handler or case, that hold statement lists.
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")

# Statements around which an error may be caught or a context manager may go on.
_GUARDS = (ast.Try, ast.TryStar, ast.With, ast.AsyncWith)


@dataclass(frozen=True)
class Step:
    """A statement list on the way in: ``owner.field`` (``owner`` a statement, a handler or
    a ``match`` case; the function or module itself for the outermost one) and the item of
    it that holds what is looked for."""

    owner: ast.AST
    field: str
    block: list[ast.AST]
    holding: ast.AST


def steps_to(root: ast.AST, node: ast.AST) -> list[Step]:
    """The statement lists from ``root`` in to ``node``, outermost first; empty when ``node``
    is not in ``root``'s own code (it sits in a nested function or class, or nowhere)."""
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    end = (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
    steps: list[Step] = []
    current = root
    while current is not node:
        found = None
        for field in _BLOCK_FIELDS:
            block = getattr(current, field, None)
            if not isinstance(block, list):
                continue
            for child in block:
                if _span(child)[0] <= start and end <= _span(child)[1]:
                    found = Step(current, field, block, child)
                    break
            if found is not None:
                break
        if found is None:
            return []
        steps.append(found)
        current = found.holding
        if current is not node and isinstance(
            current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
        ):
            return []
    return steps


def always_runs_before(root: ast.AST, earlier: ast.stmt, later: ast.stmt) -> bool:
    """Whether ``earlier`` stands in a statement list on the way in to ``later``, before the
    statement there that holds ``later``: whenever ``later`` runs, ``earlier`` ran just before
    in the same pass (an error or a jump after it skips ``later`` too)."""
    to_earlier = steps_to(root, earlier)
    if not to_earlier:
        return False
    block = to_earlier[-1].block
    for step in steps_to(root, later):
        if step.block is block:
            return block.index(earlier) < block.index(step.holding)
    return False


def _span(node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    return (
        (getattr(node, "lineno", 0), getattr(node, "col_offset", 0)),
        (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0),
    )


def place_of(root: ast.AST, statement: ast.AST) -> Step | None:
    """The statement list within ``root`` that holds ``statement`` itself, and its owner."""
    steps = steps_to(root, statement)
    return steps[-1] if steps and steps[-1].holding is statement else None


def held_by_try_or_with(root: ast.AST, node: ast.AST) -> bool:
    """Whether a ``try`` (also ``try``/``except*``) or ``with`` within ``root`` is ``node``'s
    statement or holds it, in nested functions and classes too."""
    line = getattr(node, "lineno", None)
    return line is not None and any(
        isinstance(item, _GUARDS) for _, _, item in items_spanning(root, line)
    )


def items_spanning(root: ast.AST, line: int) -> Iterator[tuple[ast.AST, list[ast.AST], ast.AST]]:
    """Each statement (or handler, or ``match`` case) within ``root`` whose lines take in
    ``line``, in nested functions and classes too, outermost first along each way in: the
    node whose list holds it, that list, and the item."""
    pending = [root]
    while pending:
        current = pending.pop()
        for field in _BLOCK_FIELDS:
            block = getattr(current, field, None)
            if not isinstance(block, list):
                continue
            for item in spanning(block, line):
                yield current, block, item
                pending.append(item)


def spanning(block: list[ast.AST], line: int) -> list[ast.AST]:
    """The items of a statement list (or of a ``try``'s handlers, a ``match``'s cases) whose
    lines take in ``line``. The items stand in the order of their lines and never overlap, so
    a binary search finds them: looking down a module's body costs its depth, not its length.
    A ``match`` case has no line of its own and is always taken."""
    if block and getattr(block[0], "lineno", None) is None:
        return list(block)
    end = bisect.bisect_right(block, line, key=_first_line)
    found: list[ast.AST] = []
    for item in reversed(block[:end]):
        if (getattr(item, "end_lineno", None) or _first_line(item)) < line:
            break
        found.append(item)
    return found


def _first_line(node: ast.AST) -> int:
    return getattr(node, "lineno", 0)
