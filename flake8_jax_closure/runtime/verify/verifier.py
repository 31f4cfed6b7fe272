"""Verify a file: run the original and the fixed program, and judge each finding.

A finding is *confirmed* when the original's compiled output differs from its eager evaluation
and the fixed program's never does. The user's file changes only with ``write``, and only when
every exercised finding is confirmed.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from typing import Any

from ...diagnostics import Finding
from ...engine import SourceSyntaxError
from ...settings import Settings
from .analysis import (
    CompiledSpan,
    analyse,
    enclosing_function_line,
    introduced_function_line,
    owning_function,
)
from .programs import run_program
from .report import FindingReport, RunOutcome, Verdict, VerifyError, VerifyOptions, VerifyReport


def verify_file(path: str, settings: Settings, options: VerifyOptions) -> VerifyReport:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        source = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise VerifyError(f"{path}: cannot read: {error}") from error
    try:
        analysed = analyse(source, settings)
    except SourceSyntaxError as error:
        raise VerifyError(f"{path}: syntax error: {error}") from error
    findings, outcome = analysed.findings, analysed.fix
    original_spans, pairs = analysed.spans, analysed.pairs

    with tempfile.TemporaryDirectory(prefix="jc-verify-") as workspace:
        original_run = run_program(
            path, source, os.path.join(workspace, "original"), settings, options
        )
        _check_run("original", original_run, options)
        fixed_run = None
        if outcome.fixed:
            fixed_run = run_program(
                path, outcome.source, os.path.join(workspace, "fixed"), settings, options
            )
            _check_run("fixed", fixed_run, options)

    report = VerifyReport(
        path, original_run.platform, original_run.device_kind, original_run, fixed_run
    )
    fixed_names = {(f.line, f.name) for f in outcome.fixed}
    for finding in findings:
        index = owning_function(finding, original_spans)
        if index is not None:
            first_line: int | None = original_spans[index].first_line
        else:
            # Compiled where the analysis sees no function to fix (``jax.jit(self._step)``):
            # the function around the finding is what the instrumentation saw.
            first_line = enclosing_function_line(source, finding.line)
        original_record = original_run.functions.get(first_line) if first_line else None
        fixed_record = None
        if index is not None and fixed_run is not None and index in pairs:
            fixed_record = fixed_run.functions.get(pairs[index].first_line)
        elif index is None and fixed_run is not None:
            # The fix compiles the method's ``_impl``: the function the fixed run saw.
            fixed_line = introduced_function_line(outcome.source, finding)
            fixed_record = fixed_run.functions.get(fixed_line) if fixed_line else None
        applied = (finding.line, finding.name) in fixed_names
        report.findings.append(_judge(finding, applied, original_record, fixed_record, fixed_run))
    report.hint = _hint(source, original_run, options)
    report.unexplained = _unexplained(original_run.guard, findings, original_spans)
    if options.write and report.success and outcome.fixed:
        from ...files import read_source, write_source

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
        index = owning_function(finding, spans)
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
