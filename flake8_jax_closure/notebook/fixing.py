"""Fixes applied to a notebook, cell by cell, and their diff per cell.

A fix's edits replace whole lines of the module (``fix.rewrite``); each replaced range must lie
in one cell and hold no masked IPython line, since a cell takes back its own lines only. A fix
whose edits span two cells (a wrapper written where another cell begins) or would rewrite a
magic is declined, with the reason, and the other fixes still apply. Lines a fix adds stay in
the cell of the lines they replace.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ..diagnostics import Applicability, Edit, Finding
from ..diffs import python_lines
from ..engine import Analysis, FixResult, analyse_source, fix_source, with_edits_of
from ..settings import Settings
from .reader import CodeCell, Notebook
from .writer import write_cells

Change = tuple[int, int, str]  # first module line, last module line, new text (fix_source's)


@dataclass
class NotebookFix:
    text: str  # the notebook's JSON text, fixed (the input when nothing changed)
    fixed: list[Finding]
    remaining: list[Finding]
    changed: dict[CodeCell, str]  # the new text of each changed cell


def _cell_of(cells: Sequence[CodeCell], line: int) -> CodeCell | None:
    for cell in cells:
        if cell.start <= line < cell.start + len(cell.lines):
            return cell
    return None


def _problem(cells: Sequence[CodeCell], first: int, last: int) -> str | None:
    """Why lines ``first`` to ``last`` of the module cannot be replaced within one cell."""
    if last < first:  # an insertion before ``first``
        last = first
    cell = _cell_of(cells, first)
    end = _cell_of(cells, last)
    if cell is None or end is None:
        return "the fix writes outside the notebook's cells"
    if cell is not end:
        return (
            f"the fix's edits span cells {cell.number} and {end.number} of the notebook; "
            "a cell takes back its own lines only"
        )
    if any(cell.start + masked in range(first, last + 1) for masked in cell.masked):
        return f"the fix would rewrite an IPython magic or shell line of cell {cell.number}"
    return None


def _changes_problem(notebook: Notebook, changes: Sequence[Change]) -> str | None:
    for first, last, _ in changes:
        problem = _problem(notebook.cells, first, last)
        if problem is not None:
            return problem
    return None


def _edits_problem(notebook: Notebook, edits: Sequence[Edit]) -> str | None:
    for edit in edits:
        problem = _problem(notebook.cells, edit.start_line, edit.end_line - 1)
        if problem is not None:
            return problem
    return None


def _declining(
    notebook: Notebook, analysis: Analysis, wanted: Callable[[Finding], bool]
) -> Analysis:
    """The analysis with the fixes that would not stay in one cell declined, with the reason."""
    findings = []
    for finding in with_edits_of(analysis, wanted):
        fix = finding.fix
        problem = (
            _edits_problem(notebook, fix.edits) if fix is not None and wanted(finding) else None
        )
        if problem is not None:
            finding = replace(finding, fix=None, no_fix_reason=problem)
        findings.append(finding)
    return Analysis(analysis.source, findings)


def _cell_texts(notebook: Notebook, changes: Sequence[Change]) -> dict[CodeCell, str]:
    """The new text of each cell the changes touch."""
    by_cell: dict[CodeCell, list[Change]] = {}
    for change in changes:
        cell = _cell_of(notebook.cells, change[0])
        assert cell is not None  # checked by _problem
        by_cell.setdefault(cell, []).append(change)
    texts: dict[CodeCell, str] = {}
    for cell, own in by_cell.items():
        lines = list(cell.lines)
        for first, last, new in sorted(own, reverse=True):
            lines[first - cell.start : last - cell.start + 1] = python_lines(new)
        # The blank lines a fix writes after a definition part it from the next statement; at
        # the end of a cell there is none.
        extra = _blank_tail(lines) - _blank_tail(cell.lines)
        if extra > 0:
            del lines[-extra:]
        text = "".join(lines)
        if cell.newline_added and text.endswith("\n"):
            text = text[:-1]
        texts[cell] = text
    return texts


@dataclass(frozen=True)
class CellEdit:
    """An edit of one cell's text: 0-based (line, character) positions in the cell."""

    cell: CodeCell
    start: tuple[int, int]
    end: tuple[int, int]
    text: str


