"""The shapes of the arrays a call writes out: ``f(np.array([1, 2, 3]))`` passes shape ``(3,)``.

JAX traces a compiled function again for arguments of a new shape, and the new trace reads
closures and globals afresh (but not in bodies handed to ``lax.scan``, whose traces JAX keeps
by the shapes of their slices: see ``captures``). Test suites call one compiled function on
literal arrays of a new shape after each change of what it reads (``rev(np.array([1, 2,
3]))``, then a 2-D array), or a Python number first and an array after (``f(1.0)``, then
``f(jnp.ones(10))``).

A Python number is kept apart from an array of shape ``()``: JAX gives it a weak type of its own
kind (``f(1.0)``, ``f(2)`` and ``f(jnp.ones(()))`` are three traces).
"""

from __future__ import annotations

import ast
import math

from .facts.model import Scope
from .facts.queries import Facts

# What the trace is keyed on, as far as the call writes it: the kind of value (``"array"``, the
# Python number's type, or a static number itself, compared by ``==`` as JAX compares static
# values) and its shape.
Shape = tuple[object, tuple[int, ...]]
_ARRAY = "array"
# ``np.array([...])``, ``jnp.asarray([...])``: whatever the module is called.
_ARRAY_MAKERS = frozenset({"array", "asarray"})
# ``jnp.ones(3)``, ``np.zeros((2, 3))``: made from a literal shape.
_SHAPE_MAKERS = frozenset({"ones", "zeros", "empty"})


def call_shapes(
    facts: Facts, callee: ast.AST, scope: Scope, numbers_by_value: bool = False
) -> tuple[Shape, ...] | None:
    """The shapes of every argument of the call whose callee is ``callee``, in ``scope``; None
    unless the call passes only positional literal arrays or Python numbers (``f(1.0)``: shape
    ``()``), or names each bound once, in ``scope``, to one (``x = jnp.arange(3.0)``). Mapped
    by ``vmap(callee)(batch)`` over the leading axis, the function sees each example's shape:
    the batch's less that axis. ``numbers_by_value``: Python numbers are static, keyed by
    their values (``equinox.filter_jit``)."""
    mapped: ast.AST | None = None
    call = facts.parent(callee)
    if isinstance(call, ast.Call) and _maps_leading_axis(call, callee):
        mapped = facts.parent(call)  # ``callee`` is the function handed to ``vmap``
    elif isinstance(callee, ast.Call) and isinstance(callee.func, ast.Call):
        inner = callee.func  # ``callee`` is the call of what ``vmap`` returned
        if inner.args and _maps_leading_axis(inner, inner.args[0]):
            mapped = callee
    if mapped is not None:
        if not isinstance(mapped, ast.Call) or not isinstance(mapped.func, ast.Call):
            return None
        shapes = _argument_shapes(facts, mapped, scope, numbers_by_value)
        if shapes is None or any(kind != _ARRAY or not dims for kind, dims in shapes):
            return None
        return tuple((kind, dims[1:]) for kind, dims in shapes)
    if not isinstance(call, ast.Call) or call.func is not callee:
        return None
    return _argument_shapes(facts, call, scope, numbers_by_value)


def _argument_shapes(
    facts: Facts, call: ast.Call, scope: Scope, numbers_by_value: bool
) -> tuple[Shape, ...] | None:
    if call.keywords:
        return None
    shapes = tuple(
        _array_shape(_named(facts, argument, scope), numbers_by_value) for argument in call.args
    )
    if not shapes or any(shape is None for shape in shapes):
        return None
    return shapes  # type: ignore[return-value]


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def bound_by_comprehension(facts: Facts, name: ast.Name) -> bool:
    """``[f(x, order) for order in orders]``: the comprehension's own variable, not the name
    of the same spelling its scope binds."""
    node: ast.AST | None = facts.parent(name)
    while node is not None and not isinstance(node, ast.stmt):
        if isinstance(node, _COMPREHENSIONS) and any(
            isinstance(target, ast.Name) and target.id == name.id
            for generator in node.generators
            for target in ast.walk(generator.target)
        ):
            return True
        if isinstance(node, ast.Lambda) and name.id in {
            a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
        }:
            return True
        node = facts.parent(node)
    return False


def _maps_leading_axis(call: ast.Call, callee: ast.AST) -> bool:
    """``jax.vmap(callee)`` (or ``in_axes=0``): maps every argument over its first axis."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name != "vmap" or call.args != [callee]:
        return False
    return all(
        keyword.arg == "in_axes"
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value == 0
        and type(keyword.value.value) is int
        for keyword in call.keywords
    )


def _named(facts: Facts, expr: ast.expr, scope: Scope) -> ast.expr:
    """What a name bound once in ``scope`` itself holds; else the expression."""
    if not isinstance(expr, ast.Name) or bound_by_comprehension(facts, expr):
        return expr
    owner = facts.resolve(scope, expr.id)
    if owner is not scope:
        return expr
    bindings = facts.bindings_of(owner, expr.id)
    if len(bindings) != 1 or bindings[0].value is None:
        return expr
    return bindings[0].value


def _array_shape(expr: ast.expr, numbers_by_value: bool = False) -> Shape | None:
    if isinstance(expr, ast.Constant) and type(expr.value) in (int, float, complex, bool):
        # A Python number: a scalar, weakly typed by its kind (a bool is a bool array); or a
        # static value, keyed by what it is.
        if numbers_by_value:
            return ("static", expr.value), ()
        return type(expr.value).__name__, ()
    if not (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and len(expr.args) == 1
        and not expr.keywords
    ):
        return None
    maker, argument = expr.func.attr, expr.args[0]
    dims: tuple[int, ...] | None = None
    if maker in _ARRAY_MAKERS:
        dims = _nested_shape(argument)
        if dims == ():
            return None  # ``jnp.array(1.0)`` is weakly typed like the number, ``np.array`` not
    elif maker in _SHAPE_MAKERS:
        dims = _literal_shape(argument)
    elif maker == "arange" and isinstance(argument, ast.Constant):
        value = argument.value
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            dims = (math.ceil(value),)
    return None if dims is None else (_ARRAY, dims)


def _literal_shape(node: ast.expr) -> tuple[int, ...] | None:
    """``3`` or ``(2, 3)``: the shape argument of ``ones``, ``zeros``, ``empty``."""
    elements = node.elts if isinstance(node, ast.Tuple) else [node]
    sizes = [e.value for e in elements if isinstance(e, ast.Constant) and type(e.value) is int]
    return tuple(sizes) if len(sizes) == len(elements) else None


def _nested_shape(node: ast.expr) -> tuple[int, ...] | None:
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
