"""Findings as text, JSON, GitHub workflow commands and SARIF 2.1.0; verify's report as text
and JSON."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import __version__
from .diagnostics import Applicability, Edit, Finding, Role, WitnessStep
from .notebook.cells import CellMap
from .rules import ANALYSIS_FAILED, NAMES, SUMMARIES
from .runtime.verify.report import RunOutcome, Verdict, VerifyReport

FORMATS = ("text", "json", "github", "sarif")
INFORMATION_URI = "https://github.com/flake8-jax-closure/flake8-jax-closure"
SYNTAX_ERROR = "E999"  # flake8's code for a file that does not parse
READ_ERROR = "E902"  # flake8's and ruff's code for a file that cannot be read
_ERRORS = (ANALYSIS_FAILED, SYNTAX_ERROR, READ_ERROR)
_ENTRY_NAMES = {SYNTAX_ERROR: "syntax-error", READ_ERROR: "io-error"}


@dataclass(frozen=True)
class FileReport:
    """What one file gets reported for: findings, Python's syntax error, or why it could not be
    read (missing, unreadable, binary, undecodable)."""

    path: str
    findings: Sequence[Finding] = ()
    syntax_error: tuple[str, int, int] | None = None  # message, line, column (1-based)
    error: str | None = None  # without the path
    unsafe_fixes: bool = False  # unsafe fixes are applied here: marked fixable, as safe ones
    # A notebook: its findings' lines are the module's, shown as cells and lines.
    cells: CellMap | None = None

    def at(self, finding: Finding, line: int) -> tuple[int | None, int]:
        """(cell, line) where the outputs show a line of the finding; no cell for a file."""
        if self.cells is None or finding.code == READ_ERROR:
            return None, line
        return self.cells.locate(line)

    def words(self, text: str) -> str:
        """A message, reason or description, naming cells where it names lines."""
        return text if self.cells is None else self.cells.text(text)

    def message(self, finding: Finding) -> str:
        if self.cells is None:
            return finding.message
        return self.cells.message(finding.message, has_witness=bool(finding.witness))

    def clause(self, step: WitnessStep) -> str:
        return self.words(step.clause) if step.path is None else step.clause

    def applies(self, finding: Finding) -> bool:
        """Whether ``fix`` (with this file's settings) applies the finding's fix."""
        fix = finding.fix
        return fix is not None and (fix.applicability is Applicability.SAFE or self.unsafe_fixes)

    def entries(self) -> list[Finding]:
        if self.error is not None:
            return [Finding(READ_ERROR, self.error, line=1, column=0, end_line=1, end_column=0)]
        if self.syntax_error is None:
            return list(self.findings)
        message, line, column = self.syntax_error
        return [
            Finding(
                code=SYNTAX_ERROR,
                message=f"SyntaxError: {message}",
                line=line,
                column=max(column - 1, 0),
                end_line=line,
                end_column=max(column - 1, 0),
            ),
            *self.findings,
        ]


def render(reports: Sequence[FileReport], output_format: str, show_source: bool = False) -> str:
    if output_format == "json":
        items = [_as_json(r, f) for r in reports for f in r.entries()]
        return json.dumps(items, indent=2) + "\n"
    if output_format == "github":
        return "".join(_github(r, f) for r in reports for f in r.entries())
    if output_format == "sarif":
        return json.dumps(sarif(reports), indent=2) + "\n"
    # Text: syntax errors and files that cannot be read are printed as errors, on stderr.
    return "".join(_text(r, f, show_source) for r in reports for f in r.findings)


def _where(report: FileReport, finding: Finding) -> str:
    """``line:column``, or ``cell 3:2:5`` in a notebook, as ruff writes it."""
    cell, line = report.at(finding, finding.line)
    place = f"{line}:{finding.column + 1}"
    return place if cell is None else f"cell {cell}:{place}"


def _text(report: FileReport, finding: Finding, show_source: bool) -> str:
    fix = finding.fix
    marker = " [*]" if report.applies(finding) else ""
    out = [f"{report.path}:{_where(report, finding)}: {finding.code}{marker} "]
    out.append(f"{report.message(finding)}\n")
    # A notebook's lines are in its cells, not in the file's lines: no source is shown.
    if show_source and report.cells is None:
        out.append(_source(report.path, finding))
    if fix is None and finding.no_fix_reason:
        out.append(f"    no fix: {report.words(finding.no_fix_reason)}\n")
    return "".join(out)


def _source(path: str, finding: Finding) -> str:
    """The finding's line and a caret under it, as flake8's ``--show-source`` prints them."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return ""
    if not 1 <= finding.line <= len(lines):
        return ""
    line = lines[finding.line - 1]
    end = finding.end_column if finding.end_line == finding.line else len(line)
    width = max(end - finding.column, 1)
    return f"    {line}\n    {' ' * finding.column}{'^' * width}\n"


def summary(reports: Sequence[FileReport], failed: bool = False) -> str:
    """``Found 3 findings (2 fixable with `fix`, 1 with `--unsafe-fixes`).``, or ``All checks
    passed!`` when nothing was found and nothing failed."""
    findings = [(r, f) for r in reports for f in r.findings]
    if not findings:
        clean = not failed and not any(r.syntax_error for r in reports)
        return "All checks passed!\n" if clean else ""
    applied = [f for r, f in findings if r.applies(f)]
    hidden = sum(1 for r, f in findings if f.fix is not None and not r.applies(f))
    count = len(findings)
    parts = []
    if applied:
        unsafe = any(f.fix and f.fix.applicability is Applicability.UNSAFE for f in applied)
        command = "flake8-jax-closure fix" + (" --unsafe-fixes" if unsafe else "")
        parts.append(f"{len(applied)} fixable with `{command}`")
    if hidden:
        parts.append(f"{hidden} with `--unsafe-fixes`")
    detail = f" ({', '.join(parts)})" if parts else ""
    return f"Found {count} finding{'s' * (count != 1)}{detail}.\n"


def statistics(reports: Sequence[FileReport], output_format: str = "text") -> str:
    """A count per code, as ruff's ``--statistics`` prints it: the count, the code, ``[*]`` when
    a finding of it is fixable, and the rule's name; a list of objects in JSON."""
    counts: Counter[str] = Counter()
    fixable: set[str] = set()
    for report in reports:
        for finding in report.entries():
            counts[finding.code] += 1
            if report.applies(finding):
                fixable.add(finding.code)
    rows = sorted(counts.items())
    if output_format == "json":
        table = [
            {"code": code, "name": NAMES.get(code, code), "count": count,
             "fixable": code in fixable}
            for code, count in rows
        ]  # fmt: skip
        return json.dumps(table, indent=2) + "\n"
    width = max((len(str(count)) for _, count in rows), default=1)
    return "".join(
        f"{count:>{width}}\t{code}\t{'[*]' if code in fixable else '[ ]'} "
        f"{NAMES.get(code, _ENTRY_NAMES.get(code, code))}\n"
        for code, count in rows
    )


def _as_json(report: FileReport, finding: Finding) -> dict[str, Any]:
    fix = finding.fix

    def position(line: int, column: int) -> dict[str, Any]:
        cell, line = report.at(finding, line)
        return {"cell": cell, "line": line, "column": column + 1}

    cell, line = report.at(finding, finding.line)
    return {
        "code": finding.code,
        "filename": report.path,
        # In a notebook, the cell (1-based among all its cells, as ruff counts) and the lines
        # in it; null in a Python file.
        "cell": cell,
        "line": line,
        "column": finding.column + 1,
        "end_line": report.at(finding, finding.end_line)[1],
        "end_column": finding.end_column + 1,
        "message": report.message(finding),
        "function": finding.function,
        "name": finding.name,
        # The stale path the code shows (empty for an API hazard), and the entry points
        # through which outside callers can make an API hazard stale.
        "witness": [
            {
                # A step in another file of the project names that file, cell included.
                **(
                    position(step.line, step.column)
                    if step.path is None
                    else {"cell": None, "line": step.line, "column": step.column + 1}
                ),
                "role": step.role.value,
                "via": step.via,
                "again": None if step.again is None else report.words(step.again),
                "path": step.path,
            }
            for step in finding.witness
        ],
        "entry_points": list(finding.entry_points),
        "fix": None
        if fix is None
        else {
            "applicability": fix.applicability.value,
            "message": report.words(fix.description),
            "edits": [
                {
                    "start": position(e.start_line, e.start_column),
                    "end": _edit_end(report, finding, e),
                    "content": e.content,
                }
                for e in fix.edits
            ],
        },
        "no_fix_reason": None
        if finding.no_fix_reason is None
        else report.words(finding.no_fix_reason),
    }


def _edit_end(report: FileReport, finding: Finding, edit: Edit) -> dict[str, Any]:
    """Where an edit ends; in a notebook, an edit ending where the next line starts ends after
    its own last line, in its own cell (the next line may be another cell's)."""
    line, column = edit.end_line, edit.end_column
    if report.cells is None or column or line <= edit.start_line:
        cell, shown = report.at(finding, line)
        return {"cell": cell, "line": shown, "column": column + 1}
    cell, shown = report.at(finding, line - 1)
    return {"cell": cell, "line": shown + 1, "column": 1}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(report: FileReport, finding: Finding) -> str:
    level = "error" if finding.code in _ERRORS else "warning"
    path = _escape_property(report.path)
    text = f"{finding.code} {report.message(finding)}"
    if report.cells is not None and finding.code != READ_ERROR:
        # An annotation points at lines of the file, and a cell's lines are not the file's:
        # it stands at the top of the notebook and names the cell, as ruff's does.
        return (
            f"::{level} file={path},line=1,col=1,endLine=1,endColumn=1,title={finding.code}"
            f"::{_escape_data(_where(report, finding) + ': ' + text)}\n"
        )
    return (
        f"::{level} file={path},line={finding.line},col={finding.column + 1},"
        f"endLine={finding.end_line},endColumn={finding.end_column + 1},"
        f"title={finding.code}::{_escape_data(text)}\n"
    )


def sarif(reports: Sequence[FileReport]) -> dict[str, Any]:
    rules = [
        {"id": code, "name": code, "shortDescription": {"text": SUMMARIES[code]}}
        for code in SUMMARIES
        if code != ANALYSIS_FAILED
    ]
    rules.append(
        {
            "id": ANALYSIS_FAILED,
            "name": ANALYSIS_FAILED,
            "shortDescription": {"text": "the analysis failed on this file"},
        }
    )
    rules.append(
        {
            "id": SYNTAX_ERROR,
            "name": SYNTAX_ERROR,
            "shortDescription": {"text": "the file does not parse"},
        }
    )
    rules.append(
        {
            "id": READ_ERROR,
            "name": READ_ERROR,
            "shortDescription": {"text": "the file cannot be read as Python source"},
        }
    )
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "flake8-jax-closure",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "results": [_sarif_result(r, f) for r in reports for f in r.entries()],
            }
        ],
    }