def cell_edit(cells: Sequence[CodeCell], edit: Edit) -> CellEdit | str:
    """A fix's edit (whole lines of the module) as an edit of one cell, or why it cannot be
    one; what it would leave at the end of the cell is what ``fix`` writes there."""
    first, last = edit.start_line, edit.end_line - 1
    problem = _problem(cells, first, last)
    if problem is not None:
        return problem
    cell = _cell_of(cells, first)
    assert cell is not None  # checked by _problem
    start, stop = first - cell.start, last - cell.start + 1
    new = python_lines(edit.content)
    if stop < len(cell.lines):
        return CellEdit(cell, (start, 0), (stop, 0), "".join(new))
    extra = _blank_tail(new) - _blank_tail(cell.lines)
    if extra > 0:
        del new[-extra:]
    text = "".join(new)
    if not cell.newline_added:
        return CellEdit(cell, (start, 0), (stop, 0), text)
    # The cell's last line has no newline: the edit ends on it, and writes none after it.
    last_line = cell.lines[-1][:-1]
    return CellEdit(cell, (start, 0), (stop - 1, len(last_line)), text.removesuffix("\n"))


def _blank_tail(lines: Sequence[str]) -> int:
    count = 0
    while count < len(lines) and not lines[-1 - count].strip():
        count += 1
    return count


def fix_notebook(notebook: Notebook, settings: Settings, lazy: bool = True) -> NotebookFix:
    """Apply the selected findings' fixes to the cells (unsafe ones with ``unsafe_fixes``)."""
    text = notebook.source.text
    not_run = notebook.lines_not_run
    analysis = analyse_source(notebook.module, settings, lines_not_run=not_run)
    if analysis is None:
        return NotebookFix(text, [], [], {})
    outcome = fix_source(
        notebook.module, settings, analysis=analysis, lazy=lazy, lines_not_run=not_run
    )
    if _changes_problem(notebook, outcome.changes) is not None:
        applies = {Applicability.SAFE} | (
            {Applicability.UNSAFE} if settings.unsafe_fixes else set()
        )

        def wanted(finding: Finding) -> bool:
            return finding.fix is not None and finding.fix.applicability in applies

        analysis = _declining(notebook, analysis, wanted)
        outcome = fix_source(
            notebook.module, settings, analysis=analysis, lazy=lazy, lines_not_run=not_run
        )
        if _changes_problem(notebook, outcome.changes) is not None:
            # Fixes applied together wrote across cells where none did alone: none is applied.
            return NotebookFix(text, [], _unfixed(outcome), {})
    changed = _cell_texts(notebook, outcome.changes)
    changed = {cell: new for cell, new in changed.items() if new != cell.text}
    if not changed:
        return NotebookFix(text, [], outcome.remaining + outcome.fixed, {})
    return NotebookFix(
        write_cells(notebook.source, changed), outcome.fixed, outcome.remaining, changed
    )


def _unfixed(outcome: FixResult) -> list[Finding]:
    reason = "the fixes together would write across cells of the notebook"
    return sorted(
        [*outcome.remaining, *(replace(f, fix=None, no_fix_reason=reason) for f in outcome.fixed)],
        key=Finding.sort_key,
    )


def _numbered(text: str) -> list[str]:
    lines = python_lines(text)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return lines


def cell_diff(path: str, changed: dict[CodeCell, str], name: Callable[[str, str], str]) -> str:
    """A unified diff per changed cell, headed ``a/nb.ipynb:cell 3`` as ruff heads them;
    ``name(side, path)`` names each side."""
    out: list[str] = []
    for cell in sorted(changed, key=lambda c: c.index):
        where = f"{path}:cell {cell.number}"
        out.extend(
            difflib.unified_diff(
                _numbered(cell.text),
                _numbered(changed[cell]),
                fromfile=name("a", where),
                tofile=name("b", where),
            )
        )
    return "".join(out)
