"""The flake8 adapter, through a real flake8 process and directly."""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_support import FIXTURES

from flake8_jax_closure.flake8_plugin import JaxClosureChecker


def flake8(
    *argv: str, stdin: str | None = None, cwd: Path | None = None, select: str | None = "JC"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flake8", *([f"--select={select}"] if select else []), *argv],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=cwd,
    )


def test_flake8_reports_the_seed_finding() -> None:
    completed = flake8(str(FIXTURES / "JC101" / "seed.py"))
    assert completed.returncode == 1
    assert completed.stdout == (
        f"{FIXTURES / 'JC101' / 'seed.py'}:41:16: JC101 'jitted_mult' (jax.jit) reads closure "
        "variable 'weights', rebound at line 45 in 'update_locally_created'; compiled calls keep "
        "the value from the first trace: traced at line 60, changed at line 63 by "
        "'update_locally_created()', reused at line 60 (next pass of the loop at line 58)\n"
    )


def test_flake8_reads_stdin() -> None:
    source = (FIXTURES / "JC101" / "seed.py").read_text(encoding="utf-8")
    completed = flake8("-", stdin=source)
    assert completed.stdout.startswith("stdin:41:16: JC101 ")


def test_flake8_on_all_fixtures_with_jobs_matches_the_snapshots() -> None:
    completed = flake8(
        "--jobs=2", "--exclude=*.fixed.py", "--jax-compile-functions=mylib.fast_jit", str(FIXTURES)
    )
    assert completed.returncode == 1
    # Two compile calls of one bound method report the same line twice: count them as lines.
    expected = [
        f"{path.with_suffix('.py')}:{line}"
        for path in FIXTURES.glob("*/*.findings")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line and line[0].isdigit()
    ]
    assert sorted(completed.stdout.splitlines()) == sorted(expected)


def test_flake8_option_adds_compile_functions(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "import mylib\nK = 1\n\n\n@mylib.fast_jit\ndef f(x):\n    return x * K\n\n\n"
        "def g():\n    global K\n    K = 2\n\n\nf(1)\ng()\nf(1)\n",
        encoding="utf-8",
    )
    assert flake8(str(path)).stdout == ""
    completed = flake8("--jax-compile-functions=mylib.fast_jit", str(path))
    assert ":7:16: JC102 'f' (mylib.fast_jit) reads global 'K'" in completed.stdout
    (tmp_path / "setup.cfg").write_text("[flake8]\njax-compile-functions = mylib.fast_jit\n")
    assert "JC102" in flake8("m.py", cwd=tmp_path).stdout


def test_flake8_noqa_is_flake8s_job(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    source = (FIXTURES / "JC101" / "seed.py").read_text(encoding="utf-8").splitlines(keepends=True)
    source[40] = source[40].rstrip("\n") + "  # noqa: JC101\n"
    path.write_text("".join(source), encoding="utf-8")
    assert flake8(str(path)).stdout == ""


def test_plugin_never_raises_and_reports_jc900(monkeypatch: pytest.MonkeyPatch) -> None:
    import flake8_jax_closure.engine as engine

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(engine, "check_source", explode)
    results = list(JaxClosureChecker(None, ["import jax\n", "f = jax.jit(g)\n"], "m.py").run())
    assert [(r[0], r[2]) for r in results] == [(1, "JC900 analysis failed: RuntimeError: boom")]


def test_plugin_loads_the_analysis_only_for_files_naming_a_compile_transform() -> None:
    """flake8 loads plugins for every run: a project without JAX pays for a text check only."""
    program = (
        "import sys\n"
        "from flake8_jax_closure.flake8_plugin import JaxClosureChecker as C\n"
        "assert list(C(None, ['import os\\n'], 'm.py').run()) == []\n"
        "assert 'flake8_jax_closure.engine' not in sys.modules\n"
        "assert 'flake8_jax_closure.analysis.facts' not in sys.modules\n"
        "list(C(None, ['import jax\\n', 'f = jax.jit(g)\\n'], 'm.py').run())\n"
        "assert 'flake8_jax_closure.engine' in sys.modules\n"
    )
    completed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


def test_plugin_ignores_syntax_errors_flake8_reports_them() -> None:
    assert list(JaxClosureChecker(None, ["import jax\n", "def f(:\n"], "m.py").run()) == []


def test_no_options_resolve_to_the_default_settings() -> None:
    from flake8_jax_closure.config import FileConfig, Overrides, resolve

    JaxClosureChecker.parse_options(argparse.Namespace(jax_compile_functions=[]))
    # Every code computed: flake8 selects, and ignores the API hazards (JC2) by default.
    default = resolve(FileConfig(), Overrides()).settings
    assert JaxClosureChecker.settings == dataclasses.replace(default, select=("JC",))


def test_api_hazards_are_ignored_by_default_and_selectable() -> None:
    path = str(FIXTURES / "JC101" / "closure_rebound.py")
    assert ": JC201 " not in flake8(path, select=None).stdout
    assert ": JC201 " in flake8("--extend-select=JC2", path, select=None).stdout
    assert ": JC101 " in flake8("--extend-select=JC2", path, select=None).stdout


def test_parse_options_accepts_lists_and_strings() -> None:
    JaxClosureChecker.parse_options(argparse.Namespace(jax_compile_functions=["a.b", " c.d "]))
    assert {"a.b", "c.d", "jax.jit"} <= JaxClosureChecker.settings.compile_functions
    JaxClosureChecker.parse_options(argparse.Namespace(jax_compile_functions=""))
    assert "a.b" not in JaxClosureChecker.settings.compile_functions
