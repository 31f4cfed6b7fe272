"""The guard against ground truth: programs run compiled, eagerly and guarded.

A program is *stale* when its compiled output differs from its output under
``jax.disable_jit()``, and *safe* when they agree. For every program:

- ``--mode error`` stops a stale program exactly where its output first departs from the eager
  output (everything printed before is right, and nothing more is printed), and lets a safe
  program run to the end with its usual output;
- ``--mode retrace`` makes every program print its eager output;
- ``--mode warn`` warns on stale programs only.

``python tests/guard_corpus.py PROGRAM...`` runs the programs (each in this one process, for
speed: every run makes new function objects, so no trace is shared between runs) and prints
the failures; ``failures(paths)`` does the same for tests.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import subprocess
import sys
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def _differ(compiled: Any, eager: Any) -> bool:
    """Values (within ``verify``'s tolerance), shapes or dtypes differ."""
    import jax
    import numpy as np

    from flake8_jax_closure.runtime.instrument import difference_between

    if difference_between(compiled, eager) > 0:
        return True
    leaves = jax.tree_util.tree_leaves(compiled), jax.tree_util.tree_leaves(eager)
    pairs = zip(*leaves, strict=False)
    # Eager code may return Python numbers where compiled code returns arrays: only arrays
    # on both sides have dtypes to compare.
    return any(
        np.dtype(a.dtype) != np.dtype(b.dtype)
        for a, b in pairs
        if hasattr(a, "dtype") and hasattr(b, "dtype")
    )


def _unguarded(guarded: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What JAX alone returns for the call (compiled functions it calls return stale results
    too, as they would without the guard)."""
    from flake8_jax_closure.runtime.guard.state import SETTINGS

    mode, SETTINGS.mode = SETTINGS.mode, "warn"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return guarded._compiled(*args, **kwargs)
    finally:
        SETTINGS.mode = mode


@contextlib.contextmanager
def _state_kept(guarded: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Iterator[None]:
    """The eager evaluation leaves the program as it found it: what the function stores to
    (``self.n += 1``, a global) is put back, so that the compiled call runs on the same state."""
    function = guarded._function
    holders = [getattr(function, "__self__", None), *args, *kwargs.values()]
    namespaces = [
        vars(holder)
        for holder in holders
        if isinstance(getattr(holder, "__dict__", None), dict) and not isinstance(holder, type)
    ]
    plain = getattr(function, "__func__", function)
    if isinstance(getattr(plain, "__globals__", None), dict):
        namespaces.append(plain.__globals__)
    saved = [(namespace, dict(namespace)) for namespace in namespaces]
    try:
        yield
    finally:
        for namespace, before in saved:
            for name in set(namespace) - set(before):
                del namespace[name]
            namespace.update(before)


class _CallJudge:
    """Compares each outermost guarded call with its eager evaluation, as ``verify`` does:
    which calls were stale, and at which call the guard raised."""

    def __init__(self) -> None:
        self.calls = 0
        self.divergent: list[int] = []
        self.raised_at: int | None = None
        self.raised_rightly: bool | None = None
        self.depth = 0

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        import jax

        from flake8_jax_closure.guard import StaleCaptureError
        from flake8_jax_closure.runtime.guard.guarded import GuardedFunction
        from flake8_jax_closure.runtime.instrument import _FreshTraces

        real_call = GuardedFunction.__call__
        judge = self
        # checkpoint caches its traces too, even without jit: each eager evaluation traces in
        # a fresh context, as verify's do.
        fresh = _FreshTraces()

        def call(guarded: GuardedFunction, *args: Any, **kwargs: Any) -> Any:
            if judge.depth:
                return real_call(guarded, *args, **kwargs)
            judge.depth += 1
            judge.calls += 1
            number = judge.calls
            try:
                try:
                    with jax.disable_jit(), fresh(), _state_kept(guarded, args, kwargs):
                        eager = real_call(guarded, *args, **kwargs)
                except Exception:  # noqa: BLE001 - the compiled call shows the real error
                    return real_call(guarded, *args, **kwargs)
                try:
                    compiled = real_call(guarded, *args, **kwargs)
                except StaleCaptureError:
                    judge.raised_at = number
                    # What the call would have returned: was it really stale?
                    unguarded = _unguarded(guarded, args, kwargs)
                    judge.raised_rightly = _differ(unguarded, eager)
                    raise
                if _differ(compiled, eager):
                    judge.divergent.append(number)
                return compiled
            finally:
                judge.depth -= 1

        GuardedFunction.__call__ = call  # type: ignore[method-assign]
        try:
            yield
        finally:
            GuardedFunction.__call__ = real_call  # type: ignore[method-assign]


def _run(path: str, judge: _CallJudge | None = None) -> dict[str, Any]:
    """One run of the program in this process: its output, error and warnings."""
    from flake8_jax_closure.guard import StaleCaptureError, StaleCaptureWarning

    output = io.StringIO()
    result: dict[str, Any] = {"error": None, "stale": None, "warnings": []}
    watching = judge.watching() if judge is not None else contextlib.nullcontext()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(output), watching:
                runpy.run_path(path, run_name="__main__")
        except StaleCaptureError as error:
            result["stale"] = str(error)
        except Exception as error:  # noqa: BLE001 - compared like output
            result["error"] = f"{type(error).__name__}: {error}"
    if judge is not None:
        result["calls"] = judge.calls
        result["divergent"] = judge.divergent
        result["raised_at"] = judge.raised_at
        result["raised_rightly"] = judge.raised_rightly
    result["warnings"] = [
        str(w.message) for w in caught if issubclass(w.category, StaleCaptureWarning)
    ]
    result["stdout"] = output.getvalue()
    return result


def run_all(paths: Sequence[str]) -> dict[str, dict[str, Any]]:
    import jax

    from flake8_jax_closure import guard

    results: dict[str, dict[str, Any]] = {}
    for path in paths:
        directory = os.path.dirname(os.path.abspath(path))
        sys.path.insert(0, directory)
        try:
            guard.uninstall()
            runs = {"compiled": _run(path)}
            with jax.disable_jit():
                runs["eager"] = _run(path)
            with guard.guarding("error"):
                runs["error"] = _run(path, _CallJudge())
            for mode in ("warn", "retrace"):
                with guard.guarding(mode):
                    runs[mode] = _run(path)
            results[path] = runs
        finally:
            sys.path.remove(directory)
    return results


def judge(path: str, runs: dict[str, dict[str, Any]]) -> list[str]:
    """What the guard did wrong on one program (empty when nothing)."""
    compiled, eager = runs["compiled"], runs["eager"]
    problems = []
    if eager["error"] or compiled["error"]:
        return []  # not a program to judge the guard on (counted apart)
    stale = compiled["stdout"] != eager["stdout"]
    error, warn, retrace = runs["error"], runs["warn"], runs["retrace"]
    if error["divergent"]:
        problems.append(
            f"{path}: calls {error['divergent']} returned stale results under --mode error"
        )
    if error["raised_at"] is not None and not error["raised_rightly"]:
        problems.append(
            f"{path}: --mode error raised at call {error['raised_at']}, whose result was right:"
            f" {error['stale']}"
        )
    if not eager["stdout"].startswith(error["stdout"]):
        problems.append(f"{path}: --mode error printed {error['stdout']!r}")
    if stale:
        if error["stale"] is None:
            problems.append(f"{path}: stale, but --mode error did not stop it")
        if not warn["warnings"]:
            problems.append(f"{path}: stale, but --mode warn did not warn")
    else:
        if warn["warnings"] and error["stale"] is None:
            problems.append(f"{path}: safe, but --mode warn warned: {warn['warnings'][0]}")
        if error["stale"] is None and error["stdout"] != compiled["stdout"]:
            problems.append(f"{path}: safe, but the guarded output differs")
    if warn["error"] or warn["stale"] or warn["stdout"] != compiled["stdout"]:
        problems.append(
            f"{path}: --mode warn changed the program: {warn['error'] or warn['stale']} "
            f"(printed {warn['stdout']!r})"
        )
    if retrace["stdout"] != eager["stdout"] or retrace["error"] or retrace["stale"]:
        problems.append(
            f"{path}: --mode retrace printed {retrace['stdout']!r} "
            f"({retrace['error'] or 'no error'}), eager prints {eager['stdout']!r}"
        )
    return problems


def run_apart(paths: Sequence[Path | str], timeout: float = 1800) -> dict[str, Any]:
    """Run ``paths`` in one subprocess: each program's runs, by path."""
    completed = subprocess.run(
        [sys.executable, str(HERE / "guard_corpus.py"), "--json", *map(str, paths)],
        capture_output=True,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=timeout,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"the corpus run failed: {completed.stderr[-3000:]}")
    results: dict[str, Any] = json.loads(completed.stdout.splitlines()[-1])
    return results


def failures(paths: Sequence[Path | str], timeout: float = 1800) -> tuple[list[str], Counter[str]]:
    """Run ``paths`` in one subprocess: the problems found, and how many programs were stale,
    safe, or failed without the guard."""
    try:
        results = run_apart(paths, timeout)
    except RuntimeError as error:
        return [str(error)], Counter()
    problems = [problem for path, runs in results.items() for problem in judge(path, runs)]
    return problems, Counter(kind(runs) for runs in results.values())


def kind(runs: dict[str, dict[str, Any]]) -> str:
    """``failing`` (without the guard), ``stale`` or ``safe``."""
    if runs["compiled"]["error"] or runs["eager"]["error"]:
        return "failing"
    return "stale" if runs["compiled"]["stdout"] != runs["eager"]["stdout"] else "safe"


def main(argv: Sequence[str]) -> int:
    as_json = argv[:1] == ["--json"]
    paths = list(argv[1:] if as_json else argv)
    results = run_all(paths)
    if as_json:
        print(json.dumps(results))
        return 0
    problems = [problem for path, runs in results.items() for problem in judge(path, runs)]
    counts = Counter(kind(runs) for runs in results.values())
    print("\n".join(problems) or "no problem")
    print(", ".join(f"{count} {name}" for name, count in sorted(counts.items())))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
