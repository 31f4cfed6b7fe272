"""The values a compiled call gives its static arguments: part of the key of its trace.

``jax.jit(f, static_argnums=1)`` hashes the second argument into the cache key: a call given
a value no earlier call was given traces ``f`` again, and the new trace reads closures and
globals afresh. So two calls that write different constants there never share a trace, and a
loop whose calls pass the loop's own counter there (``for step in range(n): f(x, step)``)
traces anew in every pass: no pass reuses another's trace.

Only plain functions are followed (not methods, whose ``self`` shifts the positions), and only
constants written at the call, or a name the calling code binds once to one. JAX keys an
argument given by keyword apart from the same argument given by position, so calls that spell
one argument both ways are left undecided rather than called different.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .blocks import place_of
from .compiled import CompiledFunction, Form
from .facts.model import BindingKind, Scope, ScopeKind
from .facts.queries import Facts
from .shapes import bound_by_comprehension

# What one static argument is given at a call: how (position or keyword), and the constant with
# its type (JAX compares static values with their types: ``2`` and ``2.0`` are two traces).
StaticValue = tuple[str, str, object]


@dataclass(frozen=True)
class StaticParameter:
    """A static parameter: its index among the positional parameters (None: keyword-only),
    and the ways of passing it that JAX keys by value. Given both ``static_argnums`` and
    ``static_argnames``, JAX takes each as written: a parameter named by position only is
    traced when given by keyword, and the other way round; given one, it infers the other."""

    name: str
    index: int | None
    by_position: bool
    by_keyword: bool


@dataclass(frozen=True)
class StaticParameters:
    """The compiled function's static parameters."""

    parameters: tuple[StaticParameter, ...]


def static_parameters(sites: list[CompiledFunction]) -> StaticParameters | None:
    """The static parameters every site declares alike, of a plain function; None if it has
    none, or they cannot be read (a method, ``*args``, options not written as constants)."""
    if not sites:
        return None
    found = [_declared(site) for site in sites]
    first = found[0]
    if first is None or any(other != first for other in found[1:]):
        return None
    return first


def _declared(site: CompiledFunction) -> StaticParameters | None:
    call = site.transform_call
    function = site.function
    if call is None or site.scope.parent is None or site.scope.parent.kind is ScopeKind.CLASS:
        return None
    if site.site_scope.kind is ScopeKind.CLASS:
        return None  # ``run = jax.jit(f)`` in a class body binds like a method: ``self`` first
    # ``jax.jit(partial(f, a), static_argnums=1)`` counts positions of what ``partial`` left.
    given = [a for a in call.args if not _is_transform(a)]
    if site.form is not Form.DECORATOR and not (
        given and isinstance(given[0], (ast.Name, ast.Lambda))
    ):
        return None
    # Another decorator (``@logged`` without ``functools.wraps``) hands JAX another signature:
    # it reads positions and names from what it is given, not from this ``def``.
    decorators = getattr(function, "decorator_list", [])
    if len(decorators) > (1 if site.form is Form.DECORATOR else 0):
        return None
    arguments = function.args
    if arguments.vararg is not None:
        return None
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    keyword_only = [a.arg for a in arguments.kwonlyargs]
    by_number: set[str] = set()
    by_name: set[str] = set()
    options = {k.arg for k in call.keywords}
    for keyword in call.keywords:
        if keyword.arg not in ("static_argnums", "static_argnames"):
            continue
        constants = _constants(keyword.value)
        if constants is None:
            return None
        for constant in constants:
            if keyword.arg == "static_argnums":
                if type(constant) is not int or not 0 <= constant < len(positional):
                    return None
                by_number.add(positional[constant])
            elif isinstance(constant, str) and constant in (*positional, *keyword_only):
                by_name.add(constant)
            else:
                return None
    if not by_number | by_name:
        return None
    both = {"static_argnums", "static_argnames"} <= options
    parameters = []
    for name in sorted(by_number | by_name):
        index = positional.index(name) if name in positional else None
        if both:
            by_position, by_keyword = name in by_number, name in by_name
        else:
            by_position, by_keyword = index is not None, True
        parameters.append(StaticParameter(name, index, by_position, by_keyword))
    return StaticParameters(tuple(parameters))


def _is_transform(argument: ast.expr) -> bool:
    """``partial(jax.jit, ...)``'s first argument: the transform, not the function."""
    return isinstance(argument, ast.Attribute) and argument.attr in ("jit", "pmap", "filter_jit")


def _constants(value: ast.expr) -> list[object] | None:
    elements = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    if not all(isinstance(e, ast.Constant) for e in elements):
        return None
    return [e.value for e in elements]  # type: ignore[attr-defined]


