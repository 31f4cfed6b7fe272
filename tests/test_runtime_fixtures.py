"""Runnable fixtures under CPU JAX: compiled output must equal the un-compiled output.

Each program runs twice, normally and with ``JAX_DISABLE_JIT=1``. The original of a flagged
program prints something else when compiled (the capture went stale); the fixed program must
print exactly what the un-compiled one prints.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_support import Fixture, fixtures

from flake8_jax_closure.engine import check_source

if importlib.util.find_spec("jax") is None:  # found, not imported: collection stays quick
    pytest.skip("jax is not installed", allow_module_level=True)
pytestmark = pytest.mark.jax

RUNNABLE = [
    f
    for f in fixtures()
    if 'if __name__ == "__main__":' in f.source or "if __name__ == '__main__':" in f.source
    # The seed's second and third solutions fail on current JAX, as their headers explain;
    # the verifier's fixtures show other outcomes on purpose and have tests of their own.
    if not f.path.stem.startswith(("seed_solution2", "seed_solution3", "verify_"))
]


def _run(path: Path, *, disable_jit: bool) -> str:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "JAX_DISABLE_JIT": "1" if disable_jit else "0"}
    completed = subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=path.parent,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    return completed.stdout


def test_there_are_runnable_fixtures() -> None:
    assert {"JC101/seed", "JC102/runnable_learning_rate", "JC103/runnable_config"} <= {
        f.name for f in RUNNABLE
    }


@pytest.mark.slow
@pytest.mark.parametrize("fixture", RUNNABLE, ids=lambda f: f.name)
def test_original_is_stale_and_fixed_follows_changes(fixture: Fixture) -> None:
    original_compiled = _run(fixture.path, disable_jit=False)
    original_eager = _run(fixture.path, disable_jit=True)
    if not check_source(fixture.source, fixture.settings()):
        assert original_compiled == original_eager
        return
    assert original_compiled != original_eager, "the original should show the stale value"
    if not fixture.fixed_path.exists():
        return  # no fix (read through a property, or a body handed to ``lax.scan``)
    fixed_compiled = _run(fixture.fixed_path, disable_jit=False)
    fixed_eager = _run(fixture.fixed_path, disable_jit=True)
    assert fixed_eager == original_eager
    assert fixed_compiled == fixed_eager


@pytest.mark.slow
def test_bodies_jax_caches_keep_the_old_value_under_jax() -> None:
    """A fixture without a fix: the linter reports it, and JAX shows it stale."""
    (fixture,) = [f for f in fixtures() if f.name == "JC101/cached_bodies_keep_their_trace"]
    assert check_source(fixture.source, fixture.settings())
    assert _run(fixture.path, disable_jit=False) != _run(fixture.path, disable_jit=True)


@pytest.mark.slow
def test_fixed_seed_follows_the_weights() -> None:
    seed = next(f for f in RUNNABLE if f.name == "JC101/seed")
    lines = _run(seed.fixed_path, disable_jit=False).split()
    mult, jitted = lines[0::3], lines[1::3]
    assert jitted == mult
    assert jitted[:3] == ["20.0", "0.0", "20.0"]
    original = _run(seed.path, disable_jit=False).split()
    assert set(original[1::3]) == {"20.0"}
