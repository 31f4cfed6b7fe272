"""What a captured variable's bindings say about it: its first value, whether it names a module
or a class, whether it holds a ``jax.Ref``. The capture analysis (``captures``) asks these to
decide which changes of the variable are changes of the value the compiled code read."""

from __future__ import annotations

import ast

from .facts.model import Binding, BindingKind, Mutation, Read, Scope, ScopeKind, exclusive
from .facts.queries import Facts
from .names import REF_CONSTRUCTORS


def initial_bindings(bindings: list[Binding], owner: Scope) -> list[Binding]:
    """The bindings that first give the variable a value in its own scope, outside any loop:
    the first one, and its alternatives in other branches (``if dense: fn = a else: fn = b``,
    ``try: import x except ImportError: x = None``)."""
    own = [b for b in bindings if b.scope is owner]
    initial: list[Binding] = []
    for index, binding in enumerate(own):
        if binding.loops:
            break
        if all(exclusive(earlier.branches, binding.branches) for earlier in own[:index]):
            initial.append(binding)
    return initial


def same_import(binding: Binding, initial: Binding) -> bool:
    """``import jax.numpy as jnp`` again in a later cell binds the same module: no change."""
    return (
        binding.kind is BindingKind.IMPORT
        and initial.kind is BindingKind.IMPORT
        and binding.imported == initial.imported
    )


def one_constant(bindings: list[Binding]) -> bool:
    """Every binding assigns the same literal (``n = 5`` in one cell, ``n = 5`` again in a
    later one): rebinding it changes nothing a trace read."""
    values = [b.value for b in bindings if b.kind is BindingKind.ASSIGN]
    if len(values) != len(bindings) or not values:
        return False
    first = values[0]
    return all(
        isinstance(v, ast.Constant)
        and isinstance(first, ast.Constant)
        and type(v.value) is type(first.value)
        and v.value == first.value
        for v in values
    )


def holds_value(facts: Facts, bindings: list[Binding]) -> bool:
    """Whether in-place changes of the variable are changes of a value: not of a module or a
    function (``np.append(...)`` is a call), but of classes' attributes."""
    if not bindings:
        return True  # a global assigned nowhere in the module (builtins excluded by callers)
    return not all(
        b.kind in (BindingKind.IMPORT, BindingKind.DEF) or module_value(facts, b) for b in bindings
    )


def names_module(facts: Facts, bindings: list[Binding]) -> bool:
    """Whether every binding of the variable is a module."""
    return bool(bindings) and all(
        b.kind is BindingKind.IMPORT and b.imported is not None or module_value(facts, b)
        for b in bindings
    )


def module_path(facts: Facts, read: Read) -> tuple[str, ...]:
    """The path read through a module: ``np.sum(x)`` reads ``.sum``, where for other values a
    method call may read anything of its receiver."""
    node = read.path_node if read.path_node is not None else read.node
    attribute = facts.parent(node)
    if isinstance(attribute, ast.Attribute) and attribute.value is node:
        call = facts.parent(attribute)
        if isinstance(call, ast.Call) and call.func is attribute:
            return (*read.path, f".{attribute.attr}")
    return read.path


def module_value(facts: Facts, binding: Binding) -> bool:
    """``d2l = sys.modules[__name__]``, ``np = importlib.import_module("numpy")``: an import."""
    value = binding.value
    if isinstance(value, ast.Subscript):
        return facts.qualified_name(binding.scope, value.value) == "sys.modules"
    if isinstance(value, ast.Call):
        return facts.qualified_name(binding.scope, value.func) == "importlib.import_module"
    return False


def holds_ref(facts: Facts, bindings: list[Binding]) -> bool:
    """Whether the variable holds a ``jax.Ref``: compiled code reads its contents live."""
    return any(
        isinstance(b.value, ast.Call)
        and facts.qualified_name(b.scope, b.value.func) in REF_CONSTRUCTORS
        for b in bindings
    )


def fed_from_arguments(
    scope: Scope, mutations: list[Mutation], reads: list[Read]
) -> list[tuple[str, ...]]:
    """The paths the compiled function sets from its own arguments before it reads them
    (``model.params = params`` as a statement of its body, before any read of ``model``): the
    trace reads the argument, so no change made outside reaches the compiled result through
    them. Only unconditional statements of the body itself count."""
    body = getattr(scope.node, "body", [])
    top = {id(statement) for statement in body} if isinstance(body, list) else set()
    arguments = set(scope.params[1:] if _is_method(scope) else scope.params)
    first_read = min((r.start for r in reads), default=None)
    fed = []
    for mutation in mutations:
        statement = mutation.node
        if (
            mutation.scope is scope
            and id(statement) in top
            and not mutation.guards
            and not mutation.loops
            and mutation.value is not None
            and (first_read is None or mutation.end <= first_read)
            and any(isinstance(n, ast.Name) and n.id in arguments for n in ast.walk(mutation.value))
        ):
            fed.append(mutation.path)
    return fed


def _is_method(scope: Scope) -> bool:
    parent = scope.parent
    return parent is not None and parent.kind is ScopeKind.CLASS
