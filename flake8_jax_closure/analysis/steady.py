"""A rebinding that sets the same value in every pass of a loop.

``num_train = num_records // batch_size`` written in an epoch loop, whose inputs nothing in
the loop rebinds or changes, computes one value again and again. A compiled call traced after
it in one pass reads the value every later pass sets too: repeating it makes nothing stale.
"""

from __future__ import annotations

import ast

from .bindings import pure_library_call
from .blocks import held_by_try_or_with
from .facts.model import FUNCTION_KINDS, Binding, BindingKind, Mutation, Scope
from .facts.queries import Facts
from .fixed_results import FunctionFinder, fixed_call_result
from .records import makes_record

# Calls that compute a value only from their arguments.
_PURE_CALLS = frozenset(
    {"int", "float", "round", "abs", "min", "max", "bool", "str", "divmod", "pow"}
)
_PURE_MODULE_CALLS = frozenset({"ceil", "floor", "sqrt", "log", "log2", "exp", "prod"})
# How many bindings of one pass are followed back (``x = f(); x = g(x); x = h(x)``).
_DEPTH = 3
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
    depth: int = 0,
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
    names = _plain_value_names(facts, change.scope, value)
    if names is None:
        return False
    first = loop.lineno  # type: ignore[attr-defined]
    last = loop.end_lineno or first  # type: ignore[attr-defined]
    for name in names:
        owner = facts.resolve(change.scope, name)
        bindings = facts.bindings_of(owner, name)
        for mutation in facts.mutations_of(owner, name):
            if first <= mutation.start[0] <= last:
                return False
            if mutation.scope is not change.scope and mutation.scope.kind in FUNCTION_KINDS:
                return False  # ``hparams["lr"] *= 0.5`` in a function the loop may call
        if any(b.scope is not owner for b in bindings):
            return False  # ``global lr`` in a function the loop may call
        if not any(first <= b.start[0] <= last for b in bindings):
            continue
        # ``optimizer = optax.chain(optimizer, clip)`` right after ``optimizer =
        # optax.adam(lr)`` in the same pass: what it reads is what that binding set.
        earlier = _set_earlier_in_pass(facts, change, bindings, loop)
        if earlier is None or depth >= _DEPTH:
            return False  # ``n = n + 1``: a new value each pass
        if not same_in_every_pass(facts, earlier, loop, elsewhere, depth + 1):
            return False
    return True


def _plain_value_names(facts: Facts, scope: Scope, value: ast.expr) -> set[str] | None:
    """The names a plain value reads: arithmetic of names, their attributes and constant
    items, and pure calls; None for anything else (a comprehension, a lambda, another call)."""
    names: set[str] = set()
    for node in ast.walk(value):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Call):
            if not (
                _pure(node.func)
                or pure_library_call(facts, scope, node)
                or makes_record(facts, scope, node)
                or _of_its_arguments(facts, scope, node.func)
            ):
                return None
        elif isinstance(node, ast.Attribute):
            continue
        elif isinstance(node, ast.Subscript):
            if not isinstance(node.slice, ast.Constant):
                return None
        elif not isinstance(node, _VALUE_NODES):
            return None
    return names


def _set_earlier_in_pass(
    facts: Facts, change: Binding, bindings: list[Binding], loop: ast.AST
) -> Binding | None:
    """The binding of ``name`` that the change reads in each pass: the last one before it in
    the same block of statements, when every binding of ``name`` in the change's loop is a
    statement of that block (no branch can bind it in one pass and not in another), only
    plain assignments lie between the two (no ``break``, ``continue`` or call that could end
    the pass with the earlier value bound), and no ``try`` or ``with`` holds the change, in
    the loop or around it: a handler, ``finally`` or ``contextlib.suppress`` may go on after
    an error between the two bindings (``1 // (run - 1)``) with the earlier value bound."""
    block = _block_of(loop, change.node)
    if block is None or held_by_try_or_with(facts.tree, change.node):
        return None
    first = loop.lineno  # type: ignore[attr-defined]
    last = loop.end_lineno or first  # type: ignore[attr-defined]
    own = [b for b in bindings if first <= b.start[0] <= last]
    if any(_block_of(loop, b.node) is not block for b in own):
        return None
    before = [b for b in own if b.start < change.start]
    if not before:
        return None
    earlier = max(before, key=lambda b: b.start)
    start = next(i for i, statement in enumerate(block) if statement is earlier.node)
    end = next(i for i, statement in enumerate(block) if statement is change.node)
    for statement in block[start + 1 : end]:
        if not isinstance(statement, ast.Assign):
            return None
        if _plain_value_names(facts, change.scope, statement.value) is None:
            return None
    return earlier


def _block_of(loop: ast.AST, statement: ast.AST) -> list[ast.stmt] | None:
    """The statement list within ``loop`` that holds ``statement`` (a binding's node)."""
    for node in ast.walk(loop):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(item is statement for item in block):
                return block
    return None


def _of_its_arguments(facts: Facts, scope: Scope, func: ast.expr) -> bool:
    """``scaled_lr(cfg)``: a function of the module, bound once, whose body only returns a
    plain value of its parameters (``c["base_lr"] * c["batch_size"] / c["ref_batch"]``), so
    given unchanged arguments it returns the same value."""
    if not isinstance(func, ast.Name):
        return False
    owner = facts.resolve(scope, func.id)
    if owner is not facts.module_scope:
        return False
    bindings = facts.bindings_of(owner, func.id)
    if len(bindings) != 1 or bindings[0].kind is not BindingKind.DEF:
        return False
    function = bindings[0].node
    if not isinstance(function, ast.FunctionDef) or function.decorator_list:
        return False
    body = [
        statement
        for statement in function.body
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
    ]  # a docstring
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return False
    arguments = function.args
    parameters = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    if arguments.vararg or arguments.kwarg:
        return False
    callees = {
        id(node.func)
        for node in ast.walk(body[0].value)
        if isinstance(node, ast.Call) and _pure(node.func)
    }
    for node in ast.walk(body[0].value):
        if isinstance(node, ast.Name) and node.id not in parameters and id(node) not in callees:
            return False  # a global: it may change between calls
        if isinstance(node, ast.Call) and not _pure(node.func):
            return False
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Constant):
            return False
        if not isinstance(node, (*_VALUE_NODES, ast.Name, ast.Call, ast.Attribute, ast.Subscript)):
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
