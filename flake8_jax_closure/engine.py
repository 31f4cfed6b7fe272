"""Analyse source text: findings (and their fixes) for one file, with no I/O of its own."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import chain

import libcst as cst

from .compiled import CompiledFunctionFinder
from .diagnostics import Applicability, Finding, Fix
from .fix import FixPlanner, FunctionFix, NoFix, apply_fixes, text_edits
from .methods import MethodCaptureAnalysis
from .model import CaptureAnalysis, StaleCapture
from .names import PASSTHROUGH_TRANSFORMS, last_component
from .noqa import is_suppressed
from .prefilter import needs_analysis
from .rules import ANALYSIS_FAILED, RULES
from .scopes import build_scope_model
from .settings import Settings


class SourceSyntaxError(Exception):
    """The source does not parse; nothing is reported or changed for it."""


def call_names(settings: Settings) -> frozenset[str]:
    return frozenset(
        last_component(name) for name in settings.compile_functions | PASSTHROUGH_TRANSFORMS
    )


def _mentions_compile(source: str, settings: Settings) -> bool:
    """Cheap first pass: a file that never names a compile transform has nothing to report."""
    names = sorted({last_component(name) for name in settings.compile_functions})
    return re.search(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b", source) is not None


@contextmanager
def _deep_recursion(limit: int = 20_000) -> Iterator[None]:
    """libcst walks trees recursively, several frames per nesting level; code nested a few
    hundred levels deep (which CPython accepts) needs more than the default 1,000 frames.
    Python-to-Python calls do not grow the C stack, so a higher limit is safe here."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def parse(source: str) -> cst.Module:
    try:
        with _deep_recursion():
            return cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError) as error:
        raise SourceSyntaxError(_one_line(error)) from error


@dataclass
class Analysis:
    """Findings of one module, each with its fix (or the reason there is none)."""

    module: cst.Module
    findings: list[Finding]
    fixes: dict[int, FunctionFix]  # id(finding) -> the fix of its compiled function


def analyse_module(module: cst.Module, settings: Settings, with_edits: bool = True) -> Analysis:
    """Findings with their fixes. ``with_edits`` computes each fix's text edits, which costs one
    rewrite of the module per fixed function: outputs that show no edits skip it."""
    model = build_scope_model(module, call_names(settings))
    sites = CompiledFunctionFinder(model, settings.compile_functions).find()
    by_function: dict[int, list[tuple[StaleCapture, Finding]]] = {}
    captures = CaptureAnalysis(model)
    methods = MethodCaptureAnalysis(model, captures, settings.compile_functions)
    for capture in chain(captures.stale_captures(sites), methods.stale_captures(sites)):
        for rule in RULES:
            found = rule.check(capture)
            if found is not None:
                by_function.setdefault(id(capture.compiled.function), []).append((capture, found))
                break
    planner = FixPlanner(model, sites)
    findings: list[Finding] = []
    fixes: dict[int, FunctionFix] = {}
    for group in by_function.values():
        try:
            plan = planner.plan([capture for capture, _ in group])
        except NoFix as reason:
            findings.extend(replace(f, no_fix_reason=str(reason)) for _, f in group)
            continue
        edits = text_edits(module.code, apply_fixes(module, [plan])) if with_edits else ()
        fix = Fix(plan.applicability, plan.description, edits)
        for _, found in group:
            if found.name in plan.declined:
                findings.append(replace(found, no_fix_reason=plan.declined[found.name]))
                continue
            with_fix = replace(found, fix=fix)
            findings.append(with_fix)
            fixes[id(with_fix)] = plan
    findings.sort(key=Finding.sort_key)
    return Analysis(module, findings, fixes)


def analysis_failed(error: BaseException) -> Finding:
    return Finding(
        code=ANALYSIS_FAILED,
        message=f"analysis failed: {type(error).__name__}: {_one_line(error)}",
        line=1,
        column=0,
        end_line=1,
        end_column=0,
    )


def _analyse_selected(
    source: str,
    settings: Settings,
    honour_noqa: bool,
    with_edits: bool = True,
    tree: ast.Module | None = None,
) -> Analysis | None:
    """The analysis with unselected and ``# noqa``'d findings removed; None when nothing to do.

    Raises SourceSyntaxError when the source does not parse. Any other failure of the analysis
    becomes one JC900 finding, never an exception.
    """
    if not _mentions_compile(source, settings):
        return None
    if settings.prefilter and not needs_analysis(source, settings.compile_functions, tree):
        return None
    module = parse(source)
    try:
        with _deep_recursion():
            analysis = analyse_module(module, settings, with_edits)
    except Exception as error:  # noqa: BLE001 - reported as JC900 so that CI keeps going
        analysis = Analysis(module, [analysis_failed(error)], {})
    except RecursionError as error:
        analysis = Analysis(module, [analysis_failed(error)], {})
    lines = source.splitlines()
    analysis.findings = [
        f
        for f in analysis.findings
        if settings.is_selected(f.code) and not (honour_noqa and is_suppressed(f, lines))
    ]
    return analysis


def check_source(
    source: str,
    settings: Settings,
    *,
    honour_noqa: bool = True,
    with_edits: bool | None = None,
    tree: ast.Module | None = None,
) -> list[Finding]:
    """All selected findings in ``source``; raises SourceSyntaxError when it does not parse.

    ``tree``, the source's ``ast`` when the caller has it, saves the pre-pass a parse.
    """
    edits = settings.with_edits if with_edits is None else with_edits
    analysis = _analyse_selected(source, settings, honour_noqa, edits, tree)
    return analysis.findings if analysis is not None else []


@dataclass
class FixResult:
    source: str  # the fixed source (the input when nothing applied)
    fixed: list[Finding]  # findings whose fix was applied
    remaining: list[Finding]  # findings left: no fix, or an unsafe fix not asked for


def fix_source(source: str, settings: Settings) -> FixResult:
    """Apply the fixes of all selected findings (unsafe ones only with ``unsafe_fixes``).

    The result is checked to parse; a fix that would not is dropped, never written.
    """
    analysis = _analyse_selected(source, settings, honour_noqa=True, with_edits=False)
    if analysis is None:
        return FixResult(source, [], [])
    wanted = {Applicability.SAFE} | ({Applicability.UNSAFE} if settings.unsafe_fixes else set())
    chosen: dict[int, FunctionFix] = {}
    fixed: list[Finding] = []
    remaining: list[Finding] = []
    for finding in analysis.findings:
        plan = analysis.fixes.get(id(finding))
        if plan is not None and finding.fix is not None and finding.fix.applicability in wanted:
            chosen[id(plan)] = plan
            fixed.append(finding)
        else:
            remaining.append(finding)
    if not chosen:
        return FixResult(source, [], remaining)
    with _deep_recursion():
        new_source = apply_fixes(analysis.module, chosen.values())
    try:
        compile(new_source, "<fixed>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError):
        return FixResult(source, [], analysis.findings)
    return FixResult(new_source, fixed, remaining)


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
