"""What verify asks of the linter: the findings, the fix, and where each compiled function is.

:func:`analyse` is the one place verify calls the analysis. It analyses the source several
times (findings, fix, the compiled functions of the original and of the fixed program) and
pairs each compiled function of the original with its counterpart in the fixed program by
name, recovering the names the fix gives wrapped functions from their spelling.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ...analysis.compiled import CompiledFunctionFinder
from ...analysis.facts.queries import Facts
from ...diagnostics import Finding
from ...engine import FixResult, check_source, fix_source, parse_tree
from ...settings import Settings


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
    """Raises :class:`~flake8_jax_closure.engine.SourceSyntaxError`."""
    findings = check_source(source, settings)
    outcome = fix_source(source, settings)
    original_spans = compiled_spans(source, settings)
    pairs = pair_spans(original_spans, compiled_spans(outcome.source, settings))
    return AnalysedSource(findings, outcome, original_spans, pairs)


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


def renamed_function_line(source: str, name: str) -> int | None:
    """The first line of the def the fix made of ``name`` (``_count_impl`` for ``count``)."""
    for node in ast.walk(parse_tree(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name != name:
            if _FIXED_NAME.fullmatch(node.name) and _original_name(node.name) == name.strip("_"):
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
