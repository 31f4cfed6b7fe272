"""Notebook documents in the language server (LSP 3.17 ``notebookDocument/*``).

An editor sends a notebook as its cells, each a text document of its own (``vscode-notebook-
cell:...``). The code cells, in the notebook's order, make one module, as ``check`` makes it
from a file (IPython's syntax masked, ``notebook.reader.module_of``); its findings are
published per cell, each on the cell that holds its line, with the witness's steps as related
information pointing at the cells that hold them. A quick fix edits the cells its edits land
in (a fix whose edits would span two cells or rewrite an IPython line is not offered), and
``# noqa`` goes on the cell's line. The order is the notebook's: an editor's cells have not
necessarily run. Hover explains a finding, as in a file; ``source.fixAll`` is offered for
files only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from lsprotocol import types

from .diagnostics import Applicability, Finding
from .engine import SourceSyntaxError
from .engine import with_edits_of as with_edits_for
from .noqa import noqa_comment
from .notebook.cells import CellMap
from .notebook.fixing import CellEdit, cell_edit
from .notebook.reader import CodeCell, lines_not_run, module_of
from .positions import SourceLines

if TYPE_CHECKING:
    from .lsp import JaxClosureServer


@dataclass(frozen=True)
class NotebookView:
    """A notebook as the editor holds it now, as one module."""

    uri: str
    module: str
    cells: tuple[CodeCell, ...]
    cell_map: CellMap
    cell_uris: tuple[str, ...]  # by index among all cells
    lines: SourceLines

    def cell_uri(self, line: int) -> str:
        return self.cell_uris[self.cell_map.locate(line)[0] - 1]

    def position(self, line: int, column: int) -> types.Position:
        """A module position (1-based line, character column) in its cell, in UTF-16."""
        return types.Position(self.cell_map.locate(line)[1] - 1, self.lines.utf16(line, column))

    def line_range(self, line: int) -> types.Range:
        """The code on a module line, in its cell, without its indentation."""
        text = self.lines.line(line)
        indent = len(text) - len(text.lstrip())
        return types.Range(
            start=self.position(line, indent), end=self.position(line, len(text.rstrip()))
        )

    def range(self, finding: Finding) -> types.Range:
        return types.Range(
            start=self.position(finding.line, finding.column),
            end=self.position(finding.end_line, finding.end_column),
        )


def view_of(ls: JaxClosureServer, notebook: types.NotebookDocument) -> NotebookView:
    found: list[tuple[int, str, bool]] = []
    # The cells this session of the editor ran without an error, as a saved notebook's
    # execution counts tell.
    ran: set[int] = set()
    for index, cell in enumerate(notebook.cells):
        if cell.kind != types.NotebookCellKind.Code:
            continue
        document = ls.workspace.text_documents.get(cell.document)
        if document is None or (document.language_id or "python") != "python":
            continue
        found.append((index, document.source, True))
        summary = cell.execution_summary
        if summary is not None and summary.success is not False:
            ran.add(index)
    module, cells, cell_map = module_of(found, ran=ran)
    uris = tuple(cell.document for cell in notebook.cells)
    return NotebookView(notebook.uri, module, cells, cell_map, uris, SourceLines(module))


def _code_cell_uris(view: NotebookView) -> list[str]:
    return [view.cell_uris[cell.index] for cell in view.cells]


def findings_of(ls: JaxClosureServer, view: NotebookView) -> list[Finding]:
    settings = ls.settings_for(view.uri)
    if settings is None:
        return []
    try:
        analysis = ls.analysis(view.uri, view.module, settings, lines_not_run(view.cells))
    except SourceSyntaxError:
        return []  # the editor's Python support reports syntax errors
    return [] if analysis is None else analysis.findings


def diagnostic(view: NotebookView, finding: Finding) -> types.Diagnostic:
    from .lsp import rule_url

    related = None
    if finding.change_line is not None:
        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=view.cell_uri(finding.change_line),
                    range=view.line_range(finding.change_line),
                ),
                message=f"'{finding.name}' changes here",
            )
        ]
        related += [
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=view.cell_uri(step.line), range=view.line_range(step.line)
                ),
                message=f"{step.role.value}: {view.cell_map.text(step.clause)}",
            )
            for step in finding.witness
        ]
    message = view.cell_map.message(finding.message, has_witness=bool(finding.witness))
    if finding.fix is None and finding.no_fix_reason:
        message = f"{message} (no fix: {view.cell_map.text(finding.no_fix_reason)})"
    url = rule_url(finding.code)
    return types.Diagnostic(
        range=view.range(finding),
        message=message,
        severity=types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=None if url is None else types.CodeDescription(href=url),
        source="flake8-jax-closure",
        related_information=related,
    )


def publish(ls: JaxClosureServer, uri: str, version: int | None = None) -> None:
    """Diagnostics for the code cells of the notebook (none for a cell clears its old ones).

    A cell is sent only when its diagnostics or its text changed since they were last sent:
    an editor keeps a document's diagnostics until they are replaced, and resending those of
    two hundred cells for an edit of one would take longer than the analysis."""
    ls.forget(uri)
    notebook = ls.workspace.get_notebook_document(notebook_uri=uri)
    if notebook is None or (version is not None and notebook.version != version):
        return  # closed, or changed again since: a newer run is scheduled
    view = view_of(ls, notebook)
    per_cell: dict[str, list[types.Diagnostic]] = {uri: [] for uri in _code_cell_uris(view)}
    for finding in findings_of(ls, view):
        per_cell.setdefault(view.cell_uri(finding.line), []).append(diagnostic(view, finding))
    sent = ls.sent_to_cells.get(uri, {})
    now: dict[str, tuple[str | None, list[types.Diagnostic]]] = {}
    for cell_uri, diagnostics in per_cell.items():
        document = ls.workspace.text_documents.get(cell_uri)
        now[cell_uri] = (None if document is None else document.source, diagnostics)
        if sent.get(cell_uri) != now[cell_uri]:
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=diagnostics)
            )
    ls.sent_to_cells[uri] = now


def publish_soon(ls: JaxClosureServer, uri: str, version: int) -> None:
    ls.after_change(uri, lambda: publish(ls, uri, version))


def clear(ls: JaxClosureServer, params: types.DidCloseNotebookDocumentParams) -> None:
    ls.forget(params.notebook_document.uri)
    ls.sent_to_cells.pop(params.notebook_document.uri, None)
    ls.drop_analysis(params.notebook_document.uri)
    for cell in params.cell_text_documents:
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[])
        )


def _overlaps(first: types.Range, second: types.Range) -> bool:
    def key(position: types.Position) -> tuple[int, int]:
        return (position.line, position.character)

    return key(first.start) <= key(second.end) and key(second.start) <= key(first.end)


def _text_edit(edit: CellEdit) -> types.TextEdit:
    def utf16(line: int, character: int) -> int:
        text = edit.cell.lines[line][:character] if line < len(edit.cell.lines) else ""
        return len(text.encode("utf-16-le")) // 2

    return types.TextEdit(
        range=types.Range(
            start=types.Position(edit.start[0], utf16(*edit.start)),
            end=types.Position(edit.end[0], utf16(*edit.end)),
        ),
        new_text=edit.text,
    )


def _quick_fix(view: NotebookView, finding: Finding, uri: str) -> types.CodeAction | None:
    fix = finding.fix
    if fix is None:
        return None
    edits = [cell_edit(view.cells, edit) for edit in fix.edits]
    if not edits or any(isinstance(edit, str) for edit in edits):
        return None  # a fix that would not stay in its cells is not offered
    changes: dict[str, list[types.TextEdit]] = {}
    for edit in edits:
        assert isinstance(edit, CellEdit)
        changes.setdefault(view.cell_uris[edit.cell.index], []).append(_text_edit(edit))
    return types.CodeAction(
        title=f"{finding.code}: {fix.title}",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic(view, finding)],
        is_preferred=fix.applicability is Applicability.SAFE,
        edit=types.WorkspaceEdit(changes=changes),
    )


def _noqa(view: NotebookView, finding: Finding, uri: str) -> types.CodeAction:
    line = view.lines.line(finding.line)
    start = view.position(finding.line, 0)
    edit = types.TextEdit(
        range=types.Range(start=start, end=view.position(finding.line, len(line))),
        new_text=noqa_comment(line, finding.code),
    )
    return types.CodeAction(
        title=f"{finding.code}: ignore with `# noqa: {finding.code}`",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic(view, finding)],
        edit=types.WorkspaceEdit(changes={uri: [edit]}),
    )


def code_actions(
    ls: JaxClosureServer, notebook: types.NotebookDocument, params: types.CodeActionParams
) -> list[types.CodeAction]:
    """Quick fixes and ``# noqa`` for the findings of one cell in the range asked."""
    uri = params.text_document.uri
    wanted = params.context.only
    settings = ls.settings_for(notebook.uri)
    if settings is None or (wanted and types.CodeActionKind.QuickFix not in wanted):
        return []
    view = view_of(ls, notebook)
    try:
        analysis = ls.analysis(view.uri, view.module, settings, lines_not_run(view.cells))
    except SourceSyntaxError:
        return []
    if analysis is None:
        return []

    def asked(finding: Finding) -> bool:
        return view.cell_uri(finding.line) == uri and _overlaps(view.range(finding), params.range)

    allowed = {Applicability.SAFE} | ({Applicability.UNSAFE} if settings.unsafe_fixes else set())
    actions: list[types.CodeAction] = []
    for finding in with_edits_for(analysis, asked):
        if not asked(finding):
            continue
        if finding.fix is not None and finding.fix.applicability in allowed:
            action = _quick_fix(view, finding, uri)
            if action is not None:
                actions.append(action)
        actions.append(_noqa(view, finding, uri))
    return actions


def hovered(
    ls: JaxClosureServer, notebook: types.NotebookDocument, uri: str, point: types.Position
) -> list[Finding]:
    """The findings of the cell ``uri`` at ``point``, their messages naming cells."""
    view = view_of(ls, notebook)
    area = types.Range(start=point, end=point)
    return [
        replace(finding, message=view.cell_map.message(finding.message, bool(finding.witness)))
        for finding in findings_of(ls, view)
        if view.cell_uri(finding.line) == uri and _overlaps(view.range(finding), area)
    ]
