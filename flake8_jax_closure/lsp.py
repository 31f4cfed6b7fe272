"""Language server over stdio (pygls).

Diagnostics on open, change (a change after a pause is analysed at once; a burst of keystrokes
is analysed once, after a short quiet period, and work for an outdated version is dropped) and
save, computed without edits (no libcst). Code actions are
computed when asked, for the requested range only: a quick fix per fixable finding, an "ignore
with ``# noqa``" action, and a ``source.fixAll.flake8-jax-closure`` action. Hover explains a
finding. Diagnostics point at the line where the value changes (related information) and link
to the rule's page, where one is at hand (``docs/rules`` of the checkout the server runs from:
the project has no web site, and a link must lead somewhere). Columns are UTF-16 code units, as
the protocol counts them.

libcst, which computes most forms of fixes, takes a few tenths of a second to import: a
background thread imports it after ``initialize``, so that the first code action does not wait
for it.

Settings (initialization options or ``workspace/didChangeConfiguration``, at the top level or
under ``flake8-jax-closure``) are the options declared for editors (``options.Place.EDITOR``),
under the configuration's key names (``unsafeFixes`` or ``unsafe-fixes``, ``select``, ...), and
win over the configuration file, as flags do on the command line; a value of the wrong kind is
left out. Files excluded by the configuration get no diagnostics. A configuration error is
shown once until it changes.

Notebooks (LSP 3.17 notebook documents) are analysed as one module of their code cells, with
diagnostics and quick fixes per cell: see ``lsp_notebooks``.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from . import __version__, lsp_notebooks
from .analysis.project import ProjectView, index_for
from .config import ConfigCache, FileConfig, Overrides, overrides_from, resolve
from .diagnostics import Applicability, Edit, Finding
from .engine import Analysis, SourceSyntaxError, analyse_source, fix_source
from .engine import with_edits_of as with_edits_for
from .noqa import noqa_comment
from .option_kinds import ConfigError
from .positions import SourceLines
from .rules import SUMMARIES
from .settings import Settings

SOURCE = "flake8-jax-closure"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
# Keystrokes closer than this are analysed once, for the last text. A change that comes after a
# longer pause (a person reading, then editing) is analysed at once: waiting would only add to
# the 100 ms an editor can take before the diagnostics feel late.
DEBOUNCE_SECONDS = 0.03
_RULE_PAGES = Path(__file__).resolve().parent.parent / "docs" / "rules"


def rule_url(code: str) -> str | None:
    """The rule's page as a file link; None when the server runs from an installation without
    the pages (``flake8-jax-closure rule CODE`` prints the same text)."""
    page = _RULE_PAGES / f"{code}.md"
    return page.as_uri() if page.is_file() else None


class JaxClosureServer(LanguageServer):
    def __init__(self) -> None:
        # Notebooks are synchronised as notebook documents whose Python cells are analysed
        # together; ``notebook`` left out: any notebook type (Jupyter's, or another editor's).
        sync = types.NotebookDocumentSyncOptions(
            notebook_selector=[
                types.NotebookDocumentFilterWithCells(
                    cells=[types.NotebookCellLanguage(language="python")]
                )
            ],
            save=True,
        )
        super().__init__(SOURCE, __version__, notebook_document_sync=sync)
        self.overrides = Overrides()
        self.configs: ConfigCache | None = None
        self._shown_errors: set[str] = set()
        self._pending: dict[str, asyncio.Handle] = {}
        # What each notebook's cells were last sent: (the cell's text, its diagnostics).
        self.sent_to_cells: dict[str, dict[str, tuple[str | None, list[types.Diagnostic]]]] = {}
        # When each document last changed or was last analysed after a change.
        self._last_change: dict[str, float] = {}
        # The last analysis of each document: code actions and hover ask about the text the
        # diagnostics were computed on, and reuse it.
        # Per document: its text and the cells not run, the settings, and the analysis.
        self._analyses: dict[
            str, tuple[tuple[str, tuple[tuple[int, int], ...]], Settings, Analysis | None]
        ] = {}

    # -- settings ----------------------------------------------------------------------------

    def set_overrides(self, value: Any) -> None:
        if isinstance(value, dict):
            nested = value.get(SOURCE, value)
            if isinstance(nested, dict):
                try:
                    self.overrides = overrides_from(nested)
                except ConfigError as error:
                    self._show_error(str(error))
        self.configs = None

    def settings_for(self, uri: str) -> Settings | None:
        """The settings for a document; None when the configuration excludes it."""
        path = to_fs_path(uri)
        if self.configs is None:
            self.configs = ConfigCache(self.overrides)
        try:
            resolved = self.configs.for_path(Path(path) if path else Path.cwd())
        except ConfigError as error:
            self._show_error(str(error))
            resolved = resolve(FileConfig(), self.overrides)
        if path and resolved.is_excluded(Path(path)):
            return None
        return resolved.settings_for(Path(path) if path else None)

    def _show_error(self, message: str) -> None:
        if message in self._shown_errors:
            return
        self._shown_errors.add(message)
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=message)
        )

    # -- findings ----------------------------------------------------------------------------

    def analysis(
        self,
        uri: str,
        source: str,
        settings: Settings,
        lines_not_run: tuple[tuple[int, int], ...] = (),
    ) -> Analysis | None:
        """The document's analysis, computed once per text, settings and (for a notebook) the
        cells not run. Raises SourceSyntaxError."""
        cached = self._analyses.get(uri)
        if cached is not None and cached[0] == (source, lines_not_run) and cached[1] == settings:
            return cached[2]
        self._analyses.pop(uri, None)
        # Callers in the project's other modules count, read from disk as they were saved.
        path = to_fs_path(uri) or ""
        index = index_for(path)
        if index is not None:
            index.refresh()  # files saved since the last analysis are read again
        project = ProjectView(path, index)
        analysis = analyse_source(source, settings, project, lines_not_run)
        self._analyses[uri] = ((source, lines_not_run), settings, analysis)
        return analysis

    def drop_analysis(self, uri: str) -> None:
        self._analyses.pop(uri, None)
        self._last_change.pop(uri, None)

    def findings(
        self, uri: str, *, edits_in: types.Range | None = None, with_edits: bool = False
    ) -> list[Finding]:
        document = self.workspace.get_text_document(uri)
        settings = self.settings_for(uri)
        if settings is None:
            return []
        try:
            analysis = self.analysis(uri, document.source, settings)
        except SourceSyntaxError:
            return []  # the editor's Python support reports syntax errors
        if analysis is None:
            return []
        if not with_edits:
            return analysis.findings
        lines = SourceLines(document.source)

        def in_range(finding: Finding) -> bool:
            return edits_in is None or _overlaps(_range(finding, lines), edits_in)

        return with_edits_for(analysis, in_range)

    def publish(self, uri: str, version: int | None = None) -> None:
        self._pending.pop(uri, None)
        document = self.workspace.text_documents.get(uri)
        if document is None or (version is not None and document.version != version):
            return  # closed, or changed again since: a newer run is scheduled
        lines = SourceLines(document.source)
        diagnostics = [_diagnostic(f, uri, lines) for f in self.findings(uri)]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    def forget(self, uri: str) -> None:
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()

    def after_change(self, uri: str, publish: Callable[[], None]) -> None:
        """Run ``publish`` for a changed document: at once after a pause, or once a burst of
        changes has been quiet for ``DEBOUNCE_SECONDS``. A newer change replaces a pending run;
        ``publish`` itself drops a run whose version is outdated."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        # A change that comes soon after the last change or the last analysis is part of a
        # burst: changes that queued up while an analysis ran count as one burst.
        bursting = uri in self._pending or now - self._last_change.get(uri, -1.0) < DEBOUNCE_SECONDS
        self._last_change[uri] = now
        self.forget(uri)

        def run() -> None:
            self._pending.pop(uri, None)
            publish()
            self._last_change[uri] = loop.time()

        if bursting:
            self._pending[uri] = loop.call_later(DEBOUNCE_SECONDS, run)
        else:
            # After the handler returns, so that a change already read is seen first.
            self._pending[uri] = loop.call_soon(run)

    def publish_soon(self, uri: str, version: int | None) -> None:
        self.after_change(uri, lambda: self.publish(uri, version))


