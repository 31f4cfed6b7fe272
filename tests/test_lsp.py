"""The language server end to end: a real LSP client talks JSON-RPC to the server process."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fixture_support import FIXTURES

pytest.importorskip("pygls")
from lsp_session import close, open_text, start  # noqa: E402
from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

SEED = (FIXTURES / "JC101" / "seed.py").read_text(encoding="utf-8")
SEED_FIXED = (FIXTURES / "JC101" / "seed.fixed.py").read_text(encoding="utf-8")


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
    client, published = await start(initialization_options)
    open_text(client, uri, text)
    return client, published


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
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (40, 15)
    assert "reads closure variable 'weights'" in diagnostic.message
    action, ignore = result["quick"]
    assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred
    assert result["fixed_text"] == SEED_FIXED
    assert ignore.title == "JC101: ignore with `# noqa: JC101`"
    (noqa_edit,) = ignore.edit.changes[result["uri"]]
    assert noqa_edit.new_text == "        return weights.dot(input_var)  # noqa: JC101"
    assert diagnostic.code_description.href.endswith("/docs/rules/JC101.md")
    related, *witness = diagnostic.related_information
    assert related.location.range.start.line == 44 and "'weights' changes here" in related.message
    # The witness, in the editor: trace, change, reuse (0-based lines 59, 62, 59).
    assert [(w.location.range.start.line, w.message.split(":")[0]) for w in witness] == [
        (59, "trace"),
        (62, "change"),
        (59, "reuse"),
    ]
    (fix_all,) = result["fix_all"]
    assert fix_all.kind == "source.fixAll.flake8-jax-closure"
    assert apply_edits(SEED, fix_all.edit.changes[result["uri"]]) == SEED_FIXED
    assert list(result["changed"].diagnostics) == []


@pytest.mark.slow
def test_unsafe_fix_offered_only_when_enabled(tmp_path: Path) -> None:
    unsafe_source = (FIXTURES / "JC103" / "verify_regression.py").read_text(encoding="utf-8")
    uri = (tmp_path / "m.py").as_uri()

    async def actions(options: Any) -> list[types.CodeAction]:
        client, published = await open_document(unsafe_source, uri, options)
        diagnostics = (await asyncio.wait_for(published.get(), 30)).diagnostics
        found = await client.text_document_code_action_async(
            actions_request(uri, diagnostics[0].range, diagnostics)
        )
        await close(client)
        return found or []

    def titles(found: list[types.CodeAction]) -> list[str]:
        return [a.title.split(":")[0] + (" noqa" if "noqa" in a.title else "") for a in found]

    assert titles(asyncio.run(actions(None))) == ["JC103 noqa"]
    offered = asyncio.run(actions({"unsafeFixes": True}))
    assert [a.kind for a in offered] == [
        types.CodeActionKind.QuickFix,
        types.CodeActionKind.QuickFix,
        "source.fixAll.flake8-jax-closure",
    ]
    assert not offered[0].is_preferred
    assert offered[2].title == "flake8-jax-closure: fix all (1 finding)"
    # The editor's setting wins over the configuration, both ways.
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-jax-closure]\nunsafe-fixes = true\n")
    assert titles(asyncio.run(actions({"unsafeFixes": False}))) == ["JC103 noqa"]
    assert len(asyncio.run(actions(None))) == 3


def test_hover_utf16_columns_exclusion_and_one_error_message(tmp_path: Path) -> None:
    # An emoji (two UTF-16 units) before the read on its line moves the column by two.
    source = SEED.replace(
        "        return weights.dot(input_var)\n\n    def update",
        '        return ("\U0001f600", weights.dot(input_var))[1]\n\n    def update',
        1,
    )
    uri = (tmp_path / "m.py").as_uri()

    async def run_session() -> tuple[Any, Any, list[Any]]:
        messages: list[Any] = []
        client, published = await open_document(source, uri)

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(params: types.ShowMessageParams) -> None:
            messages.append(params)

        opened = await asyncio.wait_for(published.get(), 30)
        hovered = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=opened.diagnostics[0].range.start,
            )
        )
        # A broken configuration is reported once, not on every change.
        (tmp_path / "pyproject.toml").write_text("[tool.flake8-jax-closure]\nselct = 1\n")
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"unsafeFixes": False})
        )
        for version in range(2, 5):
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=source)],
                )
            )
            await asyncio.sleep(0.2)
        # Excluded by the configuration: no diagnostics.
        (tmp_path / "pyproject.toml").write_text(
            '[tool.flake8-jax-closure]\nextend-exclude = ["m.py"]\n'
        )
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
        excluded = None
        while excluded is None or excluded.diagnostics:
            excluded = await asyncio.wait_for(published.get(), 30)
        await close(client)
        return opened, hovered, messages

    opened, hovered, messages = asyncio.run(run_session())
    (diagnostic,) = opened.diagnostics
    assert diagnostic.range.start.character == 21 + 1  # 21 characters, 22 UTF-16 units
    assert "**JC101**" in hovered.contents.value and "Fix (safe)" in hovered.contents.value
    errors = [m for m in messages if "unknown key 'selct'" in m.message]
    assert len(errors) == 1


def test_quick_changes_are_analysed_once(tmp_path: Path) -> None:
    uri = (tmp_path / "m.py").as_uri()

    async def run_session() -> list[Any]:
        client, published = await open_document(SEED, uri)
        await asyncio.wait_for(published.get(), 30)
        for version in range(2, 12):
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(
                        text=SEED + f"# {version}\n")],
                )
            )  # fmt: skip
        await asyncio.sleep(1.0)
        seen = []
        while not published.empty():
            seen.append(published.get_nowait())
        await close(client)
        return seen

    versions = [p.version for p in asyncio.run(run_session())]
    # Ten changes in a burst are analysed once, for the last one; a busy machine may slow the
    # client enough to split the burst, never enough to analyse each change.
    assert versions[-1] == 11 and len(versions) <= 3


def test_initialize_imports_the_rewrite_in_the_background() -> None:
    """libcst is imported after ``initialize``, while the editor waits for nothing, so that the
    first code action does not pay for the import."""
    import subprocess
    import sys

    program = (
        "import sys, threading\n"
        "from lsprotocol import types\n"
        "from flake8_jax_closure import lsp\n"
        "assert 'libcst' not in sys.modules\n"
        "params = types.InitializeParams(capabilities=types.ClientCapabilities())\n"
        "lsp.initialize(lsp.server, params)\n"
        "(thread,) = [t for t in threading.enumerate() if t.name == 'import libcst']\n"
        "assert thread.daemon\n"
        "thread.join(60)\n"
        "assert 'libcst' in sys.modules and 'flake8_jax_closure.fix.cst_rewrite' in sys.modules\n"
    )
    completed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


def test_a_change_after_a_pause_is_analysed_at_once_and_a_burst_waits() -> None:
    """The first change after a pause is published on the next turn of the loop; changes soon
    after it, or soon after its analysis, wait for a quiet period and are analysed once."""
    from flake8_jax_closure.lsp import DEBOUNCE_SECONDS, JaxClosureServer

    async def run_session() -> list[tuple[str, float]]:
        server = JaxClosureServer()
        loop = asyncio.get_running_loop()
        runs: list[tuple[str, float]] = []
        began = loop.time()

        def publish(name: str) -> Any:
            return lambda: runs.append((name, loop.time() - began))

        server.after_change("file:///m.py", publish("first"))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert runs == [("first", runs[0][1])] and runs[0][1] < DEBOUNCE_SECONDS
        for number in range(5):  # right after the analysis: a burst
            server.after_change("file:///m.py", publish(f"burst {number}"))
        server.after_change("file:///other.py", publish("other"))  # another document: at once
        await asyncio.sleep(0)
        await asyncio.sleep(DEBOUNCE_SECONDS * 4)
        await asyncio.sleep(DEBOUNCE_SECONDS * 2)  # a pause
        server.after_change("file:///m.py", publish("after a pause"))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return runs

    runs = asyncio.run(run_session())
    names = [name for name, _ in runs]
    assert names == ["first", "other", "burst 4", "after a pause"]
    assert dict(runs)["burst 4"] >= DEBOUNCE_SECONDS


TRAIN = """import jax

