"""A value set for a while and put back: ``saved = RATE``, ``RATE = 0.0``, then ``RATE = saved``
in the ``finally`` of the ``try`` that follows (or later in the same block).

Outside that window the name holds what it held before, so a compiled call before the change
and one after the restore read one value. Only a compiled call inside the window could see the
value set, so the pair is no change when the window holds none: no call of the compiled object,
directly or through a function that calls it, and no place where it is handed on.

The code must show it plainly: ``saved = X`` right before the change ``X = value`` (or before
a ``try`` whose body makes the change anywhere in it, also in a loop, with ``X`` bound nowhere
between), the restore ``X = saved`` a statement of that ``try``'s ``finally``, or a later
statement of the change's own block, and ``saved`` bound nowhere in between. When the change
sits inside the ``try``, the window is the whole ``try`` body: a compiled call there, even
before the change in the text, may run after it in a later pass of a loop.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from .blocks import place_of, steps_to
from .facts.model import Binding, BindingKind, Pos
from .facts.queries import Facts


def restored_bindings(facts: Facts, bindings: list[Binding], calls: Iterable[Pos]) -> set[int]:
    """The ids of the changes set and put back with no compiled call between (``calls``: where
    the compiled object is called or handed on), and of the bindings putting them back."""
    positions = sorted(calls)
    found: set[int] = set()
    for binding in bindings:
        window = _restore_of(facts, binding)
        if window is None:
            continue
        start, restore = window
        end = (restore.lineno, restore.col_offset)
        if any(start <= at < end for at in positions):
            continue  # a compiled call may see the value set
        found.add(id(binding))
        found.update(id(b) for b in bindings if facts.statement_of(b.node) is restore)
    return found


def _restore_of(facts: Facts, binding: Binding) -> tuple[Pos, ast.stmt] | None:
    """Where the window the change ``X = value`` opens starts, and the statement putting back
    what it replaced, if the code shows one that always runs after it."""
    if binding.kind is not BindingKind.ASSIGN:
        return None
    change = facts.statement_of(binding.node)
    if change is None or not _assigns(change, binding.name):
        return None
    root = binding.scope.node
    place = place_of(root, change)
    if place is None:
        return None
    block = place.block
    index = block.index(change)
    start = (change.lineno, change.col_offset)
    # ``saved = X; X = value; try: ... finally: X = saved``, or a later ``X = saved``.
    saved = _saved_name(block[index - 1], binding.name) if index > 0 else None
    if saved is not None:
        later = block[index + 1 :]
        if later and isinstance(later[0], ast.Try):
            restore = _restoring(later[0].finalbody, binding.name, saved)
            if restore is not None and not _binds(later[0], saved):
                return start, restore
        for position, statement in enumerate(later):
            if _restoring([statement], binding.name, saved) is not None:
                between = later[:position]
                restore = _restoring([statement], binding.name, saved)
                if restore is None or any(_binds(s, saved) for s in between):
                    return None
                return start, restore
        return None
    return _restored_by_finally(root, change, binding.name)


def _restored_by_finally(root: ast.AST, change: ast.stmt, name: str) -> tuple[Pos, ast.stmt] | None:
    """``saved = X`` before a ``try`` whose body makes the change anywhere in it (also in a
    loop), and ``X = saved`` in its ``finally``: the window is the whole ``try`` body, so a
    compiled call anywhere in it, before the change in the text too, counts as inside."""
    steps = steps_to(root, change)
    for depth in range(len(steps) - 1, -1, -1):
        holder = steps[depth].owner
        if not isinstance(holder, ast.Try) or steps[depth].field != "body":
            continue
        if depth == 0:
            return None
        outer = steps[depth - 1]
        at = outer.block.index(holder)
        for before in reversed(outer.block[:at]):
            saved = _saved_name(before, name)
            if saved is not None:
                break
            if _binds(before, name):
                return None
        else:
            return None
        restore = _restoring(holder.finalbody, name, saved)
        if restore is None or _binds(holder, saved) or not isinstance(before, ast.stmt):
            return None
        between = outer.block[outer.block.index(before) + 1 : at]
        if any(_binds(s, saved) for s in between):
            return None
        return (holder.lineno, holder.col_offset), restore
    return None


def _assigns(statement: ast.stmt | None, name: str) -> bool:
    return (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id == name
    )


def _saved_name(statement: ast.AST, name: str) -> str | None:
    """``saved`` for ``saved = X``."""
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and isinstance(statement.value, ast.Name)
        and statement.value.id == name
        and statement.targets[0].id != name
    ):
        return statement.targets[0].id
    return None


def _restoring(block: Sequence[ast.AST], name: str, saved: str) -> ast.stmt | None:
    """The statement of ``block`` that is ``X = saved``."""
    for statement in block:
        if (
            isinstance(statement, ast.Assign)
            and _assigns(statement, name)
            and isinstance(statement.value, ast.Name)
            and statement.value.id == saved
        ):
            return statement
    return None


def _binds(node: ast.AST, name: str) -> bool:
    """Whether anything in ``node`` binds ``name`` (other than reading it)."""
    return any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
        for n in ast.walk(node)
    )
