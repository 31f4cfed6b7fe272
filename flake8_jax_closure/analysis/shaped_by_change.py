"""Arguments whose shape the changed name sets: ``members = 10`` then ``ensemble =
random.normal(key, (2, members))`` and ``spread(ensemble)``.

JAX keys a trace on the shapes of the arguments. When every compiled call passes an array made,
since the last change of the name, with that name as one of its sizes, the shape at each call
tells the name's value at that call: a call can reuse a trace only when the name holds the value
that trace read, so the change makes nothing stale. A call given an array of a size written
plainly (``jnp.ones((4,))``) tells nothing, and ``width = 4`` may then reuse its trace.

The code must show it plainly, at every compiled call in the driver, before and after the
change: a direct call in the code that changes the name, given at one place (the same position,
or keyword) a name bound in the same block, or a block around the call, to ``ones``, ``zeros``,
``empty``, ``full`` or a ``random`` sampler whose shape holds the name as a size (``n``, ``2 *
n``, ``n + 1``: one size for each value), with no change of the name between that binding and
the call.
"""

from __future__ import annotations

import ast

from .callgraph.events import Event, EventKind
from .facts.model import Scope
from .facts.queries import Facts

# ``jnp.ones(n)``, ``np.zeros((n, 3))``, ``jnp.full((n,), 0.5)``: the shape comes first.
_SHAPE_FIRST = frozenset({"ones", "zeros", "empty", "full"})
# ``random.normal(key, (n,))``, ``random.multivariate_normal(key, mean, cov, (n,))``: the
# shape is a tuple among the arguments, or ``shape=``.
_SAMPLERS = frozenset(
    {
        "normal",
        "uniform",
        "multivariate_normal",
        "randint",
        "bernoulli",
        "truncated_normal",
        "gumbel",
        "laplace",
        "exponential",
        "rademacher",
    }
)


def shaped_by_change(facts: Facts, name: str | None, change: Event, uses: list[Event]) -> bool:
    """Every compiled call of ``uses`` passes, at one place, an array whose shape has ``name``
    (which ``change``, in the driver's own code, binds) as a size, made since the last binding
    of that name before the call."""
    if name is None or not uses or change.kind is not EventKind.RUN or change.via is not None:
        return False
    driver = change.driver
    owner = facts.resolve(driver, name)
    places: set[int | str] | None = None
    for use in uses:
        call = facts.parent(use.node) if use.node is not None else None
        if (
            use.kind is not EventKind.RUN
            or use.via is not None
            or use.driver is not driver
            or not isinstance(call, ast.Call)
            or call.func is not use.node
        ):
            return False
        shaped = {
            place
            for place, argument in _places(call)
            if _shaped_since_change(facts, driver, owner, name, argument, call)
        }
        places = shaped if places is None else places & shaped
        if not places:
            return False
    return True


def _places(call: ast.Call) -> list[tuple[int | str, ast.expr]]:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return []  # ``f(*args)``, ``f(**kwargs)``: places are not shown
    positional: list[tuple[int | str, ast.expr]] = list(enumerate(call.args))
    return positional + [(k.arg, k.value) for k in call.keywords if k.arg is not None]


def _shaped_since_change(
    facts: Facts, driver: Scope, owner: Scope, name: str, argument: ast.expr, call: ast.Call
) -> bool:
    if not isinstance(argument, ast.Name):
        return False
    at = (call.lineno, call.col_offset)
    holder = facts.resolve(driver, argument.id)
    earlier = [b for b in facts.bindings_of(holder, argument.id) if b.at < at]
    if not earlier:
        return False
    made = max(earlier, key=lambda b: b.at)
    statement = facts.statement_of(made.node)
    if (
        made.scope is not driver
        or not isinstance(statement, ast.Assign)
        or len(statement.targets) != 1
        or not isinstance(statement.targets[0], ast.Name)
        or not _encloses(driver.node, statement, call)
        or not _sized_by(statement.value, name)
    ):
        return False
    # The name keeps the value the shape was made with until the call.
    return not any(made.at < b.at < at for b in facts.bindings_of(owner, name))


def _sized_by(value: ast.expr, name: str) -> bool:
    """``maker(...)`` (or its ``.T``) whose shape has ``name`` as a size."""
    if isinstance(value, ast.Attribute) and value.attr == "T":
        value = value.value
    if not isinstance(value, ast.Call):
        return False
    function = value.func
    maker = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    shapes: list[ast.expr] = [k.value for k in value.keywords if k.arg == "shape"]
    if maker in _SHAPE_FIRST and value.args:
        shapes.append(value.args[0])
    elif maker in _SAMPLERS:
        shapes += [a for a in value.args[1:] if isinstance(a, (ast.Tuple, ast.List))]
    else:
        return False
    return any(_holds_size(shape, name) for shape in shapes)


def _holds_size(shape: ast.expr, name: str) -> bool:
    sizes = shape.elts if isinstance(shape, (ast.Tuple, ast.List)) else [shape]
    return any(_one_to_one(size, name) for size in sizes)


def _one_to_one(size: ast.expr, name: str) -> bool:
    """``n``, ``2 * n``, ``n + 1``: a size that differs for every value of ``n``."""
    if isinstance(size, ast.Name):
        return size.id == name
    if not isinstance(size, ast.BinOp) or not isinstance(size.op, (ast.Add, ast.Sub, ast.Mult)):
        return False
    for inner, other in ((size.left, size.right), (size.right, size.left)):
        if (
            isinstance(other, ast.Constant)
            and type(other.value) is int
            and (other.value != 0 or not isinstance(size.op, ast.Mult))
            and (isinstance(size.op, ast.Sub) is False or inner is size.left)
            and _one_to_one(inner, name)
        ):
            return True
    return False


def _encloses(root: ast.AST, statement: ast.stmt, call: ast.Call) -> bool:
    """Whether ``statement`` stands in the block holding ``call``'s statement, or a block
    around it, before it: it runs every time before the call does."""
    made = _blocks_to(root, statement)
    if not made or made[-1][1] is not statement:
        return False
    block, _ = made[-1]
    for around, holding in _blocks_to(root, call):
        if around is block:
            return block.index(statement) < block.index(holding)
    return False


def _blocks_to(root: ast.AST, node: ast.AST) -> list[tuple[list[ast.stmt], ast.stmt]]:
    """The statement lists from ``root`` in to ``node``, each with the statement of it that
    holds ``node``."""
    start = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    end = (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    chain: list[tuple[list[ast.stmt], ast.stmt]] = []
    current = root
    while True:
        found = None
        for field in ("body", "orelse", "finalbody"):
            block = getattr(current, field, None)
            if not isinstance(block, list):
                continue
            for child in block:
                if (
                    isinstance(child, ast.stmt)
                    and (child.lineno, child.col_offset) <= start
                    and end <= (child.end_lineno, child.end_col_offset)
                ):
                    found = (block, child)
                    break
            if found:
                break
        if found is None:
            return chain
        chain.append(found)
        if found[1] is node:
            return chain
        current = found[1]