server = JaxClosureServer()


def _import_the_rewrite() -> None:
    # While the import runs, the server's loop waits for the interpreter lock at each message;
    # a short switch interval keeps that wait well under the debounce of keystrokes.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, 0.0005))
    try:
        # Imported for later: the rewrite, and libcst for the forms not written as text.
        from .fix import cst_rewrite, rewrite  # noqa: F401
    finally:
        sys.setswitchinterval(interval)


def warm_up() -> threading.Thread:
    """Import what fixes need in the background (diagnostics never need it)."""
    thread = threading.Thread(target=_import_the_rewrite, name="import libcst", daemon=True)
    thread.start()
    return thread


@server.feature(types.INITIALIZE)
def initialize(ls: JaxClosureServer, params: types.InitializeParams) -> None:
    ls.set_overrides(params.initialization_options)
    warm_up()


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(
    ls: JaxClosureServer, params: types.DidChangeConfigurationParams
) -> None:
    ls.set_overrides(params.settings)
    for uri in list(ls.workspace.text_documents):
        if ls.workspace.get_notebook_document(cell_uri=uri) is None:
            ls.publish(uri)
    for uri in list(ls.workspace.notebook_documents):
        lsp_notebooks.publish(ls, uri)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: JaxClosureServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: JaxClosureServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.publish_soon(params.text_document.uri, params.text_document.version)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: JaxClosureServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.configs = None  # a saved configuration file may have changed
    ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: JaxClosureServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.forget(params.text_document.uri)
    ls.drop_analysis(params.text_document.uri)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
    )


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def did_open_notebook(ls: JaxClosureServer, params: types.DidOpenNotebookDocumentParams) -> None:
    lsp_notebooks.publish(ls, params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def did_change_notebook(
    ls: JaxClosureServer, params: types.DidChangeNotebookDocumentParams
) -> None:
    lsp_notebooks.publish_soon(ls, params.notebook_document.uri, params.notebook_document.version)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def did_save_notebook(ls: JaxClosureServer, params: types.DidSaveNotebookDocumentParams) -> None:
    ls.configs = None
    lsp_notebooks.publish(ls, params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def did_close_notebook(ls: JaxClosureServer, params: types.DidCloseNotebookDocumentParams) -> None:
    lsp_notebooks.clear(ls, params)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: JaxClosureServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    point = types.Range(start=params.position, end=params.position)
    notebook = ls.workspace.get_notebook_document(cell_uri=uri)
    if notebook is not None:
        texts = [_hover_text(f) for f in lsp_notebooks.hovered(ls, notebook, uri, params.position)]
    else:
        lines = SourceLines(ls.workspace.get_text_document(uri).source)
        texts = [_hover_text(f) for f in ls.findings(uri) if _overlaps(_range(f, lines), point)]
    if not texts:
        return None
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(texts)
        )
    )


