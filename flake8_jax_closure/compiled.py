"""Which functions are compiled: decorators and calls of a compile transform, resolved through
imports and aliases, and the function each one compiles."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from .names import PARTIAL, PASSTHROUGH_TRANSFORMS
from .scopes import BindingKind, Order, Scope, ScopeModel

FunctionNode = cst.FunctionDef | cst.Lambda


class Form(enum.Enum):
    DECORATOR = "decorator"  # @jax.jit def f(...)
    ASSIGNED = "assigned"  # g = jax.jit(f)
    INLINE = "inline"  # jax.jit(f)(x)
    PASSED = "passed"  # return jax.jit(f), Model(step=jax.jit(f)), ...


@dataclass(eq=False)
class CompiledFunction:
    function: FunctionNode
    scope: Scope  # the compiled function's own scope
    transform: str  # qualified name of the compile transform, as the user knows it
    form: Form
    # The decorator, or the call of the transform that makes the compiled object.
    site: cst.Decorator | cst.Call
    # The scope where the compiled object is created and bound, and from when it exists.
    site_scope: Scope
    created_at: Order
    created_loops: tuple[cst.CSTNode, ...]
    bound_name: str | None
    # The compile call itself, with its options (static_argnums, ...), where there is one.
    transform_call: cst.Call | None

    @property
    def name(self) -> str:
        if isinstance(self.function, cst.FunctionDef):
            return self.function.name.value
        return self.bound_name or "<lambda>"


class CompiledFunctionFinder:
    """Finds compiled functions in one module's scope model."""

    def __init__(self, model: ScopeModel, compile_functions: frozenset[str]) -> None:
        self.model = model
        self.compile_functions = compile_functions

    def qualified_name(self, scope: Scope, expr: cst.BaseExpression) -> str | None:
        return self.model.qualified_name(scope, expr)

    def compile_transform(
        self, scope: Scope, expr: cst.BaseExpression
    ) -> tuple[str, cst.Call | None] | None:
        """The compile transform ``expr`` applies when used as a decorator, with its options call.

        Accepts ``jax.jit``, ``jax.jit(static_argnums=0)`` (no function given yet) and
        ``partial(jax.jit, static_argnums=0)``.
        """
        name = self.qualified_name(scope, expr)
        if name in self.compile_functions:
            return name, None
        if not isinstance(expr, cst.Call):
            return None
        callee = self.qualified_name(scope, expr.func)
        if callee in self.compile_functions and not _positional(expr):
            return callee, expr
        if callee == PARTIAL and expr.args and expr.args[0].keyword is None:
            inner = self.qualified_name(scope, expr.args[0].value)
            if inner in self.compile_functions:
                return inner, expr
        return None

    # -- the compiled function behind an expression -----------------------------------------

    def function_behind(
        self, scope: Scope, expr: cst.BaseExpression, depth: int = 0
    ) -> FunctionNode | None:
        if depth > 8:
            return None
        if isinstance(expr, cst.Lambda):
            return expr
        if isinstance(expr, cst.Name):
            owner = self.model.resolve(scope, expr.value)
            defs = [
                b.node
                for b in self.model.bindings_of(owner, expr.value)
                if b.kind is BindingKind.DEF and isinstance(b.node, cst.FunctionDef)
            ]
            return defs[-1] if len(defs) == 1 else None
        if isinstance(expr, cst.Call):
            callee = self.qualified_name(scope, expr.func)
            positional = _positional(expr)
            if callee in PASSTHROUGH_TRANSFORMS and positional:
                return self.function_behind(scope, positional[0], depth + 1)
        return None

    # -- the search ----------------------------------------------------------------------------

    def find(self) -> list[CompiledFunction]:
        """Every compile site; a function compiled in several places appears once per site."""
        return [*self._decorated(), *self._called()]

    def _decorated(self) -> Iterator[CompiledFunction]:
        for scope, function in self.model.decorated:
            for decorator in function.decorators:
                transform = self.compile_transform(scope, decorator.decorator)
                if transform is None:
                    continue
                own_scope = self.model.scope_of(function)
                yield CompiledFunction(
                    function=function,
                    scope=own_scope,
                    transform=transform[0],
                    form=Form.DECORATOR,
                    site=decorator,
                    site_scope=scope,
                    created_at=self.model.order_end(function),
                    created_loops=own_scope.loops,
                    bound_name=function.name.value,
                    transform_call=transform[1],
                )
                break

    def _called(self) -> Iterator[CompiledFunction]:
        for site in self.model.calls:
            call = site.node
            assert isinstance(call, cst.Call)
            transform = self._transform_of_call(site.scope, call)
            if transform is None:
                continue
            positional = _positional(call)
            target = positional[0] if positional else _keyword(call, "fun")
            if target is None:
                continue
            function = self.function_behind(site.scope, target)
            if function is None:
                continue
            yield self._call_form(site.scope, call, function, transform, site.loops)

    def _transform_of_call(
        self, scope: Scope, call: cst.Call
    ) -> tuple[str, cst.Call | None] | None:
        callee = self.qualified_name(scope, call.func)
        if callee in self.compile_functions:
            return callee, call
        if isinstance(call.func, cst.Call):
            # ``partial(jax.jit, static_argnums=0)(f)`` or ``jax.jit(static_argnums=0)(f)``.
            return self.compile_transform(scope, call.func)
        return None

    def _call_form(
        self,
        scope: Scope,
        call: cst.Call,
        function: FunctionNode,
        transform: tuple[str, cst.Call | None],
        loops: tuple[cst.CSTNode, ...],
    ) -> CompiledFunction:
        parent = self.model.parent(call)
        form, bound_name = Form.PASSED, None
        created_at = self.model.order(call)
        if isinstance(parent, cst.Call) and parent.func is call:
            form = Form.INLINE
        elif isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is call:
            targets = (
                [t.target for t in parent.targets]
                if isinstance(parent, cst.Assign)
                else [parent.target]
            )
            if len(targets) == 1 and isinstance(targets[0], cst.Name):
                form, bound_name = Form.ASSIGNED, targets[0].value
                created_at = self.model.order_end(parent)
        return CompiledFunction(
            function=function,
            scope=self.model.scope_of(function),
            transform=transform[0],
            form=form,
            site=call,
            site_scope=scope,
            created_at=created_at,
            created_loops=loops,
            bound_name=bound_name,
            transform_call=transform[1],
        )


def _positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [arg.value for arg in call.args if arg.keyword is None and not arg.star]


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None
