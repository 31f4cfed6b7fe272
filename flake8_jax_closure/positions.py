"""Columns as each consumer counts them, and source text by position.

``ast`` counts columns in UTF-8 bytes; findings, libcst and flake8's output count characters
(code points); the Language Server Protocol counts UTF-16 code units. Lines are 1-based.
"""

from __future__ import annotations

import ast

Span = tuple[int, int, int, int]  # start line, start column, end line, end column (characters)


class SourceLines:
    def __init__(self, text: str) -> None:
        self.text = text
        # Python's own line breaks: ``\n``, ``\r\n`` and a lone ``\r``.
        self.lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 1 <= number <= len(self.lines) else ""

    def character(self, line: int, byte_column: int) -> int:
        text = self.line(line)
        if text.isascii():
            return byte_column
        return len(text.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))

    def span(self, node: ast.AST) -> Span:
        """Where ``node`` starts and ends, in characters."""
        start_line: int = node.lineno  # type: ignore[attr-defined]
        end_line: int = node.end_lineno  # type: ignore[attr-defined]
        return (
            start_line,
            self.character(start_line, node.col_offset),  # type: ignore[attr-defined]
            end_line,
            self.character(end_line, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def segment(self, node: ast.AST) -> str:
        """The source text of ``node``."""
        start_line, start, end_line, end = self.span(node)
        if start_line == end_line:
            return self.line(start_line)[start:end]
        parts = [self.line(start_line)[start:]]
        parts.extend(self.line(n) for n in range(start_line + 1, end_line))
        parts.append(self.line(end_line)[:end])
        return "\n".join(parts)

    def utf16(self, line: int, character: int) -> int:
        """A character column as UTF-16 code units (the Language Server Protocol's default)."""
        text = self.line(line)[:character]
        if text.isascii():
            return character
        return len(text.encode("utf-16-le")) // 2
