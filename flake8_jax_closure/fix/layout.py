"""Where the code the fix changes sits: the full lines of a statement, the indentation a body
uses, and whether a statement has its lines to itself."""

from __future__ import annotations

import ast

from ..analysis.facts.queries import Facts
from ..positions import SourceLines


class Layout:
    """Positions of statements and bodies, read from the facts and the source."""

    def __init__(self, facts: Facts, source: SourceLines) -> None:
        self.facts = facts
        self.source = source

    def enclosing_statement(self, node: ast.AST) -> ast.AST:
        """The statement holding ``node`` (``node`` itself where there is none)."""
        current: ast.AST | None = node
        while current is not None and not isinstance(current, ast.stmt):
            current = self.facts.parent(current)
        return current if current is not None else node

    def statement_span(self, node: ast.AST) -> tuple[int, int]:
        """The full lines of the statement holding ``node`` (with a def's decorators)."""
        current: ast.AST | None = node
        while current is not None and not isinstance(current, ast.stmt):
            current = self.facts.parent(current)
        statement = current if current is not None else node
        return _first_line(statement), statement.end_lineno or statement.lineno  # type: ignore[attr-defined]

    def indent_unit(self, function: ast.AST) -> str:
        """The indentation one level deeper than the function's ``def`` line, as written."""
        body = getattr(function, "body", None)
        if isinstance(body, list) and body:
            outer = self.source.line(function.lineno)  # type: ignore[attr-defined]
            inner = self.source.line(body[0].lineno)
            outer_indent = outer[: len(outer) - len(outer.lstrip())]
            inner_indent = inner[: len(inner) - len(inner.lstrip())]
            if inner_indent.startswith(outer_indent) and len(inner_indent) > len(outer_indent):
                return inner_indent[len(outer_indent) :]
        return "    "

    def alone_on_its_lines(self, statement: ast.AST) -> bool:
        """Whether nothing but a comment shares the statement's lines."""
        first, last = statement.lineno, statement.end_lineno or statement.lineno  # type: ignore[attr-defined]
        before = self.source.line(first)[: self.source.character(first, statement.col_offset)]  # type: ignore[attr-defined]
        after = self.source.line(last)[self.source.character(last, statement.end_col_offset) :]  # type: ignore[attr-defined]
        return not before.strip() and (not after.strip() or after.strip().startswith("#"))


def _first_line(function: ast.AST) -> int:
    decorators: list[ast.expr] = getattr(function, "decorator_list", [])
    line: int = function.lineno  # type: ignore[attr-defined]
    return min([d.lineno for d in decorators] + [line])
