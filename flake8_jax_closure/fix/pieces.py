"""The pieces of source a rewrite replaces: the statements the plans change, merged where they
touch or nest, each with the plans that change it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .model import FunctionFix


@dataclass(eq=False)
class Piece:
    """Full source lines ``first``..``last`` rewritten together, and the plans that do."""

    first: int
    last: int
    plans: list[FunctionFix] = field(default_factory=list)


def pieces_of(plans: Sequence[FunctionFix]) -> list[Piece]:
    """Statements to rewrite, merged where they overlap, in source order."""
    spans = sorted({(first, last, id(plan)): plan for plan in plans
                    for first, last in plan.statements}.items())  # fmt: skip
    pieces: list[Piece] = []
    for (first, last, _), plan in spans:
        if pieces and first <= pieces[-1].last:
            piece = pieces[-1]
            piece.last = max(piece.last, last)
        else:
            piece = Piece(first, last)
            pieces.append(piece)
        if all(p is not plan for p in piece.plans):
            piece.plans.append(plan)
    return pieces
