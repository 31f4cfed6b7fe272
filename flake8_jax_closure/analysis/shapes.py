"""The shapes of the arrays a call writes out: ``f(np.array([1, 2, 3]))`` passes shape ``(3,)``.

JAX traces a compiled function again for arguments of a new shape, and the new trace reads
closures and globals afresh. Test suites call one compiled function on literal arrays of a new
shape after each change of what it reads (``rev(np.array([1, 2, 3]))``, then a 2-D array).
"""

from __future__ import annotations

import ast

from .scopes import Facts

Shape = tuple[int, ...]
# ``np.array([...])``, ``jnp.asarray([...])``: whatever the module is called.
_ARRAY_MAKERS = frozenset({"array", "asarray"})


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
    if (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in _ARRAY_MAKERS
        and len(expr.args) == 1
        and not expr.keywords
    ):
        return _nested_shape(expr.args[0])
    return None


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
