"""Calls that always raise: a compiled function whose trace cannot finish.

No compiled call of such a function returns and nothing is cached, so nothing it reads can go
stale: its captures are not reported.

``float(x)``, ``int(x)``, ``bool(x)`` or ``x.item()`` on a value computed from a traced
argument of a ``jax.jit`` function raises ``ConcretizationTypeError`` while JAX traces it: no
call of that function ever returns, and nothing is cached. A function whose body runs such a
call unconditionally raises too, and a loop whose body runs one unconditionally never starts a
second pass: no later pass reuses a trace made in the first.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from .callgraph.classes import ObjectClasses
from .compiled import CompiledFunction, keyword
from .facts.model import BindingKind, Scope, ScopeKind
from .facts.queries import Facts
from .layout import LAYOUT_FIELDS
from .misspelt import misspelt_attribute

_TRACING_TRANSFORMS = frozenset({"jax.jit", "jax.pmap"})
_CONCRETE = frozenset({"float", "int", "bool", "complex"})
_CONCRETE_METHODS = frozenset({"item", "tolist"})
_DEPTH = 3


class FailingCalls:
    """Which calls of the module always raise, as far as its code shows."""

    def __init__(self, facts: Facts, classes: ObjectClasses, compiled: list[CompiledFunction]):
        self.facts = facts
        self.classes = classes
        self._compiled = {id(site.scope): site for site in compiled}
        self._known: dict[int, bool] = {}
        self._unfinished: dict[int, bool] = {}

    def loop_stops_in_first_pass(self, scope: Scope, loop: ast.AST) -> bool:
        """A statement of the loop's own body (not under an ``if``) calls a function that
        always raises: the first pass ends the program."""
        for statement in getattr(loop, "body", []):
            if isinstance(statement, (ast.If, ast.Try, ast.While, ast.For, ast.With)):
                continue
            if any(self._raises(scope, call, _DEPTH) for call in _calls(statement)):
                return True
            if isinstance(statement, (ast.Break, ast.Continue, ast.Return, ast.Raise)):
                return False
        return False

    def trace_never_finishes(self, site: CompiledFunction) -> bool:
        """Every trace of the compiled function raises: it makes a traced value concrete, or
        reads a misspelt attribute of ``self`` (``misspelt``). No call of it ever returns,
        and nothing is cached."""
        known = self._unfinished.get(id(site.scope))
        if known is not None:
            return known
        function, cls = site.function, site.scope.parent
        unfinished = (site.transform in _TRACING_TRANSFORMS and _trace_fails(site)) or (
            isinstance(function, ast.FunctionDef)
            and cls is not None
            and isinstance(cls.node, ast.ClassDef)
            and misspelt_attribute(self.facts.tree, function, cls.node) is not None
        )
        self._unfinished[id(site.scope)] = unfinished
        return unfinished

    def _raises(self, scope: Scope, call: ast.Call, depth: int) -> bool:
        function = self._callee(scope, call)
        return function is not None and self.always_raises(function, depth)

    def always_raises(self, function: Scope, depth: int = _DEPTH) -> bool:
        known = self._known.get(id(function))
        if known is not None:
            return known
        self._known[id(function)] = False  # a recursive call decides nothing
        site = self._compiled.get(id(function))
        if site is not None:
            raises = self.trace_never_finishes(site)
        elif depth > 0:
            raises = any(
                self._raises(function, call, depth - 1)
                for statement in _straight_body(function.node)
                for call in _calls(statement)
            )
        else:
            raises = False
        self._known[id(function)] = raises
        return raises

    def _callee(self, scope: Scope, call: ast.Call) -> Scope | None:
        """The function of this module a call runs: ``helper(x)``, ``self.update(x)``, or
        ``obj.step(x)`` on an object of a class the code shows."""
        facts = self.facts
        func = call.func
        if isinstance(func, ast.Name):
            owner = facts.resolve(scope, func.id)
            bindings = facts.bindings_of(owner, func.id)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.DEF:
                return facts.scope_of(bindings[0].node)
            return None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            position = (call.lineno, call.col_offset)
            cls = self.classes.object_class(scope, func.value.id, position)
            if cls is None:
                return None
            for child in cls.children:
                if child.kind is ScopeKind.FUNCTION and child.name == func.attr:
                    return child
        return None


def _trace_fails(site: CompiledFunction) -> bool:
    """Whether the compiled function's body, unconditionally, makes a traced value concrete."""
    function = site.function
    if isinstance(function, ast.Lambda):
        return False
    traced = set(_traced_parameters(site))
    if not traced:
        return False
    for statement in _straight_body(function):
        if any(_concretises(call, traced) for call in _calls(statement)):
            return True
        for target, value in _assignments(statement):
            if _reads(value, traced):
                traced |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return False


def _traced_parameters(site: CompiledFunction) -> list[str]:
    arguments = site.function.args
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    call = site.transform_call
    static_numbers = _constants(call, "static_argnums", int)
    static_names = _constants(call, "static_argnames", str)
    traced = [
        name
        for index, name in enumerate(names)
        if index not in static_numbers and name not in static_names
    ]
    if site.scope.parent is not None and site.scope.parent.kind is ScopeKind.CLASS and names:
        if names[0] in traced and 0 not in static_numbers:
            return []  # a bound method compiled whole: ``self`` is not an array
    return traced


def _constants(call: ast.Call | None, option: str, kind: type) -> set[Any]:
    """The constants of that kind an option of the compile call names (``static_argnums=(0,
    2)``, ``static_argnames="n"``)."""
    given = keyword(call, option) if call is not None else None
    if given is None:
        return set()
    return {
        n.value for n in ast.walk(given) if isinstance(n, ast.Constant) and type(n.value) is kind
    }


def _concretises(call: ast.Call, traced: set[str]) -> bool:
    func = call.func
    if isinstance(func, ast.Name) and func.id in _CONCRETE and len(call.args) == 1:
        return _reads(call.args[0], traced)
    if isinstance(func, ast.Attribute) and func.attr in _CONCRETE_METHODS and not call.args:
        return _reads(func.value, traced)
    return False


def _reads(value: ast.expr, traced: set[str]) -> bool:
    """Whether the expression reads a traced value for its contents (not ``x.shape``,
    ``len(x)``)."""
    if isinstance(value, ast.Name):
        return value.id in traced
    if isinstance(value, ast.Attribute) and value.attr in LAYOUT_FIELDS:
        return False
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "len":
        return False
    if isinstance(value, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return False
    return any(_reads(child, traced) for child in ast.iter_child_nodes(value))  # type: ignore[arg-type]


def _assignments(statement: ast.stmt) -> Iterator[tuple[ast.expr, ast.expr]]:
    if isinstance(statement, ast.Assign):
        for target in statement.targets:
            yield target, statement.value
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
        yield statement.target, statement.value


def _straight_body(node: ast.AST) -> Iterator[ast.stmt]:
    """The statements a run of the function always reaches: its body's own statements up to
    the first ``return`` or ``raise`` (those under an ``if``, a loop or a ``try`` may not run)."""
    for statement in getattr(node, "body", []):
        if isinstance(statement, (ast.If, ast.Try, ast.While, ast.For, ast.AsyncFor, ast.Match)):
            continue
        yield statement
        if isinstance(statement, (ast.Return, ast.Raise)):
            return


def _calls(statement: ast.stmt) -> Iterator[ast.Call]:
    """The calls a statement makes itself (not those in a nested ``def``, ``lambda`` or
    class, which run later if at all)."""
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Call):
            yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
            ):
                pending.append(child)
