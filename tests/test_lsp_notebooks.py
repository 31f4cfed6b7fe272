"""The language server on notebook documents (LSP 3.17), end to end: a real LSP client opens a
notebook's cells, gets diagnostics per cell, asks for the quick fix, and changes a cell."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from fixture_support import FIXTURES

pytest.importorskip("pygls")
from lsp_session import change_cell, close, open_notebook, start  # noqa: E402
from lsprotocol import types  # noqa: E402
from test_lsp import actions_request, apply_edits  # noqa: E402

NOTEBOOK = FIXTURES / "JC102" / "notebook_global.ipynb"
FIXED = FIXTURES / "JC102" / "notebook_global.fixed.ipynb"


def _cells(path: Path) -> list[tuple[str, str]]:
    return [
        (cell["cell_type"], "".join(cell["source"]))
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
    ]


async def _published(
    queue: asyncio.Queue[types.PublishDiagnosticsParams], count: int
) -> dict[str, list[types.Diagnostic]]:
    found: dict[str, list[types.Diagnostic]] = {}
    while len(found) < count:
        params = await asyncio.wait_for(queue.get(), 60)
        found[params.uri] = list(params.diagnostics)
    return found


async def _more(queue: asyncio.Queue[types.PublishDiagnosticsParams]) -> list[str]:
    """What else arrives within half a second."""
    await asyncio.sleep(0.5)
    more = []
    while not queue.empty():
        more.append(queue.get_nowait().uri)
    return more


async def _session(tmp_path: Path) -> dict[str, Any]:
    uri = (tmp_path / "train.ipynb").as_uri()
    cells = _cells(NOTEBOOK)
    code = [i for i, (kind, _) in enumerate(cells) if kind == "code"]
    client, published = await start()
    open_notebook(client, uri, cells)
    opened = await _published(published, len(code))
    (diagnostic,) = opened[f"{uri}#c2"]
    cell_uri = f"{uri}#c2"
    quick = await client.text_document_code_action_async(
        actions_request(cell_uri, diagnostic.range, [diagnostic])
    )
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=cell_uri),
            position=diagnostic.range.start,
        )
    )
    # The change goes: the last cell no longer rebinds SCALE. Sent again: the edited cell and
    # the cell whose finding went; the others are left as they are.
    change_cell(client, uri, 5, "print(scaled(jnp.ones(2)))")
    changed = await _published(published, 2)
    resent = await _more(published)
    await close(client)
    return {"uri": uri, "cells": cells, "opened": opened, "quick": quick, "hover": hover,
            "changed": changed, "resent": resent}  # fmt: skip


def test_a_notebook_gets_diagnostics_per_cell_and_fixes_in_its_cells(tmp_path: Path) -> None:
    result = asyncio.run(_session(tmp_path))
    uri, cells, opened = result["uri"], result["cells"], result["opened"]
    assert sorted(opened) == sorted(f"{uri}#c{i}" for i in (1, 2, 3, 5))
    assert {cell: len(found) for cell, found in opened.items()}[f"{uri}#c2"] == 1
    assert sum(len(found) for found in opened.values()) == 1
    (diagnostic,) = opened[f"{uri}#c2"]
    assert diagnostic.code == "JC102"
    assert (diagnostic.range.start.line, diagnostic.range.start.character) == (2, 15)
    assert diagnostic.message.endswith(
        "traced in cell 4 at line 1, changed in cell 6 at line 1, reused in cell 6 at line 2"
    )
    related = [
        (r.location.uri, r.location.range.start.line) for r in diagnostic.related_information
    ]
    assert related == [(f"{uri}#c5", 0), (f"{uri}#c3", 0), (f"{uri}#c5", 0), (f"{uri}#c5", 1)]

    fix, noqa = result["quick"]
    assert fix.title.startswith("JC102: pass 'SCALE'") and noqa.title.startswith("JC102: ignore")
    assert list(fix.edit.changes) == [f"{uri}#c2"]
    fixed_cell = apply_edits(cells[2][1], fix.edit.changes[f"{uri}#c2"])
    assert fixed_cell == _cells(FIXED)[2][1]  # what `fix` writes into the file's cell
    assert "**JC102**" in result["hover"].contents.value
    assert "changed in cell 6 at line 1" in result["hover"].contents.value

    assert result["changed"] == {f"{uri}#c2": [], f"{uri}#c5": []}
    assert result["resent"] == []


async def _opened_diagnostics(path: Path, ran: frozenset[int]) -> int:
    uri = path.as_uri()
    cells = _cells(FIXTURES / "JC102" / "notebook_name_error_cell_that_ran.ipynb")
    client, published = await start()
    open_notebook(client, uri, cells, ran)
    opened = await _published(published, len(cells))
    await close(client)
    return sum(len(diagnostics) for diagnostics in opened.values())


@pytest.mark.parametrize(("ran", "found"), [(frozenset({0, 1, 2}), 1), (frozenset({0, 1}), 0)])
def test_a_cell_the_editor_has_not_run_may_stop_the_notebook(
    tmp_path: Path, ran: frozenset[int], found: int
) -> None:
    """The last cell reads ``load_batches``, which no cell defines. Run in this session (its
    execution summary), the name came from somewhere and its compiled call reuses a stale
    trace; not run, a run of the notebook stops there."""
    assert asyncio.run(_opened_diagnostics(tmp_path / "nb.ipynb", ran)) == found