def _step_location(
    report: FileReport, finding: Finding, step: WitnessStep, location: dict[str, Any]
) -> dict[str, Any]:
    """Where a step of the witness stands: in the finding's file, or in another file of the
    project (its path from the project's root; a notebook's cell named in the step's text)."""
    if step.path is None:
        return {
            "artifactLocation": location,
            "region": _sarif_region(report, finding, step.line, step.column),
        }
    return {
        "artifactLocation": {"uri": step.path.split(":cell ")[0]},
        "region": {"startLine": step.line, "startColumn": step.column + 1},
    }


# SARIF's words for what a step of a flow does.
_FLOW_KINDS = {Role.TRACE: "call", Role.CHANGE: "value", Role.REUSE: "call"}


def _sarif_region(report: FileReport, finding: Finding, line: int, column: int) -> dict[str, Any]:
    """A region of the file; in a notebook, the file's first line (a cell's lines are not the
    file's), with the cell, line and column as properties."""
    cell, line = report.at(finding, line)
    if cell is None:
        return {"startLine": line, "startColumn": column + 1}
    return {
        "startLine": 1,
        "startColumn": 1,
        "properties": {"cell": cell, "line": line, "column": column + 1},
    }


def _sarif_result(report: FileReport, finding: Finding) -> dict[str, Any]:
    location = {"uri": report.path.replace("\\", "/")}
    text = f"{finding.code} {report.message(finding)}"
    region = _sarif_region(report, finding, finding.line, finding.column)
    if report.cells is None:
        region.update(endLine=finding.end_line, endColumn=finding.end_column + 1)
    else:
        text = f"{_where(report, finding)}: {text}"
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "level": "error" if finding.code in _ERRORS else "warning",
        "message": {"text": text},
        "locations": [{"physicalLocation": {"artifactLocation": location, "region": region}}],
    }
    if finding.witness:
        # GitHub code scanning draws a code flow as the steps of the path.
        result["codeFlows"] = [
            {
                "threadFlows": [
                    {
                        "locations": [
                            {
                                "location": {
                                    "physicalLocation": _step_location(
                                        report, finding, step, location
                                    ),
                                    "message": {"text": report.clause(step)},
                                },
                                "kinds": [_FLOW_KINDS[step.role]],
                            }
                            for step in finding.witness
                        ]
                    }
                ]
            }
        ]
    # A notebook's fix edits cells, which SARIF's replacements of file regions cannot say.
    if finding.fix is not None and report.cells is None:
        result["fixes"] = [
            {
                "description": {"text": finding.fix.description},
                "artifactChanges": [
                    {
                        "artifactLocation": location,
                        "replacements": [
                            {
                                "deletedRegion": {
                                    "startLine": e.start_line,
                                    "startColumn": e.start_column + 1,
                                    "endLine": e.end_line,
                                    "endColumn": e.end_column + 1,
                                },
                                "insertedContent": {"text": e.content},
                            }
                            for e in finding.fix.edits
                        ],
                    }
                ],
            }
        ]
    return result


# -- verify's report ---------------------------------------------------------------------------


def _verify_outputs(record: dict[str, Any]) -> str:
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


def _verify_run_lines(label: str, record: dict[str, Any] | None) -> list[str]:
    if not record or not record["calls"]:
        nested = record.get("nested_calls", 0) if record else 0
        if nested:
            return [
                f"  {label}: called only inside other compiled calls ({nested} times), which "
                "are the ones compared"
            ]
        return [f"  {label}: never called"]
    return [f"  {label}: {_verify_run_detail(record)}", f"    {_verify_outputs(record)}"]


def _verify_run_detail(record: dict[str, Any]) -> str:
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


def render_verify_text(report: VerifyReport) -> str:
    # Imported here, not with this module: rendering findings needs nothing of the guard.
    from .runtime.guard.errors import kind_phrase

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
        lines.extend(_verify_run_lines("original", item.original))
        if item.verdict is not Verdict.NO_FIX:
            lines.extend(_verify_run_lines("fixed", item.fixed))
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


def render_verify_json(report: VerifyReport) -> str:
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
