"""The witness against the runtime guard: for every generated program of ``ground_truth`` that
JAX shows stale (``ground_truth_verdicts.json``), each default finding carries a witness whose
reuse step is the compiled call at which the guard, in ``error`` mode, stops the program.

How a stop is compared with a witness. The guard raises ``StaleCaptureError`` from inside the
stale compiled call, so the program's own frames on the stack at that moment are the calls in
progress: the stale compiled call and the driver calls around it (``epoch(3.0)`` at module
level, then ``fast(x)`` inside ``epoch``). A reuse step names one position in the driver code:
the compiled call itself (``reused at line 32``), or the driver's call of the function that
makes it (``reused at line 37 in 'outer()'``, where ``outer`` is the compiled function that
calls the stale one). The two agree when the reuse step's line and column are those of one of
the program's frames at the stop (Python 3.11 records the column of the call a frame is
making; on 3.10 the line alone is compared). A witness whose reuse is the ``next call of
'epoch()' at line 36`` must also have that call on the stack: the stop has to fall in that run
of the function, not in the one that traced. The guard stops at the first stale call, so every
finding of the program, not only one of them, has to name it.

That programs JAX shows safe get no default finding is checked, for every program, by
``test_ground_truth.py`` (reported if and only if stale).

The guard runs every program in one subprocess, as ``guard_corpus`` does (JAX is imported
once; each run makes new function objects, so no trace is shared between programs), and only
in ``error`` mode: the other modes and the eager comparison are ``test_guard_corpus.py``'s.
``python tests/test_witness_against_guard.py PATHS.json`` is that subprocess.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import runpy
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ground_truth import Program, load_record, programs

from flake8_jax_closure.diagnostics import Finding, Role, WitnessStep
from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import Settings

HERE = Path(__file__).resolve().parent
RECORD = load_record()
STALE = [program for program in programs() if RECORD[program.label] == "stale"]

# Where the witness and the guard still disagree, and why; each must keep disagreeing
# (strict), so that a change that makes them agree has to remove it from here.
_NNX_THROUGH_GRAD = (
    "the guard never stops it: it does not watch what nnx.jit compiles through "
    "nnx.value_and_grad (JAX shows the program stale, as the witness says)"
)
KNOWN_MISMATCHES: dict[str, str] = {
    f"nnx-jit-value-and-grad-wrapped--{shape}": _NNX_THROUGH_GRAD
    for shape in ("sequence", "loop", "function-run-twice", "try-except", "same-shape-after")
}
KNOWN_MISMATCHES |= {
    "lazy-global--redrawn": "the guard never stops it: it takes the trace's own lazy store for "
    "initialisation and accepts the value drawn again later",
    "lazy-closure--reset": "the guard never stops it: it takes the trace's own lazy store for "
    "initialisation and accepts the value reset later",
    "setter-first--read-then-stored": "the guard never stops it: the trace stores its own tracer "
    "where it read the value, and the guard takes that store for the trace's own state",
}

# A position in the program's file: line (1-based) and column (0-based; None where Python does
# not record it).
Position = tuple[int, int | None]
# ``next call of 'epoch()' at line 36``: a second run named by where it is called. The other
# forms (``next pass of the loop at line 30``, ``next call of 'f()' in the loop at line 30``)
# name a loop's header, which is on no stack.
_NEXT_CALL = re.compile(r"next call of '[^']*\(\)' at line (\d+)$")


@dataclass(frozen=True)
class Stop:
    """Where the guard stopped a program: its own frames, outermost first, and what it said."""

    frames: tuple[Position, ...]
    message: str


# -- the comparison ---------------------------------------------------------------------------


def disagreement(finding: Finding, stop: Stop | None) -> str | None:
    """Why the finding's witness does not end where the guard stopped (None when it does)."""
    roles = [step.role for step in finding.witness]
    if roles != [Role.TRACE, Role.CHANGE, Role.REUSE]:
        return f"the witness is not trace, change, reuse: {[r.value for r in roles]}"
    if stop is None:
        return "the guard did not stop the program"
    reuse = finding.witness[-1]
    if reuse.path is not None:
        # Each generated program is one file: a step elsewhere cannot be where it stopped.
        return f"the reuse step is in another file, {reuse.path}"
    if not _on_stack(reuse, stop.frames):
        return f"the reuse step, line {reuse.line} column {reuse.column}, is not on the stack"
    match = _NEXT_CALL.search(reuse.again or "")
    if match is not None and int(match.group(1)) not in {line for line, _ in stop.frames}:
        return f"the stop is not in the run of line {match.group(1)}"
    return None


