"""Compiled code that holds ``self``: a method compiled with ``self`` static, a bound method
compiled in call form (``jax.jit(obj.step)``), or a compiled closure made inside a method."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from ...analysis.callgraph.graph import CallGraph
from ...analysis.compiled import CompiledFunction, CompiledFunctionFinder, Form, self_is_static
from ...analysis.facts.model import Scope
from ...analysis.receiver import method_self_name
from .classes import ClassFacts, MutableClasses, enclosing_method


@dataclass(frozen=True)
class Holder:
    """Compiled code that holds ``self`` of ``method``."""

    site: CompiledFunction
    method: Scope
    self_name: str
    static_self: bool = False
    bound_method: bool = False


class HolderFinder:
    def __init__(
        self, graph: CallGraph, classes: MutableClasses, finder: CompiledFunctionFinder
    ) -> None:
        self.graph = graph
        self.classes = classes
        self.finder = finder

    def holders(self, sites: list[CompiledFunction]) -> Iterator[tuple[ClassFacts, Holder]]:
        for site in sites:
            method = enclosing_method(site.scope, None)
            if method is None or method.parent is None:
                continue
            cls = self.classes.class_facts(method.parent)
            self_name = method_self_name(method)
            if cls is None or self_name is None:
                continue
            if method is site.scope:
                if site.form is Form.DECORATOR and self_is_static(site, self_name):
                    yield cls, Holder(site, method, self_name, static_self=True)
            else:
                yield cls, Holder(site, method, self_name)
        for scope, call, target, transform, loops in self.finder.bound_methods():
            found = self._bound_method(scope, call, target, transform, loops)
            if found is not None:
                yield found

    def _bound_method(
        self,
        scope: Scope,
        call: ast.Call,
        target: ast.Attribute,
        transform: str,
        loops: tuple[ast.AST, ...],
    ) -> tuple[ClassFacts, Holder] | None:
        """``jax.jit(self.compute)`` or ``jax.jit(obj.compute)``: the method, with its class."""
        assert isinstance(target.value, ast.Name)
        cls = self._class_of(scope, target.value.id, (call.lineno, call.col_offset))
        if cls is None:
            return None
        method = cls.methods.get(target.attr)
        self_name = method_self_name(method) if method is not None else None
        if method is None or self_name is None:
            return None
        probe = self.finder.call_form(scope, call, method.node, (transform, call), loops)  # type: ignore[arg-type]
        return cls, Holder(probe, method, self_name, bound_method=True)

    def _class_of(self, scope: Scope, name: str, at: tuple[int, int]) -> ClassFacts | None:
        """The class of ``name`` in ``scope``: ``self`` of a method, or an instance."""
        made = self.graph.object_class(scope, name, at)
        return self.classes.class_facts(made) if made is not None else None
