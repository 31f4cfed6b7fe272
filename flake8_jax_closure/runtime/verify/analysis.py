"""What verify asks of the linter: the findings, the fix, and where each compiled function is.

:func:`analyse` analyses the source once: its findings carry their fixes, and each fix names what
it writes into the module (``_step_compiled``, ``_count_impl``). Those names pair a compiled
function of the original with its counterpart in the fixed program; the compiled functions of
each program are located by the compile-site finder alone.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ...analysis.compiled import CompiledFunctionFinder
from ...analysis.facts.queries import Facts
from ...diagnostics import Finding
from ...engine import FixResult, analyse_source, fix_source, parse_tree, with_edits_of
from ...settings import OPT_IN, Settings


@dataclass(frozen=True)
class CompiledSpan:
    first_line: int  # as Python reports it: the first decorator's line
    start: int
    end: int
    name: str  # the def's name ("<lambda>" for lambdas)


@dataclass(frozen=True)
class AnalysedSource:
    """The source as the linter sees it, and its fixed version."""

    findings: list[Finding]
    fix: FixResult
    spans: list[CompiledSpan]  # the original's compiled functions, in source order
    pairs: dict[int, CompiledSpan]  # index in ``spans`` -> the fixed program's counterpart


def analyse(source: str, settings: Settings) -> AnalysedSource:
    """Raises :class:`~flake8_jax_closure.engine.SourceSyntaxError`.

    API hazards are verified too: running the program is how a user learns whether a hazard
    no code of the project shows (``JC2xx``) happens in theirs."""
    settings = replace(settings, select=(*settings.select, *OPT_IN))
    analysis = analyse_source(source, settings)
    if analysis is None:
        return AnalysedSource([], FixResult(source, [], []), [], {})
    # With the edits, as ``check`` reports them: a fix whose rewrite fails is no fix.
    findings = with_edits_of(analysis)
    outcome = fix_source(source, settings, analysis=analysis)
    original_spans = compiled_spans(source, settings)
    introduced: dict[int, list[str]] = {}
    for finding in findings:
        index = owning_function(finding, original_spans)
        if index is not None and finding.fix is not None:
            introduced.setdefault(index, []).extend(finding.fix.introduces)
    fixed_spans = compiled_spans(outcome.source, settings)
    return AnalysedSource(
        findings, outcome, original_spans, pair_spans(original_spans, fixed_spans, introduced)
    )


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


def pair_spans(
    original: Sequence[CompiledSpan],
    fixed: Sequence[CompiledSpan],
    introduced: dict[int, list[str]],
) -> dict[int, CompiledSpan]:
    """Each original compiled function's counterpart in the fixed program: the first fixed
    compiled function, in source order and not yet taken, named as its fix named it, or with
    its own name when the fix kept it (or there was no fix)."""
    taken: set[int] = set()
    pairs: dict[int, CompiledSpan] = {}
    for index, span in enumerate(original):
        for name in (*introduced.get(index, ()), span.name):
            match = next(
                (j for j, other in enumerate(fixed) if j not in taken and other.name == name), None
            )
            if match is not None:
                taken.add(match)
                pairs[index] = fixed[match]
                break
    return pairs


def enclosing_function_line(source: str, line: int) -> int | None:
    """The first line (as Python reports it) of the innermost def around ``line``."""
    best: tuple[int, int] | None = None
    for node in ast.walk(parse_tree(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            end = node.end_lineno or node.lineno
            if node.lineno <= line <= end and (best is None or end - node.lineno < best[0]):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                best = (end - node.lineno, first)
    return best[1] if best else None


def introduced_function_line(source: str, finding: Finding) -> int | None:
    """The first line of the def the finding's fix wrote (``_count_impl`` for a method compiled
    as ``jax.jit(counter.count)``)."""
    names = set(finding.fix.introduces) if finding.fix is not None else set()
    for node in ast.walk(parse_tree(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names:
            return min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return None


def owning_function(finding: Finding, spans: Sequence[CompiledSpan]) -> int | None:
    """Index of the innermost compiled function whose span holds the finding's line."""
    holding = [
        (span.end - span.start, index)
        for index, span in enumerate(spans)
        if span.start <= finding.line <= span.end
    ]
    return min(holding)[1] if holding else None
