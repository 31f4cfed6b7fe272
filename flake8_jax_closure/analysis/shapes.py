"""The shapes of the arrays a call writes out: ``f(np.array([1, 2, 3]))`` passes shape ``(3,)``.

JAX traces a compiled function again for arguments of a new shape, and the new trace reads
closures and globals afresh (but not in bodies handed to ``lax.scan``, whose traces JAX keeps
by the shapes of their slices: see ``captures``). Test suites call one compiled function on
literal arrays of a new shape after each change of what it reads (``rev(np.array([1, 2,
3]))``, then a 2-D array).
"""

from __future__ import annotations

import ast
import math

from .facts.queries import Facts

Shape = tuple[int, ...]
# ``np.array([...])``, ``jnp.asarray([...])``: whatever the module is called.
_ARRAY_MAKERS = frozenset({"array", "asarray"})
# ``jnp.ones(3)``, ``np.zeros((2, 3))``: made from a literal shape.
_SHAPE_MAKERS = frozenset({"ones", "zeros", "empty"})


def call_shapes(facts: Facts, callee: ast.AST) -> tuple[Shape, ...] | None:
    """The shapes of every argument of the call whose callee is ``callee``; None unless the
    call passes only positional literal arrays."""
    call = facts.parent(callee)
    if not isinstance(call, ast.Call) or call.func is not callee or call.keywords:
        return None
    shapes = tuple(_array_shape(argument) for argument in call.args)
    if not shapes or any(shape is None for shape in shapes):
        return None
    return shapes  # type: ignore[return-value]


def _array_shape(expr: ast.expr) -> Shape | None:
    if not (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and len(expr.args) == 1
        and not expr.keywords
    ):
        return None
    maker, argument = expr.func.attr, expr.args[0]
    if maker in _ARRAY_MAKERS:
        return _nested_shape(argument)
    if maker in _SHAPE_MAKERS:
        return _literal_shape(argument)
    if maker == "arange" and isinstance(argument, ast.Constant):
        value = argument.value
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            return (math.ceil(value),)
    return None


def _literal_shape(node: ast.expr) -> Shape | None:
    """``3`` or ``(2, 3)``: the shape argument of ``ones``, ``zeros``, ``empty``."""
    elements = node.elts if isinstance(node, ast.Tuple) else [node]
    sizes = [e.value for e in elements if isinstance(e, ast.Constant) and type(e.value) is int]
    return tuple(sizes) if len(sizes) == len(elements) else None


def _nested_shape(node: ast.expr) -> Shape | None:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, complex, bool):
        return ()
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return None
    inner = {_nested_shape(element) for element in node.elts}
    if len(inner) != 1 or None in inner:
        return None
    (shape,) = inner
    assert shape is not None
    return (len(node.elts), *shape)
