"""The runtime verifier: run the original and the fixed program and judge each finding.

Both programs run from a temporary copy, each in a fresh subprocess with a timeout, with every
compiled function of the file instrumented (see ``instrument``). A finding is *confirmed* when the
original's compiled output differs from its eager evaluation and the fixed program's never does.
The user's file changes only with ``write``, and only when every exercised finding is confirmed.
"""

from __future__ import annotations

import ast
import enum
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .analysis.compiled import CompiledFunctionFinder
from .analysis.scopes import Facts
from .diagnostics import Finding
from .engine import SourceSyntaxError, check_source, fix_source, parse_tree
from .settings import Settings


class Verdict(enum.Enum):
    CONFIRMED = "confirmed"  # original stale, fixed consistent
    NOT_REPRODUCED = "not-reproduced"  # the original never diverged in this run
    NOT_EXERCISED = "not-exercised"  # the compiled function was never called
    REGRESSION = "regression"  # the fixed program raised or diverged
    NO_FIX = "no-fix"


@dataclass
class RunOutcome:
    """One program run: its status and what the instrumentation saw."""

    status: str  # ok, error, timeout
    error: str | None
    platform: str
    device_kind: str
    functions: dict[int, dict[str, Any]]  # first line of the compiled function -> record
    output_tail: str = ""


@dataclass
class FindingReport:
    finding: Finding
    verdict: Verdict
    original: dict[str, Any] | None
    fixed: dict[str, Any] | None
    fixed_output_changed: bool | None = None


@dataclass
class VerifyReport:
    path: str
    platform: str
    device_kind: str
    original: RunOutcome
    fixed: RunOutcome | None
    findings: list[FindingReport] = field(default_factory=list)
    written: bool = False

    @property
    def success(self) -> bool:
        """Every exercised finding confirmed, and at least one exercised."""
        exercised = [r for r in self.findings if r.verdict is not Verdict.NOT_EXERCISED]
        return bool(exercised) and all(r.verdict is Verdict.CONFIRMED for r in exercised)


class VerifyError(Exception):
    """Verification could not run; the message is one line for the user."""


@dataclass(frozen=True)
class VerifyOptions:
    entry: str | None = None
    pytest_args: tuple[str, ...] | None = None
    timeout: float = 300.0
    platform: str | None = None
    require_accelerator: bool = False
    write: bool = False


def compiled_first_lines(source: str, settings: Settings) -> list[tuple[int, int, int]]:
    """(first line as Python reports it, start line, end line) of each compiled function."""
    tree = parse_tree(source)
    finder = CompiledFunctionFinder(Facts(tree, source), settings.compile_functions)
    spans: dict[int, tuple[int, int, int]] = {}
    for site in finder.find():
        function = site.function
        first = function.lineno
        if not isinstance(function, ast.Lambda) and function.decorator_list:
            first = function.decorator_list[0].lineno
        spans[id(function)] = (first, function.lineno, function.end_lineno or function.lineno)
    return sorted(spans.values())


def _owning_function(finding: Finding, spans: Sequence[tuple[int, int, int]]) -> int | None:
    """Index of the innermost compiled function whose span holds the finding's line."""
    holding = [
        (end - start, index)
        for index, (_, start, end) in enumerate(spans)
        if start <= finding.line <= end
    ]
    return min(holding)[1] if holding else None


def verify_file(path: str, settings: Settings, options: VerifyOptions) -> VerifyReport:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        source = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise VerifyError(f"{path}: cannot read: {error}") from error
    try:
        findings = check_source(source, settings)
        outcome = fix_source(source, settings)
        original_spans = compiled_first_lines(source, settings)
        fixed_spans = compiled_first_lines(outcome.source, settings)
    except SourceSyntaxError as error:
        raise VerifyError(f"{path}: syntax error: {error}") from error

    with tempfile.TemporaryDirectory(prefix="jc-verify-") as workspace:
        original_run = _run_program(
            path, source, os.path.join(workspace, "original"), settings, options
        )
        _check_platform(original_run, options)
        fixed_run = None
        if outcome.fixed:
            fixed_run = _run_program(
                path, outcome.source, os.path.join(workspace, "fixed"), settings, options
            )

    report = VerifyReport(
        path, original_run.platform, original_run.device_kind, original_run, fixed_run
    )
    fixed_names = {(f.line, f.name) for f in outcome.fixed}
    for finding in findings:
        index = _owning_function(finding, original_spans)
        original_record = (
            original_run.functions.get(original_spans[index][0]) if index is not None else None
        )
        fixed_record = None
        if index is not None and fixed_run is not None and len(fixed_spans) == len(original_spans):
            fixed_record = fixed_run.functions.get(fixed_spans[index][0])
        applied = (finding.line, finding.name) in fixed_names
        report.findings.append(_judge(finding, applied, original_record, fixed_record, fixed_run))
    if options.write and report.success and outcome.fixed:
        from .files import read_source, write_source

        write_source(read_source(path), outcome.source)
        report.written = True
    return report


