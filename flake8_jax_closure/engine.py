"""Analyse source text: findings (and their fixes) for one file, with no I/O of its own.

The analysis reads the standard ``ast`` tree (flake8 hands us its own); libcst is imported only
to rewrite: by ``fix``, and by outputs that carry a fix's edits.
"""

from __future__ import annotations

import ast
import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .analysis.captures import StaleCapture
from .analysis.pipeline import ModuleFacts
from .analysis.project import ProjectView
from .analysis.unbound import note_lines_not_run
from .analysis.words import may_compile
from .diagnostics import Applicability, Edit, Finding, Fix
from .fix.model import FunctionFix, NoFix
from .fix.plan import FixPlanner
from .noqa import EVERY_CODE, file_exemption, is_suppressed
from .positions import SourceLines
from .rules import ANALYSIS_FAILED, selected_findings
from .settings import Settings

if TYPE_CHECKING:
    from .fix.rewrite import Rewrite


class SourceSyntaxError(Exception):
    """The source does not parse; nothing is reported or changed for it. Carries Python's own
    message and position (1-based line and column)."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message, self.line, self.column = message, line, column


@contextmanager
def _paused_gc() -> Iterator[None]:
    """Trees are large and acyclic: reference counting frees them, and the cyclic collector
    walking them over and over during the analysis would triple its cost."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_tree(source: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as error:
        message = error.msg or "invalid syntax"
        raise SourceSyntaxError(message, error.lineno or 1, error.offset or 1) from error
    except (ValueError, RecursionError, MemoryError) as error:
        raise SourceSyntaxError(_one_line(error)) from error


@dataclass
class Analysis:
    """Findings of one module, each carrying its fix (with the plan its edits are made from) or
    the reason there is none."""

    source: str
    findings: list[Finding]


def analysis_failed(error: BaseException) -> Finding:
    return Finding(
        code=ANALYSIS_FAILED,
        message=f"analysis failed: {type(error).__name__}: {_one_line(error)}",
        line=1,
        column=0,
        end_line=1,
        end_column=0,
    )


def _findings(
    module: ModuleFacts, source: SourceLines, settings: Settings, project: ProjectView | None = None
) -> list[Finding]:
    """The selected rules' findings, each with the fix of its compiled function: one plan per
    function, for all the selected captures it reads."""
    groups: dict[ast.AST, list[tuple[StaleCapture, Finding]]] = {}
    for capture, found in selected_findings(module, settings.is_selected, project):
        groups.setdefault(capture.compiled.function, []).append((capture, found))
    planner = FixPlanner(
        module.facts, source, module.compiled, prefer_safe=not settings.unsafe_fixes
    )
    planner.prepare(capture for group in groups.values() for capture, _ in group)
    findings: list[Finding] = []
    for group in groups.values():
        try:
            plan = planner.plan([capture for capture, _ in group])
        except NoFix as reason:
            findings.extend(replace(f, no_fix_reason=str(reason)) for _, f in group)
            continue
        fix = Fix(plan.applicability, plan.description, (), plan.introduced_names, plan)
        for capture, found in group:
            declined = plan.declined.get((capture.name, capture.attribute))
            if declined is not None:
                findings.append(replace(found, no_fix_reason=declined))
            else:
                findings.append(replace(found, fix=fix))
    return _distinct(findings)


def _distinct(findings: list[Finding]) -> list[Finding]:
    """One function compiled at two sites (``fast = jax.jit(obj.f)`` and ``jax.jit(obj.f)(x)``)
    gives the same capture twice: the fix rewrites both sites, the user sees one finding."""
    seen: set[tuple[int, int, str]] = set()
    kept = []
    for finding in findings:
        key = (finding.line, finding.column, finding.text)
        if key not in seen:
            seen.add(key)
            kept.append(finding)
    return kept


def _to_characters(finding: Finding, source: SourceLines) -> Finding:
    """``ast`` counts columns in UTF-8 bytes; findings count characters."""
    return replace(
        finding,
        column=source.character(finding.line, finding.column),
        end_column=source.character(finding.end_line, finding.end_column),
        witness=tuple(
            replace(step, column=source.character(step.line, step.column))
            for step in finding.witness
        ),
    )


def _analyse_selected(
    source: str,
    settings: Settings,
    honour_noqa: bool,
    tree: ast.Module | None,
    lazy: bool = True,
    project: ProjectView | None = None,
    lines_not_run: Sequence[tuple[int, int]] = (),
) -> Analysis | None:
    """The analysis with unselected and ``# noqa``'d findings removed; None when nothing to do.

    ``lazy=False`` visits every statement first (tests and the benchmark check that this never
    changes a finding). ``project`` answers for the project's other modules: a stale path
    outside callers could take that one of them takes, what a class one defines reads
    (``analysis.project``).

    Raises SourceSyntaxError when the source does not parse. Any other failure of the analysis
    becomes one JC900 finding, never an exception.
    """
    if not may_compile(source, settings.compile_functions):
        return None
    exempt = file_exemption(source) if honour_noqa else frozenset()
    if exempt == EVERY_CODE:
        return None
    lines = SourceLines(source)
    with _paused_gc():
        if tree is None:
            tree = parse_tree(source)
        note_lines_not_run(tree, lines_not_run)
        try:
            module = ModuleFacts(tree, source, settings.compile_functions, lazy, project)
            found = _findings(module, lines, settings, project)
            # Freed here by reference counting, while the cyclic collector is still paused.
            module.release()
            del module, tree
        except RecursionError as error:
            found = [analysis_failed(error)]
        except Exception as error:  # noqa: BLE001 - reported as JC900 so that CI keeps going
            found = [analysis_failed(error)]
    kept: list[Finding] = []
    for finding in found:
        finding = _to_characters(finding, lines)
        if not settings.is_selected(finding.code):
            continue  # JC900, the one code no rule's selection has looked at
        if honour_noqa and (
            finding.code.startswith(tuple(exempt)) or is_suppressed(finding, lines.lines)
        ):
            continue
        kept.append(finding)
    kept.sort(key=Finding.sort_key)
    return Analysis(source, kept)


