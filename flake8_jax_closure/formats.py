"""Findings as text, JSON, GitHub workflow commands and SARIF 2.1.0."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from . import __version__
from .diagnostics import Finding
from .rules import ANALYSIS_FAILED, RULES

FileFindings = Sequence[tuple[str, Sequence[Finding]]]

FORMATS = ("text", "json", "github", "sarif")
INFORMATION_URI = "https://pypi.org/project/flake8-jax-closure/"


def render(results: FileFindings, output_format: str) -> str:
    if output_format == "json":
        return json.dumps([_as_json(path, f) for path, fs in results for f in fs], indent=2) + "\n"
    if output_format == "github":
        return "".join(_github(path, f) for path, fs in results for f in fs)
    if output_format == "sarif":
        return json.dumps(sarif(results), indent=2) + "\n"
    return "".join(
        f"{path}:{f.line}:{f.column + 1}: {f.text}\n" for path, fs in results for f in fs
    )


def statistics(results: FileFindings) -> str:
    counts = Counter(f.code for _, fs in results for f in fs)
    return "".join(f"{count:<5} {code}\n" for code, count in sorted(counts.items()))


def _as_json(path: str, finding: Finding) -> dict[str, Any]:
    fix = finding.fix
    return {
        "code": finding.code,
        "filename": path,
        "line": finding.line,
        "column": finding.column + 1,
        "end_line": finding.end_line,
        "end_column": finding.end_column + 1,
        "message": finding.message,
        "function": finding.function,
        "name": finding.name,
        "fix": None
        if fix is None
        else {
            "applicability": fix.applicability.value,
            "message": fix.description,
            "edits": [
                {
                    "start": {"line": e.start_line, "column": e.start_column + 1},
                    "end": {"line": e.end_line, "column": e.end_column + 1},
                    "content": e.content,
                }
                for e in fix.edits
            ],
        },
        "no_fix_reason": finding.no_fix_reason,
    }


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(path: str, finding: Finding) -> str:
    return (
        f"::warning file={_escape_property(path)},line={finding.line},col={finding.column + 1},"
        f"endLine={finding.end_line},endColumn={finding.end_column + 1},"
        f"title={finding.code}::{_escape_data(finding.text)}\n"
    )


def sarif(results: FileFindings) -> dict[str, Any]:
    rules = [
        {"id": rule.code, "name": rule.code, "shortDescription": {"text": rule.summary}}
        for rule in RULES
    ]
    rules.append(
        {
            "id": ANALYSIS_FAILED,
            "name": ANALYSIS_FAILED,
            "shortDescription": {"text": "the analysis failed on this file"},
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
                "results": [_sarif_result(path, f) for path, fs in results for f in fs],
            }
        ],
    }


def _sarif_result(path: str, finding: Finding) -> dict[str, Any]:
    location = {"uri": path.replace("\\", "/")}
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "level": "error" if finding.code == ANALYSIS_FAILED else "warning",
        "message": {"text": finding.text},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": location,
                    "region": {
                        "startLine": finding.line,
                        "startColumn": finding.column + 1,
                        "endLine": finding.end_line,
                        "endColumn": finding.end_column + 1,
                    },
                }
            }
        ],
    }
    if finding.fix is not None:
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
