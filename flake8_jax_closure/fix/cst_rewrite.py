"""Pieces rewritten with libcst, keeping every byte the plans do not change.

Each piece is parsed on its own (a nested one under an ``if True:`` line that is dropped
again), its nodes are found by the plans' positions (``node_index``), and one transformer pass
rewrites it. A wrapper made at ``g = jax.jit(f)`` copies the signature of ``f``, which may sit
in another piece: every piece is parsed before any is rewritten.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import libcst as cst

from .lines import blank_after, is_indented, newline_of
from .node_index import NodeIndex
from .pieces import Piece
from .transformer import LiftTransformer

_HEADER = "if True:"


class RewriteError(Exception):
    """A piece of source cannot be parsed by libcst."""


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


def rewrite_pieces(
    pieces: Sequence[Piece], lines: Sequence[str]
) -> tuple[dict[int, str], dict[int, str]]:
    """The new text of each piece (by id), and why a plan's pieces could not be rewritten
    (by the plan's id)."""
    failed: dict[int, str] = {}
    parsed: dict[int, tuple[cst.Module, NodeIndex]] = {}
    originals: dict[int, cst.FunctionDef | cst.Lambda] = {}
    replaced: dict[int, str] = {}
    with deep_recursion():
        for piece in pieces:
            try:
                module, index = _parse(piece, lines)
            except RewriteError as error:
                failed.update((id(plan), str(error)) for plan in piece.plans)
                continue
            parsed[id(piece)] = module, index
            for plan in piece.plans:
                function = index.function(plan)
                if function is not None:
                    originals[id(plan)] = function
        failed.update(
            (id(plan), "the compiled function could not be found")
            for piece in pieces
            for plan in piece.plans
            if id(plan) not in originals and id(plan) not in failed
        )
        for piece in pieces:
            if id(piece) not in parsed or any(id(plan) in failed for plan in piece.plans):
                continue
            module, index = parsed[id(piece)]
            transformer = LiftTransformer(module, index, piece.plans, originals)
            new = module.visit(transformer)
            text = _unwrap(new.code, piece, lines)
            if _ends_with_wrapper(new, transformer):
                text += blank_after(piece.first, piece.last, lines)
            replaced[id(piece)] = text
    return replaced, failed


def _header(piece: Piece, lines: Sequence[str]) -> str:
    # libcst writes new lines with the first line ending it sees: the header's is the piece's.
    first = lines[piece.first - 1]
    return _HEADER + newline_of(first) if is_indented(first) else ""


def _parse(piece: Piece, lines: Sequence[str]) -> tuple[cst.Module, NodeIndex]:
    text = "".join(lines[piece.first - 1 : piece.last])
    header = _header(piece, lines)
    try:
        module = cst.parse_module(header + text)
    except (cst.ParserSyntaxError, RecursionError) as error:
        raise RewriteError(f"lines {piece.first}-{piece.last} cannot be rewritten") from error
    offset = piece.first - 1 - (1 if header else 0)
    return module, NodeIndex(module, offset)


def _unwrap(code: str, piece: Piece, lines: Sequence[str]) -> str:
    return code[len(_header(piece, lines)) :]


def _ends_with_wrapper(module: cst.Module, transformer: LiftTransformer) -> bool:
    body: Sequence[cst.BaseStatement | cst.BaseSmallStatement] = module.body
    if len(body) == 1 and isinstance(body[0], cst.If) and not body[0].leading_lines:
        inner = body[0].body
        if isinstance(inner, cst.IndentedBlock):
            body = inner.body
    return bool(body) and id(body[-1]) in transformer.wrappers
