"""The compiled function's name and its other uses: the reads of it that compile calls make
(renamed with the def), plain uses (served by a plain wrapper under the old name), and calls of
itself (passing the lifted values on)."""

from __future__ import annotations

import ast

from ..analysis.compiled import CompiledFunction, Form
from ..analysis.facts.model import BindingKind, Read
from ..analysis.facts.queries import Facts
from ..analysis.names import PASSTHROUGH_TRANSFORMS
from ..positions import SourceLines
from .layout import Layout
from .model import FunctionFix, NoFix
from .names import Names


class UsePlanner:
    """Plans what happens to the compiled function's name and the reads of it."""

    def __init__(self, facts: Facts, source: SourceLines, names: Names, layout: Layout) -> None:
        self.facts = facts
        self.source = source
        self.names = names
        self.layout = layout

    def plan_names(self, fix: FunctionFix, sites: list[CompiledFunction]) -> None:
        """Decorators for the wrapper; for a function compiled by call, the def's new name."""
        if fix.raw_name is not None:
            return  # a bound method: named with its split
        function = sites[0].function
        decorated = [site for site in sites if site.form is Form.DECORATOR]
        if decorated:
            assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
            # Decorators above the compile transform wrap the public function (a registry keyed
            # by ``__name__``, a logger); the transform and those below it make the compiled one.
            fix.wrapper_decorators = function.decorator_list.index(decorated[0].site)
            return
        if not isinstance(function, ast.FunctionDef):
            return
        definition_scope = self.facts.scope_of(function).parent
        assert definition_scope is not None
        bindings = self.facts.bindings_of(definition_scope, function.name)
        if sum(b.kind is BindingKind.DEF for b in bindings) > 1:
            # ``def update`` in both branches of an ``if``: renaming one leaves the compile call
            # reading a name the other branch never binds (``f = jax.jit(f)`` is no other def).
            raise NoFix(
                f"'{function.name}' has more than one def in its scope; the fix cannot tell which "
                "one the compile call takes"
            )
        fix.raw_name = self.names.fresh(f"_{function.name.strip('_')}_impl", definition_scope)
        compile_arguments = {
            id(a) for s in sites if isinstance(s.site, ast.Call) for a in s.site.args
        }
        for read in self.facts.reads_of(definition_scope, function.name):
            if id(read.node) in compile_arguments or self._is_wrapped_argument(read, sites):
                fix.renamed_reads.append(self.source.span(read.node))

    def plan_recursion(self, fix: FunctionFix, sites: list[CompiledFunction]) -> None:
        """Calls of the function by itself must pass the lifted values on: through the public
        wrapper they would read the variables while tracing, and bake them in again."""
        function = sites[0].function
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        name = function.name
        if fix.method_self is not None:
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr == name
                    and isinstance(node.value, ast.Name)
                    and node.value.id == fix.method_self
                ):
                    raise NoFix(
                        f"'{name}' calls itself through '{fix.method_self}' (line {node.lineno}); "
                        "pass the values through that call by hand"
                    )
            return
        facts = self.facts
        scope = facts.scope_of(function)
        assert scope.parent is not None
        inside = {id(inner) for inner in scope.walk()}
        # The name means the compiled object when a site binds it (``@jax.jit``,
        # ``f = jax.jit(f)``): call the compiled function. Otherwise it is the raw function.
        compiled = any(site.bound_name == name for site in sites)
        target = fix.compiled_name if compiled else fix.raw_name or name
        for read in facts.reads_of(scope.parent, name):
            if id(read.scope) not in inside:
                continue
            parent = facts.parent(read.node)
            if not isinstance(parent, ast.Call) or parent.func is not read.node:
                raise NoFix(
                    f"'{name}' refers to itself without calling itself (line {read.line}); the "
                    "lifted values cannot be passed on"
                )
            fix.recursive_calls.append((self.source.span(parent), target))
            fix.statements.add(self.layout.statement_span(function))

    def check_only_compiled(
        self, fix: FunctionFix, function: ast.FunctionDef, sites: list[CompiledFunction]
    ) -> None:
        """A function compiled by call gains parameters: where it is also used plainly, a plain
        wrapper under its old name passes the values as they are when it runs (those uses are
        not compiled, so they were never stale)."""
        facts = self.facts
        name = function.name
        definition_scope = facts.scope_of(function).parent
        assert definition_scope is not None
        compile_arguments = {
            id(a) for s in sites if isinstance(s.site, ast.Call) for a in s.site.args
        }
        # After ``f = jax.jit(f)``, the name means the compiled object.
        rebound_at = [s.created_at for s in sites if s.bound_name == name]
        inside = {id(inner) for inner in facts.scope_of(function).walk()}
        for read in facts.reads_of(definition_scope, name):
            if id(read.node) in compile_arguments or self._is_wrapped_argument(read, sites):
                continue
            if id(read.scope) in inside:
                continue  # recursion: redirected with the lifted values (``plan_recursion``)
            if any(read.start > position for position in rebound_at):
                continue
            if function.decorator_list:
                raise NoFix(
                    f"'{name}' is decorated and also used without compilation (line "
                    f"{read.line}); its plain uses would need the lifted values too"
                )
            fix.plain_wrapper = True
            return

    def _is_wrapped_argument(self, read: Read, sites: list[CompiledFunction]) -> bool:
        """``jax.jit(jax.grad(f))``: ``f`` reaches the compile call through a transform."""
        node: ast.AST | None = read.node
        while node is not None:
            parent = self.facts.parent(node)
            if not isinstance(parent, ast.Call):
                return False
            if any(parent is site.site for site in sites):
                return True
            callee = self.facts.qualified_name(read.scope, parent.func)
            if callee not in PASSTHROUGH_TRANSFORMS:
                return False
            node = parent
        return False
