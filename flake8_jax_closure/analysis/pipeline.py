"""The whole analysis of one module: the compiled functions, what they read, and the
changes that can fall between a trace and a later compiled call."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain

from .callgraph.graph import CallGraph
from .captures import CaptureAnalysis, StaleCapture
from .compiled import CompiledFunction, CompiledFunctionFinder
from .facts.queries import Facts
from .methods import MethodCaptureAnalysis


@dataclass
class ModuleAnalysis:
    facts: Facts
    compiled: list[CompiledFunction]
    captures: list[StaleCapture]


def analyse(
    tree: ast.Module, text: str, compile_functions: Iterable[str], lazy: bool = True
) -> ModuleAnalysis:
    """The stale captures of one module: the compiled functions, what they read, and the
    changes that can fall between a trace and a later compiled call. ``lazy=False`` visits
    every statement first, which must change nothing but the time taken."""
    facts = Facts(tree, text)
    if not lazy:
        facts.ensure_scope(facts.module_scope)
    finder = CompiledFunctionFinder(facts, frozenset(compile_functions))
    compiled = finder.find()
    graph = CallGraph(facts)
    captures = CaptureAnalysis(facts, graph, compiled)
    methods = MethodCaptureAnalysis(facts, graph, captures, finder)
    found = list(chain(captures.stale_captures(compiled), methods.stale_captures(compiled)))
    return ModuleAnalysis(facts, compiled, found)
