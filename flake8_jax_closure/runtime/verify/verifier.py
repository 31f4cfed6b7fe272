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
import re
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
from .guard.errors import kind_phrase
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
    # What the runtime guard saw: stale calls, each naming the compiled function and the value.
    guard: list[dict[str, Any]] = field(default_factory=list)


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
    # What to try when nothing ran (a file without a ``__main__`` block).
    hint: str | None = None
    # Stale calls the runtime guard saw whose value no finding names.
    unexplained: list[dict[str, Any]] = field(default_factory=list)

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


@dataclass(frozen=True)
class CompiledSpan:
    first_line: int  # as Python reports it: the first decorator's line
    start: int
    end: int
    name: str  # the def's name ("<lambda>" for lambdas)


def compiled_spans(source: str, settings: Settings) -> list[CompiledSpan]:
    """Where each compiled function of the source is, in source order."""
    tree = parse_tree(source)
    finder = CompiledFunctionFinder(Facts(tree, source), settings.compile_functions)
    spans: dict[int, CompiledSpan] = {}
    for site in finder.find():
        function = site.function
        first = function.lineno
        name = "<lambda>"
        if not isinstance(function, ast.Lambda):
            name = function.name
            if function.decorator_list:
                first = function.decorator_list[0].lineno
        end = function.end_lineno or function.lineno
        spans[id(function)] = CompiledSpan(first, function.lineno, end, name)
    return sorted(spans.values(), key=lambda span: (span.start, span.first_line))


# The fix renames a compiled function ``f`` to ``_f_compiled`` (``_f_compiled_2``, ...) or,
# compiled by call, ``_f_impl``.
_FIXED_NAME = re.compile(r"_(?P<name>.+)_(?:compiled|impl)(?:_\d+)?")


def _original_name(fixed_name: str) -> str:
    """The name a fixed function had: leading underscores aside, since ``_step`` may become
    ``_step_impl``."""
    match = _FIXED_NAME.fullmatch(fixed_name)
    return (match.group("name") if match else fixed_name).strip("_")


def pair_spans(
    original: Sequence[CompiledSpan], fixed: Sequence[CompiledSpan]
) -> dict[int, CompiledSpan]:
    """Each original compiled function's counterpart in the fixed program: the k-th function
    of a name pairs with the k-th fixed function of that name or its fixed name."""
    by_name: dict[str, list[CompiledSpan]] = {}
    for span in fixed:
        by_name.setdefault(_original_name(span.name), []).append(span)
    seen: dict[str, int] = {}
    pairs: dict[int, CompiledSpan] = {}
    for index, span in enumerate(original):
        rank = seen.get(span.name, 0)
        seen[span.name] = rank + 1
        candidates = by_name.get(span.name.strip("_"), [])
        if rank < len(candidates):
            pairs[index] = candidates[rank]
    return pairs


