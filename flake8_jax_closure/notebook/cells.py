"""Module lines to notebook cells, for the outputs.

The analysis numbers lines in the module made of the code cells (``reader``); a user reads
``cell 3, line 2``. ``CellMap`` answers which cell and line a module line is, and rewrites the
line numbers a message names (``changed at line 40`` becomes ``changed in cell 5 at line 1``).
It is plain data: it travels with a file's result between processes and is rebuilt from the
notebook for a result served from the cache.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

# A line number in a message, finding, fix description or reason: ``at line 40``,
# ``(line 40)``; every one of them is a module line.
_LINE = re.compile(r"\b(?P<at>at )?line (?P<line>\d+)\b")
EXECUTED_ORDER = "in executed order"


@dataclass(frozen=True)
class CellMap:
    # Per code cell with lines, in the module's order: the module line it starts at, and its
    # number (1-based among all cells).
    starts: tuple[int, ...]
    numbers: tuple[int, ...]
    # The module holds the cells in the order their execution counts show, not the file's.
    executed_order: bool = False

    def locate(self, line: int) -> tuple[int, int]:
        """(cell number, line in the cell) of a module line; both 1-based."""
        index = max(bisect_right(self.starts, line) - 1, 0)
        if not self.starts:
            return 1, line
        return self.numbers[index], line - self.starts[index] + 1

    def text(self, text: str) -> str:
        """``text`` with each module line it names as a cell and a line."""

        def cell_line(match: re.Match[str]) -> str:
            cell, line = self.locate(int(match.group("line")))
            if match.group("at"):
                return f"in cell {cell} at line {line}"
            return f"cell {cell}, line {line}"

        return _LINE.sub(cell_line, text)

    def message(self, message: str, has_witness: bool) -> str:
        """A finding's message in cells; a witness in a notebook analysed in executed order
        says so, since its steps then need not read top to bottom."""
        mapped = self.text(message)
        if has_witness and self.executed_order:
            mapped += f", {EXECUTED_ORDER}"
        return mapped
