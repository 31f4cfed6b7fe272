"""Our own linter on our own code: nothing to report, nothing to fix."""

from __future__ import annotations

import io

from fixture_support import ROOT

from flake8_jax_closure.cli import main


def test_own_code_is_clean() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = main(
        [
            "check",
            "--no-cache",
            "--jobs",
            "1",
            str(ROOT / "flake8_jax_closure"),
            str(ROOT / "tests"),
            # The guard's tests compile stale functions on purpose, to see the guard stop them.
            "--extend-exclude",
            "test_guard_api.py,test_guard_values.py",
        ],
        stdout=out,
        stderr=err,
    )
    assert (code, out.getvalue(), err.getvalue()) == (0, "All checks passed!\n", "")
