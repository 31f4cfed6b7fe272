"""A real LSP client talking JSON-RPC to ``flake8-jax-closure lsp``, for the tests and the
benchmark: start and initialize a server, open documents, collect published diagnostics."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient


async def start(
    initialization_options: Any = None,
) -> tuple[LanguageClient, asyncio.Queue[types.PublishDiagnosticsParams]]:
    """A started, initialized server; its diagnostics arrive on the queue."""
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
    return client, published


def open_text(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=text
            )
        )
    )


def open_notebook(
    client: LanguageClient,
    uri: str,
    cells: list[tuple[str, str]],
    ran: frozenset[int] = frozenset(),
) -> None:
    """Open a notebook document of (kind, text) cells, as an editor does (LSP 3.17): each
    cell a text document ``uri#cN``; the cells of ``ran`` (indices) with an execution summary
    of a run that succeeded."""
    kinds = {"code": types.NotebookCellKind.Code}
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[
                    types.NotebookCell(
                        kind=kinds.get(kind, types.NotebookCellKind.Markup),
                        document=f"{uri}#c{i}",
                        execution_summary=(
                            types.ExecutionSummary(execution_order=i + 1, success=True)
                            if i in ran
                            else None
                        ),
                    )
                    for i, (kind, _) in enumerate(cells)
                ],
            ),
            cell_text_documents=[
                types.TextDocumentItem(
                    uri=f"{uri}#c{i}",
                    language_id="python" if kind == "code" else "markdown",
                    version=1,
                    text=text,
                )
                for i, (kind, text) in enumerate(cells)
            ],
        )
    )


def change_cell(client: LanguageClient, uri: str, cell: int, text: str) -> None:
    """Replace the text of one cell of an open notebook."""
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=uri, version=2),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(
                                uri=f"{uri}#c{cell}", version=2
                            ),
                            changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                        )
                    ]
                )
            ),
        )
    )


async def close(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def diagnostics_of(documents: dict[str, str]) -> dict[str, list[types.Diagnostic]]:
    """Open every document (uri -> text) in one server; the diagnostics published for each."""

    async def run() -> dict[str, list[types.Diagnostic]]:
        client, published = await start()
        for uri, text in documents.items():
            open_text(client, uri, text)
        found: dict[str, list[types.Diagnostic]] = {}
        while len(found) < len(documents):
            params = await asyncio.wait_for(published.get(), 60)
            found[params.uri] = list(params.diagnostics)
        await close(client)
        return found

    return asyncio.run(run())
