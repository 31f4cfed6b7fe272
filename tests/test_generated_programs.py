"""Differential properties on generated programs that have findings (see program_generator):
the engine, flake8 and the language server agree; lazy and eager analysis agree; every fix is
safe, parses, re-lints clean and is final; under JAX every original is stale and every fixed
program follows the change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from program_generator import FORMS, KIND_NAMES, Program, programs

from flake8_jax_closure.diagnostics import Applicability
from flake8_jax_closure.engine import check_source, fix_source
from flake8_jax_closure.settings import Settings

PROGRAMS = list(programs())
HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("generated")
    paths = {}
    for program in PROGRAMS:
        path = folder / f"{program.label.replace('-', '_')}.py"
        path.write_text(program.source, encoding="utf-8")
        paths[program.label] = path
    return paths


def _expected(program: Program) -> list[tuple[str, str]]:
    return [(program.code, program.name)]


def test_the_generator_covers_every_form_and_kind() -> None:
    assert len(PROGRAMS) == 228
    assert {p.form for p in PROGRAMS} == set(FORMS)
    assert {p.kind for p in PROGRAMS} == set(KIND_NAMES)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.label)
def test_each_program_has_its_finding_and_a_safe_fix(program: Program) -> None:
    findings = check_source(program.source, Settings())
    assert [(f.code, f.name) for f in findings] == _expected(program)
    assert [f.fix.applicability if f.fix else None for f in findings] == [Applicability.SAFE]
    # Lazy visiting only skips work: the eager analysis finds exactly the same.
    eager = check_source(program.source, Settings(), with_edits=False, lazy=False)
    assert [f.text for f in eager] == [f.text for f in findings]
    fixed = fix_source(program.source, Settings()).source
    compile(fixed, program.label, "exec", dont_inherit=True)
    assert check_source(fixed, Settings()) == []
    assert fix_source(fixed, Settings()).source == fixed


def _engine_lines(paths: dict[str, Path]) -> set[str]:
    return {
        f"{path}:{f.line}:{f.column + 1}: {f.text}"
        for path in paths.values()
        for f in check_source(path.read_text(encoding="utf-8"), Settings())
    }


@pytest.mark.slow
def test_flake8_reports_what_the_engine_reports(written: dict[str, Path]) -> None:
    folder = next(iter(written.values())).parent
    completed = subprocess.run(
        [sys.executable, "-m", "flake8", "--select=JC", "--jobs=2", str(folder)],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 1, completed.stderr
    assert set(completed.stdout.splitlines()) == _engine_lines(written)


@pytest.mark.slow
def test_the_language_server_reports_what_the_engine_reports(written: dict[str, Path]) -> None:
    pytest.importorskip("pygls")
    from lsp_session import diagnostics_of

    published = diagnostics_of({path.as_uri(): path.read_text() for path in written.values()})
    by_uri = {path.as_uri(): path for path in written.values()}
    lines = {
        f"{by_uri[uri]}:{d.range.start.line + 1}:{d.range.start.character + 1}: {d.code} "
        f"{d.message}"
        for uri, diagnostics in published.items()
        for d in diagnostics
    }
    assert lines == _engine_lines(written)


@pytest.mark.slow
@pytest.mark.jax
def test_originals_are_stale_and_fixed_programs_follow_the_change(
    written: dict[str, Path], tmp_path: Path
) -> None:
    pytest.importorskip("jax")
    runs = []
    for label, path in written.items():
        fixed = path.with_name(path.stem + "_fixed.py")
        fixed.write_text(fix_source(path.read_text(), Settings()).source, encoding="utf-8")
        runs.append((label, path, fixed))
    listing = tmp_path / "paths.json"
    listing.write_text(json.dumps([str(p) for _, path, fixed in runs for p in (path, fixed)]))
    completed = subprocess.run(
        [sys.executable, str(HERE / "run_programs.py"), str(listing)],
        capture_output=True,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    outputs = json.loads(completed.stdout)
    failures = []
    for label, path, fixed in runs:
        original_compiled, original_eager = outputs[str(path)]
        fixed_compiled, fixed_eager = outputs[str(fixed)]
        stale = original_compiled != original_eager
        consistent = fixed_compiled == fixed_eager == original_eager
        if not (stale and consistent) or "error:" in original_eager:
            failures.append((label, original_compiled, original_eager, fixed_compiled))
    assert failures == []
