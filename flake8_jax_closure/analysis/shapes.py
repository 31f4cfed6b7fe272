"""The shapes of the arrays a call writes out: ``f(np.array([1, 2, 3]))`` passes shape ``(3,)``.

JAX traces a compiled function again for arguments of a new shape, and the new trace reads
closures and globals afresh (but not in bodies handed to ``lax.scan``, whose traces JAX keeps
by the shapes of their slices: see ``captures``). Test suites call one compiled function on
literal arrays of a new shape after each change of what it reads (``rev(np.array([1, 2,
3]))``, then a 2-D array), or a Python number first and an array after (``f(1.0)``, then
``f(jnp.ones(10))``).

A Python number is kept apart from an array of shape ``()``: JAX gives it a weak type of its own
kind (``f(1.0)``, ``f(2)`` and ``f(jnp.ones(()))`` are three traces).

Notebooks bind one name again cell after cell (``x = jnp.linspace(0, 1, 100)``, later ``x =
jnp.linspace(0, 1, 200)``): a name read where exactly one plain assignment reaches it, as far as
the statements show, has the shape of what that assignment made. Whatever binds names out of
sight (``globals()``, ``exec``, a star import) or changes a NumPy array's shape in place
(``x.shape = ...``) leaves the name unknown.
"""

from __future__ import annotations

import ast
import math
import weakref

from .facts.model import Binding, BindingKind, Scope, ScopeKind
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
    if isinstance(call, ast.Call) and _maps_leading_axis(facts, scope, call, callee):
        mapped = facts.parent(call)  # ``callee`` is the function handed to ``vmap``
    elif isinstance(callee, ast.Call) and isinstance(callee.func, ast.Call):
        inner = callee.func  # ``callee`` is the call of what ``vmap`` returned
        if inner.args and _maps_leading_axis(facts, scope, inner, inner.args[0]):
            mapped = callee
    if mapped is not None:
        if not isinstance(mapped, ast.Call) or not isinstance(mapped.func, ast.Call):
            return None
        shapes = _argument_shapes(facts, mapped, scope, numbers_by_value, mapped=True)
        if shapes is None or any(kind != _ARRAY or not dims for kind, dims in shapes):
            return None
        return tuple((kind, dims[1:]) for kind, dims in shapes)
    if not isinstance(call, ast.Call) or call.func is not callee:
        return None
    return _argument_shapes(facts, call, scope, numbers_by_value)


def _argument_shapes(
    facts: Facts, call: ast.Call, scope: Scope, numbers_by_value: bool, mapped: bool = False
) -> tuple[Shape, ...] | None:
    if call.keywords:
        return None
    shapes = tuple(
        _shape_of(facts, scope, _named(facts, argument, scope), numbers_by_value, mapped)
        for argument in call.args
    )
    if not shapes or any(shape is None for shape in shapes):
        return None
    return shapes  # type: ignore[return-value]


def _shape_of(
    facts: Facts, scope: Scope, expr: ast.expr, numbers_by_value: bool, mapped: bool
) -> Shape | None:
    """A literal array's or number's shape, or that of an array JAX makes from literal
    arguments. An array JAX makes may be weakly typed (``jnp.full((), 2.0)``, each example of
    ``jnp.full(3, 2.0)`` under ``vmap``), which JAX keys like a Python number: of those no
    shape ``()`` is told."""
    shape = _array_shape(expr, numbers_by_value)
    if shape is not None:
        return shape
    made = _made_shape(facts, scope, expr)
    if made is None or len(made[1]) <= (1 if mapped else 0):
        return None
    return made


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


def _maps_leading_axis(facts: Facts, scope: Scope, call: ast.Call, callee: ast.AST) -> bool:
    """``jax.vmap(callee)`` (or ``in_axes=0``): maps every argument over its first axis. Only
    JAX's own ``vmap``, under a name only imports bind: a module's ``vmap = partial(jax.vmap,
    in_axes=1)`` maps another axis."""
    func = call.func
    if call.args != [callee] or not _imported_only(facts, scope, func):
        return False
    if facts.qualified_name(scope, func) != "jax.vmap":
        return False
    return all(
        keyword.arg == "in_axes"
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value == 0
        and type(keyword.value.value) is int
        for keyword in call.keywords
    )


