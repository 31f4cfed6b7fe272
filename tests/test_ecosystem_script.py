"""The ecosystem check's notebook conversion: code cells in order, magics kept as comments in
statements that leave every block valid, one line for one."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from ecosystem import notebook_to_script  # noqa: E402


def _notebook(*cells: tuple[str, str]) -> bytes:
    return json.dumps(
        {"cells": [{"cell_type": kind, "source": source} for kind, source in cells]}
    ).encode()


def test_a_block_holding_only_a_magic_stays_a_block() -> None:
    raw = _notebook(
        ("code", "try:\n    import tinygp\nexcept ImportError:\n    %pip install -q tinygp"),
        ("markdown", "# Title"),
        ("code", "!nvidia-smi\nx = 1"),
    )
    script = notebook_to_script(raw)
    assert script is not None
    ast.parse(script)
    lines = script.splitlines()
    assert "    pass  # %pip install -q tinygp" in lines
    assert "pass  # !nvidia-smi" in lines
    assert lines[lines.index("pass  # !nvidia-smi") + 1] == "x = 1"


def test_what_is_not_a_notebook_gives_nothing() -> None:
    assert notebook_to_script(b"not json") is None
    assert notebook_to_script(json.dumps({"cells": None}).encode()) is None
    assert notebook_to_script(json.dumps([1]).encode()) is None
