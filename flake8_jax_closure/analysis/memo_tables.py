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

from .blocks import steps_to
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
    changes = facts.mutations_of(owner, name)
    guard = _guard_of_store(facts, mutation, changes)
    if guard is None:
        return False
    guards: list[ast.Compare] = []
    for change in changes:
        if _stored_entry(change) is None:
            return False  # an entry taken out, or the table changed otherwise
        other = _guard_of_store(facts, change, changes)
        if other is not None:
            guards.append(other)
    return all(
        _takes_an_entry(facts, read.scope.node, read.node, guards)
        for read in facts.reads_of(owner, name)
    )


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


def _guard_of_store(facts: Facts, change: Mutation, changes: list[Mutation]) -> ast.Compare | None:
    """The test ``key not in table`` of the ``if`` whose body holds the store ``table[key] =
    value`` as the one change of the table there, with no loop between them and nothing there
    binding a name of the key; None for any other change."""
    target = _stored_entry(change)
    if target is None:
        return None
    key = ast.dump(target.slice)
    steps = steps_to(change.scope.node, change.node)
    for index, step in enumerate(steps):
        test = getattr(step.owner, "test", None)
        if not (
            isinstance(step.owner, ast.If)
            and step.field == "body"
            and isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.NotIn)
            and ast.dump(test.left) == key
            and isinstance(test.comparators[0], ast.Name)
            and test.comparators[0].id == change.name
        ):
            continue
        inside = steps[index + 1 :]
        if any(isinstance(s.owner, (ast.For, ast.AsyncFor, ast.While)) for s in inside):
            return None  # stored again in each pass
        branch = step.owner
        if any(c is not change and _within(c.node, branch) for c in changes):
            return None  # another store under the same test may replace it
        if any(_binds_in(facts, change, name.id, branch) for name in _names(target.slice)):
            return None  # the key tested is not the key stored
        return test
    return None


def _names(expression: ast.expr) -> list[ast.Name]:
    return [node for node in ast.walk(expression) if isinstance(node, ast.Name)]


def _binds_in(facts: Facts, change: Mutation, name: str, branch: ast.If) -> bool:
    owner = facts.resolve(change.scope, name)
    return any(_within(b.node, branch) for b in facts.bindings_of(owner, name))


def _within(node: ast.AST, outer: ast.AST) -> bool:
    return (
        (outer.lineno, outer.col_offset)  # type: ignore[attr-defined]
        <= (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        and (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
        <= (outer.end_lineno, outer.end_col_offset)  # type: ignore[attr-defined]
    )


# Exceptions a handler catches that a missing entry raises.
_CATCHING_KEY_ERRORS = frozenset({"KeyError", "LookupError", "Exception", "BaseException"})


def _takes_an_entry(facts: Facts, root: ast.AST, node: ast.AST, guards: list[ast.Compare]) -> bool:
    """The read takes one entry (``table[key]``, also as the store's own target), outside any
    ``try`` that would catch the ``KeyError`` of a missing one; or is the test of a store's
    guard."""
    parent = facts.parent(node)
    if any(parent is guard for guard in guards):
        return True
    if not (isinstance(parent, ast.Subscript) and parent.value is node):
        return False
    statement = facts.statement_of(node)
    if statement is None:
        return False
    return not any(
        isinstance(step.owner, (ast.Try, getattr(ast, "TryStar", ast.Try)))
        and step.field == "body"
        and any(_catches_key_error(h) for h in step.owner.handlers)  # type: ignore[attr-defined]
        for step in steps_to(root, statement)
    )


def _catches_key_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(
        (isinstance(kind, ast.Name) and kind.id in _CATCHING_KEY_ERRORS)
        or (isinstance(kind, ast.Attribute) and kind.attr in _CATCHING_KEY_ERRORS)
        or not isinstance(kind, (ast.Name, ast.Attribute))
        for kind in kinds
    )
