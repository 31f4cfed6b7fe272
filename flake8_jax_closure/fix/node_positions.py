"""Where each libcst node of a piece of source lies: libcst's ``PositionProvider`` ranges, at
half their cost.

``PositionProvider`` renders the tree once, recording a range per node through a state object
that pays for generality (``CodePosition`` objects, a regular expression per token, a
generator-based context manager per node). Fixing a large module asks for the positions of a
thousand pieces, where this is most of the time. This state records the same ranges, as
(line, column) pairs, through the same hooks of libcst's rendering; the tests compare the two
on every fixture.
"""

from __future__ import annotations

import re
from types import TracebackType

import libcst as cst
from libcst._nodes.internal import CodegenState

Position = tuple[int, int]  # line (1-based), column (0-based)
Range = tuple[Position, Position]

_NEWLINES = re.compile(r"\r\n?|\n")


class _SyntacticRange:
    """``record_syntactic_position``: the node's range is what is rendered inside it, or
    borrowed from the children named."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(
        self,
        state: _PositionState,
        node: cst.CSTNode,
        start_node: cst.CSTNode | None,
        end_node: cst.CSTNode | None,
    ) -> None:
        self.state, self.node = state, node
        self.start_node, self.end_node = start_node, end_node
        self.start: Position = (0, 0)

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        state = self.state
        ranges = state.ranges
        start = ranges[self.start_node][0] if self.start_node is not None else self.start
        end = ranges[self.end_node][1] if self.end_node is not None else (state.line, state.column)
        ranges[self.node] = (start, end)


class _PositionState(CodegenState):
    def __init__(self, module: cst.Module) -> None:
        super().__init__(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        self.line, self.column = 1, 0
        self.ranges: dict[cst.CSTNode, Range] = {}
        self._starts: list[Position] = []

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            segments = _NEWLINES.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        # A syntactic range recorded inside it wins.
        self.ranges.setdefault(node, (self._starts.pop(), (self.line, self.column)))

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _SyntacticRange:
        return _SyntacticRange(self, node, start_node, end_node)


def node_ranges(module: cst.Module) -> dict[cst.CSTNode, Range]:
    """Every node's range, as ``PositionProvider`` gives it (columns count characters)."""
    state = _PositionState(module)
    module._codegen(state)
    return state.ranges