def _named(facts: Facts, expr: ast.expr, scope: Scope, depth: int = 0) -> ast.expr:
    """What a name bound once in ``scope`` itself holds, or what the binding that reaches the
    read holds (see ``_reaching``); else the expression. Not a name read in the statement that
    binds it (``x = totals[f(x)] = y`` binds ``x`` before it runs ``f(x)``), nor in a module
    that binds names no statement shows (``from numpy import *``, ``globals()``)."""
    if not isinstance(expr, ast.Name) or bound_by_comprehension(facts, expr):
        return expr
    owner = facts.resolve(scope, expr.id)
    if owner is not scope or _binds_by_computed_name(facts.tree):
        return expr
    bindings = facts.bindings_of(owner, expr.id)
    if any(_holds(facts.statement_of(b.node), expr) for b in bindings):
        return expr
    if len(bindings) == 1 and bindings[0].value is not None:
        return bindings[0].value
    reaching = _reaching(facts, scope, expr, bindings)
    if (
        reaching is None
        or reaching.value is None
        or not _immutable(facts, scope, reaching.value, depth)
    ):
        return expr
    return reaching.value


def _holds(statement: ast.stmt | None, node: ast.expr) -> bool:
    """Whether ``node`` lies within ``statement``'s text."""
    if statement is None or statement.end_lineno is None or statement.end_col_offset is None:
        return statement is None
    start = (statement.lineno, statement.col_offset)
    end = (statement.end_lineno, statement.end_col_offset)
    return start <= (node.lineno, node.col_offset) < end


# How many reshapes of reshapes are followed: names bound to reshapes of each other (``x =
# y.reshape(6)`` and ``y = x.reshape(2, 3)``) would otherwise be followed without end.
_MAX_DEPTH = 8


def _immutable(facts: Facts, scope: Scope, value: ast.expr, depth: int = 0) -> bool:
    """A Python number, or an array JAX made (``jnp.linspace(...)``, ``jax.random.normal(...)``,
    ``x.reshape(...)`` of one): nothing can change its shape once made. A NumPy array can be
    reshaped in place, through any name that holds it or any function given it."""
    if isinstance(value, ast.Constant):
        return type(value.value) in (int, float, complex, bool)
    if not isinstance(value, ast.Call) or depth > _MAX_DEPTH:
        return False
    function = value.func
    if isinstance(function, ast.Attribute) and function.attr == "reshape":
        base = _named(facts, function.value, scope, depth + 1)
        return _immutable(facts, scope, base, depth + 1)
    return _imported_only(facts, scope, function) and (
        facts.qualified_name(scope, function) or ""
    ).startswith(("jax.numpy.", "jax.random."))


def _imported_only(facts: Facts, scope: Scope, function: ast.expr) -> bool:
    """The name a call's function starts from (``jnp`` of ``jnp.linspace``) is bound only by
    imports of one module: a ``def`` or an assignment of that name may hold another maker, and
    so may another import (``from jax import random``, later ``import random``) or a star
    import (``from numpy import *`` binds ``random`` too)."""
    root = function
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or _binds_by_computed_name(facts.tree):
        return False
    bindings = facts.bindings_of(facts.resolve(scope, root.id), root.id)
    return (
        bool(bindings)
        and all(b.kind is BindingKind.IMPORT for b in bindings)
        and len({b.imported for b in bindings}) == 1
    )


# Calls and attributes through which code binds a name without a statement that shows it:
# ``globals()["x"] = ...``, ``exec(...)``, ``builtins.exec(...)``, ``sys.modules[__name__].x =
# ...``; and star imports, which bind whatever the other module holds.
_NAMESPACE_CALLS = frozenset(
    {"globals", "vars", "locals", "exec", "eval", "__import__", "__main__", "import_module"}
)
_NAMESPACE_ATTRIBUTES = frozenset(
    {"__dict__", "modules", "f_globals", "f_locals", "__globals__", "import_module"}
)
_computed_bindings: weakref.WeakKeyDictionary[ast.Module, bool] = weakref.WeakKeyDictionary()


