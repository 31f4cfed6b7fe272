"""A table that only gains entries: a memoising function ``if n not in _CACHE: _CACHE[n] =
hermgauss(n); return _CACHE[n]``.

A module-level dict, bound once to ``{}``, whose one change is that store, under a test that
has just found the key missing, of a value no code can change in place (a JAX array, a tuple of
them, a constant), and which nothing reads but that function's test, its store and its
``return _CACHE[n]``: each entry, once there, is what every later read gives, and no read can
find it missing. Filling the table is no change a compiled call can go stale on.
"""

from __future__ import annotations

import ast

from .bindings import same_tree
from .blocks import always_runs_before, steps_to
from .facts.model import BindingKind, Mutation, Scope, ScopeKind
from .facts.queries import Facts

# Packages whose functions return JAX arrays, which no code changes in place (not every
# ``jax.`` function: ``jax.device_get`` returns NumPy arrays, ``tree_map`` lists).
_ARRAY_MAKERS = ("jax.numpy.", "jax.random.")


def fills_a_table(facts: Facts, mutation: Mutation) -> bool:
    """Whether ``mutation`` is the store of such a memoising function (see the module
    docstring)."""
    name = mutation.name
    owner = facts.resolve(mutation.scope, name)
    bindings = facts.bindings_of(owner, name)
    if len(bindings) != 1 or not _empty_dict(bindings[0].value):
        return False
    if bindings[0].kind is not BindingKind.ASSIGN or bindings[0].loops:
        return False
    if facts.mutations_of(owner, name) != [mutation]:
        return False  # stored elsewhere too: one store may replace what another put there
    target = _stored_entry(mutation)
    function = mutation.scope
    if target is None or function.kind is not ScopeKind.FUNCTION:
        return False
    if not _fixed_key(facts, function, target.slice):
        return False
    guard = _guard_of_store(facts, mutation, target)
    if guard is None or not _unchanging(facts, function, mutation.node, target):
        return False
    return all(
        read.scope is function
        and (facts.parent(read.node) is guard or _returned_entry(facts, read.node, target))
        or facts.parent(read.node) is target
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


def _fixed_key(facts: Facts, function: Scope, key: ast.expr) -> bool:
    """A literal, or a parameter of the function that nothing in it binds again."""
    if isinstance(key, ast.Constant):
        return True
    return (
        isinstance(key, ast.Name)
        and key.id in function.params
        and facts.resolve(function, key.id) is function
        and len(facts.bindings_of(function, key.id)) == 1
    )


def _guard_of_store(facts: Facts, change: Mutation, target: ast.Subscript) -> ast.Compare | None:
    """The test ``key not in table`` of the ``if`` whose body holds the store, with no loop
    between them."""
    steps = steps_to(change.scope.node, change.node)
    for index, step in enumerate(steps):
        test = getattr(step.owner, "test", None)
        if (
            isinstance(step.owner, ast.If)
            and step.field == "body"
            and isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.NotIn)
            and same_tree(test.left, target.slice)
            and isinstance(test.comparators[0], ast.Name)
            and test.comparators[0].id == change.name
        ):
            inside = steps[index + 1 :]
            if any(isinstance(s.owner, (ast.For, ast.AsyncFor, ast.While)) for s in inside):
                return None  # stored again in each pass
            return test
    return None


def _returned_entry(facts: Facts, node: ast.AST, target: ast.Subscript) -> bool:
    """``return table[key]``, the key the store uses."""
    entry = facts.parent(node)
    return (
        isinstance(entry, ast.Subscript)
        and same_tree(entry.slice, target.slice)
        and isinstance(facts.parent(entry), ast.Return)
    )


def _unchanging(facts: Facts, function: Scope, store: ast.AST, target: ast.Subscript) -> bool:
    """The stored value is one no code can change in place: a constant, what a function of
    ``jax.numpy`` or ``jax.random`` returns (an array), arithmetic or a tuple of those, or
    names bound to such right before the store, by statements that always run before it."""
    assert isinstance(store, ast.Assign)
    return _immutable(facts, function, store.value, store, depth=2)


def _immutable(
    facts: Facts, function: Scope, value: ast.expr, store: ast.Assign, depth: int
) -> bool:
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Tuple):
        return all(_immutable(facts, function, item, store, depth) for item in value.elts)
    if isinstance(value, ast.BinOp):
        return _immutable(facts, function, value.left, store, depth) and _immutable(
            facts, function, value.right, store, depth
        )
    if isinstance(value, ast.UnaryOp):
        return _immutable(facts, function, value.operand, store, depth)
    if isinstance(value, ast.Call):
        qualified = facts.qualified_name(function, value.func) or ""
        return qualified.startswith(_ARRAY_MAKERS)
    if isinstance(value, ast.Name) and depth > 0:
        bound = [
            b
            for b in facts.bindings_of(facts.resolve(function, value.id), value.id)
            if b.scope is function and b.at < (store.lineno, store.col_offset)
        ]
        if not bound:
            return False
        last = max(bound, key=lambda b: b.at)
        statement = facts.statement_of(last.node)
        return (
            isinstance(statement, ast.Assign)
            and last.value is not None
            and always_runs_before(function.node, statement, store)
            and _immutable(facts, function, last.value, store, depth - 1)
        )
    return False
