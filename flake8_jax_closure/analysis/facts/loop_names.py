"""The names a loop over literal strings gives its variable: ``for attr in ["nx", "omega"]:
getattr(self, attr)`` reaches ``self.nx`` and ``self.omega``, and no method of another name.

So does a comprehension's ``for`` (``[getattr(self, n)(x) for n in names]``). The loop's
iterable is a list, tuple or set of string constants written there, or a local name
the same scope binds once to one and uses for nothing else (no method call, item store or
other read could add a name to it). The variable must not be bound again in the loop's body,
nor by a ``for`` around it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from .model import Scope

_LITERALS = (ast.List, ast.Tuple, ast.Set)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def literal_loop_names(
    name: ast.expr, loops: tuple[ast.AST, ...], scope: Scope
) -> tuple[str, ...] | None:
    """The strings ``name`` can hold, as the variable of one of ``loops`` or of the
    comprehension ``scope`` is; None if unknown."""
    if not isinstance(name, ast.Name):
        return None
    node = scope.node
    if isinstance(node, _COMPREHENSIONS):
        return _comprehension_names(name.id, node, scope.parent)
    owners = [
        loop
        for loop in loops
        if isinstance(loop, ast.For | ast.AsyncFor) and _binds(loop.target, name.id)
    ]
    if len(owners) != 1:
        return None
    loop = owners[0]
    if not isinstance(loop.target, ast.Name) or _bound_in(loop.body, name.id):
        return None
    return _strings(loop.iter) or _strings_of_local(loop.iter, node)


def _comprehension_names(
    name: str, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
    parent: Scope | None,
) -> tuple[str, ...] | None:  # fmt: skip
    owners = [g for g in node.generators if _binds(g.target, name)]
    if len(owners) != 1 or not isinstance(owners[0].target, ast.Name):
        return None
    generator = owners[0]
    # The first iterable is evaluated in the scope around the comprehension.
    home = parent.node if generator is node.generators[0] and parent is not None else node
    return _strings(generator.iter) or _strings_of_local(generator.iter, home)


def _strings(node: ast.expr) -> tuple[str, ...] | None:
    if not isinstance(node, _LITERALS) or not node.elts:
        return None
    values: list[str] = []
    for element in node.elts:
        if not isinstance(element, ast.Constant) or not isinstance(element.value, str):
            return None
        values.append(element.value)
    return tuple(values)


def _strings_of_local(iterable: ast.expr, scope_node: ast.AST) -> tuple[str, ...] | None:
    """The literal a local name is bound to once, when nothing but the loop reads it."""
    if not isinstance(iterable, ast.Name):
        return None
    uses = [n for n in _own_nodes(scope_node) if isinstance(n, ast.Name) and n.id == iterable.id]
    stores = [n for n in uses if not isinstance(n.ctx, ast.Load)]
    loads = [n for n in uses if isinstance(n.ctx, ast.Load)]
    if len(stores) != 1 or loads != [iterable]:
        return None
    assignment = _assignment_of(scope_node, stores[0])
    if assignment is None:
        return None
    return _strings(assignment.value)


def _assignment_of(scope_node: ast.AST, target: ast.Name) -> ast.Assign | None:
    for node in _own_nodes(scope_node):
        if isinstance(node, ast.Assign) and node.targets == [target]:
            return node
    return None


def _own_nodes(scope_node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a scope, without the bodies of the functions, classes and lambdas it
    defines; their ``nonlocal`` and ``global`` declarations count as stores of the name."""
    stack = list(ast.iter_child_nodes(scope_node))
    while stack:
        node = stack.pop()
        if isinstance(node, _NESTED_SCOPES):
            yield from _names_declared_shared(node)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _names_declared_shared(scope: ast.AST) -> Iterator[ast.AST]:
    """A nested scope's ``nonlocal`` and ``global`` names, as stores: they may rebind the
    name from inside."""
    for node in ast.walk(scope):
        if isinstance(node, ast.Nonlocal | ast.Global):
            for declared in node.names:
                yield ast.Name(id=declared, ctx=ast.Store())


def _binds(target: ast.expr, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target))


def _bound_in(body: list[ast.stmt], name: str) -> bool:
    for statement in body:
        for node in ast.walk(statement):
            if (
                isinstance(node, ast.Name)
                and node.id == name
                and not isinstance(node.ctx, ast.Load)
            ):
                return True
            if isinstance(node, ast.Nonlocal | ast.Global) and name in node.names:
                return True
    return False
