"""The nodes of a parsed piece of source that a fix plan names, found by their position in the
whole source (through ``node_positions``)."""

from __future__ import annotations

import libcst as cst

from ..positions import Span
from .model import FunctionFix
from .node_positions import node_ranges


class NodeIndex:
    """The nodes of one piece that a plan can name, by their position in the whole source."""

    # By exact type (none of them has subclasses): libcst's node classes are abstract base
    # classes, and an ``isinstance`` check against them per node of every piece costs more
    # than the rest of the indexing.
    _KINDS: dict[type[cst.CSTNode], str] = {
        kind: kind.__name__
        for kind in (cst.FunctionDef, cst.Lambda, cst.Call, cst.Attribute, cst.Subscript, cst.Name)
    }

    def __init__(self, module: cst.Module, line_offset: int) -> None:
        self.positions = positions = node_ranges(module)
        self._nodes: dict[tuple[str, Span], cst.CSTNode] = {}
        self._statements: dict[int, cst.SimpleStatementLine] = {}
        kinds, nodes, statements = self._KINDS, self._nodes, self._statements
        for node, ((start_line, start_column), (end_line, end_column)) in positions.items():
            kind = kinds.get(type(node))
            if kind is not None:
                start_line += line_offset
                span = (start_line, start_column, end_line + line_offset, end_column)
                nodes.setdefault((kind, span), node)
                if kind == "FunctionDef":
                    nodes[("def", (start_line, start_column, 0, 0))] = node
            elif type(node) is cst.SimpleStatementLine:
                statements.setdefault(start_line + line_offset, node)

    def function(self, fix: FunctionFix) -> cst.FunctionDef | cst.Lambda | None:
        if fix.is_lambda:
            node = self._nodes.get(("Lambda", fix.function))
        else:
            node = self._nodes.get(("def", (fix.function[0], fix.function[1], 0, 0)))
        return node if isinstance(node, (cst.FunctionDef, cst.Lambda)) else None

    def definition(self, span: Span) -> cst.FunctionDef | None:
        node = self._nodes.get(("def", (span[0], span[1], 0, 0)))
        return node if isinstance(node, cst.FunctionDef) else None

    def expression(self, span: Span) -> cst.CSTNode | None:
        for kind in ("Attribute", "Subscript"):
            node = self._nodes.get((kind, span))
            if node is not None:
                return node
        return None

    def name(self, span: Span) -> cst.Name | None:
        node = self._nodes.get(("Name", span))
        return node if isinstance(node, cst.Name) else None

    def call(self, span: Span) -> cst.Call | None:
        node = self._nodes.get(("Call", span))
        return node if isinstance(node, cst.Call) else None

    def statement(self, line: int) -> cst.SimpleStatementLine | None:
        node = self._statements.get(line)
        return node if node is not None and len(node.body) == 1 else None