def static_values(
    facts: Facts,
    static: StaticParameters,
    call: ast.Call,
    scope: Scope,
    outer: tuple[ast.Call, Scope] | None = None,
) -> tuple[StaticValue, ...] | None:
    """What the call gives each static parameter, as written; None unless each is a constant
    (written, or a name ``scope`` binds once to one) or left to its default, and the call
    spreads nothing (``*args``, ``**options``). ``outer``: the call of the function ``scope``
    that runs this call, and the scope it stands in: a parameter of the function, never bound
    again there, is given what that call passes it (``walk(3, 0.5)`` running ``probs(logits,
    temperature=temperature)``)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    given: list[StaticValue] = []
    for parameter in static.parameters:
        form = _given(parameter, call)
        if form is None:
            given.append(("default", "", None))  # JAX keys the call without it
            continue
        how, value, static_there = form
        if not static_there:
            return None  # passed where JAX traces it: not a static value
        passed = _passed_to_parameter(facts, value, scope, outer[0]) if outer else None
        constant = (
            _constant(facts, passed, outer[1])
            if outer is not None and passed is not None
            else _constant(facts, value, scope)
        )
        if constant is None:
            return None
        given.append((how, type(constant[0]).__name__, constant[0]))
    return tuple(given)


def _passed_to_parameter(
    facts: Facts, value: ast.expr, function: Scope, call: ast.Call
) -> ast.expr | None:
    """What ``call`` passes the parameter ``value`` names, when ``value`` is a parameter of
    the plain function ``function`` that nothing binds again; None otherwise, or when the call
    leaves it to its default or spreads its arguments."""
    node = function.node
    if not isinstance(value, ast.Name) or not isinstance(node, ast.FunctionDef):
        return None
    bindings = facts.bindings_of(function, value.id)
    if facts.resolve(function, value.id) is not function or len(bindings) != 1:
        return None
    if bindings[0].kind is not BindingKind.PARAM:
        return None
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    positional = [*node.args.posonlyargs, *node.args.args]
    names = [a.arg for a in positional]
    if value.id in names and names.index(value.id) < len(call.args):
        return call.args[names.index(value.id)]
    if value.id in [a.arg for a in node.args.posonlyargs]:
        return None
    return next((k.value for k in call.keywords if k.arg == value.id), None)


def _given(parameter: StaticParameter, call: ast.Call) -> tuple[str, ast.expr, bool] | None:
    """How the call passes the parameter, what, and whether JAX keys it there by value."""
    index = parameter.index
    if index is not None and index < len(call.args):
        return f"position {index}", call.args[index], parameter.by_position
    for keyword in call.keywords:
        if keyword.arg == parameter.name:
            return f"keyword {parameter.name}", keyword.value, parameter.by_keyword
    return None


def _constant(facts: Facts, value: ast.expr, scope: Scope) -> tuple[object] | None:
    """The constant ``value`` holds, in a one-element tuple (it may be ``None`` itself)."""
    if isinstance(value, ast.Name):
        if bound_by_comprehension(facts, value):
            return None
        owner = facts.resolve(scope, value.id)
        bindings = facts.bindings_of(owner, value.id)
        if owner is not scope or len(bindings) != 1 or bindings[0].value is None:
            return None
        if bindings[0].loops:
            return None
        value = bindings[0].value
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        inner = _constant(facts, value.operand, scope)
        if inner is None or type(inner[0]) not in (int, float):
            return None
        return (-inner[0],)  # type: ignore[operator]
    if isinstance(value, ast.Constant):
        return (value.value,)
    return None


def counter_of_each_pass(
    facts: Facts, static: StaticParameters, call: ast.Call, loop: ast.AST, scope: Scope
) -> bool:
    """The call gives a static parameter the counter of ``loop`` itself (``for step in
    range(n)``, ``for i, batch in enumerate(data)``, ``for n_iter, omega in ((5, 0.1), (10,
    0.2))`` with ``n_iter`` different in every entry), which the body does not rebind: a new
    value in every pass, so every pass traces anew."""
    counters = _counters(facts, loop, scope)
    if not counters:
        return False
    for parameter in static.parameters:
        form = _given(parameter, call)
        if form is None or not form[2]:
            continue
        value = form[1]
        if (
            isinstance(value, ast.Name)
            and value.id in counters
            and not _rebinds(loop, value.id)
            and not _bound_elsewhere(facts, loop, value.id, scope)
        ):
            return True
    return False


def _bound_elsewhere(facts: Facts, loop: ast.AST, counter: str, scope: Scope) -> bool:
    """The counter's name is bound by other code that may run in the loop: a function
    declaring it ``global`` or ``nonlocal`` (``def restart(): global stage; stage = 0``)."""
    owner = facts.resolve(scope, counter)
    return any(b.scope is not scope for b in facts.bindings_of(owner, counter))


def _counters(facts: Facts, loop: ast.AST, scope: Scope) -> set[str]:
    """The names ``loop`` binds to a new value in every pass."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return set()
    if isinstance(loop.iter, (ast.Tuple, ast.List)):
        return _distinct_columns(loop.target, loop.iter.elts)
    if not isinstance(loop.iter, ast.Call):
        return set()
    source = loop.iter.func
    called = source.id if isinstance(source, ast.Name) else None
    if called is None or facts.bindings_of(facts.resolve(scope, called), called):
        return set()  # not the builtin: a ``range`` the code defines may repeat values
    target = loop.target
    if called == "range" and isinstance(target, ast.Name):
        return {target.id}
    if (
        called == "enumerate"
        and isinstance(target, ast.Tuple)
        and target.elts
        and isinstance(target.elts[0], ast.Name)
    ):
        return {target.elts[0].id}
    return set()


