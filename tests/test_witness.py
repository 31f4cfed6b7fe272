"""Every default finding carries the path the code shows (trace, change, reuse); a capture that
only outside callers can make stale is an API hazard (JC2xx), off by default."""

from __future__ import annotations

import io
import json
from pathlib import Path

from fixture_support import FIXTURES

from flake8_jax_closure.cache import FindingsCache
from flake8_jax_closure.cli import main
from flake8_jax_closure.diagnostics import Role
from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import RunOptions, Settings

SETTER = """import jax

SCALE = 1.0


@jax.jit
def scaled(x):
    return x * SCALE


def set_scale(value):
    global SCALE
    SCALE = value
"""
CALLED = SETTER + "\n\nscaled(1.0)\nset_scale(2.0)\nscaled(1.0)\n"
EVERY_CODE = Settings(select=("JC",))


def _json(*argv: str) -> list[dict[str, object]]:
    out = io.StringIO()
    main(["check", "--format", "json", "--no-cache", *argv], stdout=out, stderr=io.StringIO())
    return list(json.loads(out.getvalue()))


def test_the_seeds_witness_in_json() -> None:
    (finding,) = _json(str(FIXTURES / "JC101" / "seed.py"))
    assert finding["witness"] == [
        {"cell": None, "line": 60, "column": 23, "role": "trace", "via": None, "again": None,
         "path": None},
        {"cell": None, "line": 63, "column": 13, "role": "change",
         "via": "update_locally_created", "again": None, "path": None},
        {"cell": None, "line": 60, "column": 23, "role": "reuse", "via": None,
         "again": "next pass of the loop at line 58", "path": None},
    ]  # fmt: skip
    assert finding["entry_points"] == []


def test_a_setter_nothing_calls_is_an_api_hazard_off_by_default() -> None:
    assert check_source(SETTER, Settings()) == []
    (hazard,) = check_source(SETTER, EVERY_CODE)
    assert hazard.code == "JC202" and hazard.witness == ()
    assert hazard.entry_points == ("set_scale", "scaled")
    assert hazard.message.endswith(
        "API hazard: stale if a caller outside the project runs 'set_scale()' between calls "
        "of 'scaled()'"
    )
    (selected,) = check_source(SETTER, Settings(select=("JC1", "JC2")))
    assert selected == hazard


def test_the_same_setter_called_between_two_calls_has_a_witness() -> None:
    (finding,) = check_source(CALLED, Settings())
    assert finding.code == "JC102"
    assert [(s.role, s.line, s.via) for s in finding.witness] == [
        (Role.TRACE, 16, None),
        (Role.CHANGE, 17, "set_scale"),
        (Role.REUSE, 18, None),
    ]
    assert finding.message.endswith(
        "traced at line 16, changed at line 17 by 'set_scale()', reused at line 18"
    )


def test_a_closure_handed_back_to_the_caller_is_a_hazard() -> None:
    source = (
        "import jax\n\n\ndef make():\n    scale = 1.0\n\n    @jax.jit\n    def f(x):\n"
        "        return x * scale\n\n    def set_scale(v):\n        nonlocal scale\n"
        "        scale = v\n\n    return f, set_scale\n"
    )
    assert check_source(source, Settings()) == []
    (hazard,) = check_source(source, EVERY_CODE)
    assert hazard.code == "JC201"
    assert "API hazard: stale if the code it is handed to at line 15" in hazard.message


def test_a_rule_selected_alone_leaves_its_hazards_out() -> None:
    assert check_source(SETTER, Settings(select=("JC102",))) == []
    assert [f.code for f in check_source(SETTER, Settings(select=("JC202",)))] == ["JC202"]


def test_the_cache_keeps_the_witness(tmp_path: Path) -> None:
    cache = FindingsCache(tmp_path)
    findings = check_source(CALLED, Settings())
    key = cache.key(CALLED.encode(), Settings(), RunOptions())
    cache.put(key, findings)
    assert cache.get(key) == findings and findings[0].witness


def test_a_change_the_module_makes_itself_is_shown_where_its_statement_starts() -> None:
    # The rebinding takes effect where its statement ends (events are ordered so), but the
    # witness points at the statement's start, on the line it starts: not past the line's end.
    source = (
        "import jax\n\nscale = 1.0\n\n\n@jax.jit\ndef f(x):\n    return x * scale\n\n\n"
        "f(1.0)\nscale = (\n    2.0\n)\nf(1.0)\n"
    )
    (finding,) = check_source(source, Settings())
    change = next(step for step in finding.witness if step.role is Role.CHANGE)
    assert (change.line, change.column) == (12, 0)
    assert "changed at line 12," in finding.message
