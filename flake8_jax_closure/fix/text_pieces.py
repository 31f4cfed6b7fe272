"""A piece of source as the text rewrite reads it: its ``ast``, positions in characters and in
the whole source, and edits made by offset."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from ..positions import Span
from .lines import is_indented
from .pieces import Piece

_NAME = re.compile(r"[^\W\d]\w*")
# What may follow a statement, or a call closing it, on its last line.
TO_END = re.compile(r"[ \t]*(?:#[^\r\n]*)?(?:\r\n|\r|\n)")

Edit = tuple[int, int, str]  # start and end offsets in the piece's text, and the new text


class PieceText:
    """One piece's text and ``ast``; ``ast`` lines and byte columns mapped to the piece."""

    def __init__(self, piece: Piece, lines: Sequence[str]) -> None:
        self.piece = piece
        self.lines = lines[piece.first - 1 : piece.last]
        self.source = "".join(self.lines)
        # A nested piece parses under a header line, as libcst's does.
        self.header = 1 if is_indented(self.lines[0]) else 0
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def statement(self) -> ast.stmt | None:
        """The piece's one statement; None when it does not parse alone, or holds more."""
        if not self.lines[-1].endswith(("\n", "\r")) or "\x0c" in self.source:
            return None  # the file's last line, a form feed: libcst's own layout
        try:
            tree = ast.parse("if True:\n" * self.header + self.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        body = tree.body
        if self.header:
            if len(body) != 1 or not isinstance(body[0], ast.If):
                return None
            body = body[0].body
        return body[0] if len(body) == 1 else None

    def line(self, ast_line: int) -> str:
        """A line of the piece, by its ``ast`` number."""
        return self.lines[ast_line - 1 - self.header]

    def column(self, ast_line: int, byte_column: int) -> int:
        """A column in characters (``ast`` counts UTF-8 bytes)."""
        text = self.line(ast_line)
        if text.isascii():
            return byte_column
        return len(text.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))

    def offset(self, ast_line: int, byte_column: int) -> int:
        return self.starts[ast_line - 1 - self.header] + self.column(ast_line, byte_column)

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def lines_of(self, node: ast.AST) -> tuple[int, int]:
        """The node's first and last ``ast`` lines."""
        return node.lineno, node.end_lineno  # type: ignore[attr-defined]

    def span(self, node: ast.AST) -> Span:
        """The node's span in the whole source, as the plan names positions."""
        shift = self.piece.first - 1 - self.header
        start_line: int = node.lineno  # type: ignore[attr-defined]
        end_line: int = node.end_lineno  # type: ignore[attr-defined]
        return (
            start_line + shift,
            self.column(start_line, node.col_offset),  # type: ignore[attr-defined]
            end_line + shift,
            self.column(end_line, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def segment(self, node: ast.AST) -> str:
        return self.source[self.start(node) : self.end(node)]

    def spelled(self, node: ast.arg | ast.Name) -> str:
        """A name as the source spells it (``ast`` gives its NFKC form)."""
        line = self.line(node.lineno)
        match = _NAME.match(line, self.column(node.lineno, node.col_offset))
        assert match is not None
        return match.group()

    def alone(self, node: ast.AST) -> bool:
        """Whether the node has its lines to itself: only indentation before it, and at most
        a comment after it."""
        before = self.source[self.offset(node.lineno, 0) : self.start(node)]  # type: ignore[attr-defined]
        return not before.strip(" \t") and TO_END.match(self.source, self.end(node)) is not None

    def keyword_added(self, call: ast.Call, name: str, value: str) -> Edit | None:
        """``name=value`` added as the last argument of a call on one line, as libcst adds it
        (``, name=value`` after the others); None where the call already has the keyword
        (merged by libcst) or its layout is not that plain."""
        if (
            call.lineno != call.end_lineno
            or any(isinstance(a, ast.GeneratorExp) for a in call.args)
            or any(k.arg == name for k in call.keywords)
        ):
            return None
        keyword = f"{name}={value}"
        arguments: list[ast.AST] = [*call.args, *call.keywords]
        end = self.end(call)
        if arguments:
            last = max(self.end(argument) for argument in arguments)
            keyword = f", {keyword}"
        else:
            last = self.end(call.func) + 1
            if self.source[last - 1 : last] != "(":
                return None
        if last != end - 1:
            return None  # a trailing comma, or spaces before the parenthesis
        return (last, last, keyword)


def applied(source: str, edits: Sequence[Edit]) -> str | None:
    """``source`` with the edits made; None when two overlap."""
    ordered = sorted(edits)
    for (_, end, _), (start, _, _) in zip(ordered, ordered[1:], strict=False):
        if start < end:
            return None
    parts: list[str] = []
    at = 0
    for start, end, new in ordered:
        parts.extend((source[at:start], new))
        at = end
    parts.append(source[at:])
    return "".join(parts)
