"""Loops that never run a second pass: ``for a in [0.7414]``.

A parameter sweep cut down to one value (``A = [0.7414]``, ``for j, a in enumerate(A)``) runs
its body once: no later pass can reuse a trace made in the first. Only what the code writes
counts: a list, tuple or set display of at most one element, ``range`` of a literal 0 or 1
(``range(1)``, ``range(0, 1)``, or of a name bound once to one, ``range(num_epochs)``), or
``enumerate``/``reversed``/``zip``/``sorted`` of one, or a name its scope binds once, outside
any loop, to one, never changes in place, and reads only to loop over it or take its length.
"""

from __future__ import annotations

import ast

from .facts.model import Scope
from .facts.queries import Facts

_WRAPPERS = frozenset({"enumerate", "reversed", "sorted", "list", "tuple"})


def runs_at_most_once(facts: Facts, loop: ast.AST, scope: Scope) -> bool:
    """Whether the ``for`` loop's iterable, as written, has at most one item."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    return _at_most_one(facts, loop.iter, scope, depth=0)


def _at_most_one(facts: Facts, iterable: ast.expr, scope: Scope, depth: int) -> bool:
    if depth > 3:
        return False
    if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)):
        return len(iterable.elts) <= 1 and not any(
            isinstance(e, ast.Starred) for e in iterable.elts
        )
    if isinstance(iterable, ast.Name):
        return _bound_to_one(facts, iterable.id, scope, depth)
    if not isinstance(iterable, ast.Call) or not isinstance(iterable.func, ast.Name):
        return False
    called = iterable.func.id
    if facts.bindings_of(facts.resolve(scope, called), called):
        return False  # a name the code binds itself, not the builtin
    if called == "range":
        return _range_of_at_most_one(facts, iterable, scope)
    if iterable.keywords and called != "sorted":
        return False
    if called in _WRAPPERS and iterable.args:
        return _at_most_one(facts, iterable.args[0], scope, depth + 1)
    if called == "zip" and iterable.args:
        # ``zip`` stops at its shortest iterable.
        return any(_at_most_one(facts, a, scope, depth + 1) for a in iterable.args)
    return False


def _range_of_at_most_one(facts: Facts, call: ast.Call, scope: Scope) -> bool:
    values: list[int] = []
    for argument in call.args:
        value = _int_constant(facts, argument, scope)
        if value is None:
            return False
        values.append(value)
    if call.keywords:
        return False
    if len(values) == 1:
        return values[0] <= 1
    if len(values) == 2:
        return values[1] - values[0] <= 1
    return False


def _int_constant(facts: Facts, argument: ast.expr, scope: Scope) -> int | None:
    """A literal integer, or a name its scope binds once, outside any loop, by a plain
    assignment of one (``num_epochs = 1``): an integer never changes in place."""
    if isinstance(argument, ast.Name):
        found = _sole_assignment(facts, argument.id, scope)
        if found is None:
            return None
        argument = found[1].value
    if isinstance(argument, ast.Constant) and type(argument.value) is int:
        return argument.value
    return None


def _sole_assignment(facts: Facts, name: str, scope: Scope) -> tuple[Scope, ast.Assign] | None:
    """The scope binding ``name`` and its one binding of it, when that is a plain ``name =
    value`` outside any loop (not ``extra = (widths := [3])``, which names the value twice)."""
    owner = facts.resolve(scope, name)
    bindings = facts.bindings_of(owner, name)
    if len(bindings) != 1 or bindings[0].loops:
        return None
    statement = bindings[0].node
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return None
    return owner, statement


def _bound_to_one(facts: Facts, name: str, scope: Scope, depth: int) -> bool:
    found = _sole_assignment(facts, name, scope)
    if found is None:
        return False
    owner, statement = found
    if facts.mutations_of(owner, name):
        return False  # ``A.append(...)`` adds items
    # Read only where nothing can add items through another reference: as what a loop runs
    # over, or to take its length (``more = A; more.append(x)`` or ``grow(A)`` could).
    if not all(_only_iterated(facts, read.node) for read in facts.reads_of(owner, name)):
        return False
    return _at_most_one(facts, statement.value, owner, depth + 1)


def _only_iterated(facts: Facts, node: ast.AST) -> bool:
    parent = facts.parent(node)
    if isinstance(parent, ast.Call) and node in parent.args:
        callee = parent.func
        if isinstance(callee, ast.Name) and callee.id in (*_WRAPPERS, "zip", "len"):
            if callee.id == "len":
                return True
            return _only_iterated(facts, parent)
        return False
    return isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is node
