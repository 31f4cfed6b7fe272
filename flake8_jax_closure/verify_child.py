"""The verifier's child process: run one program with instrumented compile transforms.

Usage: ``python -m flake8_jax_closure.verify_child SPEC.json``. The spec names the program file,
the entry point, the compile transforms and where to write the JSON report. The report is written
even when the program fails; a program that hangs is killed by the parent.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import runpy
import sys
import traceback
from typing import Any


def _describe(error: BaseException, program: str) -> str:
    """One line: the exception and the program line that led to it."""
    if isinstance(error, ModuleNotFoundError) and error.name:
        return f"the program needs '{error.name}', which is not installed"
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if os.path.realpath(frame.filename) == program
    ]
    where = f" (line {frames[-1].lineno})" if frames else ""
    message = str(error).strip().splitlines()
    return f"{type(error).__name__}: {message[0] if message else ''}{where}"


def _import_as_module(program: str) -> None:
    name = os.path.splitext(os.path.basename(program))[0]
    spec = importlib.util.spec_from_file_location(name, program)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)


def run(spec: dict[str, Any]) -> dict[str, Any]:
    report: dict[str, Any] = {"status": "ok", "error": None, "functions": []}
    try:
        from . import instrument
    except ImportError as error:  # pragma: no cover - the package is importable by construction
        return {**report, "status": "error", "error": str(error)}
    program = os.path.realpath(spec["program"])
    directory = os.path.dirname(program)
    try:
        recorder = instrument.install(
            lambda filename: os.path.realpath(filename) == program, spec["compile_functions"]
        )
        report.update(instrument.platform_description())
    except ImportError as error:
        return {**report, "status": "error", "error": f"jax is not installed: {error}"}
    sys.path.insert(0, directory)
    try:
        entry = spec.get("entry")
        pytest_args = spec.get("pytest_args")
        if pytest_args is not None:
            import pytest

            # Tests import the module by name: make that name mean the copy being verified.
            _import_as_module(program)
            code = pytest.main(list(pytest_args))
            if code not in (0, 5):
                report.update(status="error", error=f"pytest exited with {int(code)}")
        elif entry:
            module_name, _, function_name = entry.partition(":")
            module = importlib.import_module(module_name)
            getattr(module, function_name)()
        else:
            runpy.run_path(program, run_name="__main__")
    except SystemExit as exit_:
        if exit_.code not in (0, None):
            report.update(status="error", error=f"the program exited with {exit_.code}")
    except BaseException as error:  # noqa: BLE001 - the report carries it to the parent
        report.update(status="error", error=_describe(error, program))
    report["functions"] = [r.as_json() for r in recorder.records.values()]
    return report


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        spec = json.load(handle)
    report = run(spec)
    with open(spec["report"], "w", encoding="utf-8") as handle:
        json.dump(report, handle)


if __name__ == "__main__":
    main()