LR = 0.1


@jax.jit
def step(x):
    return x * LR


def set_lr(value):
    global LR
    LR = value
"""


def test_a_file_of_the_project_saved_since_is_read_again_at_the_next_change(
    tmp_path: Path,
) -> None:
    """The server keeps the project's index between changes, and looks at its other files
    again for each: a script saved after the module was opened is the witness of the next
    analysis."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(TRAIN)
    (tmp_path / "run.py").write_text("from pkg.train import step\n\nstep(1.0)\n")
    uri = (tmp_path / "pkg" / "train.py").as_uri()

    async def run_session() -> list[types.PublishDiagnosticsParams]:
        client, published = await open_document(TRAIN, uri)
        seen = [await asyncio.wait_for(published.get(), 30)]
        (tmp_path / "run.py").write_text(
            "from pkg.train import set_lr, step\n\nstep(1.0)\nset_lr(0.01)\nstep(1.0)\n"
        )
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(
                    text=TRAIN + "# edited\n")],
            )
        )  # fmt: skip
        seen.append(await asyncio.wait_for(published.get(), 30))
        await close(client)
        return seen

    before, after = asyncio.run(run_session())
    assert list(before.diagnostics) == []
    (diagnostic,) = after.diagnostics
    assert diagnostic.code == "JC102" and "changed in run.py at line 4" in diagnostic.message