def _on_stack(step: WitnessStep, frames: tuple[Position, ...]) -> bool:
    return any(
        line == step.line and (column is None or column == step.column) for line, column in frames
    )


def _described(program: Program, findings: list[Finding], stop: Stop | None) -> str:
    """The program, each witness and the stop, to read a failure."""
    numbered = "\n".join(
        f"{number:4} {text}" for number, text in enumerate(program.source.splitlines(), 1)
    )
    witnesses = "\n".join(
        f"{f.code} line {f.line} ({f.name}): "
        + ", ".join(f"{s.clause} column {s.column}" for s in f.witness)
        for f in findings
    )
    where = "no stop" if stop is None else f"stopped at {list(stop.frames)}: {stop.message}"
    return f"{program.label}\n{witnesses}\nguard: {where}\n{numbered}"


# -- the guard's runs, in a subprocess ----------------------------------------------------------


@functools.cache
def _stops() -> dict[str, Stop | None]:
    """Each stale program's stop under the guard (None when it ran on), computed once per test
    process: one subprocess imports JAX once for all programs, in a few seconds."""
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for program in STALE:
            path = Path(folder) / (program.label.replace("-", "_") + ".py")
            path.write_text(program.source, encoding="utf-8")
            paths[str(path)] = program.label
        listing = Path(folder) / "paths.json"
        listing.write_text(json.dumps(list(paths)), encoding="utf-8")
        completed = subprocess.run(
            [sys.executable, __file__, str(listing)],
            capture_output=True,
            text=True,
            env={**os.environ, "JAX_PLATFORMS": "cpu"},
            timeout=600,
        )
    if completed.returncode != 0:
        raise RuntimeError(f"the guarded runs failed: {completed.stderr[-3000:]}")
    results: dict[str, Any] = json.loads(completed.stdout.splitlines()[-1])
    return {
        paths[path]: None
        if found is None
        else Stop(tuple((line, column) for line, column in found["frames"]), found["message"])
        for path, found in results.items()
    }


@contextlib.contextmanager
def _first_stop(path: str, stops: list[dict[str, Any]]) -> Iterator[None]:
    """Record the program's frames when a guarded call first raises ``StaleCaptureError``.

    Taken at the raise rather than where the run ends, so that a program catching
    ``RuntimeError`` (the error's base) around the stale call still shows where it stopped."""
    from flake8_jax_closure.guard import StaleCaptureError
    from flake8_jax_closure.runtime.guard.guarded import GuardedFunction

    real_call: Callable[..., Any] = GuardedFunction.__call__

    def call(guarded: GuardedFunction, *args: Any, **kwargs: Any) -> Any:
        try:
            return real_call(guarded, *args, **kwargs)
        except StaleCaptureError as error:
            if not stops:
                # The caller's frames, outermost first; the guard's own are in other files.
                stack = traceback.extract_stack(sys._getframe(1))
                frames = [
                    [f.lineno, getattr(f, "colno", None)] for f in stack if f.filename == path
                ]
                stops.append({"frames": frames, "message": str(error).splitlines()[0]})
            raise

    GuardedFunction.__call__ = call  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        GuardedFunction.__call__ = real_call  # type: ignore[method-assign]


