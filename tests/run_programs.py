"""Run many small JAX programs in one process, compiled and with ``jax.disable_jit()``.

Usage: ``python run_programs.py PATHS.json`` prints a JSON object: path -> [compiled output,
eager output] (or the error). One process saves importing JAX once per program; each run
makes new function objects, so no compilation cache carries over between runs.
"""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import sys


def _run(path: str, disable_jit: bool) -> str:
    import jax

    output = io.StringIO()
    context = jax.disable_jit() if disable_jit else contextlib.nullcontext()
    try:
        with context, contextlib.redirect_stdout(output):
            runpy.run_path(path, run_name="__main__")
    except Exception as error:  # noqa: BLE001 - the caller compares outputs, errors included
        return f"{output.getvalue()}error: {type(error).__name__}: {error}"
    return output.getvalue()


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        paths = json.load(handle)
    results = {path: [_run(path, False), _run(path, True)] for path in paths}
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
