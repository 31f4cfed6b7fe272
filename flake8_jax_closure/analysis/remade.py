"""Arguments made afresh by the value that changed: a notebook defines another network and
initialises its parameters before calling the compiled loss again.

``init_fn, apply_fn = stax.serial(...)`` followed by ``_, params = init_fn(key, shape)``, or
``net = MLP(sizes)`` followed by ``params = net.init(key, x)``, gives the next compiled call
parameters built by the new network. When the network has another architecture their pytree
structure differs and JAX traces again, reading the new value; the code cannot show that it
does not, so such a call is no witness of a reused trace. A network made by the same call
with only functions changed (another activation) has the same sizes: that trace is reused, and
stays reported.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import partial

from .bindings import same_tree
from .callgraph.events import Event, EventKind
from .facts.model import BindingKind, Pos, Scope, ScopeKind
from .facts.queries import Facts
from .names import PARTIAL

_OPTIMISERS = ("optax.", "jax.example_libraries.optimizers.", "jax.experimental.optimizers.")
_DEPTH = 4  # names followed back from an argument: ``state = create(params=params)``


def arguments_remade(
    facts: Facts,
    change: Event,
    uses: list[Event],
    whole: bool = False,
    reach: list[Event] | None = None,
) -> bool:
    """Every compiled call after ``change`` (a binding in the driver's own code) passes an
    argument that the new value's initialiser, or one bound beside it, made since; or is a
    call of a function (``train_network(key)``) whose own compiled calls pass arguments it
    made with that initialiser (``reach``: every use of the compiled object, to find them).
    ``whole``: every call of ``uses`` must come after the change (the calls of a loop's
    pass: one before the change runs in the next pass with arguments of the pass before)."""
    made_by = _bound_by_change(facts, change)
    if not made_by:
        return False
    after = [u for u in uses if u.at > change.at]
    if not after or (whole and len(after) < len(uses)):
        return False
    for use in after:
        if use.via is not None and use.kind is EventKind.RUN and use.driver is change.driver:
            if not _remade_inside(
                facts, use.via, change, use.at, made_by, reach or []
            ) and not _handed_remade(facts, use, change, made_by, reach or []):
                return False
            continue
        call = _call_of(facts, use)
        if (
            use.kind is not EventKind.RUN
            or use.via is not None
            or use.driver is not change.driver
            or not isinstance(call, ast.Call)
        ):
            return False
        if not any(
            _made_by(facts, use.driver, argument, made_by, change.at, use.at, _DEPTH)
            for argument in _arguments(facts, use.driver, call)
        ):
            return False
    return True


def _arguments(facts: Facts, driver: Scope, call: ast.Call) -> list[ast.expr]:
    """What the compiled function is called with: the call's arguments, and those bound by a
    ``partial`` called at once (``partial(loss, params)(x)``)."""
    arguments = [*call.args, *(k.value for k in call.keywords)]
    inner = call.func
    if isinstance(inner, ast.Call) and facts.qualified_name(driver, inner.func) == PARTIAL:
        arguments += [*inner.args[1:], *(k.value for k in inner.keywords)]
    return arguments


def _remade_inside(
    facts: Facts,
    function: Scope,
    change: Event,
    called_at: Pos,
    made_by: frozenset[str],
    reach: list[Event],
) -> bool:
    """Each compiled call in ``function`` passes an argument that ``function`` made, before
    the call, with an initialiser of the new value (the global ``init_fn``, not a local
    of that name); or, for a function defined in the driver's code (``lambda flat:
    loss(unflatten(tree, flat))``), one that reads a name the driver bound between the change
    and ``called_at``, where it runs the function, to what the initialiser made."""
    driver = change.driver
    inner = [e for e in reach if e.driver is function]
    makers = frozenset(
        name for name in made_by if facts.resolve(function, name) is facts.resolve(driver, name)
    )
    if not inner or not makers:
        return False
    start = (function.start[0], 0)
    for use in inner:
        call = _call_of(facts, use)
        if use.kind is not EventKind.RUN or call is None:
            return False
        arguments = [*call.args, *(k.value for k in call.keywords)]
        if use.via is not None:
            # A compiled caller (``grad_loss(opt_state, x)``, whose body calls the loss): given
            # what the initialiser made, it traces again, and so does each call in its body
            # that hands on what it was given.
            made_here = partial(
                _made_by, facts, function, makers=makers, since=start, at=use.at, depth=_DEPTH
            )
            made = _receiving(call, use.via, made_here)
            if not made or not _hands_on(facts, use.via, made, reach):
                return False
            continue
        if not any(
            _made_by(facts, function, argument, makers, start, use.at, _DEPTH)
            or _reads_made_outside(facts, function, change, called_at, argument, made_by)
            for argument in arguments
        ):
            return False
    return True


def _reads_made_outside(
    facts: Facts,
    function: Scope,
    change: Event,
    called_at: Pos,
    argument: ast.expr,
    made_by: frozenset[str],
) -> bool:
    """``argument`` reads a name of the driver (not one of ``function``'s own: a lambda's
    parameter of the same name is another variable) that the driver bound between the change
    and ``called_at`` to what the new value's initialiser made: ``tree`` of ``flat, tree =
    tree_flatten(params)`` after ``params = net.init(key, x)``. The structure JAX keys its
    traces on is then the new network's."""
    driver = change.driver
    if function.parent is not driver:
        return False
    return any(
        isinstance(node, ast.Name)
        and isinstance(node.ctx, ast.Load)
        and facts.resolve(function, node.id) is facts.resolve(driver, node.id)
        and _made_by(facts, driver, node, made_by, change.at, called_at, _DEPTH)
        for node in ast.walk(argument)
    )


