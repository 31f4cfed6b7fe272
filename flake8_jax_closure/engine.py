"""Analyse source text: findings (and their fixes) for one file, with no I/O of its own."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from .compiled import CompiledFunctionFinder
from .diagnostics import Finding
from .model import CaptureAnalysis
from .names import PASSTHROUGH_TRANSFORMS, last_component
from .noqa import is_suppressed
from .rules import ANALYSIS_FAILED, RULES
from .scopes import build_scope_model
from .settings import Settings


class SourceSyntaxError(Exception):
    """The source does not parse; nothing is reported or changed for it."""


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)


def _call_names(settings: Settings) -> frozenset[str]:
    return frozenset(
        last_component(name) for name in settings.compile_functions | PASSTHROUGH_TRANSFORMS
    )


def _mentions_compile(source: str, settings: Settings) -> bool:
    """Cheap first pass: a file that never names a compile transform has nothing to report."""
    names = sorted({last_component(name) for name in settings.compile_functions})
    return re.search(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b", source) is not None


def parse(source: str) -> cst.Module:
    try:
        return cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError) as error:
        raise SourceSyntaxError(_one_line(error)) from error


def analyse_module(module: cst.Module, settings: Settings) -> list[Finding]:
    model = build_scope_model(module, _call_names(settings))
    compiled = CompiledFunctionFinder(model, settings.compile_functions).find()
    findings: list[Finding] = []
    for capture in CaptureAnalysis(model).stale_captures(compiled):
        for rule in RULES:
            found = rule.check(capture)
            if found is not None:
                findings.append(found)
                break
    return sorted(findings, key=Finding.sort_key)


def analysis_failed(error: BaseException) -> Finding:
    return Finding(
        code=ANALYSIS_FAILED,
        message=f"analysis failed: {type(error).__name__}: {_one_line(error)}",
        line=1,
        column=0,
        end_line=1,
        end_column=0,
    )


def check_source(source: str, settings: Settings, *, honour_noqa: bool = True) -> list[Finding]:
    """All selected findings in ``source``; raises SourceSyntaxError when it does not parse.

    Any other failure of the analysis becomes one JC900 finding, never an exception.
    """
    if not _mentions_compile(source, settings):
        return []
    module = parse(source)
    try:
        findings = analyse_module(module, settings)
    except RecursionError as error:
        findings = [analysis_failed(error)]
    except Exception as error:  # noqa: BLE001 - reported as JC900 so that CI keeps going
        findings = [analysis_failed(error)]
    lines = source.splitlines()
    return [
        f
        for f in findings
        if settings.is_selected(f.code) and not (honour_noqa and is_suppressed(f, lines))
    ]


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