def _enclosing_function_line(source: str, line: int) -> int | None:
    """The first line (as Python reports it) of the innermost def around ``line``."""
    best: tuple[int, int] | None = None
    for node in ast.walk(parse_tree(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            end = node.end_lineno or node.lineno
            if node.lineno <= line <= end and (best is None or end - node.lineno < best[0]):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                best = (end - node.lineno, first)
    return best[1] if best else None


def _renamed_function_line(source: str, name: str) -> int | None:
    """The first line of the def the fix made of ``name`` (``_count_impl`` for ``count``)."""
    for node in ast.walk(parse_tree(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name != name:
            if _FIXED_NAME.fullmatch(node.name) and _original_name(node.name) == name.strip("_"):
                return min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return None


def _owning_function(finding: Finding, spans: Sequence[CompiledSpan]) -> int | None:
    """Index of the innermost compiled function whose span holds the finding's line."""
    holding = [
        (span.end - span.start, index)
        for index, span in enumerate(spans)
        if span.start <= finding.line <= span.end
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
        original_spans = compiled_spans(source, settings)
        pairs = pair_spans(original_spans, compiled_spans(outcome.source, settings))
    except SourceSyntaxError as error:
        raise VerifyError(f"{path}: syntax error: {error}") from error

    with tempfile.TemporaryDirectory(prefix="jc-verify-") as workspace:
        original_run = _run_program(
            path, source, os.path.join(workspace, "original"), settings, options
        )
        _check_run("original", original_run, options)
        fixed_run = None
        if outcome.fixed:
            fixed_run = _run_program(
                path, outcome.source, os.path.join(workspace, "fixed"), settings, options
            )
            _check_run("fixed", fixed_run, options)

    report = VerifyReport(
        path, original_run.platform, original_run.device_kind, original_run, fixed_run
    )
    fixed_names = {(f.line, f.name) for f in outcome.fixed}
    for finding in findings:
        index = _owning_function(finding, original_spans)
        if index is not None:
            first_line: int | None = original_spans[index].first_line
        else:
            # Compiled where the analysis sees no function to fix (``jax.jit(self._step)``):
            # the function around the finding is what the instrumentation saw.
            first_line = _enclosing_function_line(source, finding.line)
        original_record = original_run.functions.get(first_line) if first_line else None
        fixed_record = None
        if index is not None and fixed_run is not None and index in pairs:
            fixed_record = fixed_run.functions.get(pairs[index].first_line)
        elif index is None and fixed_run is not None:
            # The fix compiles the method's ``_impl``: the function the fixed run saw.
            fixed_line = _renamed_function_line(outcome.source, finding.function)
            fixed_record = fixed_run.functions.get(fixed_line) if fixed_line else None
        applied = (finding.line, finding.name) in fixed_names
        report.findings.append(_judge(finding, applied, original_record, fixed_record, fixed_run))
    report.hint = _hint(source, original_run, options)
    report.unexplained = _unexplained(original_run.guard, findings, original_spans)
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
        digests = [d for d in fixed["output_digests"] if d is not None]
        changed = len(set(digests)) > 1 if digests else None
    if fixed_run is None or fixed_run.status != "ok" or fixed is None or fixed["divergent_calls"]:
        return FindingReport(finding, Verdict.REGRESSION, original, fixed, changed)
    if not original["divergent_calls"]:
        return FindingReport(finding, Verdict.NOT_REPRODUCED, original, fixed, changed)
    return FindingReport(finding, Verdict.CONFIRMED, original, fixed, changed)


def _unexplained(
    events: list[dict[str, Any]], findings: list[Finding], spans: Sequence[CompiledSpan]
) -> list[dict[str, Any]]:
    """The guard's stale values that no finding of the same compiled function names
    (``CONFIG["clip"]`` is named by a finding on ``CONFIG``). The compiled function is the
    one whose first line the guard reports (a lambda's name is its variable's for findings)."""

    def named(event: dict[str, Any], finding: Finding) -> bool:
        value, name = event["value"], finding.name
        if not (value == name or value.startswith((f"{name}.", f"{name}["))):
            return False
        index = _owning_function(finding, spans)
        if index is not None and spans[index].first_line == event["first_line"]:
            return True
        return finding.function == str(event["function"])

    return [e for e in events if not any(named(e, finding) for finding in findings)]


def _check_run(label: str, run: RunOutcome, options: VerifyOptions) -> None:
    """Runs that say nothing about the findings are errors, not verdicts."""
    if run.status == "platform-error":
        raise VerifyError(f"JAX cannot run on platform '{options.platform}': {run.error}")
    if run.status == "timeout":
        raise VerifyError(
            f"the {label} program ran past {options.timeout:g} s and was stopped; raise "
            "--timeout, or verify a shorter run with --entry"
        )
    if options.require_accelerator and run.platform in ("cpu", ""):
        raise VerifyError(
            f"an accelerator is required, but JAX runs on {run.platform or 'nothing'}"
        )


def _hint(source: str, run: RunOutcome, options: VerifyOptions) -> str | None:
    """What to try when the run called no compiled function at all."""
    if run.status != "ok" or any(r["calls"] for r in run.functions.values()):
        return None
    if options.pytest_args is not None:
        return "the tests called no compiled function of the file; select tests that do"
    if options.entry is not None:
        return f"'{options.entry}' called no compiled function of the file"
    where = (
        "its '__main__' block calls no compiled function"
        if re.search(r"""__name__\s*==\s*["']__main__["']""", source)
        else "the file has no 'if __name__ == \"__main__\":' block"
    )
    return (
        f"nothing called a compiled function: {where}; name a function that does with "
        "--entry FUNCTION (or --entry module:function), or run tests with -- pytest ARGS"
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
        data.get("guard", []),
    )


def _tail(output: str | bytes | None, lines: int = 12) -> str:
    if isinstance(output, bytes):
        output = output.decode("utf-8", "replace")
    return "\n".join((output or "").splitlines()[-lines:])


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


# -- the report ------------------------------------------------------------------------------------


def _outputs(record: dict[str, Any]) -> str:
    """Each distinct compiled output, described, with the calls that returned it."""
    digests: list[str | None] = record["output_digests"]
    calls: dict[str, list[int]] = {}
    for number, digest in enumerate(digests, start=1):
        if digest is not None:
            calls.setdefault(digest, []).append(number)
    if not calls:
        return "compiled outputs: none comparable"
    described = []
    for digest, numbers in calls.items():
        description = record["descriptions"].get(digest)
        if description is None:
            continue
        described.append(f"{description} (calls {_call_numbers(numbers)})")
    kept = f" of the first {len(digests)}" if record["calls"] > len(digests) else ""
    count = f"{len(calls)} distinct in {len(digests)} calls{kept}"
    more = "; ..." if len(described) < len(calls) else ""
    return f"compiled outputs, {count}: " + "; ".join(described) + more


def _call_numbers(numbers: list[int]) -> str:
    """``1-3, 5``: the calls that returned one output."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    parts = [str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs]
    shown = ", ".join(parts[:6])
    return shown + (", ..." if len(parts) > 6 else "")


def _run_lines(label: str, record: dict[str, Any] | None) -> list[str]:
    if not record or not record["calls"]:
        nested = record.get("nested_calls", 0) if record else 0
        if nested:
            return [
                f"  {label}: called only inside other compiled calls ({nested} times), which "
                "are the ones compared"
            ]
        return [f"  {label}: never called"]
    return [f"  {label}: {_run_detail(record)}", f"    {_outputs(record)}"]


def _run_detail(record: dict[str, Any]) -> str:
    divergent = record["divergent_calls"]
    if record.get("failed_calls"):
        detail = f"the compiled call raised in {record['failed_calls']} of {record['calls']} calls"
    elif divergent:
        detail = (
            f"compiled differs from eager in {len(divergent)} of {record['calls']} calls "
            f"(first at call {divergent[0]}, "
            f"largest difference {float(record['largest_difference']):.6g})"
        )
    else:
        detail = f"compiled equals eager in all {record['calls']} calls"
    return detail


def render_text(report: VerifyReport) -> str:
    device = report.platform or "unknown device"
    if report.platform and report.device_kind.lower() not in ("", report.platform.lower()):
        device = f"{report.platform}: {report.device_kind}"  # ``gpu: NVIDIA H200``; ``cpu``
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
        lines.extend(_run_lines("original", item.original))
        if item.verdict is not Verdict.NO_FIX:
            lines.extend(_run_lines("fixed", item.fixed))
            if item.fixed_output_changed is not None:
                followed = (
                    "changed between calls"
                    if item.fixed_output_changed
                    else "did not change between calls"
                )
                lines.append(f"  fixed compiled output {followed}")
    if not report.findings:
        lines.append("no findings to verify")
    for event in report.unexplained:
        where = event["where"]
        if event.get("line") is not None:
            where = f"{report.path}:{event['line']}"
        lines.append(
            f"{report.path}:{event['first_line']}: guard: compiled '{event['function']}' "
            f"reused a trace that read {event['value']} ({kind_phrase(event['kind'])}, at "
            f"{where}), which had changed: {event['summary']} ({event['code']}; no finding "
            "names it)"
        )
    if report.hint is not None and report.findings:
        lines.append(f"hint: {report.hint}")
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
        "hint": report.hint,
        "guard": report.unexplained,
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


def jax_platforms(platform: str) -> str:
    """``JAX_PLATFORMS`` for ``--platform``: current JAX reads ``gpu`` there as CUDA *and* ROCm
    and stops when either plugin is missing, so ``gpu`` means NVIDIA's (``rocm`` for AMD's)."""
    return "cuda" if platform == "gpu" else platform