def _hover_text(finding: Finding) -> str:
    parts = [f"**{finding.code}** {finding.message}", "", SUMMARIES.get(finding.code, "")]
    if finding.fix is not None:
        parts.append(f"\nFix ({finding.fix.applicability.value}): {finding.fix.description}")
    elif finding.no_fix_reason:
        parts.append(f"\nNo fix: {finding.no_fix_reason}")
    url = rule_url(finding.code)
    if url is not None:
        parts.append(f"\n[{finding.code} documentation]({url})")
    else:
        parts.append(f"\nDocumentation: `flake8-jax-closure rule {finding.code}`")
    return "\n".join(parts)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]
    ),
)
def code_action(ls: JaxClosureServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    notebook = ls.workspace.get_notebook_document(cell_uri=uri)
    if notebook is not None:
        return lsp_notebooks.code_actions(ls, notebook, params)
    settings = ls.settings_for(uri)
    if settings is None:
        return []
    document = ls.workspace.get_text_document(uri)
    lines = SourceLines(document.source)
    allowed = {Applicability.SAFE} | ({Applicability.UNSAFE} if settings.unsafe_fixes else set())
    wanted = params.context.only
    actions: list[types.CodeAction] = []
    if not wanted or types.CodeActionKind.QuickFix in wanted:
        for finding in ls.findings(uri, edits_in=params.range, with_edits=True):
            if not _overlaps(_range(finding, lines), params.range):
                continue
            fix = finding.fix
            if fix is not None and fix.applicability in allowed:
                actions.append(
                    types.CodeAction(
                        title=f"{finding.code}: {fix.title}",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[_diagnostic(finding, uri, lines)],
                        is_preferred=fix.applicability is Applicability.SAFE,
                        edit=types.WorkspaceEdit(
                            changes={uri: [_text_edit(e, lines) for e in fix.edits]}
                        ),
                    )
                )
            actions.append(_noqa_action(finding, uri, lines))
    if not wanted or any(kind.startswith(types.CodeActionKind.SourceFixAll) for kind in wanted):
        action = _fix_all(ls, uri, settings)
        if action is not None:
            actions.append(action)
    return actions


def _noqa_action(finding: Finding, uri: str, lines: SourceLines) -> types.CodeAction:
    line = lines.line(finding.line)
    new = noqa_comment(line, finding.code)
    edit = types.TextEdit(
        range=types.Range(
            start=types.Position(line=finding.line - 1, character=0),
            end=types.Position(
                line=finding.line - 1, character=lines.utf16(finding.line, len(line))
            ),
        ),
        new_text=new,
    )
    return types.CodeAction(
        title=f"{finding.code}: ignore with `# noqa: {finding.code}`",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[_diagnostic(finding, uri, lines)],
        edit=types.WorkspaceEdit(changes={uri: [edit]}),
    )


def _fix_all(ls: JaxClosureServer, uri: str, settings: Settings) -> types.CodeAction | None:
    document = ls.workspace.get_text_document(uri)
    try:
        analysis = ls.analysis(uri, document.source, settings)
    except SourceSyntaxError:
        return None
    if analysis is None:
        return None
    result = fix_source(document.source, settings, analysis=analysis)
    if result.source == document.source:
        return None
    lines = document.source.splitlines(keepends=True)
    whole = types.Range(start=types.Position(0, 0), end=types.Position(len(lines), 0))
    count = len(result.fixed)
    return types.CodeAction(
        title=f"{SOURCE}: fix all ({count} finding{'s' * (count != 1)})",
        kind=FIX_ALL_KIND,
        edit=types.WorkspaceEdit(
            changes={uri: [types.TextEdit(range=whole, new_text=result.source)]}
        ),
    )


def _range(finding: Finding, lines: SourceLines) -> types.Range:
    return types.Range(
        start=types.Position(
            line=finding.line - 1, character=lines.utf16(finding.line, finding.column)
        ),
        end=types.Position(
            line=finding.end_line - 1, character=lines.utf16(finding.end_line, finding.end_column)
        ),
    )


def _line_range(number: int, lines: SourceLines) -> types.Range:
    """The code on a line, without its indentation."""
    text = lines.line(number)
    indent = len(text) - len(text.lstrip())
    return types.Range(
        start=types.Position(line=number - 1, character=lines.utf16(number, indent)),
        end=types.Position(line=number - 1, character=lines.utf16(number, len(text.rstrip()))),
    )


def _diagnostic(finding: Finding, uri: str, lines: SourceLines) -> types.Diagnostic:
    related = None
    if finding.change_line is not None:
        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=_line_range(finding.change_line, lines)),
                message=f"'{finding.name}' changes here",
            )
        ]
        # The witness, step by step: where the compiled call traces, the change, the reuse.
        related += [
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=_line_range(step.line, lines)),
                message=f"{step.role.value}: {step.clause}",
            )
            for step in finding.witness
        ]
    url = rule_url(finding.code)
    message = finding.message
    if finding.fix is None and finding.no_fix_reason:
        message = f"{message} (no fix: {finding.no_fix_reason})"
    return types.Diagnostic(
        range=_range(finding, lines),
        message=message,
        severity=types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=None if url is None else types.CodeDescription(href=url),
        source=SOURCE,
        related_information=related,
    )


def _text_edit(edit: Edit, lines: SourceLines) -> types.TextEdit:
    return types.TextEdit(
        range=types.Range(
            start=types.Position(
                line=edit.start_line - 1, character=lines.utf16(edit.start_line, edit.start_column)
            ),
            end=types.Position(
                line=edit.end_line - 1, character=lines.utf16(edit.end_line, edit.end_column)
            ),
        ),
        new_text=edit.content,
    )


def _overlaps(first: types.Range, second: types.Range) -> bool:
    def key(position: types.Position) -> tuple[int, int]:
        return (position.line, position.character)

    return key(first.start) <= key(second.end) and key(second.start) <= key(first.end)


def main() -> None:
    server.start_io()
