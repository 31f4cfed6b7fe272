"""Names for what the fix introduces (compiled objects, wrappers, ``_impl`` defs, parameters):
never one that code in the scope already uses, nor one already given out in this module."""

from __future__ import annotations

import ast

from ..analysis.facts.model import Scope
from ..analysis.facts.queries import Facts
from ..positions import SourceLines


class Names:
    """The names given out so far, per scope."""

    def __init__(self, facts: Facts, source: SourceLines) -> None:
        self.facts = facts
        self.source = source
        self._taken: set[tuple[int, str]] = set()

    def fresh(self, wanted: str, scope: Scope) -> str:
        """A name that no code in ``scope`` (or nested in it) uses yet."""
        node = scope.node
        first = getattr(node, "lineno", 1)
        last = getattr(node, "end_lineno", None) or len(self.source.lines)
        number, name = 1, wanted
        while True:
            lines = self.facts.lines_of([name])[name]
            used = any(first <= line <= last for line in lines)
            if not used and (id(scope), name) not in self._taken:
                self._taken.add((id(scope), name))
                return name
            number += 1
            name = f"{wanted}_{number}"

    def free(self, wanted: str, scope: Scope) -> str:
        """A name no variable of ``scope`` (or nested in it) uses yet; attributes do not count."""
        used = _variable_names(scope.node)
        number, name = 1, wanted
        while name in used or (id(scope), name) in self._taken:
            number += 1
            name = f"{wanted}_{number}"
        self._taken.add((id(scope), name))
        return name

    def claim(self, name: str, scope: Scope) -> bool:
        """Take ``name`` in ``scope`` as it is, unless it was given out already."""
        if (id(scope), name) in self._taken:
            return False
        self._taken.add((id(scope), name))
        return True


def _variable_names(node: ast.AST) -> set[str]:
    """Every name a variable, parameter, def, class or import uses in ``node``."""
    names: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            names.add(inner.id)
        elif isinstance(inner, ast.arg):
            names.add(inner.arg)
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(inner.name)
        elif isinstance(inner, ast.alias):
            names.add((inner.asname or inner.name).split(".")[0])
        elif isinstance(inner, (ast.Global, ast.Nonlocal)):
            names.update(inner.names)
    return names