def _call_of(facts: Facts, use: Event) -> ast.Call | None:
    """The call of a use: ``loss(params, x)`` names the function, ``jax.grad(loss)(params, x)``
    calls what the transform made of it."""
    node = use.node
    call = node if isinstance(node, ast.Call) else facts.parent(node) if node else None
    if not isinstance(call, ast.Call):
        return None
    if node is not call and call.func is not node:
        outer = facts.parent(call)
        if isinstance(outer, ast.Call) and outer.func is call:
            return outer
    return call


def _hands_on(facts: Facts, caller: Scope, given: set[str], reach: list[Event]) -> bool:
    """Each use in ``caller``, a compiled function whose parameters ``given`` received what
    the initialiser made, is a call passing one of them on: the parameter itself, or the
    parameters an optimiser's ``get_params`` takes out of that state (``get_params(state)``)."""
    inner = [e for e in reach if e.driver is caller]
    if not inner or caller.kind is not ScopeKind.FUNCTION and caller.kind is not ScopeKind.LAMBDA:
        return False
    for event in inner:
        call = _call_of(facts, event)
        if event.kind is not EventKind.RUN or event.via is not None or call is None:
            return False
        arguments = [*call.args, *(k.value for k in call.keywords)]
        if not any(_passes(facts, caller, argument, given) for argument in arguments):
            return False
    return True


def _passes(facts: Facts, scope: Scope, argument: ast.expr, given: set[str]) -> bool:
    """``argument`` is a parameter of ``given`` as the call received it (a parameter bound again
    in the body, ``state = base_state``, may hold anything), or ``get_params`` of one."""
    given = {
        name
        for name in given
        if all(b.kind is BindingKind.PARAM for b in facts.bindings_of(scope, name))
    }
    if isinstance(argument, ast.Name):
        return argument.id in given
    if not isinstance(argument, ast.Call) or not isinstance(argument.func, ast.Name):
        return False
    if len(argument.args) != 1 or argument.keywords:
        return False
    inner = argument.args[0]
    return (
        isinstance(inner, ast.Name)
        and inner.id in given
        and _made_by_optimiser(facts, scope, argument.func.id)
    )


def _made_by_optimiser(facts: Facts, scope: Scope, name: str) -> bool:
    """``get_params`` of ``opt_init, opt_update, get_params = optimizers.sgd(lr)``, bound so
    everywhere: it returns the parameters the state holds, with their structure."""
    owner = facts.resolve(scope, name)
    bindings = facts.bindings_of(owner, name)
    if not bindings:
        return False
    for binding in bindings:
        statement = facts.statement_of(binding.node)
        if not isinstance(statement, ast.Assign) or not _optimiser(facts, owner, statement.value):
            return False
    return True


def _handed_remade(
    facts: Facts, use: Event, change: Event, made_by: frozenset[str], reach: list[Event]
) -> bool:
    """``train(state)``, where ``state`` was made since the change by an initialiser given the
    new value (``state = init_model(rng, model)``), and each compiled call in ``train`` passes
    that parameter on whole: the compiled calls get what the new value made."""
    function = use.via
    call = facts.parent(use.node) if use.node is not None else None
    if function is None or not isinstance(call, ast.Call) or call.func is not use.node:
        return False
    carried = _receiving(
        call,
        function,
        lambda argument: _made_by(facts, use.driver, argument, made_by, change.at, use.at, _DEPTH),
    )
    return bool(carried) and _passes_on_whole(facts, function, carried, reach, _DEPTH)


