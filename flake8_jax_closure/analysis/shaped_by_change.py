"""Arguments whose shape the changed name sets: ``members = 10`` then ``ensemble =
random.normal(key, (2, members))`` and ``spread(ensemble)``.

JAX keys a trace on the shapes of the arguments. When every compiled call passes an array made,
since the last change of the name, with that name as one of its sizes, the shape at each call
tells the name's value at that call: a call can reuse a trace only when the name holds the value
that trace read, so the change makes nothing stale. A call given an array of a size written
plainly (``jnp.ones((4,))``) tells nothing, and ``width = 4`` may then reuse its trace.

The code must show it plainly, at every compiled call in the driver, before and after the
change: a direct call in the code that changes the name (or ``jax.grad(f)(...)``, which calls
``f`` with its own arguments), given at one place (the same position, or keyword) a name bound
in the same block, or a block around the call, to ``ones``, ``zeros``, ``empty``, ``full``,
``arange(n)`` or a sampler (JAX's ``shape=``, NumPy's ``size=``) whose shape holds the name as
a size (``n``, ``2 * n``, ``n + 1``: one size for each value), with no change of the name
between that binding and the call. The name may also be given to a function of the module
(``x, mask = make_batch(8, n)``) whose every return has that parameter as a size in the entry
bound: made so, or an elementwise operation with such an array.
"""

from __future__ import annotations

import ast

from .callgraph.events import Event, EventKind
from .facts.model import Binding, BindingKind, Scope, ScopeKind
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


def sizing_names(facts: Facts, change: Binding) -> tuple[str, ...]:
    """The name the rebinding binds, then the one name its value is a function of, followed
    back through that name's binding before it (``SCORE_SCALE = 1 / np.sqrt(SEQ_LEN)`` after
    ``SEQ_LEN = L`` in a pass over lengths ``L``): an array a call is given with one of them
    as a size tells the rebound value too. Modules, functions and classes the value names
    (``np``) change nothing."""
    names = [change.name]
    current = change
    for _ in range(_FOLLOWED):
        value = current.value
        if value is None or current.kind is not BindingKind.ASSIGN:
            break
        read = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        variables = [
            name
            for name in sorted(read)
            if not all(
                b.kind in (BindingKind.IMPORT, BindingKind.DEF, BindingKind.CLASS)
                for b in facts.bindings_of(facts.resolve(current.scope, name), name)
            )
        ]
        if len(variables) != 1 or variables[0] in names:
            break
        name = variables[0]
        names.append(name)
        earlier = [
            b
            for b in facts.bindings_of(facts.resolve(current.scope, name), name)
            if b.scope is current.scope and b.start < current.start
        ]
        if not earlier:
            break
        current = max(earlier, key=lambda b: b.start)
    return tuple(names)


