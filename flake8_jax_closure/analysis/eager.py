"""Calls that run eagerly: inside ``with jax.disable_jit():``.

Under ``jax.disable_jit()`` a compiled object runs its Python function as plain code: it reads
every value as it is now and leaves the object's cache as it was (``_cache_size()`` stays 0).
Such a call neither traces nor reuses a trace, so it is no step of a stale path.
"""

from __future__ import annotations

import ast
import weakref

from .facts.model import Scope
from .facts.queries import Facts
from .reachable import statements

_DISABLERS = frozenset({"jax.disable_jit", "jax.config.disable_jit"})
_DEFERRED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)

# A line range of a ``with`` block, the expressions it enters, and the ranges of the ``def``s
# and lambdas in it: their bodies run when called, not under the ``with``.
_Block = tuple[int, int, list[ast.expr], list[tuple[int, int]]]
_blocks: weakref.WeakKeyDictionary[Facts, list[_Block]] = weakref.WeakKeyDictionary()


def runs_eagerly(facts: Facts, scope: Scope, node: ast.AST) -> bool:
    """Whether ``node`` (in the code of ``scope``) sits in a ``with jax.disable_jit():``
    block of that code."""
    line = getattr(node, "lineno", None)
    if line is None:
        return False
    for first, last, entered, deferred in _with_blocks(facts):
        if (
            first <= line <= last
            and not any(start <= line <= end for start, end in deferred)
            and any(_disables_jit(facts, scope, expr) for expr in entered)
        ):
            return True
    return False


def _with_blocks(facts: Facts) -> list[_Block]:
    found = _blocks.get(facts)
    if found is None:
        found = []
        # Most modules never name it: no walk.
        named = facts.lines_of(["disable_jit"])["disable_jit"]
        for node in statements(facts.tree) if named else ():
            if isinstance(node, (ast.With, ast.AsyncWith)) and node.body:
                entered = [item.context_expr for item in node.items]
                if not any(isinstance(e, ast.Call) for e in entered):
                    continue
                deferred = [
                    (inner.lineno, inner.end_lineno or inner.lineno)
                    for statement in node.body
                    for inner in ast.walk(statement)
                    if isinstance(inner, _DEFERRED)
                ]
                last = node.body[-1].end_lineno or node.body[-1].lineno
                found.append((node.body[0].lineno, last, entered, deferred))
        _blocks[facts] = found
    return found


def _disables_jit(facts: Facts, scope: Scope, expr: ast.expr) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    if expr.args and not (isinstance(expr.args[0], ast.Constant) and expr.args[0].value is True):
        return False  # ``disable_jit(False)`` turns compilation back on
    return facts.qualified_name(scope, expr.func) in _DISABLERS