def check_source(
    source: str,
    settings: Settings,
    *,
    honour_noqa: bool = True,
    with_edits: bool = True,
    tree: ast.Module | None = None,
    edits_for: Callable[[Finding], bool] | None = None,
    lazy: bool = True,
    project: ProjectView | None = None,
    lines_not_run: Sequence[tuple[int, int]] = (),
) -> list[Finding]:
    """All selected findings in ``source``; raises SourceSyntaxError when it does not parse.

    ``tree``, the source's ``ast`` when the caller has it (flake8), saves a parse.
    ``with_edits`` computes fixes' edits, which needs libcst; text output does without.
    ``edits_for`` limits the edits to the findings it accepts (an editor's selection).
    ``lazy`` as for ``_analyse_selected``. ``lines_not_run``: of a notebook's module, the
    cells its saved session did not run (``notebook.reader.lines_not_run``).
    """
    analysis = _analyse_selected(source, settings, honour_noqa, tree, lazy, project, lines_not_run)
    if analysis is None:
        return []
    if with_edits:
        return with_edits_of(analysis, edits_for)
    return analysis.findings


def _plan(finding: Finding) -> FunctionFix | None:
    return finding.fix.plan if finding.fix is not None else None


def with_edits_of(
    analysis: Analysis, edits_for: Callable[[Finding], bool] | None = None
) -> list[Finding]:
    """The analysis's findings, with the edits of the fixes ``edits_for`` accepts (all by
    default); a fix whose rewrite fails is dropped, with the reason."""
    plans = list(
        dict.fromkeys(
            plan
            for finding in analysis.findings
            if (plan := _plan(finding)) is not None and (edits_for is None or edits_for(finding))
        )
    )
    if not plans:
        return analysis.findings
    from .fix.rewrite import rewrite

    with _paused_gc():
        done = rewrite(analysis.source, plans)
    result = []
    for finding in analysis.findings:
        plan, fix = _plan(finding), finding.fix
        if plan is not None and fix is not None:
            if id(plan) in done.failed:
                finding = replace(finding, fix=None, no_fix_reason=done.failed[id(plan)])
            elif id(plan) in done.edits:
                finding = replace(finding, fix=replace(fix, edits=done.edits[id(plan)]))
        result.append(finding)
    return result


@dataclass
class FixResult:
    source: str  # the fixed source (the input when nothing applied)
    fixed: list[Finding]  # findings whose fix was applied
    remaining: list[Finding]  # findings left: no fix, or an unsafe fix not asked for
    # The lines replaced, in order: (first line, last line, new text); the rest is unchanged.
    changes: tuple[tuple[int, int, str], ...] = ()


def analyse_source(
    source: str,
    settings: Settings,
    project: ProjectView | None = None,
    lines_not_run: Sequence[tuple[int, int]] = (),
) -> Analysis | None:
    """The selected findings of ``source`` with their fix plans, for ``with_edits`` and
    ``fix_source`` to use again (an editor asks for fixes of the text it was shown findings
    of); None when the source names no compile transform. Raises SourceSyntaxError."""
    return _analyse_selected(
        source, settings, True, None, project=project, lines_not_run=lines_not_run
    )


def fix_source(
    source: str,
    settings: Settings,
    *,
    analysis: Analysis | None = None,
    lazy: bool = True,
    project: ProjectView | None = None,
    lines_not_run: Sequence[tuple[int, int]] = (),
) -> FixResult:
    """Apply the fixes of all selected findings (unsafe ones only with ``unsafe_fixes``).

    ``analysis``, from ``analyse_source`` on the same source and settings, saves analysing
    again. The result is checked to parse; a fix that would not is dropped, never written.
    """
    if analysis is None:
        analysis = _analyse_selected(source, settings, True, None, lazy, project, lines_not_run)
    if analysis is None:
        return FixResult(source, [], [])
    wanted = {Applicability.SAFE} | ({Applicability.UNSAFE} if settings.unsafe_fixes else set())
    chosen: dict[FunctionFix, None] = {}
    fixed: list[Finding] = []
    remaining: list[Finding] = []
    for finding in analysis.findings:
        plan = _plan(finding)
        if plan is not None and finding.fix is not None and finding.fix.applicability in wanted:
            chosen[plan] = None
            fixed.append(finding)
        else:
            remaining.append(finding)
    if not chosen:
        return FixResult(source, [], remaining)
    done = _rewritten(source, list(chosen))
    if done is None:
        return FixResult(source, [], analysis.findings)
    pieces = {(e.start_line, e.end_line - 1, e.content) for e in _edits(done)}
    return FixResult(done.text, fixed, remaining, tuple(sorted(pieces)))


def apply_plans(source: str, plans: Sequence[FunctionFix]) -> str | None:
    """The source with the plans applied, or None when the result would not parse (or a plan
    could not be applied)."""
    done = _rewritten(source, plans)
    return None if done is None else done.text


def _rewritten(source: str, plans: Sequence[FunctionFix]) -> Rewrite | None:
    from .fix.rewrite import rewrite

    with _paused_gc():  # libcst's trees, as the analysis's, are freed by reference counting
        done = rewrite(source, plans)
    if done.failed:
        return None
    try:
        compile(done.text, "<fixed>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError):
        return None
    return done


def _edits(done: Rewrite) -> Iterator[Edit]:
    for edits in done.edits.values():
        yield from edits


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
