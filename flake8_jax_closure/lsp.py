"""Language server over stdio (pygls): diagnostics on open, change and save; a quick fix per
fixable finding (the same edits as ``fix``); a "fix all" source action.

Initialization option or setting ``{"unsafeFixes": true}`` also offers unsafe fixes. Settings
from pyproject.toml (``[tool.flake8-jax-closure]``) above the document apply as on the command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from . import __version__
from .config import ConfigError, FileConfig, load_config
from .diagnostics import Applicability, Edit, Finding
from .engine import SourceSyntaxError, check_source, fix_source
from .settings import Settings

SOURCE = "flake8-jax-closure"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"


class JaxClosureServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SOURCE, __version__)
        self.unsafe_fixes = False

    def settings_for(self, uri: str) -> Settings:
        config = FileConfig()
        path = to_fs_path(uri)
        if path:
            try:
                config = load_config(Path(path).parent)
            except ConfigError as error:
                self.window_show_message(
                    types.ShowMessageParams(type=types.MessageType.Error, message=str(error))
                )
        return Settings.with_extra_compile_functions(
            config.jax_compile_functions or (),
            select=config.select or ("JC",),
            ignore=config.ignore or (),
            unsafe_fixes=self.unsafe_fixes or bool(config.unsafe_fixes),
        )

    def findings(self, uri: str) -> list[Finding]:
        document = self.workspace.get_text_document(uri)
        try:
            return check_source(document.source, self.settings_for(uri))
        except SourceSyntaxError:
            return []  # the editor's Python support reports syntax errors

    def publish(self, uri: str) -> None:
        diagnostics = [_diagnostic(f) for f in self.findings(uri)]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
        )


server = JaxClosureServer()


def _read_unsafe_setting(value: Any) -> bool | None:
    if isinstance(value, dict):
        nested = value.get(SOURCE, value)
        if isinstance(nested, dict) and "unsafeFixes" in nested:
            return bool(nested["unsafeFixes"])
    return None


@server.feature(types.INITIALIZE)
def initialize(ls: JaxClosureServer, params: types.InitializeParams) -> None:
    setting = _read_unsafe_setting(params.initialization_options)
    if setting is not None:
        ls.unsafe_fixes = setting


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(
    ls: JaxClosureServer, params: types.DidChangeConfigurationParams
) -> None:
    setting = _read_unsafe_setting(params.settings)
    if setting is not None:
        ls.unsafe_fixes = setting
    for uri in list(ls.workspace.text_documents):
        ls.publish(uri)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: JaxClosureServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: JaxClosureServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: JaxClosureServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.publish(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: JaxClosureServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
    )


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]
    ),
)
def code_action(ls: JaxClosureServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    settings = ls.settings_for(uri)
    allowed = {Applicability.SAFE} | ({Applicability.UNSAFE} if settings.unsafe_fixes else set())
    wanted = params.context.only
    actions: list[types.CodeAction] = []
    if not wanted or types.CodeActionKind.QuickFix in wanted:
        for finding in ls.findings(uri):
            fix = finding.fix
            if fix is None or fix.applicability not in allowed:
                continue
            if not _overlaps(_range(finding), params.range):
                continue
            actions.append(
                types.CodeAction(
                    title=f"{finding.code}: {fix.description}",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[_diagnostic(finding)],
                    is_preferred=fix.applicability is Applicability.SAFE,
                    edit=types.WorkspaceEdit(changes={uri: [_text_edit(e) for e in fix.edits]}),
                )
            )
    if not wanted or any(kind.startswith(types.CodeActionKind.SourceFixAll) for kind in wanted):
        action = _fix_all(ls, uri, settings)
        if action is not None:
            actions.append(action)
    return actions


def _fix_all(ls: JaxClosureServer, uri: str, settings: Settings) -> types.CodeAction | None:
    document = ls.workspace.get_text_document(uri)
    try:
        result = fix_source(document.source, settings)
    except SourceSyntaxError:
        return None
    if result.source == document.source:
        return None
    lines = document.source.splitlines(keepends=True)
    whole = types.Range(start=types.Position(0, 0), end=types.Position(len(lines), 0))
    return types.CodeAction(
        title=f"{SOURCE}: fix all ({len(result.fixed)} findings)",
        kind=FIX_ALL_KIND,
        edit=types.WorkspaceEdit(
            changes={uri: [types.TextEdit(range=whole, new_text=result.source)]}
        ),
    )


def _range(finding: Finding) -> types.Range:
    return types.Range(
        start=types.Position(line=finding.line - 1, character=finding.column),
        end=types.Position(line=finding.end_line - 1, character=finding.end_column),
    )


def _diagnostic(finding: Finding) -> types.Diagnostic:
    return types.Diagnostic(
        range=_range(finding),
        message=finding.message,
        severity=types.DiagnosticSeverity.Warning,
        code=finding.code,
        source=SOURCE,
    )


def _text_edit(edit: Edit) -> types.TextEdit:
    return types.TextEdit(
        range=types.Range(
            start=types.Position(line=edit.start_line - 1, character=edit.start_column),
            end=types.Position(line=edit.end_line - 1, character=edit.end_column),
        ),
        new_text=edit.content,
    )


def _overlaps(first: types.Range, second: types.Range) -> bool:
    def key(position: types.Position) -> tuple[int, int]:
        return (position.line, position.character)

    return key(first.start) <= key(second.end) and key(second.start) <= key(first.end)


def main() -> None:
    server.start_io()