def _distinct_columns(target: ast.expr, entries: list[ast.expr]) -> set[str]:
    """``for n in (5, 10, 20)``, ``for n, lr in ((5, 0.1), (10, 0.2))``: the names whose
    constants written in the code differ from entry to entry."""
    if isinstance(target, ast.Name):
        columns = {target.id: entries}
    elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
        width = len(target.elts)
        if not all(isinstance(e, (ast.Tuple, ast.List)) and len(e.elts) == width for e in entries):
            return set()
        columns = {
            name.id: [entry.elts[i] for entry in entries]  # type: ignore[attr-defined]
            for i, name in enumerate(target.elts)
            if isinstance(name, ast.Name)
        }
    else:
        return set()
    distinct: set[str] = set()
    for name, values in columns.items():
        constants = [v.value for v in values if isinstance(v, ast.Constant)]
        # JAX keys a static value by equality: ``5`` and ``5.0`` share a trace.
        if len(constants) == len(values) and len(set(constants)) == len(values):
            distinct.add(name)
    return distinct


def _rebinds(loop: ast.AST, name: str) -> bool:
    for statement in getattr(loop, "body", []):
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                return True
            if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
                return True
    return False


def switched_with_change(
    facts: Facts,
    static: StaticParameters,
    change: ast.stmt,
    calls: list[ast.Call],
    scope: Scope,
    change_loops: tuple[ast.AST, ...],
) -> bool:
    """Every compiled call gives a static parameter one name, which the change's own block
    binds next to the change to a constant that no other binding of the name gives
    (``if epoch == 2: alpha = 0.5; penalised = False``): the first call after the change is
    keyed by a value no call before it had, so JAX traces again and reads the new value, and
    the calls after it, given the same constant, reuse that new trace.

    Only when every other binding of the name comes before the change, outside the loops
    around it (no later binding gives a call an old constant back, whose trace read the old
    value), and no call stands between the change and the name's new binding."""
    place = place_of(scope.node, change)
    if place is None or not calls:
        return False
    for parameter in static.parameters:
        given = [_given(parameter, call) for call in calls]
        if any(g is None or not g[2] or not isinstance(g[1], ast.Name) for g in given):
            continue
        names = {g[1].id for g in given if g is not None and isinstance(g[1], ast.Name)}
        forms = {g[0] for g in given if g is not None}
        if len(names) != 1 or len(forms) != 1:
            continue
        name = names.pop()
        if facts.resolve(scope, name) is not scope:
            continue
        bindings = facts.bindings_of(scope, name)
        switching = [b for b in bindings if any(b.node is s for s in place.block)]
        constants = [_written_constant(b.value) for b in bindings]
        if len(switching) != 1 or any(c is None for c in constants):
            continue
        new = _written_constant(switching[0].value)
        others = [c for b, c in zip(bindings, constants, strict=True) if b is not switching[0]]
        earlier = all(
            b.at < switching[0].at and not set(b.loops) & set(change_loops)
            for b in bindings
            if b is not switching[0]
        )
        if not others or new in others or not earlier:
            continue
        first, last = sorted((change.lineno, switching[0].node.lineno))  # type: ignore[attr-defined]
        if any(first <= call.lineno <= last for call in calls):
            continue
        return True
    return False


def _written_constant(value: ast.expr | None) -> tuple[str, object] | None:
    """The constant written there, with its type: JAX keys ``1`` and ``True`` apart."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        inner = _written_constant(value.operand)
        if inner is None or inner[0] not in ("int", "float"):
            return None
        return inner[0], -inner[1]  # type: ignore[operator]
    if isinstance(value, ast.Constant):
        return type(value.value).__name__, value.value
    return None
