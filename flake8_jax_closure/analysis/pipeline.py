"""The facts of one module that every rule's detection starts from: the compiled functions, the
scopes, reads and changes, and the call graph that times a change against a compiled call."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from .callgraph.graph import CallGraph
from .captures import CaptureAnalysis, Owner, StaleCapture
from .compiled import CompiledFunction, CompiledFunctionFinder
from .facts.queries import Facts
from .failing import FailingCalls
from .project import ProjectView


class ModuleFacts:
    """Built once per module and shared by the selected rules; each rule asks only what it
    needs, and the facts visit statements only where a question needs them."""

    def __init__(
        self,
        tree: ast.Module,
        text: str,
        compile_functions: Iterable[str],
        lazy: bool = True,
        project: ProjectView | None = None,
    ) -> None:
        self.facts = Facts(tree, text)
        if not lazy:
            # Visiting every statement first must change nothing but the time taken.
            self.facts.ensure_scope(self.facts.module_scope)
        self.finder = CompiledFunctionFinder(self.facts, frozenset(compile_functions))
        self.compiled: list[CompiledFunction] = self.finder.find()
        self.graph = CallGraph(self.facts, None if project is None else project.function_def)
        self.graph.failing = FailingCalls(self.facts, self.graph.classes, self.compiled)
        self.values = CaptureAnalysis(self.facts, self.graph, self.compiled, project)
        self.project = project

    def release(self) -> None:
        self.facts.release()


def value_captures(module: ModuleFacts, owners: frozenset[Owner]) -> Iterator[StaleCapture]:
    """Variables of ``owners`` (and the objects they hold) that the compiled functions read,
    with the changes that can fall between a trace and a later compiled call."""
    return module.values.stale_captures(module.compiled, owners)
