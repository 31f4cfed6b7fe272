"""Apply fix plans with libcst, keeping every byte the plans do not change.

Only the statements a plan changes are parsed: each is cut from the source with its full lines
(nested statements keep their indentation, under an ``if True:`` line that is dropped again),
its nodes are found by the plan's positions through libcst's position metadata, and one
transformer pass rewrites it. Statements that touch or nest merge into one piece. Each piece
becomes one edit, given to every plan that changed it; a file's fixed text is the source with
all pieces replaced. Cost grows with what is fixed, not with the size of the file.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst

from ..diagnostics import Edit
from .model import FunctionFix, with_carried
from .node_index import NodeIndex
from .transformer import LiftTransformer

_HEADER = "if True:"
# Lines as Python counts them: ``str.splitlines`` also breaks at form feeds and other controls.
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


class RewriteError(Exception):
    """A piece of source cannot be parsed by libcst, or a planned node is not where the plan
    says."""


@contextmanager
def deep_recursion(limit: int = 20_000) -> Iterator[None]:
    """libcst walks trees recursively, several frames per nesting level; code nested a few
    hundred levels deep (which CPython accepts) needs more than the default 1,000 frames.
    Python-to-Python calls do not grow the C stack, so a higher limit is safe here."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


@dataclass
class _Piece:
    """Full source lines ``first``..``last`` rewritten together, and the plans that do."""

    first: int
    last: int
    plans: list[FunctionFix] = field(default_factory=list)
    module: cst.Module | None = None
    index: NodeIndex | None = None


@dataclass
class Rewrite:
    text: str  # the source with every plan applied
    edits: dict[int, tuple[Edit, ...]]  # id(plan) -> the edits it needs
    failed: dict[int, str]  # id(plan) -> why its pieces could not be rewritten


def rewrite(source: str, plans: Sequence[FunctionFix]) -> Rewrite:
    """Apply ``plans`` to ``source``: the new text, and each plan's edits."""
    plans = with_carried(plans)
    lines = _LINES.findall(source)
    pieces = _pieces(plans)
    failed: dict[int, str] = {}
    originals: dict[int, cst.FunctionDef | cst.Lambda] = {}
    with deep_recursion():
        for piece in pieces:
            try:
                _parse(piece, lines)
            except RewriteError as error:
                failed.update((id(plan), str(error)) for plan in piece.plans)
                continue
            assert piece.index is not None
            for plan in piece.plans:
                function = piece.index.function(plan)
                if function is not None:
                    originals[id(plan)] = function
        failed.update(
            (id(plan), "the compiled function could not be found")
            for piece in pieces
            for plan in piece.plans
            if id(plan) not in originals and id(plan) not in failed
        )
        replaced: dict[int, str] = {}
        for piece in pieces:
            if piece.module is None or any(id(plan) in failed for plan in piece.plans):
                continue
            assert piece.index is not None
            transformer = LiftTransformer(piece.module, piece.index, piece.plans, originals)
            module = piece.module.visit(transformer)
            text = _unwrap(module.code, piece, lines)
            if _ends_with_wrapper(module, transformer):
                text += _blank_after(piece, lines)
            replaced[id(piece)] = text
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
    )


def _pieces(plans: Sequence[FunctionFix]) -> list[_Piece]:
    """Statements to rewrite, merged where they overlap, in source order."""
    spans = sorted({(first, last, id(plan)): plan for plan in plans
                    for first, last in plan.statements}.items())  # fmt: skip
    pieces: list[_Piece] = []
    for (first, last, _), plan in spans:
        if pieces and first <= pieces[-1].last:
            piece = pieces[-1]
            piece.last = max(piece.last, last)
        else:
            piece = _Piece(first, last)
            pieces.append(piece)
        if all(p is not plan for p in piece.plans):
            piece.plans.append(plan)
    return pieces


def _newline(line: str) -> str:
    """The line's own ending (``\n`` for the last line of a file without one)."""
    stripped = line.rstrip("\r\n")
    return line[len(stripped) :] or "\n"


def _parse(piece: _Piece, lines: list[str]) -> None:
    text = "".join(lines[piece.first - 1 : piece.last])
    # libcst writes new lines with the first line ending it sees: the header's is the piece's.
    first = lines[piece.first - 1]
    header = _HEADER + _newline(first) if text[:1] in (" ", "\t") else ""
    try:
        piece.module = cst.parse_module(header + text)
    except (cst.ParserSyntaxError, RecursionError) as error:
        raise RewriteError(f"lines {piece.first}-{piece.last} cannot be rewritten") from error
    offset = piece.first - 1 - (1 if header else 0)
    piece.index = NodeIndex(piece.module, offset)


def _unwrap(code: str, piece: _Piece, lines: list[str]) -> str:
    original = "".join(lines[piece.first - 1 : piece.last])
    if original[:1] in (" ", "\t"):
        code = code[len(_HEADER) + len(_newline(lines[piece.first - 1])) :]
    return code


def _ends_with_wrapper(module: cst.Module, transformer: LiftTransformer) -> bool:
    body: Sequence[cst.BaseStatement | cst.BaseSmallStatement] = module.body
    if len(body) == 1 and isinstance(body[0], cst.If) and not body[0].leading_lines:
        inner = body[0].body
        if isinstance(inner, cst.IndentedBlock):
            body = inner.body
    return bool(body) and id(body[-1]) in transformer.wrappers


def _blank_after(piece: _Piece, lines: list[str]) -> str:
    """Blank lines a definition wants after an inserted wrapper, when the next statement at the
    same level follows too closely."""
    wanted = 1 if lines[piece.first - 1][:1] in (" ", "\t") else 2
    indent = _indentation(lines[piece.first - 1])
    blank = 0
    for line in lines[piece.last :]:
        if line.strip():
            if _indentation(line) != indent:
                return ""
            return _newline(lines[piece.first - 1]) * max(0, wanted - blank)
        blank += 1
    return ""


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