def _judge(
    finding: Finding,
    applied: bool,
    original: dict[str, Any] | None,
    fixed: dict[str, Any] | None,
    fixed_run: RunOutcome | None,
) -> FindingReport:
    if not applied:
        return FindingReport(finding, Verdict.NO_FIX, original, None)
    if not original or not original["calls"]:
        return FindingReport(finding, Verdict.NOT_EXERCISED, original, fixed)
    changed = None
    if fixed is not None:
        outputs = [o for o in fixed["compiled_outputs"] if o is not None]
        changed = len(set(outputs)) > 1
    if fixed_run is None or fixed_run.status != "ok" or fixed is None or fixed["divergent_calls"]:
        return FindingReport(finding, Verdict.REGRESSION, original, fixed, changed)
    if not original["divergent_calls"]:
        return FindingReport(finding, Verdict.NOT_REPRODUCED, original, fixed, changed)
    return FindingReport(finding, Verdict.CONFIRMED, original, fixed, changed)


def _check_platform(run: RunOutcome, options: VerifyOptions) -> None:
    if options.require_accelerator and run.platform in ("cpu", ""):
        raise VerifyError(
            f"an accelerator is required, but JAX runs on {run.platform or 'nothing'}"
        )


def _run_program(
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
        environment["JAX_PLATFORMS"] = options.platform
    try:
        completed = subprocess.run(
            [sys.executable, "-m", "flake8_jax_closure.verify_child", spec_path],
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
    )


def _tail(output: str | bytes | None, lines: int = 12) -> str:
    if isinstance(output, bytes):
        output = output.decode("utf-8", "replace")
    return "\n".join((output or "").splitlines()[-lines:])


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


# -- the report ------------------------------------------------------------------------------------


def _outputs(record: dict[str, Any] | None) -> str:
    if not record:
        return "-"
    values = ["?" if v is None else repr(float(v)) for v in record["compiled_outputs"]]
    more = ", ..." if values and record["calls"] > len(values) else ""
    return "[" + ", ".join(values) + more + "]"


def _run_line(label: str, record: dict[str, Any] | None) -> str:
    if not record:
        return f"  {label}: never called"
    divergent = record["divergent_calls"]
    if record.get("failed_calls"):
        detail = f"the compiled call raised in {record['failed_calls']} of {record['calls']} calls"
    elif divergent:
        detail = (
            f"compiled differs from eager in {len(divergent)} of {record['calls']} calls "
            f"(first at call {divergent[0]}, "
            f"largest difference {float(record['largest_difference'])!r})"
        )
    else:
        detail = f"compiled equals eager in all {record['calls']} calls"
    return f"  {label}: {detail}; compiled outputs {_outputs(record)}"


def render_text(report: VerifyReport) -> str:
    device = f"{report.platform}: {report.device_kind}" if report.platform else "unknown device"
    lines = [f"verify {report.path} on {device}"]
    for run, label in ((report.original, "original"), (report.fixed, "fixed")):
        if run is not None and run.status != "ok":
            lines.append(f"{label} program {run.status}: {run.error}")
    for item in report.findings:
        f = item.finding
        lines.append(
            f"{report.path}:{f.line}:{f.column + 1}: {f.code} '{f.function}' reads '{f.name}': "
            f"{item.verdict.value}"
        )
        if item.verdict is Verdict.NO_FIX:
            reason = f.no_fix_reason or (
                f"the fix is {f.fix.applicability.value}" if f.fix else "no fix"
            )
            lines.append(f"  no fix applied: {reason}")
        lines.append(_run_line("original", item.original))
        if item.verdict is not Verdict.NO_FIX:
            lines.append(_run_line("fixed", item.fixed))
            if item.fixed_output_changed is not None:
                followed = (
                    "changed between calls"
                    if item.fixed_output_changed
                    else "did not change between calls"
                )
                lines.append(f"  fixed compiled output {followed}")
    if not report.findings:
        lines.append("no findings to verify")
    if report.written:
        lines.append(f"wrote the fixed program to {report.path}")
    return "\n".join(lines) + "\n"


def render_json(report: VerifyReport) -> str:
    def run(outcome: RunOutcome | None) -> dict[str, Any] | None:
        if outcome is None:
            return None
        return {
            "status": outcome.status,
            "error": outcome.error,
            "output_tail": outcome.output_tail,
        }

    data = {
        "path": report.path,
        "platform": report.platform,
        "device_kind": report.device_kind,
        "original_run": run(report.original),
        "fixed_run": run(report.fixed),
        "written": report.written,
        "success": report.success,
        "findings": [
            {
                "code": item.finding.code,
                "line": item.finding.line,
                "column": item.finding.column + 1,
                "function": item.finding.function,
                "name": item.finding.name,
                "verdict": item.verdict.value,
                "fix": item.finding.fix.applicability.value if item.finding.fix else None,
                "original": item.original,
                "fixed": item.fixed,
                "fixed_output_changed": item.fixed_output_changed,
            }
            for item in report.findings
        ],
    }
    return json.dumps(data, indent=2) + "\n"


def jax_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("jax") is not None
