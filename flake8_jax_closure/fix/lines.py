"""Source lines as the rewrite cuts and writes them: their endings, their indentation, and the
blank lines a definition wants after an inserted wrapper."""

from __future__ import annotations

from collections.abc import Sequence


def newline_of(line: str) -> str:
    """The line's own ending (``\\n`` for the last line of a file without one)."""
    return line[len(line.rstrip("\r\n")) :] or "\n"


def indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def is_indented(line: str) -> bool:
    return line[:1] in (" ", "\t")


def blank_after(first: int, last: int, lines: Sequence[str]) -> str:
    """Blank lines a definition wants after a wrapper that ends lines ``first``..``last``,
    when the next statement at the same level follows too closely."""
    wanted = 1 if is_indented(lines[first - 1]) else 2
    indent = indentation(lines[first - 1])
    blank = 0
    for line in lines[last:]:
        if line.strip():
            if indentation(line) != indent:
                return ""
            return newline_of(lines[first - 1]) * max(0, wanted - blank)
        blank += 1
    return ""
