"""What a method call on an object reads of it: ``model.forward(x, params)`` on ``model =
Force(3)``, where ``Force.forward`` reads ``self.n``, reads ``model.n`` and nothing else of it.

A change of another attribute (``model.params = ...`` in the training loop, while the
compiled loss is given the parameters as an argument) then never reaches the trace. Followed
only where the code shows everything the method does with ``self``: its attributes, and
methods of the same class called or read as properties; ``self`` handed anywhere else, or a
method the class does not define itself (inherited, or looked up by name), may read anything.
"""

from __future__ import annotations

import ast

from .facts.model import Scope, ScopeKind
from .facts.queries import Facts

_METHODS_FOLLOWED = 32  # past this many methods, the call is taken to read anything


def method_self_name(scope: Scope) -> str | None:
    """The name of ``self`` when ``scope`` is a plain method of a class (not static or class)."""
    node = scope.node
    if scope.parent is None or scope.parent.kind is not ScopeKind.CLASS:
        return None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod"):
            return None
    return scope.params[0] if node.args.posonlyargs or node.args.args else None


def called_method(facts: Facts, receiver: ast.AST) -> str | None:
    """``forward`` for ``receiver.forward(...)``, ``__call__`` for ``receiver(...)``."""
    parent = facts.parent(receiver)
    if isinstance(parent, ast.Call) and parent.func is receiver:
        return "__call__"
    if isinstance(parent, ast.Attribute) and parent.value is receiver:
        call = facts.parent(parent)
        if isinstance(call, ast.Call) and call.func is parent:
            return parent.attr
    return None


def paths_read_by(facts: Facts, cls: Scope, method: str) -> list[tuple[str, ...]] | None:
    """The attribute paths of ``self`` (``(".n",)``) that calling ``method`` of ``cls``
    reads, through the class's own methods; None when it may read anything."""
    methods = _own_methods(cls)
    # A class with base classes may inherit what a name of ``self`` holds: a method, or a
    # property computed from any attribute. Only attributes its own methods store are data.
    stored = _stored_attributes(methods) if has_bases(cls.node) else None
    paths: set[tuple[str, ...]] = set()
    pending, seen = [method], {method}
    while pending:
        scope = methods.get(pending.pop())
        self_name = method_self_name(scope) if scope is not None else None
        if scope is None or self_name is None:
            return None
        for read in facts.reads_within(scope):
            if read.name != self_name or facts.resolve(read.scope, self_name) is not scope:
                continue
            parent = facts.parent(read.node)
            if not isinstance(parent, ast.Attribute) or parent.value is not read.node:
                return None  # ``self`` itself handed on, returned or compared
            if parent.attr in methods:
                if parent.attr not in seen:
                    seen.add(parent.attr)
                    pending.append(parent.attr)
            elif stored is not None and parent.attr not in stored:
                return None  # inherited: a method or property that may read anything
            elif read.path:
                paths.add(read.path)
            else:
                paths.add((f".{parent.attr}",))  # a function kept in an attribute, called
        if len(seen) > _METHODS_FOLLOWED:
            return None
    return sorted(paths)


def _own_methods(cls: Scope) -> dict[str, Scope]:
    return {
        child.name: child
        for child in cls.children
        if child.kind is ScopeKind.FUNCTION and child.parent is cls
    }


def has_bases(node: ast.AST) -> bool:
    """A class deriving from anything but ``object``."""
    bases = getattr(node, "bases", [])
    return any(not (isinstance(b, ast.Name) and b.id == "object") for b in bases)


def _stored_attributes(methods: dict[str, Scope]) -> set[str]:
    """The attributes the class's own methods assign on ``self`` (``self.eps = eps``)."""
    stored: set[str] = set()
    for scope in methods.values():
        self_name = method_self_name(scope)
        if self_name is None:
            continue
        for node in ast.walk(scope.node):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                for element in ast.walk(target):
                    if (
                        isinstance(element, ast.Attribute)
                        and isinstance(element.value, ast.Name)
                        and element.value.id == self_name
                    ):
                        stored.add(element.attr)
    return stored
