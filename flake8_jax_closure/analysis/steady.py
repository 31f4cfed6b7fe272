"""A rebinding that sets the same value in every pass of a loop.

``num_train = num_records // batch_size`` written in an epoch loop, whose inputs nothing in
the loop rebinds or changes, computes one value again and again. A compiled call traced after
it in one pass reads the value every later pass sets too: repeating it makes nothing stale.
"""

from __future__ import annotations

import ast

from .bindings import pure_library_call
from .facts.model import Binding, BindingKind, Mutation
from .facts.queries import Facts
from .fixed_results import FunctionFinder, fixed_call_result
from .records import makes_record

# Calls that compute a value only from their arguments.
_PURE_CALLS = frozenset(
    {"int", "float", "round", "abs", "min", "max", "bool", "str", "divmod", "pow"}
)
_PURE_MODULE_CALLS = frozenset({"ceil", "floor", "sqrt", "log", "log2", "exp", "prod"})
_VALUE_NODES = (
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Constant,
    ast.Tuple,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
    ast.expr_context,
    ast.keyword,
)


def same_in_every_pass(
    facts: Facts,
    change: Binding | Mutation,
    loop: ast.AST,
    elsewhere: FunctionFinder | None = None,
) -> bool:
    """Whether the change is ``name = <expression>`` whose value nothing in ``loop`` can make
    different: plain arithmetic of names, their attributes and constant items, and pure calls
    (also of ``jax.numpy``, ``jax.random`` and optimiser constructors), where nothing in the
    loop rebinds those names or changes them in place; or ``n, idx = init()``, an item a
    closure's factory fixed (``fixed_results``; ``elsewhere`` finds a factory another module
    of the project defines)."""
    if not isinstance(change, Binding) or change.kind is not BindingKind.ASSIGN:
        return False
    if not any(own is loop for own in change.loops):
        return False  # set by a function the loop calls: from what each call is given
    value = change.value
    if value is None:
        # ``num_train, idx = train_init()``: the count a closure's factory fixed.
        return fixed_call_result(facts, change.scope, change.node, change.name, elsewhere)
    first = loop.lineno  # type: ignore[attr-defined]
    last = loop.end_lineno or first  # type: ignore[attr-defined]
    names: set[str] = set()
    for node in ast.walk(value):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Call):
            if not (
                _pure(node.func)
                or pure_library_call(facts, change.scope, node)
                or makes_record(facts, change.scope, node)
            ):
                return False
        elif isinstance(node, ast.Attribute):
            continue
        elif isinstance(node, ast.Subscript):
            if not isinstance(node.slice, ast.Constant):
                return False
        elif not isinstance(node, _VALUE_NODES):
            return False  # a comprehension, a lambda, ``await``: not a plain value
    if change.name in names:
        return False  # ``n = n + 1``: a new value each pass
    for name in names:
        owner = facts.resolve(change.scope, name)
        changed = [
            site.start[0]
            for site in (*facts.bindings_of(owner, name), *facts.mutations_of(owner, name))
        ]
        if any(first <= line <= last for line in changed):
            return False
    return True


def _pure(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in _PURE_CALLS
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in ("math", "np", "numpy")
        and func.attr in _PURE_MODULE_CALLS
    )