def _passes_on_whole(
    facts: Facts, function: Scope, carried: set[str], reach: list[Event], depth: int
) -> bool:
    """Each compiled call in ``function`` passes a parameter of ``carried`` itself
    (``step(state, x)``), not a part of it (``state.params``); so does each call there of a
    function that makes the compiled calls (``run_epoch(state)``), and that function in turn
    with the parameters that receive it."""
    inner = [e for e in reach if e.driver is function]
    if depth == 0 or not inner:
        return False
    for event in inner:
        inner_call: ast.AST | None = event.node
        if inner_call is not None and not isinstance(inner_call, ast.Call):
            inner_call = facts.parent(inner_call)
        if event.kind is not EventKind.RUN or not isinstance(inner_call, ast.Call):
            return False
        whole = _receiving(
            inner_call,
            event.via,
            lambda argument: isinstance(argument, ast.Name) and argument.id in carried,
        )
        if not whole:
            return False
        if event.via is not None and event.via is not function:
            if not _passes_on_whole(facts, event.via, whole, reach, depth - 1):
                return False
    return True


def _receiving(
    call: ast.Call, callee: Scope | None, carries: Callable[[ast.expr], bool]
) -> set[str]:
    """The parameters of ``callee`` given an argument that ``carries`` (for a compiled object,
    whose parameters are not followed, a placeholder for each such argument)."""
    params = list(callee.params) if callee is not None else []
    if params and params[0] in ("self", "cls") and isinstance(call.func, ast.Attribute):
        params = params[1:]  # ``trainer.fit(state)``: the object is ``self``
    received = set()
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            break  # ``step(*batch, state)``: what follows goes to a parameter the code hides
        if carries(argument):
            received.add(params[index] if index < len(params) else f"#{index}")
    for keyword in call.keywords:
        if keyword.arg is not None and carries(keyword.value):
            received.add(keyword.arg)
    return received


def _bound_by_change(facts: Facts, change: Event) -> frozenset[str]:
    """The names the changing statement binds (``init_fn, apply_fn = ...``), for a change that
    is an assignment in the driver's own code."""
    if change.via is not None or change.node is None:
        return frozenset()
    statement = facts.statement_of(change.node)
    if not isinstance(statement, ast.Assign) or _optimiser(facts, change.driver, statement.value):
        return frozenset()
    names = _stored(statement)
    wrapped = _wrapped_binding(facts, change.driver, statement, names)
    if wrapped is not None:
        statement, names = wrapped
    if _same_architecture(facts, change.driver, statement, names):
        return frozenset()
    return names


def _stored(statement: ast.Assign) -> frozenset[str]:
    return frozenset(
        node.id
        for target in statement.targets
        for node in ast.walk(target)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    )


def _wrapped_binding(
    facts: Facts, driver: Scope, statement: ast.Assign, names: frozenset[str]
) -> tuple[ast.Assign, frozenset[str]] | None:
    """For ``apply_fn = jit(apply_fn)`` (a function of JAX given the name's own value), the
    binding it wraps, the latest before it in the same code (``init_fn, apply_fn =
    stax.serial(...)``), and the names that binds: the new value is made there."""
    if len(names) != 1:
        return None
    (name,) = names
    if not _wraps_itself(facts, driver, statement, name):
        return None
    here = (statement.lineno, statement.col_offset)
    earlier = [
        b
        for b in facts.bindings_of(facts.resolve(driver, name), name)
        if b.scope is driver and b.at < here
    ]
    if not earlier:
        return None
    latest = max(earlier, key=lambda b: b.at)
    if latest.loops:
        # Made in each pass (``for act in activations:``), with nothing before it to compare
        # its sizes with: the wrapping line stays a change of its own.
        return None
    before = facts.statement_of(latest.node)
    if not isinstance(before, ast.Assign) or _optimiser(facts, driver, before.value):
        return None
    return before, _stored(before)


