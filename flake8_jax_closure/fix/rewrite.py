"""Apply fix plans, keeping every byte the plans do not change.

Only the statements a plan changes are rewritten (``pieces``). The pieces of the common forms,
a def compiled by its decorator or by ``g = jax.jit(f)`` whose values become keyword-only
parameters, are written straight as text from their positions (``text_rewrite``), as ruff
writes its fixes; every other piece is rewritten with libcst (``cst_rewrite``), which is then
imported. The two write the same bytes wherever the
first applies (the tests compare them on every fixture). Each piece becomes one edit, given to
every plan that changed it; a file's fixed text is the source with all pieces replaced. Cost
grows with what is fixed, not with the size of the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..diagnostics import Edit
from ..diffs import python_lines
from .model import FunctionFix, with_carried
from .pieces import Piece, pieces_of
from .text_rewrite import written_as_text


@dataclass
class Rewrite:
    text: str  # the source with every plan applied
    edits: dict[int, tuple[Edit, ...]]  # id(plan) -> the edits it needs
    failed: dict[int, str]  # id(plan) -> why its pieces could not be rewritten
    as_text: int = 0  # how many pieces were written as text, without libcst


def rewrite(source: str, plans: Sequence[FunctionFix], *, as_text: bool = True) -> Rewrite:
    """Apply ``plans`` to ``source``: the new text, and each plan's edits. ``as_text=False``
    rewrites every piece with libcst (the tests compare the two)."""
    plans = with_carried(plans)
    lines = python_lines(source)
    pieces = pieces_of(plans)
    replaced: dict[int, str] = {}
    if as_text:
        replaced.update(written_as_text(pieces, lines))
    written = len(replaced)
    failed: dict[int, str] = {}
    rest = [piece for piece in pieces if id(piece) not in replaced]
    if rest:
        from .cst_rewrite import rewrite_pieces

        done, failed = rewrite_pieces(rest, lines)
        replaced.update(done)
    return _assembled(pieces, lines, plans, replaced, failed, written)


def _assembled(
    pieces: Sequence[Piece],
    lines: Sequence[str],
    plans: Sequence[FunctionFix],
    replaced: dict[int, str],
    failed: dict[int, str],
    written: int,
) -> Rewrite:
    text_parts: list[str] = []
    edits: dict[int, list[Edit]] = {id(plan): [] for plan in plans}
    line = 1
    for piece in pieces:
        new = replaced.get(id(piece))
        if new is None or any(id(plan) in failed for plan in piece.plans):
            continue
        text_parts.extend(lines[line - 1 : piece.first - 1])
        text_parts.append(new)
        line = piece.last + 1
        edit = Edit(piece.first, 0, piece.last + 1, 0, new)
        for plan in piece.plans:
            edits[id(plan)].append(edit)
    text_parts.extend(lines[line - 1 :])
    return Rewrite(
        "".join(text_parts),
        {key: tuple(value) for key, value in edits.items() if key not in failed},
        failed,
        written,
    )
