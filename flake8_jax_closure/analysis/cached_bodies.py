"""Control flow that keeps the trace of the function it is handed.

``lax.cond(p, up, down, x)``, ``lax.switch``, ``lax.fori_loop``, ``lax.while_loop`` and
``lax.scan`` trace the function they are given once and keep that trace by the function object
and the shapes the function is given. A compiled function that traces again (a new static
argument, a new outer shape) takes back the kept trace of a function defined once, with the
values it read then. ``lax.map`` is not among them: it wraps its function in a new lambda at
every call, which JAX has no trace of.

A function counts as handed to such control flow wherever the handing is written: in the
compiled function, in a helper it calls (``pick(x)`` whose body calls ``lax.cond``), through a
helper's parameter (``pick(scaled, x)`` whose body hands ``up`` on), under a name the module gives
the control flow (``branch = lax.cond``, ``ops = jax.lax`` then ``ops.cond``,
``when = partial(lax.cond)``). Reading more control flow into a call only keeps findings the
retrace rules would drop, so the names an expression may denote are all taken.
"""

from __future__ import annotations

import ast

from .facts.model import BindingKind, Read, Scope
from .facts.queries import Facts

# What the body is given: a slice for ``scan``, which a new shape of the whole array leaves the
# same; a carry or an operand for the others, which often follows the outer shapes (a new outer
# shape traces those anew) but need not (``lax.fori_loop(0, 3, step, jnp.mean(x))``).
SLICING_BODIES = frozenset({"jax.lax.scan"})
# ``jnp.piecewise`` and ``lax.platform_dependent`` hand their functions on to ``lax.switch``.
CACHED_BODIES = SLICING_BODIES | frozenset(
    {
        "jax.lax.cond", "jax.lax.switch", "jax.lax.fori_loop", "jax.lax.while_loop",
        "jax.numpy.piecewise", "jax.lax.platform_dependent",
    }
)  # fmt: skip
_PARTIAL = frozenset({"functools.partial"})
# How far aliases and helper parameters are followed.
_DEPTH = 4


def call_given(facts: Facts, node: ast.AST) -> ast.Call | None:
    """The call ``node`` is an argument of (by position or keyword), or an item of a list or
    tuple written as one (``lax.switch(i, [first, second], x)``)."""
    given = _argument_given(facts, node)
    return None if given is None else given[0]


def _argument_given(facts: Facts, node: ast.AST) -> tuple[ast.Call, ast.AST] | None:
    """``call_given``'s call, with the argument holding ``node`` (the list, the keyword)."""
    parent = facts.parent(node)
    if isinstance(parent, (ast.List, ast.Tuple)) and isinstance(parent.ctx, ast.Load):
        node, parent = parent, facts.parent(parent)
    if isinstance(parent, ast.keyword):
        node, parent = parent, facts.parent(parent)
    if isinstance(parent, ast.Call) and parent.func is not node:
        return parent, node
    return None


def cached_body_kinds(facts: Facts, read: Read, depth: int = 0) -> frozenset[str]:
    """The control flow keeping its trace that the function read at ``read`` is handed to, by
    the call it is an argument of or, through that call's parameters, by a helper of the
    module; empty when there is none."""
    given = _argument_given(facts, read.node)
    if given is None or depth > _DEPTH:
        return frozenset()
    call, argument = given
    kinds = frozenset(
        name for name in names_denoted(facts, read.scope, call.func) if name in CACHED_BODIES
    )
    helper = _helper_called(facts, read.scope, call.func)
    if helper is None:
        return kinds
    parameter = _parameter_given(helper, call, argument)
    if parameter is None:
        return kinds
    if any(b.kind is not BindingKind.PARAM for b in facts.bindings_of(helper, parameter)):
        return kinds  # ``up = partial(up)`` first: what is handed on is new at each trace
    for inner in facts.reads_within(helper):
        if inner.name == parameter and facts.resolve(inner.scope, parameter) is helper:
            kinds |= cached_body_kinds(facts, inner, depth + 1)
    return kinds


def names_denoted(facts: Facts, scope: Scope, expr: ast.expr, depth: int = 0) -> set[str]:
    """The imported names ``expr`` may denote: ``jax.lax.cond`` for ``lax.cond``, for
    ``branch`` after ``branch = lax.cond`` (any of its bindings), for ``ops.cond`` after ``ops =
    jax.lax``, for ``when`` after ``when = partial(lax.cond)``."""
    names: set[str] = set()
    if depth > _DEPTH:
        return names
    direct = facts.qualified_name(scope, expr)
    if direct is not None:
        names.add(direct)
    if isinstance(expr, ast.Name):
        owner = facts.resolve(scope, expr.id)
        for binding in facts.bindings_of(owner, expr.id):
            if binding.value is not None and binding.kind is not BindingKind.IMPORT:
                names |= names_denoted(facts, binding.scope, binding.value, depth + 1)
    elif isinstance(expr, ast.Attribute):
        names |= {
            f"{base}.{expr.attr}" for base in names_denoted(facts, scope, expr.value, depth + 1)
        }
    elif isinstance(expr, ast.IfExp):
        names |= names_denoted(facts, scope, expr.body, depth + 1)
        names |= names_denoted(facts, scope, expr.orelse, depth + 1)
    elif isinstance(expr, ast.Call) and expr.args:
        if names_denoted(facts, scope, expr.func, depth + 1) & _PARTIAL:
            names |= names_denoted(facts, scope, expr.args[0], depth + 1)
    return names


def _helper_called(facts: Facts, scope: Scope, func: ast.expr) -> Scope | None:
    """The one ``def`` of the module a call by name reaches."""
    if not isinstance(func, ast.Name):
        return None
    owner = facts.resolve(scope, func.id)
    bindings = facts.bindings_of(owner, func.id)
    if len(bindings) != 1 or bindings[0].kind is not BindingKind.DEF:
        return None
    return facts.scope_of(bindings[0].node)


def _parameter_given(helper: Scope, call: ast.Call, argument: ast.AST) -> str | None:
    """The parameter of ``helper`` that ``argument`` of ``call`` binds, when the call shows it:
    a position before any ``*args`` of the call, or a keyword."""
    node = helper.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    positional = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    for index, given in enumerate(call.args):
        if isinstance(given, ast.Starred):
            return None
        if given is argument:
            return positional[index] if index < len(positional) else None
    for keyword in call.keywords:
        if keyword is argument:
            return keyword.arg
    return None
