"""A table that only gains entries: ``if n not in _CACHE: _CACHE[n] = hermgauss(n)``.

A module-level dict, bound once to ``{}``, whose changes only ever store entries: a store under
a key that the ``if`` around it has just found missing changes no entry that was there.
Code that reads it only by taking an entry (``_CACHE[n]``) reads what that entry holds for good:
a trace that read an entry computes what any later read of it gives, and a read of an entry not
yet stored raises ``KeyError``, so no trace can read it before the store. Filling the table is
no change a compiled call can go stale on.
"""

from __future__ import annotations

import ast

from .facts.model import BindingKind, Mutation
from .facts.queries import Facts


def fills_a_table(facts: Facts, mutation: Mutation) -> bool:
    """Whether ``mutation`` stores a missing entry of a table that no change takes entries
    out of, read only entry by entry (see the module docstring). Another store may still
    replace an entry (``_CACHE[n] = refined``): that store is the change then."""
    name = mutation.name
    owner = facts.resolve(mutation.scope, name)
    bindings = facts.bindings_of(owner, name)
    if len(bindings) != 1 or not _empty_dict(bindings[0].value):
        return False
    if bindings[0].kind is not BindingKind.ASSIGN or bindings[0].loops:
        return False
    if _guard_of_store(facts, mutation) is None:
        return False
    guards: list[ast.Compare] = []
    for change in facts.mutations_of(owner, name):
        if _stored_entry(change) is None:
            return False  # an entry taken out, or the table changed otherwise
        guard = _guard_of_store(facts, change)
        if guard is not None:
            guards.append(guard)
    return all(_takes_an_entry(facts, read.node, guards) for read in facts.reads_of(owner, name))


def _empty_dict(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Dict):
        return not value.keys
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "dict"
        and not value.args
        and not value.keywords
    )


def _guard_of_store(facts: Facts, change: Mutation) -> ast.Compare | None:
    """The test ``key not in table`` of the ``if`` whose body holds the store ``table[key] =
    value``; None for any other change."""
    target = _stored_entry(change)
    if target is None:
        return None
    assert isinstance(change.node, ast.stmt)
    key = ast.dump(target.slice)
    for test in _tests_around(change.scope.node, change.node):
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.NotIn)
            and ast.dump(test.left) == key
            and isinstance(test.comparators[0], ast.Name)
            and test.comparators[0].id == change.name
        ):
            return test
    return None


def _stored_entry(change: Mutation) -> ast.Subscript | None:
    """``table[key]`` of the change ``table[key] = value``; None for any other change."""
    statement = change.node
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Subscript)
        and isinstance(statement.targets[0].value, ast.Name)
        and statement.targets[0].value.id == change.name
    ):
        return statement.targets[0]
    return None


def _tests_around(root: ast.AST, statement: ast.stmt) -> list[ast.expr]:
    """The tests of the ``if`` statements whose body (not ``else``) holds ``statement``, from
    ``root`` (a function or the module) in."""
    tests: list[ast.expr] = []
    current = root
    while current is not statement:
        inner = None
        for field in ("body", "orelse", "finalbody", "handlers"):
            for child in getattr(current, field, None) or ():
                if _holds(child, statement):
                    inner = child
                    if isinstance(current, ast.If) and field == "body":
                        tests.append(current.test)
                    break
            if inner is not None:
                break
        if inner is None:
            return []
        current = inner
    return tests


def _holds(node: ast.AST, statement: ast.stmt) -> bool:
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    end = (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
    return (
        start <= (statement.lineno, statement.col_offset)
        and (statement.end_lineno or 0, statement.end_col_offset or 0) <= end
    )


def _takes_an_entry(facts: Facts, node: ast.AST, guards: list[ast.Compare]) -> bool:
    """The read takes one entry (``table[key]``, also as the store's own target), or is the
    test of a store's guard."""
    parent = facts.parent(node)
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return True
    return any(parent is guard for guard in guards)