def _binds_by_computed_name(tree: ast.Module) -> bool:
    """Whether the module names a way to bind a name that no statement shows."""
    found = _computed_bindings.get(tree)
    if found is None:
        found = any(
            (isinstance(node, ast.Name) and node.id in _NAMESPACE_CALLS)
            or (isinstance(node, ast.Attribute) and node.attr in _NAMESPACE_ATTRIBUTES)
            # ``builtins.exec(...)``; not ``model.eval()``, which binds nothing.
            or (
                isinstance(node, ast.Attribute)
                and node.attr in _NAMESPACE_CALLS
                and isinstance(node.value, ast.Name)
                and node.value.id in ("builtins", "__builtins__")
            )
            or (
                isinstance(node, ast.alias)
                and (node.name == "*" or node.name.split(".")[0] in _NAMESPACE_CALLS)
            )
            or (isinstance(node, ast.ImportFrom) and node.module == "importlib")
            for node in ast.walk(tree)
        )
        _computed_bindings[tree] = found
    return found


def _reaching(
    facts: Facts, scope: Scope, name: ast.Name, bindings: list[Binding]
) -> Binding | None:
    """The binding of a name bound several times (``x = jnp.linspace(0, 1, 100)``, then ``x =
    jnp.linspace(0, 1, 200)`` in a later notebook cell) that every run of the read sees: the
    last plain assignment before it in ``scope``, outside any ``if``, ``try`` or ``match`` and
    any loop that does not hold the read, with no binding after the read in a loop holding it
    (the next pass would see that one), and none made by other code (a function declaring the
    name ``global`` may bind it while the code runs)."""
    read = next((r for r in facts.reads_of(scope, name.id) if r.node is name), None)
    if (
        read is None
        or any(b.scope is not scope for b in bindings)
        # ``x.shape = (10, 10)`` or ``x.resize(100)`` reshapes a NumPy array in place.
        or facts.mutations_of(scope, name.id)
    ):
        return None
    at = (name.lineno, name.col_offset)
    before = [b for b in bindings if b.at < at]
    if (
        not before
        # A walrus binds where it runs, which the text does not order (``y = f(x) if (x :=
        # ...) else None``); other kinds of binding are no plain value.
        or any(b.kind is not BindingKind.ASSIGN for b in bindings)
        or any(b.at > at and any(loop in read.loops for loop in b.loops) for b in bindings)
    ):
        return None
    latest = max(before, key=lambda b: b.at)
    if (
        latest.branches
        or any(loop not in read.loops for loop in latest.loops)
        or not _always_run(facts, scope, latest, read.loops)
    ):
        return None
    return latest


def _always_run(facts: Facts, scope: Scope, binding: Binding, loops: tuple[ast.AST, ...]) -> bool:
    """The binding's statement sits straight in the body of ``scope`` or of a loop holding the
    read: not in a ``with`` (``contextlib.suppress`` may skip it), an ``else`` of a loop, a
    ``try`` or an ``if``."""
    statement = facts.statement_of(binding.node)
    if statement is None:
        return False
    if statement in facts.tree.body:  # the module's own statements have no parent recorded
        return scope.kind is ScopeKind.MODULE
    parent = facts.parent(statement)
    if parent is scope.node:
        return statement in getattr(parent, "body", ())
    return (
        isinstance(parent, (ast.For, ast.AsyncFor, ast.While))
        and parent in loops
        and statement in parent.body
    )


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


# Makers of arrays whose shape their literal arguments give, by qualified name.
# ``jax.random.normal(key, (3, 2))``: the shape is the second argument, or ``shape=``.
_JAX_SAMPLERS = frozenset(
    {"normal", "uniform", "randint", "gumbel", "laplace", "exponential", "rademacher", "cauchy"}
)
# Keywords that leave the shape as the other arguments give it.
_SHAPE_KEEPING = frozenset({"dtype", "endpoint", "minval", "maxval"})