def _wraps_itself(facts: Facts, driver: Scope, statement: ast.stmt | None, name: str) -> bool:
    """``name = jax.jit(name, ...)``: a function of JAX given the name's own value."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return False
    target, value = statement.targets[0], statement.value
    if not isinstance(target, ast.Name) or target.id != name or not isinstance(value, ast.Call):
        return False
    first = value.args[0] if value.args else None
    return (
        isinstance(first, ast.Name)
        and first.id == name
        and (facts.qualified_name(driver, value.func) or "").startswith("jax.")
    )


def _same_architecture(
    facts: Facts, driver: Scope, statement: ast.Assign, names: frozenset[str]
) -> bool:
    """The network is made again by the same call as before with only functions changed
    (``make_network([3, 3], jax.nn.relu)`` after ``make_network([3, 3], jnp.tanh)``): its
    sizes are the same, so its parameters have the same structure and the trace is reused."""
    if not names or not isinstance(statement.value, ast.Call):
        return False
    name = min(names)
    owner = facts.resolve(driver, name)
    earlier = [
        facts.statement_of(b.node)
        for b in sorted(facts.bindings_of(owner, name), key=lambda b: b.at)
        if b.scope is driver and b.at < (statement.lineno, statement.col_offset)
    ]
    # ``apply_fn = jit(apply_fn)`` after the network was made keeps what it made.
    while earlier and _wraps_itself(facts, driver, earlier[-1], name):
        earlier.pop()
    before = earlier[-1] if earlier else None
    if not isinstance(before, ast.Assign) or not isinstance(before.value, ast.Call):
        return False
    new, old = statement.value, before.value
    if not same_tree(new.func, old.func) or len(new.args) != len(old.args):
        return False
    if [k.arg for k in new.keywords] != [k.arg for k in old.keywords]:
        return False
    pairs = [
        *zip(new.args, old.args, strict=True),
        *zip([k.value for k in new.keywords], [k.value for k in old.keywords], strict=True),
    ]
    return all(
        same_tree(a, b) or (_function_name(facts, driver, a) and _function_name(facts, driver, b))
        for a, b in pairs
    )


def _function_name(facts: Facts, driver: Scope, node: ast.expr) -> bool:
    """``jax.nn.relu``, ``jnp.tanh``, ``swish`` (a ``def``): a function named, not called; by
    how networks are written, an activation rather than a size. A plain name bound otherwise
    (``width``) may be a size."""
    if isinstance(node, ast.Attribute):
        return facts.qualified_name(driver, node) is not None
    if not isinstance(node, ast.Name):
        return False
    bindings = facts.bindings_of(facts.resolve(driver, node.id), node.id)
    return bool(bindings) and all(b.kind in (BindingKind.DEF, BindingKind.IMPORT) for b in bindings)


def _made_by(
    facts: Facts,
    driver: Scope,
    value: ast.expr,
    makers: frozenset[str],
    since: Pos,
    at: Pos,
    depth: int,
    whole: bool = True,
) -> bool:
    """``value`` is, or reads a name last bound between ``since`` and ``at`` to, the result
    of an initialiser among ``makers`` (or of one's ``init`` method: ``net.init``). What an
    initialiser given the new value made (``state = init_model(rng, model)``) counts only
    passed ``whole``: the state itself, whose static fields are new; ``state.params`` of a
    network of the same architecture has the old structure, and the trace is reused."""
    if depth == 0:
        return False
    if isinstance(value, ast.Call) and (
        _maker(value.func, makers) or (whole and _given_to_maker(value, makers))
    ):
        return True
    for node in ast.walk(value):
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
            continue
        owner = facts.resolve(driver, node.id)
        bound = [
            b for b in facts.bindings_of(owner, node.id) if b.scope is driver and since < b.at < at
        ]
        if not bound:
            continue
        latest = max(bound, key=lambda b: b.at)
        statement = facts.statement_of(latest.node)
        source = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
        if source is not None and _made_by(
            facts, driver, source, makers, since, latest.at, depth - 1, whole and node is value
        ):
            return True
    return False


def _optimiser(facts: Facts, driver: Scope, value: ast.expr) -> bool:
    """``optax.adam(lr)``, ``optimizers.sgd(lr)``: another optimiser's state has the structure
    of the parameters, whatever its settings, so the state it initialises is no new trace."""
    if not isinstance(value, ast.Call):
        return False
    name = facts.qualified_name(driver, value.func) or ""
    return name.startswith(_OPTIMISERS)


def _maker(function: ast.expr, makers: frozenset[str]) -> bool:
    """An initialiser of the new value: ``init_fn(...)`` bound beside it, or its method
    ``net.init(...)``. Other calls of it (``normalize(batch)``) transform data, whose
    structure the new value does not set."""
    if isinstance(function, ast.Attribute):
        return (
            _initialiser(function.attr)
            and isinstance(function.value, ast.Name)
            and function.value.id in makers
        )
    return isinstance(function, ast.Name) and function.id in makers and _initialiser(function.id)


def _given_to_maker(call: ast.Call, makers: frozenset[str]) -> bool:
    """``init_model(rng, model)``: an initialiser given the new value itself, which makes its
    parameters or a training state holding its ``apply`` (a static field of flax's
    ``TrainState``, so a new network's state is a new trace)."""
    function = call.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    if not _initialiser(name):
        return False
    return any(
        isinstance(argument, ast.Name) and argument.id in makers
        for argument in (*call.args, *(k.value for k in call.keywords))
    )


def _initialiser(name: str) -> bool:
    return "init" in name.lower().split("_") or name.lower().startswith("init")
