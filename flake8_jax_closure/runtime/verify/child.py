"""The verifier's child process: run one program with instrumented compile transforms.

Usage: ``python -m flake8_jax_closure.runtime.verify.child SPEC.json``. The spec names the
program file, the entry point, the compile transforms and where to write the JSON report. The
report is written even when the program fails; a program that hangs is killed by the parent.
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


def _module_name(program: str) -> str:
    return os.path.splitext(os.path.basename(program))[0]


def _import_as_module(program: str) -> Any:
    """Import the copy being verified under the module name of the user's file."""
    name = _module_name(program)
    spec = importlib.util.spec_from_file_location(name, program)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {program}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _call_entry(entry: str, program: str) -> None:
    """``function`` (of the verified file) or ``module:function``."""
    module_name, _, function_name = entry.rpartition(":")
    if not module_name or module_name == _module_name(program):
        module = _import_as_module(program)
    else:
        module = importlib.import_module(module_name)
    function = getattr(module, function_name, None)
    if not callable(function):
        raise LookupError(f"the entry '{entry}' names no function of {module.__name__}")
    function()


def run(spec: dict[str, Any]) -> dict[str, Any]:
    report: dict[str, Any] = {"status": "ok", "error": None, "functions": []}
    try:
        from .. import instrument
    except ImportError as error:  # pragma: no cover - the package is importable by construction
        return {**report, "status": "error", "error": str(error)}
    program = os.path.realpath(spec["program"])
    directory = os.path.dirname(program)
    events = _install_guard()
    try:
        recorder = instrument.install(
            lambda filename: os.path.realpath(filename) == program, spec["compile_functions"]
        )
    except ImportError as error:
        return {**report, "status": "error", "error": f"jax is not installed: {error}"}
    try:
        report.update(instrument.platform_description())
    except Exception as error:  # noqa: BLE001 - no such backend, no device for it, or a
        # plugin that fails its own checks (a CPU-only jaxlib asked for CUDA asserts)
        first = str(error).strip().splitlines()
        message = first[0] if first else f"{type(error).__name__} while starting the backend"
        return {**report, "status": "platform-error", "error": message}
    sys.path.insert(0, directory)
    try:
        entry = spec.get("entry")
        pytest_args = spec.get("pytest_args")
        if pytest_args is not None:
            import pytest

            # Tests import the module by name: make that name mean the copy being verified.
            _import_as_module(program)
            # Paths in the arguments are the user's, relative to where verify was run.
            os.chdir(spec.get("cwd") or directory)
            arguments = list(pytest_args)
            if "cacheprovider" not in " ".join(arguments):
                arguments[:0] = ["-p", "no:cacheprovider"]  # write nothing into the project
            code = pytest.main(arguments)
            if code not in (0, 5):
                report.update(status="error", error=f"pytest exited with {int(code)}")
        elif entry:
            _call_entry(entry, program)
        else:
            runpy.run_path(program, run_name="__main__")
    except SystemExit as exit_:
        if exit_.code not in (0, None):
            report.update(status="error", error=f"the program exited with {exit_.code}")
    except BaseException as error:  # noqa: BLE001 - the report carries it to the parent
        report.update(status="error", error=_describe(error, program))
    report["functions"] = [r.as_json() for r in recorder.records.values()]
    report["guard"] = [
        {**event.__dict__, "line": _line_in(event.where, program)}
        for event in events
        if os.path.realpath(event.filename) == program
    ]
    return report


def _line_in(where: str, program: str) -> int | None:
    """The line of ``file:line`` when the file is the program verified."""
    filename, _, line = where.rpartition(":")
    if line.isdigit() and os.path.realpath(filename) == program:
        return int(line)
    return None


def _install_guard() -> list[Any]:
    """The runtime guard, recording: it names the value behind a stale call, also where the
    linter has no finding. Instrumentation goes on top of it."""
    try:
        from ..guard.install import install
        from ..guard.state import SETTINGS

        install("record")
    except Exception:  # noqa: BLE001 - verify works without the guard's names
        return []
    return SETTINGS.events


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as handle:
        spec = json.load(handle)
    report = run(spec)
    with open(spec["report"], "w", encoding="utf-8") as handle:
        json.dump(report, handle)


if __name__ == "__main__":
    main()
