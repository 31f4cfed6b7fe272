"""The rewrite of a large module's fixes, shared out among processes.

Each fix rewrites its own statements, and fixes whose statements overlap are rewritten together.
Groups of fixes with no statement in common are independent: a module with many of them has its
groups shared out, in source order, among forked worker processes (which start at once, with
what this process has imported), and the edits they send back are put together here. Elsewhere
(few fixes, one process asked for, no ``fork``, or already inside a worker process) the rewrite
runs in this process; either way the result is the same.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from collections.abc import Iterable, Sequence

from ..diagnostics import Edit
from ..diffs import python_lines
from .plan import FunctionFix
from .rewrite import Rewrite, rewrite

# Fewer fixes than this are rewritten in this process: starting processes would cost more.
PARALLEL_FROM = 100

# The work of the worker processes, set before they are forked (nothing to send them).
_work: tuple[str, list[list[FunctionFix]]] | None = None


def rewrite_all(source: str, plans: Sequence[FunctionFix], processes: int = 1) -> Rewrite:
    """``rewrite(source, plans)``, in up to ``processes`` processes."""
    if processes <= 1 or len(plans) < PARALLEL_FROM or not _can_fork():
        return rewrite(source, plans)
    chunks = _chunks(plans, processes)
    if len(chunks) <= 1:
        return rewrite(source, plans)
    global _work
    _work = (source, chunks)
    try:
        pool = multiprocessing.get_context("fork").Pool(len(chunks), initializer=_ignore_sigint)
        try:
            parts = pool.map(_rewrite_chunk, range(len(chunks)), chunksize=1)
        except BaseException:
            pool.terminate()  # Ctrl-C: stop the workers at once
            raise
        pool.close()
        pool.join()
    finally:
        _work = None
    edits: dict[int, tuple[Edit, ...]] = {}
    failed: dict[int, str] = {}
    for chunk, (chunk_edits, chunk_failed) in zip(chunks, parts, strict=True):
        for plan, plan_edits, reason in zip(chunk, chunk_edits, chunk_failed, strict=True):
            if reason is not None:
                failed[id(plan)] = reason
            elif plan_edits is not None:
                edits[id(plan)] = plan_edits
    return Rewrite(_assemble(source, edits.values()), edits, failed)


def _can_fork() -> bool:
    # A daemonic worker (of the command line's pool over files) may not start processes.
    return sys.platform == "linux" and not multiprocessing.current_process().daemon


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent answers Ctrl-C


def _rewrite_chunk(
    index: int,
) -> tuple[list[tuple[Edit, ...] | None], list[str | None]]:
    """One chunk's edits and failures, per plan in the chunk's order (a plan's identity does
    not survive the trip back)."""
    assert _work is not None
    source, chunks = _work
    chunk = chunks[index]
    done = rewrite(source, chunk)
    return [done.edits.get(id(plan)) for plan in chunk], [
        done.failed.get(id(plan)) for plan in chunk
    ]


def _chunks(plans: Sequence[FunctionFix], count: int) -> list[list[FunctionFix]]:
    """The plans in independent groups (no statement shared between groups), shared out in
    source order into about ``count`` chunks of about equal numbers of plans."""
    spans = sorted(
        (first, last, index) for index, plan in enumerate(plans) for first, last in plan.statements
    )
    parent = list(range(len(plans)))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    reach, owner = 0, -1
    for first, last, index in spans:
        if owner >= 0 and first <= reach:  # overlaps or nests in the statements before
            parent[root(index)] = root(owner)
            reach = max(reach, last)
        else:
            reach, owner = last, index
    groups: dict[int, list[int]] = {}
    seen: set[int] = set()
    for _, _, index in spans:
        if index not in seen:
            seen.add(index)
            groups.setdefault(root(index), []).append(index)
    ordered = list(groups.values())  # in source order of their first statement
    size = -(-len(plans) // count)
    chunks: list[list[FunctionFix]] = [[]]
    for members in ordered:
        if len(chunks[-1]) >= size:
            chunks.append([])
        chunks[-1].extend(plans[i] for i in members)
    return [chunk for chunk in chunks if chunk]


def _assemble(source: str, edits: Iterable[tuple[Edit, ...]]) -> str:
    """The source with the replaced lines of every edit."""
    pieces = sorted(
        {(e.start_line, e.end_line): e.content for group in edits for e in group}.items()
    )
    lines = python_lines(source)
    parts: list[str] = []
    line = 1
    for (first, end), content in pieces:
        parts.extend(lines[line - 1 : first - 1])
        parts.append(content)
        line = end
    parts.extend(lines[line - 1 :])
    return "".join(parts)
