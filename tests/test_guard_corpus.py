"""The guard over programs whose staleness is known by running them (see ``guard_corpus``):
``--mode error`` stops every stale program at its first stale call and never fires on a call
whose result is right, ``--mode retrace`` makes every program print its eager output.

More programs: ``FLAKE8_JAX_CLOSURE_GUARD_CORPUS`` holds glob patterns (separated by
``os.pathsep``) of further programs, run by ``test_guard_on_more_programs``; or run
``python tests/guard_corpus.py PROGRAM...`` directly.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

import ground_truth
import pytest
from fixture_support import FIXTURES
from guard_corpus import judge, kind
from program_generator import FORMS, programs

from flake8_jax_closure.engine import fix_source
from flake8_jax_closure.settings import Settings

pytest.importorskip("jax")
pytestmark = pytest.mark.jax

# Runnable fixtures the guard still gets wrong, and why; each must keep failing, so that a
# change that fixes one has to remove it from here:
# - a helper in another frame stores a constant before the compiled function reads it: the
#   guard orders stores before reads only within one frame, so it takes the read for a
#   capture and warns when the program stores another value between calls (the trace stores
#   the constant again each time, so the result is right).
# - a global read only to compute a local nothing reads afterwards: the guard watches every
#   global the trace reads, and stops the program when it changes, though the value never
#   reaches the result.
# - a memo table that gains an entry for another key: the guard compares the whole dict the
#   trace read, not the entry, so it stops the program though the entry read is unchanged; and
#   its retrace mode runs the memoising function under its own probe, which stores a tracer.
# - a part of an attribute read through a property (``self.state.critic["w"]``, where ``state``
#   returns ``self._state``): the guard does not see the read through the property, so the
#   program runs on with the stale value (read directly, ``self._state.critic["w"]``, it stops).
FIXTURE_GAPS = frozenset(
    {
        "JC104/store_into_a_part_read_through_a_property.py",
        "JC103/negative_helper_sets_constant_before_read.py",
        "JC102/negative_read_only_into_an_unread_local.py",
        "JC103/negative_table_that_only_gains_entries.py",
    }
)
# Programs with a __main__ block; the seed's second and third solutions fail on current JAX.
RUNNABLE = sorted(
    path
    for path in FIXTURES.glob("*/*.py")
    if "__main__" in path.read_text(encoding="utf-8")
    and not path.name.startswith(("seed_solution2", "seed_solution3"))
    and path.relative_to(FIXTURES).as_posix() not in FIXTURE_GAPS
)


def _check(paths: list[Path | str], *, stale_at_least: int, safe_at_least: int) -> None:
    from guard_corpus import failures

    problems, counts = failures(paths)
    assert problems == []
    assert counts["stale"] >= stale_at_least and counts["safe"] >= safe_at_least, counts


@pytest.mark.slow
def test_guard_on_the_runnable_fixtures() -> None:
    # Originals and fixed versions: 14 stale, 17 safe (one needs a module not installed).
    _check(RUNNABLE, stale_at_least=14, safe_at_least=17)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FIXTURE_GAPS))
def test_fixture_gaps_stay_listed_while_open(name: str) -> None:
    """Each listed fixture still fails: once the guard gets one right, it leaves the list."""
    with pytest.raises(AssertionError):
        _check([FIXTURES / name], stale_at_least=0, safe_at_least=0)


@pytest.mark.slow
@pytest.mark.parametrize("form", sorted(FORMS))
def test_guard_on_the_generated_programs(form: str, tmp_path: Path) -> None:
    paths: list[Path | str] = []
    for program in programs():
        if program.form != form:
            continue
        path = tmp_path / f"{program.label.replace('-', '_')}.py"
        path.write_text(program.source, encoding="utf-8")
        fixed = path.with_name(f"{path.stem}_fixed.py")
        fixed.write_text(fix_source(program.source, Settings()).source, encoding="utf-8")
        paths += [path, fixed]
    # Every original is stale and every fixed program safe.
    _check(paths, stale_at_least=len(paths) // 2, safe_at_least=len(paths) // 2)


# One stale program and its safe twin (where there is one) for each kind of program the ground
# truth once caught the guard out on; the slow test runs all of them.
GROUND_TRUTH_SAMPLE = (
    "scan-body--new-shape-after",
    "fori-body--same-shape-after",
    "namespace-attribute--sequence",
    "own-write--called-again",
    "own-write--called-once",
    "guarded-write--backoff",
    "guarded-write--reset-before",
    "bound-method-again--old-wrapper-alive",
    "bound-method-again--old-wrapper-gone",
)
GROUND_TRUTH_CHUNKS = 4
# Stale programs the guard does not catch yet: it does not watch what ``nnx.jit`` compiles
# through ``nnx.value_and_grad`` (the wrapper leads it to Flax's own code, not the user's
# function). The linter reports them (tests/test_ground_truth.py).
# Programs of the families in ``ground_truth_families`` the guard gets wrong:
# - a value made lazily while JAX traces (``global _omega`` filled on first use) and drawn again
#   later: the guard takes the trace's own store for lazy initialisation and accepts the new
#   value (lazy-global, lazy-closure);
# - a compiled function called once and then mapped by ``vmap``: the guard judges the mapped
#   call by the per-example trace's signature (it stops a call whose result is right, and
#   changes the output of the safe twin);
# - a static ``self`` whose helper branches on a counter: the guard stops at the first change of
#   the counter, though the branch taken (and the result) is still the same;
# - a Flax NNX graph definition split again after ``model.eval()``: ``retrace`` mode does not
#   trace again (``error`` and ``warn`` do stop it);
# - an optimiser made again with the same rate (``optimizers.sgd(0.1)`` run again): the guard
#   sees new functions where the trace read the old ones, and cannot tell they do the same; it
#   stops a call whose result is right.
FAMILY_GAPS = frozenset(
    {
        "optimiser-remade--same-rate",
        "setter-first--read-then-stored",
        "lazy-global--redrawn",
        "lazy-closure--reset",
        "vmap-after--same-example-shape",
        "vmap-after--new-example-shape",
        "counter-branch--advanced",
        "nnx-graphdef--split-after-eval",
    }
)
GUARD_GAPS = (
    frozenset(
        f"nnx-jit-value-and-grad-wrapped--{shape}"
        for shape in ("sequence", "loop", "function-run-twice", "try-except", "same-shape-after")
    )
    | FAMILY_GAPS
)


def _check_ground_truth(labels: list[str], tmp_path: Path) -> None:
    """The guard on these ground-truth programs, each confirmed stale or safe by running it
    (``ground_truth_verdicts.json`` records what JAX decided)."""
    from guard_corpus import run_apart

    by_label = {program.label: program for program in ground_truth.programs()}
    recorded = ground_truth.load_record()
    paths = {}
    for label in labels:
        path = tmp_path / f"{label.replace('-', '_')}.py"
        path.write_text(by_label[label].source, encoding="utf-8")
        paths[str(path)] = label
    results = run_apart(list(paths))
    problems = [problem for path, runs in results.items() for problem in judge(path, runs)]
    named = {"failing": "error"}  # the record's word for a program that fails without the guard
    verdicts = {paths[path]: named.get(kind(runs), kind(runs)) for path, runs in results.items()}
    assert problems == []
    assert verdicts == {label: recorded[label] for label in labels}


def test_guard_on_a_sample_of_the_ground_truth(tmp_path: Path) -> None:
    _check_ground_truth(list(GROUND_TRUTH_SAMPLE), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(GROUND_TRUTH_CHUNKS))
def test_guard_on_the_ground_truth(chunk: int, tmp_path: Path) -> None:
    labels = sorted(p.label for p in ground_truth.programs() if p.label not in GUARD_GAPS)
    _check_ground_truth(labels[chunk::GROUND_TRUTH_CHUNKS], tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("label", sorted(GUARD_GAPS))
def test_guard_gaps_stay_listed_while_open(label: str, tmp_path: Path) -> None:
    """Each gap still fails: once the guard catches one, it leaves the list."""
    with pytest.raises(AssertionError):
        _check_ground_truth([label], tmp_path)


@pytest.mark.slow
def test_guard_on_more_programs() -> None:
    patterns = os.environ.get("FLAKE8_JAX_CLOSURE_GUARD_CORPUS", "")
    paths: list[Path | str] = sorted(
        {path for pattern in patterns.split(os.pathsep) if pattern for path in glob.glob(pattern)}
    )
    if not paths:
        pytest.skip("set FLAKE8_JAX_CLOSURE_GUARD_CORPUS to glob patterns of programs")
    _check(paths, stale_at_least=0, safe_at_least=0)


# -- the judge itself ---------------------------------------------------------------------------


def _runs(compiled: str, eager: str, **error: object) -> dict[str, dict[str, object]]:
    plain = {"error": None, "stale": None, "warnings": []}
    runs: dict[str, dict[str, object]] = {
        "compiled": {**plain, "stdout": compiled},
        "eager": {**plain, "stdout": eager},
        "warn": {**plain, "stdout": compiled, "warnings": ["stale"] if compiled != eager else []},
        "retrace": {**plain, "stdout": eager},
        "error": {
            **plain,
            "stdout": "",
            "divergent": [],
            "raised_at": None,
            "raised_rightly": None,
            **error,
        },
    }
    return runs


def test_the_judge_accepts_a_stop_at_the_first_stale_call() -> None:
    runs = _runs("1\n1\n", "1\n2\n", stdout="1\n", stale="x", raised_at=2, raised_rightly=True)
    assert kind(runs) == "stale"
    assert judge("p.py", runs) == []


def test_the_judge_finds_what_the_guard_can_do_wrong() -> None:
    missed = _runs("1\n1\n", "1\n2\n", stdout="1\n1\n", divergent=[2])
    assert judge("p.py", missed) == [
        "p.py: calls [2] returned stale results under --mode error",
        "p.py: --mode error printed '1\\n1\\n'",
        "p.py: stale, but --mode error did not stop it",
    ]
    false_alarm = _runs("1\n", "1\n", stale="x", raised_at=1, raised_rightly=False)
    assert judge("p.py", false_alarm) == [
        "p.py: --mode error raised at call 1, whose result was right: x"
    ]
    wrong_retrace = _runs("1\n1\n", "1\n2\n", stdout="1\n", stale="x", raised_at=2)
    wrong_retrace["error"]["raised_rightly"] = True
    wrong_retrace["retrace"]["stdout"] = "1\n1\n"
    assert judge("p.py", wrong_retrace) == [
        "p.py: --mode retrace printed '1\\n1\\n' (no error), eager prints '1\\n2\\n'"
    ]
