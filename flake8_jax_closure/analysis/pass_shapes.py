"""Arguments whose shape each pass of a loop sets from the loop's target.

``for lr, length in zip(lrs, lengths): optim = optax.sgd(lr); ts_ = ts[: int(n * length)]``
followed by ``make_step(ts_, ...)``: each pass calls the compiled function with a slice as long
as that pass's ``length`` says, and JAX keys its traces by the shapes of the arguments, so a
pass with another length traces anew and reads the value the pass set. A pass reuses an earlier
pass's trace only when two targets give the same shape, which the code does not show: at most
an API hazard. What keeps its shape stays a witness: a window of fixed width (``ts[i * w : (i +
1) * w]``), an index (``xs[i]``), or a literal the loop runs over that repeats a value
(``for n in (5, 5)``).
"""

from __future__ import annotations

import ast

from .facts.model import BindingKind, Scope
from .facts.queries import Facts

# Array makers whose first argument (or ``shape=``) is the shape: ``jnp.zeros((n, k))``.
_SHAPE_FIRST = frozenset({"zeros", "ones", "empty", "full"})
# ``jax.random`` samplers whose second argument (or ``shape=``) is the shape.
_SHAPE_SECOND = frozenset(
    {"normal", "uniform", "randint", "truncated_normal", "gumbel", "laplace", "logistic"}
)
_ARRAY_MODULES = ("jax.numpy.", "numpy.")
_SAMPLER_MODULE = "jax.random."
_DEPTH = 3  # names followed back from an argument: ``ts_ = ts[:n]`` after ``n = f(length)``


def shaped_by_each_pass(facts: Facts, driver: Scope, loop: ast.AST, calls: list[ast.Call]) -> bool:
    """Whether every call passes an argument whose shape the pass sets from the target of
    ``loop``, a ``for`` over values the code does not show repeating."""
    if not calls or not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    if _repeats_a_value(_literal(facts, driver, loop.iter)):
        return False
    varying = _names_set_from_target(loop)
    return all(
        any(
            _shape_from(facts, driver, loop, argument, varying, call.lineno, _DEPTH)
            for argument in [*call.args, *(k.value for k in call.keywords)]
        )
        for call in calls
    )


def _literal(facts: Facts, driver: Scope, iterable: ast.expr) -> ast.expr:
    """The iterable, or the one value its name is bound to (``lengths = (0.1, 1.0)``)."""
    if isinstance(iterable, ast.Name):
        bindings = facts.bindings_of(facts.resolve(driver, iterable.id), iterable.id)
        if len(bindings) == 1 and bindings[0].value is not None:
            return bindings[0].value
    return iterable


def _repeats_a_value(iterable: ast.expr) -> bool:
    """A literal tuple or list that holds one constant twice, or anything but constants."""
    if not isinstance(iterable, (ast.Tuple, ast.List)):
        return False  # ``zip(lrs, lengths)``, ``range(k)``: not shown to repeat
    values = [e.value for e in iterable.elts if isinstance(e, ast.Constant)]
    return len(values) != len(iterable.elts) or len(set(values)) != len(values)


def _names_set_from_target(loop: ast.For | ast.AsyncFor) -> set[str]:
    """The target's names, and those that statements of the loop's own body bind from them
    (``n = int(size * length)``), in order."""
    varying = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    for statement in loop.body:
        if isinstance(statement, ast.Assign) and _reads(statement.value, varying):
            for target in statement.targets:
                varying |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return varying


def _shape_from(
    facts: Facts,
    driver: Scope,
    loop: ast.For | ast.AsyncFor,
    expr: ast.expr,
    varying: set[str],
    before: int,
    depth: int,
) -> bool:
    """Whether ``expr`` has a shape set from ``varying``: a slice with one bound (or its
    step) read from it, an array made in a shape read from it, or a name the loop's body
    binds once, before the call, to one of those."""
    if isinstance(expr, ast.Subscript):
        return any(_varying_slice(s, varying) for s in _slices(expr.slice))
    if isinstance(expr, ast.Call):
        shape = _shape_argument(facts, driver, expr)
        return shape is not None and _reads(shape, varying)
    if isinstance(expr, ast.Name) and depth > 0:
        value = _bound_once_in_pass(facts, driver, loop, expr.id, before)
        return value is not None and _shape_from(
            facts, driver, loop, value, varying, before, depth - 1
        )
    return False


def _bound_once_in_pass(
    facts: Facts, driver: Scope, loop: ast.For | ast.AsyncFor, name: str, before: int
) -> ast.expr | None:
    """The value of the one binding of the local ``name`` inside the loop, a plain
    assignment that is a statement of the loop's own body (run in every pass) before line
    ``before``."""
    owner = facts.resolve(driver, name)
    if owner is not driver:
        return None
    first = loop.lineno
    last = loop.end_lineno or first
    inside = [b for b in facts.bindings_of(owner, name) if first <= b.start[0] <= last]
    if len(inside) != 1:
        return None
    binding = inside[0]
    if (
        binding.kind is not BindingKind.ASSIGN
        or binding.start[0] >= before
        or not any(statement is binding.node for statement in loop.body)
    ):
        return None
    return binding.value


def _slices(index: ast.expr) -> list[ast.Slice]:
    if isinstance(index, ast.Slice):
        return [index]
    if isinstance(index, ast.Tuple):
        return [e for e in index.elts if isinstance(e, ast.Slice)]
    return []


def _varying_slice(piece: ast.Slice, varying: set[str]) -> bool:
    """``ts[:n]``, ``ts[n:]``, ``ts[::n]``: a length that ``n`` sets; not ``ts[i * w : (i +
    1) * w]``, whose two bounds move together."""
    lower = piece.lower is not None and _reads(piece.lower, varying)
    upper = piece.upper is not None and _reads(piece.upper, varying)
    step = piece.step is not None and _reads(piece.step, varying)
    return step or lower != upper


def _shape_argument(facts: Facts, driver: Scope, call: ast.Call) -> ast.expr | None:
    """The shape a library array maker or sampler is asked for."""
    name = facts.qualified_name(driver, call.func)
    if name is None:
        return None
    for keyword in call.keywords:
        if keyword.arg == "shape":
            return keyword.value
    function = name.rpartition(".")[2]
    if name.startswith(_ARRAY_MODULES) and function in _SHAPE_FIRST and call.args:
        return call.args[0]
    if name.startswith(_SAMPLER_MODULE) and function in _SHAPE_SECOND and len(call.args) > 1:
        return call.args[1]
    return None


def _reads(expr: ast.expr, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(expr))