# How many bindings ``sizing_names`` follows back.
_FOLLOWED = 3


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
        call = _call_of(facts, use.node) if use.node is not None else None
        if (
            use.kind is not EventKind.RUN
            or use.via is not None
            or use.driver is not driver
            or call is None
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


# ``jax.grad(f)(x, y)`` calls ``f`` with arguments of the shapes ``x`` and ``y`` have.
_SHAPE_KEEPING_TRANSFORMS = frozenset({"grad", "value_and_grad"})


def _call_of(facts: Facts, node: ast.AST) -> ast.Call | None:
    """The call giving the compiled function ``node`` its arguments: ``f(x)`` itself, or
    ``jax.grad(f)(x)`` (the event is at the whole call, or at ``f``)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
        return node if _keeps_shapes(node.func) else None
    call = facts.parent(node)
    if not isinstance(call, ast.Call):
        return None
    if call.func is node:
        return call
    outer = facts.parent(call)
    if _keeps_shapes(call) and isinstance(outer, ast.Call) and outer.func is call:
        return outer
    return None


def _keeps_shapes(transform: ast.Call) -> bool:
    """``jax.grad(f)``: a function calling ``f`` with its own arguments."""
    function = transform.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    return (
        name in _SHAPE_KEEPING_TRANSFORMS
        and len(transform.args) == 1
        and not isinstance(transform.args[0], ast.Starred)
    )


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
        or not _encloses(driver.node, statement, call)
    ):
        return False
    target = statement.targets[0]
    if isinstance(target, ast.Name):
        shaped = _sized_by(statement.value, name) or _made_by_helper(
            facts, driver, statement.value, name, None
        )
    elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        index = [e.id for e in target.elts if isinstance(e, ast.Name)].index(argument.id)
        shaped = _made_by_helper(facts, driver, statement.value, name, index)
    else:
        shaped = False
    if not shaped:
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
    # NumPy's samplers take ``size=``, JAX's ``shape=``.
    shapes: list[ast.expr] = [k.value for k in value.keywords if k.arg in ("shape", "size")]
    if maker in _SHAPE_FIRST and value.args:
        shapes.append(value.args[0])
    elif maker in _SAMPLERS:
        shapes += [a for a in value.args[1:] if isinstance(a, (ast.Tuple, ast.List))]
    elif maker == "arange" and len(value.args) == 1 and not value.keywords:
        shapes.append(value.args[0])  # ``arange(n)`` holds ``n`` entries
    elif not shapes:
        return False
    return any(_holds_size(shape, name) for shape in shapes)


def _made_by_helper(
    facts: Facts, driver: Scope, value: ast.expr, name: str, index: int | None
) -> bool:
    """``x, mask = make_batch(8, n)``: a function of the module, given ``name`` plainly (or
    reading the global ``name`` itself), whose every return (entry ``index`` of it) is an
    array with the parameter it was given (or the global) as a size, or an elementwise product
    of one (``x * mask``, ``x.astype(...)``)."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
        return False
    helper = _module_function(facts, driver, value.func.id)
    if helper is None:
        return False
    parameter = _parameter_given(helper, value, name)
    if parameter is None and name not in _parameters(helper):
        parameter = name  # the helper reads the global itself when it runs
    if parameter is None or _rebinds(helper, parameter):
        return False
    returns = [n for n in ast.walk(helper) if isinstance(n, ast.Return)]
    if not returns:
        return False
    for statement in returns:
        returned = statement.value
        if index is not None:
            if not isinstance(returned, ast.Tuple) or index >= len(returned.elts):
                return False
            returned = returned.elts[index]
        if returned is None or not _shaped_in(helper, returned, parameter, depth=0):
            return False
    return True


def _adds_axes(index: ast.expr) -> bool:
    """``[None, :]``: new axes of size one, every existing axis whole."""
    steps = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(
        (isinstance(step, ast.Constant) and step.value is None)
        or (
            isinstance(step, ast.Slice)
            and step.lower is None
            and step.upper is None
            and step.step is None
        )
        for step in steps
    )


def _module_function(facts: Facts, driver: Scope, name: str) -> ast.FunctionDef | None:
    """The one ``def`` of ``name`` at the module's top level, when nothing else binds it."""
    owner = facts.resolve(driver, name)
    bindings = facts.bindings_of(owner, name)
    if owner.kind is not ScopeKind.MODULE or len(bindings) != 1:
        return None
    node = bindings[0].node
    if not isinstance(node, ast.FunctionDef) or node.decorator_list:
        return None
    return node


def _parameter_given(helper: ast.FunctionDef, call: ast.Call, name: str) -> str | None:
    """The plain parameter of ``helper`` that ``call`` gives ``name`` itself."""
    arguments = helper.args
    if arguments.vararg or arguments.kwarg or arguments.posonlyargs:
        return None
    positional = [a.arg for a in arguments.args]
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(positional):
        return None
    for parameter, argument in zip(positional, call.args, strict=False):
        if isinstance(argument, ast.Name) and argument.id == name:
            return parameter
    for keyword in call.keywords:
        if keyword.arg is None:
            return None
        if isinstance(keyword.value, ast.Name) and keyword.value.id == name:
            return keyword.arg if keyword.arg in positional else None
    return None


def _parameters(function: ast.FunctionDef) -> set[str]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return {a.arg for a in every}


def _rebinds(function: ast.FunctionDef, name: str) -> bool:
    return any(
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
        for node in ast.walk(function)
    ) or any(
        isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names
        for node in ast.walk(function)
    )


_MOST_STEPS = 4
# ``jnp.asarray(x, dtype=...)``: an array of ``x``'s shape.
_KEEPING_SHAPE = frozenset({"asarray", "array"})


def _shaped_in(function: ast.FunctionDef, value: ast.expr, parameter: str, depth: int) -> bool:
    """Whether ``value``, in ``function``, has ``parameter`` as a size: made so, an
    elementwise operation or comparison with such an array, that array with new axes
    (``[None, :]``), its ``astype`` or ``jnp.asarray``, or a local bound once to one."""
    if depth > _MOST_STEPS:
        return False
    if _sized_by(value, parameter):
        return True
    if isinstance(value, (ast.BinOp, ast.Compare)):
        sides = (
            [value.left, value.right]
            if isinstance(value, ast.BinOp)
            else [value.left, *value.comparators]
        )
        return any(_shaped_in(function, side, parameter, depth + 1) for side in sides)
    if isinstance(value, ast.Subscript) and _adds_axes(value.slice):
        return _shaped_in(function, value.value, parameter, depth + 1)
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "astype"
    ):
        return _shaped_in(function, value.func.value, parameter, depth + 1)
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in _KEEPING_SHAPE
        and value.args
    ):
        return _shaped_in(function, value.args[0], parameter, depth + 1)
    if isinstance(value, ast.Name):
        stores = [
            node
            for node in ast.walk(function)
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == value.id for t in node.targets)
        ]
        others = [
            node
            for node in ast.walk(function)
            if isinstance(node, ast.Name)
            and node.id == value.id
            and isinstance(node.ctx, ast.Store)
        ]
        return (
            len(stores) == 1
            and len(others) == 1
            and len(stores[0].targets) == 1
            and _shaped_in(function, stores[0].value, parameter, depth + 1)
        )
    return False


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
