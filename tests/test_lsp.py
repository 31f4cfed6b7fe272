"""The language server end to end: a real LSP client talks JSON-RPC to the server process."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from fixture_support import FIXTURES

pytest.importorskip("pygls")
from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

SEED = (FIXTURES / "seed.py").read_text(encoding="utf-8")
SEED_FIXED = (FIXTURES / "seed.fixed.py").read_text(encoding="utf-8")


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        return sum(len(line) for line in lines[: position.line]) + position.character

    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


async def open_document(
    text: str, uri: str, initialization_options: Any = None
) -> tuple[LanguageClient, asyncio.Queue[types.PublishDiagnosticsParams]]:
    """Start the server, initialize, open one document; diagnostics arrive on the queue."""
    client = LanguageClient("test-client", "1")
    published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    await client.start_io(sys.executable, "-m", "flake8_jax_closure", "lsp")
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(), initialization_options=initialization_options
        )
    )
    client.initialized(types.InitializedParams())
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=text
            )
        )
    )
    return client, published


async def close(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def actions_request(
    uri: str, range_: types.Range, diagnostics: Any, only: Any = None
) -> types.CodeActionParams:
    return types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=range_,
        context=types.CodeActionContext(diagnostics=list(diagnostics), only=only),
    )


async def session(tmp_path: Path) -> dict[str, Any]:
    uri = (tmp_path / "seed.py").as_uri()
    client, published = await open_document(SEED, uri)
    opened = await asyncio.wait_for(published.get(), 30)
    diagnostic = opened.diagnostics[0]
    quick = await client.text_document_code_action_async(
        actions_request(uri, diagnostic.range, [diagnostic], [types.CodeActionKind.QuickFix])
    )
    start = types.Range(start=types.Position(0, 0), end=types.Position(0, 0))
    fix_all = await client.text_document_code_action_async(
        actions_request(uri, start, [], [types.CodeActionKind.SourceFixAll])
    )
    fixed_text = apply_edits(SEED, quick[0].edit.changes[uri]) if quick else None
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed_text or SEED)],
        )
    )
    changed = await asyncio.wait_for(published.get(), 30)
    await close(client)
    return {
        "opened": opened,
        "quick": quick,
        "fix_all": fix_all,
        "fixed_text": fixed_text,
        "changed": changed,
        "uri": uri,
    }


def test_diagnostics_quick_fix_and_fix_all(tmp_path: Path) -> None:
    result = asyncio.run(session(tmp_path))
    (diagnostic,) = result["opened"].diagnostics
    assert diagnostic.code == "JC101" and diagnostic.source == "flake8-jax-closure"
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (38, 15)
    assert "reads closure variable 'weights'" in diagnostic.message
    (action,) = result["quick"]
    assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred
    assert result["fixed_text"] == SEED_FIXED
    (fix_all,) = result["fix_all"]
    assert fix_all.kind == "source.fixAll.flake8-jax-closure"
    assert apply_edits(SEED, fix_all.edit.changes[result["uri"]]) == SEED_FIXED
    assert list(result["changed"].diagnostics) == []


def test_unsafe_fix_offered_only_when_enabled(tmp_path: Path) -> None:
    unsafe_source = (FIXTURES / "verify_regression.py").read_text(encoding="utf-8")
    uri = (tmp_path / "m.py").as_uri()

    async def actions(options: Any) -> list[types.CodeAction]:
        client, published = await open_document(unsafe_source, uri, options)
        diagnostics = (await asyncio.wait_for(published.get(), 30)).diagnostics
        found = await client.text_document_code_action_async(
            actions_request(uri, diagnostics[0].range, diagnostics)
        )
        await close(client)
        return found or []

    assert asyncio.run(actions(None)) == []
    offered = asyncio.run(actions({"unsafeFixes": True}))
    assert [a.kind for a in offered] == [
        types.CodeActionKind.QuickFix,
        "source.fixAll.flake8-jax-closure",
    ]
    assert not offered[0].is_preferred