def _made_shape(facts: Facts, scope: Scope, expr: ast.expr, depth: int = 0) -> Shape | None:
    """The shape of an array that ``jax.numpy`` or ``jax.random`` makes from literal arguments:
    ``jnp.linspace(0, 1, 100)``, ``jnp.arange(0, 10, 2)``, ``jax.random.normal(key, (100,
    3))``, or reshapes with literal sizes (``x.reshape(-1, 5)`` of such an array). A JAX array
    never changes its shape in place (a NumPy array may, ``x.shape = (2, 3)``, through any name
    or function that holds it). Its dtype is left aside: arrays of one shape may still differ
    by it, so two calls are never told apart by a dtype, only by their shapes."""
    if not isinstance(expr, ast.Call) or any(isinstance(a, ast.Starred) for a in expr.args):
        return None
    if depth > _MAX_DEPTH:
        return None
    keywords = {k.arg: k.value for k in expr.keywords}
    if None in keywords:
        return None  # ``**options`` may give anything
    function = expr.func
    if isinstance(function, ast.Attribute) and function.attr == "reshape":
        dims = None if keywords else _reshaped(facts, scope, function.value, expr.args, depth)
        return None if dims is None else (_ARRAY, dims)
    if not _imported_only(facts, scope, function):
        return None
    module, _, maker = (facts.qualified_name(scope, function) or "").rpartition(".")
    dims = None
    if module == "jax.numpy":
        dims = _jax_numpy_dims(maker, expr.args, keywords)
    elif module == "jax.random" and maker in _JAX_SAMPLERS:
        dims = _shape_at(expr.args, keywords, 1, "shape", default=())
        if maker == "randint" and "shape" not in keywords and len(expr.args) < 2:
            dims = None
    if dims is None or not set(keywords) <= _SHAPE_KEEPING | {"shape", "num"}:
        return None
    return _ARRAY, dims


def _reshaped(
    facts: Facts, scope: Scope, base: ast.expr, args: list[ast.expr], depth: int
) -> tuple[int, ...] | None:
    """``x.reshape(2, 5)`` or ``x.reshape((-1, 5))`` of an array whose shape is known."""
    known = _made_shape(facts, scope, _named(facts, base, scope, depth + 1), depth + 1)
    if known is None:
        return None
    elements = args[0].elts if len(args) == 1 and isinstance(args[0], ast.Tuple) else args
    sizes = [_number_or_none(e) for e in elements]
    if not sizes or None in sizes:
        return None
    given = tuple(n for n in sizes if n is not None)
    size = math.prod(known[1])
    free = given.count(-1)
    rest = math.prod(d for d in given if d != -1)
    if free > 1 or any(d < -1 for d in given) or (free == 1 and (rest == 0 or size % rest)):
        return None
    dims = tuple(size // rest if d == -1 else d for d in given)
    return dims if math.prod(dims) == size else None


def _number_or_none(node: ast.expr) -> int | None:
    """An integer written in the code, negative or not (``-1``)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number_or_none(node.operand)
        return None if inner is None else -inner
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _jax_numpy_dims(
    maker: str, args: list[ast.expr], keywords: dict[str | None, ast.expr]
) -> tuple[int, ...] | None:
    if maker == "linspace" and 2 <= len(args) <= 3:
        # Ends given as arrays add their own axes: only numbers written in the code.
        if ("num" in keywords and len(args) == 3) or None in map(_number, args[:2]):
            return None
        count = _int(args[2]) if len(args) == 3 else _int(keywords.get("num", _FIFTY))
        return None if count is None or count < 0 else (count,)
    if maker == "arange" and 1 <= len(args) <= 3:
        numbers = [n for n in map(_number, args) if n is not None]
        if len(numbers) != len(args):
            return None
        start, stop, step = [0.0, *numbers, 1.0][:3] if len(numbers) == 1 else [*numbers, 1.0][:3]
        length = (stop - start) / step if step else math.nan
        # A length past any array's (or infinite, or not a number) tells nothing.
        if not 0 <= length < 2**40:
            return None if math.isnan(length) or length >= 2**40 else (0,)
        return (math.ceil(length),)
    if maker in ("ones", "zeros", "empty", "full") and args:
        if len(args) != (2 if maker == "full" else 1):
            return None
        return _literal_shape(args[0])
    return None


_FIFTY = ast.Constant(50)


def _shape_at(
    args: list[ast.expr],
    keywords: dict[str | None, ast.expr],
    index: int,
    keyword: str,
    default: tuple[int, ...] | None,
) -> tuple[int, ...] | None:
    """The literal shape given at position ``index`` or by ``keyword``; ``default`` when neither
    gives one (``jax.random.normal(key)`` is a scalar) and no later position is given."""
    if keyword in keywords:
        return None if len(args) > index else _literal_shape(keywords[keyword])
    if len(args) > index:
        return _literal_shape(args[index])
    return default


def _int(node: ast.expr) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _number(node: ast.expr) -> float | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        if isinstance(node.value, bool) or abs(node.value) > 2**60:
            return None  # too large for a float that counts exactly
        number = float(node.value)
        return number if math.isfinite(number) else None
    return None
