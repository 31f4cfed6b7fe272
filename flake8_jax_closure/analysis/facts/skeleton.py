"""The statement walk: the scope tree, ``global``/``nonlocal`` declarations and the units.

A first walk over statements only (not expressions) builds the scope tree (functions, classes,
their parameters and ``global`` and ``nonlocal`` declarations) and cuts the module into *units*:
a simple statement, or the header of a compound one (a ``for`` target and iterable, a ``def``'s
decorators and defaults, ...). Units are where the collector starts when a question needs their
expressions. Code under ``if TYPE_CHECKING:`` never runs and is cut out here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from .model import Branches, Scope, ScopeKind

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)
_TYPE_CHECKING = frozenset({"TYPE_CHECKING"})


@dataclass(eq=False, slots=True)
class Unit:
    """A simple statement, or the header of a compound one: the expressions visited together."""

    node: ast.AST  # a statement, an ``except`` handler or a ``match`` case
    scope: Scope
    loops: tuple[ast.AST, ...]
    first: int
    last: int
    # Tests of the ``if`` statements whose body holds the unit, within its scope.
    guards: tuple[ast.expr, ...] = ()
    # The branches of ``if``, ``try`` and ``match`` statements that lead to the unit.
    branches: Branches = ()
    visited: bool = False


def parameter_names(arguments: ast.arguments) -> tuple[str, ...]:
    """The names a function or lambda binds for its arguments, in order."""
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    if arguments.vararg is not None:
        names.append(arguments.vararg.arg)
    names.extend(a.arg for a in arguments.kwonlyargs)
    if arguments.kwarg is not None:
        names.append(arguments.kwarg.arg)
    return tuple(names)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id in _TYPE_CHECKING
    return isinstance(test, ast.Attribute) and test.attr in _TYPE_CHECKING


def _header_last_line(node: ast.AST, parts: Iterable[ast.AST | None]) -> int:
    last: int = node.lineno  # type: ignore[attr-defined]
    for part in parts:
        if part is not None:
            last = max(last, part.end_lineno or last)  # type: ignore[attr-defined]
    return last


class Skeleton:
    """The statement walk: scopes, declarations and units, in source order."""

    def __init__(self, tree: ast.Module) -> None:
        self.units: list[Unit] = []
        self.module = Scope(ScopeKind.MODULE, tree, None, "<module>", (0, 0), ())
        self.global_declarers: dict[str, list[Scope]] = {}
        self.nonlocal_declarers: dict[str, list[Scope]] = {}
        self.scopes: list[Scope] = [self.module]
        self._guards: tuple[ast.expr, ...] = ()
        self._branches: Branches = ()
        self._body(tree.body, self.module, ())
        self.module.unit_range = (0, len(self.units))

    def _unit(self, node: ast.AST, scope: Scope, loops: tuple[ast.AST, ...], last: int) -> None:
        first: int = node.lineno  # type: ignore[attr-defined]
        self.units.append(Unit(node, scope, loops, first, last, self._guards, self._branches))

    def _scope(
        self, kind: ScopeKind, node: ast.stmt, parent: Scope, loops: tuple[ast.AST, ...]
    ) -> Scope:
        params = parameter_names(node.args) if isinstance(node, FUNCTION_NODES) else ()
        name: str = node.name  # type: ignore[attr-defined]
        scope = Scope(kind, node, parent, name, (node.lineno, node.col_offset), loops, params)
        scope.bound.update(params)
        parent.children.append(scope)
        self.scopes.append(scope)
        begin = len(self.units)
        saved = self._guards, self._branches
        self._guards, self._branches = (), ()
        self._body(node.body, scope, ())  # type: ignore[attr-defined]
        self._guards, self._branches = saved
        scope.unit_range = (begin, len(self.units))
        return scope

    def _branch(
        self,
        statement: ast.stmt,
        side: int,
        body: list[ast.stmt],
        scope: Scope,
        loops: tuple[ast.AST, ...],
    ) -> None:
        saved = self._branches
        self._branches = (*saved, (id(statement), side))
        self._body(body, scope, loops)
        self._branches = saved

    def _body(self, body: list[ast.stmt], scope: Scope, loops: tuple[ast.AST, ...]) -> None:
        units, compound = self.units, _COMPOUND
        for stmt in body:
            if type(stmt) not in compound:
                # Most statements are simple: one unit each, no nesting.
                units.append(
                    Unit(stmt, scope, loops, stmt.lineno, stmt.end_lineno or stmt.lineno,
                          self._guards, self._branches)
                )  # fmt: skip
            else:
                self._compound(stmt, scope, loops)

    def _compound(self, stmt: ast.stmt, scope: Scope, loops: tuple[ast.AST, ...]) -> None:
        if isinstance(stmt, FUNCTION_NODES):
            decorators = [d.lineno for d in stmt.decorator_list]
            header_last = _header_last_line(stmt, [*stmt.args.defaults, *stmt.args.kw_defaults])
            first = min([stmt.lineno, *decorators])
            self.units.append(
                Unit(stmt, scope, loops, first, header_last, self._guards, self._branches)
            )
            self._scope(ScopeKind.FUNCTION, stmt, scope, loops)
        elif isinstance(stmt, ast.ClassDef):
            decorators = [d.lineno for d in stmt.decorator_list]
            parts = [*stmt.bases, *(k.value for k in stmt.keywords)]
            header_last = _header_last_line(stmt, parts)
            first = min([stmt.lineno, *decorators])
            self.units.append(
                Unit(stmt, scope, loops, first, header_last, self._guards, self._branches)
            )
            self._scope(ScopeKind.CLASS, stmt, scope, loops)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._unit(stmt, scope, loops, _header_last_line(stmt, [stmt.target, stmt.iter]))
            self._body(stmt.body, scope, (*loops, stmt))
            self._body(stmt.orelse, scope, loops)
        elif isinstance(stmt, ast.While):
            self._unit(stmt, scope, loops, _header_last_line(stmt, [stmt.test]))
            self._body(stmt.body, scope, (*loops, stmt))
            self._body(stmt.orelse, scope, loops)
        elif isinstance(stmt, ast.If):
            self._unit(stmt, scope, loops, _header_last_line(stmt, [stmt.test]))
            if not _is_type_checking(stmt.test):
                saved_guards = self._guards
                self._guards = (*saved_guards, stmt.test)
                self._branch(stmt, 0, stmt.body, scope, loops)
                self._guards = saved_guards
            self._branch(stmt, 1, stmt.orelse, scope, loops)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            items: list[ast.AST | None] = [
                p for i in stmt.items for p in (i.context_expr, i.optional_vars)
            ]
            self._unit(stmt, scope, loops, _header_last_line(stmt, items))
            self._body(stmt.body, scope, loops)
        elif isinstance(stmt, ast.Match):
            self._unit(stmt, scope, loops, _header_last_line(stmt, [stmt.subject]))
            for index, case in enumerate(stmt.cases):
                saved = self._branches
                self._branches = (*saved, (id(stmt), index))
                last = max(case.pattern.end_lineno or 0, getattr(case.guard, "end_lineno", 0))
                self.units.append(
                    Unit(case, scope, loops, case.pattern.lineno, last, self._guards,
                          self._branches)
                )  # fmt: skip
                self._body(case.body, scope, loops)
                self._branches = saved
        elif isinstance(stmt, ast.Global):
            scope.declared_global.update(stmt.names)
            for name in stmt.names:
                self.global_declarers.setdefault(name, []).append(scope)
        elif isinstance(stmt, ast.Nonlocal):
            scope.declared_nonlocal.update(stmt.names)
            for name in stmt.names:
                self.nonlocal_declarers.setdefault(name, []).append(scope)
        else:  # try
            # The body (and its ``else``) or a handler: an import and its fallback in
            # ``except ImportError`` are alternatives, not a change.
            self._branch(stmt, 0, stmt.body, scope, loops)  # type: ignore[attr-defined]
            for index, handler in enumerate(stmt.handlers, 1):  # type: ignore[attr-defined]
                saved = self._branches
                self._branches = (*saved, (id(stmt), index))
                self._unit(handler, scope, loops, _header_last_line(handler, [handler.type]))
                self._body(handler.body, scope, loops)
                self._branches = saved
            self._branch(stmt, 0, stmt.orelse, scope, loops)  # type: ignore[attr-defined]
            self._body(stmt.finalbody, scope, loops)  # type: ignore[attr-defined]


_COMPOUND = frozenset(
    {
        ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While,
        ast.If, ast.With, ast.AsyncWith, ast.Match, ast.Global, ast.Nonlocal, ast.Try,
        getattr(ast, "TryStar", ast.Try),
    }
)  # fmt: skip
