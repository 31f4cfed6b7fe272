"""The linter against JAX itself: a generated program is reported if and only if it is stale
when run (its compiled output differs from its ``jax.disable_jit()`` output after the change).

JAX's verdicts are recorded in ``ground_truth_verdicts.json`` (``python tests/ground_truth.py
--record``): the fast run compares the linter with every recorded verdict and runs a sample of
the programs under JAX again; the slow run runs them all."""

from __future__ import annotations

import pytest
from ground_truth import (
    CAPTURES,
    SHAPES,
    Program,
    load_record,
    programs,
    run_under_jax,
    sample,
    verdict,
)

from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import Settings

PROGRAMS = programs()
RECORD = load_record()
# Where the linter and JAX still disagree, and why; each must keep failing (strict), so that
# a change that closes a gap has to remove it from here.
KNOWN_GAPS: dict[str, str] = {}


def _reported(program: Program) -> bool:
    findings = check_source(program.source, Settings(), with_edits=False)
    assert not [f for f in findings if f.code == "JC900"], findings
    return bool(findings)


def _with_gaps(chosen: list[Program]) -> list[object]:
    return [
        pytest.param(
            p, id=p.label, marks=pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[p.label])
        )
        if p.label in KNOWN_GAPS
        else pytest.param(p, id=p.label)
        for p in chosen
    ]


def test_the_record_covers_every_program_and_both_verdicts() -> None:
    assert set(RECORD) == {p.label for p in PROGRAMS}
    assert "error" not in RECORD.values()
    assert set(KNOWN_GAPS) <= set(RECORD)
    # Every capture and every timing shape has programs on both sides, or is stale by nature.
    for capture in CAPTURES:
        found = {RECORD[p.label] for p in PROGRAMS if p.label.startswith(capture.name + "--")}
        assert found == {"stale", "safe"}, capture.name
    for shape in SHAPES:
        found = {RECORD[p.label] for p in PROGRAMS if p.label.endswith("--" + shape.name)}
        assert found, shape.name


SAMPLE = sample()


@pytest.mark.parametrize("program", _with_gaps(SAMPLE))
def test_reported_if_and_only_if_stale(program: Program) -> None:
    _agrees(program)


@pytest.mark.slow
@pytest.mark.parametrize("program", _with_gaps([p for p in PROGRAMS if p not in SAMPLE]))
def test_every_program_reported_if_and_only_if_stale(program: Program) -> None:
    _agrees(program)


def _agrees(program: Program) -> None:
    stale = RECORD[program.label] == "stale"
    assert _reported(program) == stale, (
        f"{program.label}: JAX says {RECORD[program.label]}\n{program.source}"
    )


def _check_against_jax(chosen: list[Program]) -> None:
    outputs = run_under_jax(chosen)
    changed = {
        p.label: (RECORD[p.label], verdict(outputs[p.label]), outputs[p.label])
        for p in chosen
        if verdict(outputs[p.label]) != RECORD[p.label]
    }
    assert changed == {}


@pytest.mark.jax
def test_a_sample_still_behaves_as_recorded_under_jax() -> None:
    pytest.importorskip("jax")
    _check_against_jax(SAMPLE)


@pytest.mark.jax
@pytest.mark.slow
def test_every_program_still_behaves_as_recorded_under_jax() -> None:
    pytest.importorskip("jax")
    _check_against_jax(PROGRAMS)
