"""Run one program in a fresh subprocess (``child``) with a timeout, and read its report."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ...settings import Settings
from .report import RunOutcome, VerifyOptions

# The child process, as ``python -m`` runs it.
CHILD_MODULE = "flake8_jax_closure.runtime.verify.child"


def run_program(
    path: str, source: str, folder: str, settings: Settings, options: VerifyOptions
) -> RunOutcome:
    os.makedirs(folder)
    program = os.path.join(folder, os.path.basename(path))
    with open(program, "w", encoding="utf-8") as handle:
        handle.write(source)
    report_path = os.path.join(folder, "report.json")
    spec = {
        "program": program,
        "entry": options.entry,
        "pytest_args": list(options.pytest_args) if options.pytest_args is not None else None,
        "compile_functions": sorted(settings.compile_functions),
        "report": report_path,
        # pytest's arguments are paths relative to where the user ran verify.
        "cwd": os.getcwd(),
    }
    spec_path = os.path.join(folder, "spec.json")
    with open(spec_path, "w", encoding="utf-8") as handle:
        json.dump(spec, handle)
    environment = dict(os.environ)
    # The program's own folder comes second, so that its sibling modules import as usual.
    directory = os.path.dirname(os.path.abspath(path))
    environment["PYTHONPATH"] = os.pathsep.join(
        p for p in (directory, environment.get("PYTHONPATH", "")) if p
    )
    if options.platform:
        environment["JAX_PLATFORMS"] = jax_platforms(options.platform)
    try:
        completed = subprocess.run(
            [sys.executable, "-m", CHILD_MODULE, spec_path],
            cwd=folder,
            env=environment,
            capture_output=True,
            text=True,
            timeout=options.timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as expired:
        return RunOutcome(
            "timeout",
            f"the program ran past {options.timeout:g} s and was stopped",
            "",
            "",
            {},
            _tail(expired.stdout),
        )
    try:
        with open(report_path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        error = _last_line(completed.stderr) or f"the program exited with {completed.returncode}"
        return RunOutcome("error", error, "", "", {}, _tail(completed.stdout))
    functions = {record["first_line"]: record for record in data["functions"]}
    return RunOutcome(
        data["status"],
        data["error"],
        data.get("platform", ""),
        data.get("device_kind", ""),
        functions,
        _tail(completed.stdout),
        data.get("guard", []),
    )


def _tail(output: str | bytes | None, lines: int = 12) -> str:
    if isinstance(output, bytes):
        output = output.decode("utf-8", "replace")
    return "\n".join((output or "").splitlines()[-lines:])


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def jax_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("jax") is not None


def jax_platforms(platform: str) -> str:
    """``JAX_PLATFORMS`` for ``--platform``: current JAX reads ``gpu`` there as CUDA *and* ROCm
    and stops when either plugin is missing, so ``gpu`` means NVIDIA's (``rocm`` for AMD's)."""
    return "cuda" if platform == "gpu" else platform
