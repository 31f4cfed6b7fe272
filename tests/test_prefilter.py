"""The ast pre-pass only removes work: turning it off never changes a finding."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from fixture_support import Fixture, fixtures

from flake8_jax_closure.engine import check_source
from flake8_jax_closure.names import COMPILE_FUNCTIONS
from flake8_jax_closure.prefilter import needs_analysis


def _both(source: str, fixture: Fixture | None = None) -> tuple[list[str], list[str]]:
    settings_on = fixture.settings() if fixture else None
    settings_off = fixture.settings(prefilter=False) if fixture else None
    if settings_on is None:
        from flake8_jax_closure.settings import Settings

        settings_on, settings_off = Settings(), Settings(prefilter=False)
    on = [f.text for f in check_source(source, settings_on, with_edits=False)]
    off = [f.text for f in check_source(source, settings_off, with_edits=False)]
    return on, off


@pytest.mark.parametrize("fixture", fixtures(), ids=lambda f: f.name)
def test_fixture_findings_are_the_same_with_and_without_the_pre_pass(fixture: Fixture) -> None:
    on, off = _both(fixture.source, fixture)
    assert on == off


def test_pre_pass_skips_files_without_a_changing_capture() -> None:
    clean = "import jax\n\nSCALE = 2.0\n\n\n@jax.jit\ndef f(x):\n    return x * SCALE\n"
    assert not needs_analysis(clean, COMPILE_FUNCTIONS)
    assert needs_analysis(
        clean + "\n\ndef g():\n    global SCALE\n    SCALE = 3.0\n", COMPILE_FUNCTIONS
    )
    # Module code rebinding the global counts only once module code used the compiled function.
    assert not needs_analysis(clean + "\nSCALE = 3.0\n", COMPILE_FUNCTIONS)
    assert needs_analysis(clean + "\nf(1.0)\nSCALE = 3.0\n", COMPILE_FUNCTIONS)
    overloads = "from typing import overload\n\n\n@overload\ndef g(x: int) -> int: ...\n\n\n"
    assert not needs_analysis(
        clean.replace("x * SCALE", "g(x)") + overloads + "def g(x):\n    return x\n",
        COMPILE_FUNCTIONS,
    )
    assert needs_analysis(
        clean.replace("SCALE = 2.0", "SCALE = {}") + "SCALE.pop('a')\n", COMPILE_FUNCTIONS
    )
    assert not needs_analysis(
        "import numba\n\n\n@numba.njit\ndef f(x):\n    return x\n", COMPILE_FUNCTIONS
    )
    assert needs_analysis("def f(:\n", COMPILE_FUNCTIONS)  # the real parser reports it


def _installed_sample(limit: int) -> list[Path]:
    spec = importlib.util.find_spec("jax")
    if spec is None or spec.origin is None:
        return []
    files = sorted(Path(spec.origin).parent.rglob("*.py"))
    mentioning = [p for p in files if b"jit" in p.read_bytes()]
    return mentioning[:: max(1, len(mentioning) // limit)][:limit]


@pytest.mark.parametrize("path", _installed_sample(12), ids=lambda p: p.name)
def test_installed_jax_sample_is_the_same_with_and_without_the_pre_pass(path: Path) -> None:
    on, off = _both(path.read_text(encoding="utf-8"))
    assert on == off