def _guarded_run(path: str) -> dict[str, Any] | None:
    """One run of the program under ``guard.guarding("error")``: where it first stopped."""
    from flake8_jax_closure import guard

    stops: list[dict[str, Any]] = []
    directory = os.path.dirname(path)
    sys.path.insert(0, directory)
    try:
        guard.uninstall()
        with (
            guard.guarding("error"),
            _first_stop(path, stops),
            contextlib.redirect_stdout(io.StringIO()),
        ):
            runpy.run_path(path, run_name="__main__")
    except Exception:  # noqa: BLE001 - only the first stop matters, not how the run ended
        pass
    finally:
        sys.path.remove(directory)
    return stops[0] if stops else None


def main(listing: str) -> None:
    with open(listing, encoding="utf-8") as handle:
        paths: list[str] = json.load(handle)
    print(json.dumps({path: _guarded_run(path) for path in paths}))


# -- the tests ------------------------------------------------------------------------------


def _with_mismatches(chosen: list[Program]) -> list[Any]:
    return [
        pytest.param(
            p, id=p.label, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISMATCHES[p.label])
        )
        if p.label in KNOWN_MISMATCHES
        else pytest.param(p, id=p.label)
        for p in chosen
    ]


def test_known_mismatches_are_stale_programs() -> None:
    assert set(KNOWN_MISMATCHES) <= {program.label for program in STALE}


@pytest.mark.slow
@pytest.mark.jax
@pytest.mark.parametrize("program", _with_mismatches(STALE))
def test_the_witness_ends_where_the_guard_stops(program: Program) -> None:
    pytest.importorskip("jax")
    findings = check_source(program.source, Settings(), with_edits=False)
    assert not [f for f in findings if f.code == "JC900"], findings
    stop = _stops()[program.label]
    assert findings, _described(program, findings, stop)
    problems = [problem for f in findings if (problem := disagreement(f, stop)) is not None]
    assert problems == [], _described(program, findings, stop)


# -- the comparison itself --------------------------------------------------------------------


def _finding(*steps: WitnessStep) -> Finding:
    return Finding("JC102", "", 20, 11, 20, 16, witness=steps)


_TRACE = WitnessStep(Role.TRACE, 32, 13)
_CHANGE = WitnessStep(Role.CHANGE, 31, 8, via="set_value")
_RUN_TWICE = Stop(((36, 4), (32, 13)), "compiled function 'fast' reused a trace")


def test_a_reuse_in_the_run_on_the_stack_agrees() -> None:
    reuse = WitnessStep(Role.REUSE, 32, 13, again="next call of 'epoch()' at line 36")
    assert disagreement(_finding(_TRACE, _CHANGE, reuse), _RUN_TWICE) is None
    # The driver's call of the function that makes the stale call is on the stack too.
    outer = WitnessStep(Role.REUSE, 36, 4, via="epoch")
    assert disagreement(_finding(_TRACE, _CHANGE, outer), _RUN_TWICE) is None
    # Where Python records no column, the line decides.
    assert (
        disagreement(_finding(_TRACE, _CHANGE, reuse), Stop(((36, None), (32, None)), "")) is None
    )


def test_what_the_comparison_refuses() -> None:
    other_column = WitnessStep(Role.REUSE, 32, 4)
    assert disagreement(_finding(_TRACE, _CHANGE, other_column), _RUN_TWICE) == (
        "the reuse step, line 32 column 4, is not on the stack"
    )
    other_run = WitnessStep(Role.REUSE, 32, 13, again="next call of 'epoch()' at line 37")
    assert disagreement(_finding(_TRACE, _CHANGE, other_run), _RUN_TWICE) == (
        "the stop is not in the run of line 37"
    )
    reuse = WitnessStep(Role.REUSE, 32, 13)
    assert disagreement(_finding(_TRACE, _CHANGE, reuse), None) == (
        "the guard did not stop the program"
    )
    assert disagreement(_finding(), _RUN_TWICE) == "the witness is not trace, change, reuse: []"
    elsewhere = WitnessStep(Role.REUSE, 32, 13, path="scripts/train.py")
    assert disagreement(_finding(_TRACE, _CHANGE, elsewhere), _RUN_TWICE) == (
        "the reuse step is in another file, scripts/train.py"
    )


if __name__ == "__main__":
    main(sys.argv[1])
