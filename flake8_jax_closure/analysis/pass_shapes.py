"""Arguments sliced to a new length in each pass of a loop, by the pass's own values.

``for lr, length in zip(lrs, (0.1, 1)): optim = adam(lr); _ts = ts[: int(n * length)]`` and
then ``make_step(_ts, ...)`` in the pass: JAX keys a trace on the shapes of the arguments, so
when every pass gives an argument a length no other pass gives, each pass traces anew and
reads the value its own pass set; no pass reuses the trace of another. The lengths are worked
out from the values the loop goes through, written in the code (a tuple, a name bound once to
one, or a parameter's default and the literal values the module's calls give it). A name the
pass does not bind (``n``, the data's length) is the same in every pass, and the lengths must
differ for every length it may hold up to a bound: ``int(100 * 0.28)`` and ``int(100 * 0.29)``
are both 28. ``x[i * b : (i + 1) * b]`` has the same length in every pass and is no such
argument.

Only when the change is made in the pass itself (not in an inner loop, whose passes share the
outer pass's shapes) and every compiled call of the function running the loop is in the loop
(a call before or after it may have the shape of one of its passes).
"""

from __future__ import annotations

import ast
import enum
import itertools
import math
import operator
from collections.abc import Callable, Iterator

from .callgraph.events import Event, EventKind
from .facts.model import BindingKind, Scope
from .facts.queries import Facts

# The lengths must differ for each of these values of the one name the passes share.
_SAMPLES = range(1, 2049)
# The length of what is sliced, when a slice runs to its end: larger than any bound written.
_END = 10**9
_MOST_PASSES = 64
_MOST_ALTERNATIVES = 16
_OPERATORS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
}
_ROUNDING: dict[str, Callable[[float], float]] = {
    "int": math.trunc,
    "round": round,
    "math.floor": math.floor,
    "math.ceil": math.ceil,
}

Env = dict[str, ast.expr]


class PassShapes(enum.Enum):
    """Whether every pass of a loop gives the compiled calls arguments of its own shapes."""

    # The values the loop goes through are written in the code that runs.
    FIXED = "fixed"
    # They come from the parameters of the function around the loop: the module's own calls
    # give lengths that differ, a caller outside the project may give equal ones.
    GIVEN = "given"


def reshaped_each_pass(
    facts: Facts, loop: ast.AST, change: Event, uses: list[Event]
) -> PassShapes | None:
    """How every pass of ``loop``, which makes ``change``, gives each compiled call in it an
    argument sliced to a length no other pass gives; None when the code does not show that it
    does. ``uses``: the compiled object's uses in the function running the loop."""
    if not isinstance(loop, ast.For) or not uses or change.loops[-1:] != (loop,):
        return None
    if any(loop not in use.loops for use in uses):
        return None
    driver = change.driver
    found = _passes(facts, driver, loop.iter)
    if found is None:
        return None
    alternatives, given = found
    runs: list[list[Env]] = []
    for values in alternatives:
        envs = [_bind(loop.target, value) for value in values]
        if any(env is None for env in envs) or not 2 <= len(envs) <= _MOST_PASSES:
            return None
        runs.append([env for env in envs if env is not None])
    targets = set(runs[0][0])
    bound_in_loop = _names_bound_in(loop) - targets
    for use in uses:
        call = facts.parent(use.node) if use.node is not None else None
        if use.kind is not EventKind.RUN or use.via is not None or not isinstance(call, ast.Call):
            return None
        if call.func is not use.node:
            return None
        if not any(
            _differs_each_pass(facts, loop, use, argument, runs, bound_in_loop)
            for argument in (*call.args, *(k.value for k in call.keywords))
        ):
            return None
    return PassShapes.GIVEN if given else PassShapes.FIXED


# -- the values the loop goes through ----------------------------------------------------------


def _passes(
    facts: Facts, driver: Scope, iterable: ast.expr
) -> tuple[list[list[ast.expr]], bool] | None:
    """The sequences of values the loop may go through (one per way the code runs it), and
    whether they come from parameters."""
    if (
        isinstance(iterable, ast.Call)
        and isinstance(iterable.func, ast.Name)
        and iterable.func.id == "zip"
        and iterable.args
        and all(k.arg == "strict" for k in iterable.keywords)
        and facts.resolve(driver, "zip") is facts.module_scope
        and not facts.bindings_of(facts.module_scope, "zip")
    ):
        parts = [_sequence(facts, driver, argument) for argument in iterable.args]
        if any(part is None for part in parts):
            return None
        choices = [part[0] for part in parts if part is not None]
        if math.prod(len(choice) for choice in choices) > _MOST_ALTERNATIVES:
            return None
        zipped: list[list[ast.expr]] = [
            [ast.Tuple(elts=list(row), ctx=ast.Load()) for row in zip(*combination, strict=False)]
            for combination in itertools.product(*choices)
        ]
        return zipped, any(part[1] for part in parts if part is not None)
    return _sequence(facts, driver, iterable)


def _sequence(
    facts: Facts, driver: Scope, node: ast.expr
) -> tuple[list[list[ast.expr]], bool] | None:
    literal = _elements(node)
    if literal is not None:
        return [literal], False
    if not isinstance(node, ast.Name):
        return None
    owner = facts.resolve(driver, node.id)
    if facts.mutations_of(owner, node.id):
        return None
    bindings = facts.bindings_of(owner, node.id)
    if owner is driver and [b.kind for b in bindings] == [BindingKind.PARAM]:
        given = _given_to(facts, driver, node.id)
        return (given, True) if given else None
    if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN:
        value = bindings[0].value
        elements = _elements(value) if value is not None else None
        if elements is not None:
            return [elements], False
    return None


def _elements(node: ast.expr) -> list[ast.expr] | None:
    if isinstance(node, (ast.Tuple, ast.List)) and not any(
        isinstance(e, ast.Starred) for e in node.elts
    ):
        return list(node.elts)
    return None


def _given_to(facts: Facts, function: Scope, parameter: str) -> list[list[ast.expr]] | None:
    """The literal sequences the parameter holds: its default where a call of the function in
    the module leaves it out, and what each call gives; None when one is not a literal."""
    node = function.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    names = [a.arg for a in positional]
    default: ast.expr | None = None
    if parameter in names:
        index = names.index(parameter)
        offset = len(positional) - len(arguments.defaults)
        if index >= offset:
            default = arguments.defaults[index - offset]
    else:
        names_kw = [a.arg for a in arguments.kwonlyargs]
        if parameter not in names_kw:
            return None
        default = arguments.kw_defaults[names_kw.index(parameter)]
    found: list[list[ast.expr]] = []
    calls = list(_calls_of(facts.tree, function.name))
    if not calls or any(_missing(call, parameter, names) for call in calls):
        elements = _elements(default) if default is not None else None
        if elements is None:
            return None
        found.append(elements)
    for call in calls:
        value = _argument(call, parameter, names)
        if value is None:
            if _missing(call, parameter, names):
                continue
            return None  # ``*args`` or ``**kwargs``: anything
        elements = _elements(value)
        if elements is None:
            return None
        found.append(elements)
    return found


def _calls_of(tree: ast.AST, name: str) -> Iterator[ast.Call]:
    """Calls naming the function, plainly or as an attribute (a method through its object)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Name) and func.id == name) or (
                isinstance(func, ast.Attribute) and func.attr == name
            ):
                yield node


def _unpacks(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


def _argument(call: ast.Call, parameter: str, names: list[str]) -> ast.expr | None:
    if _unpacks(call):
        return None
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    if parameter in names:
        # A method called through its object: ``self`` is not among the arguments.
        offset = 1 if names and names[0] in ("self", "cls") else 0
        index = names.index(parameter) - offset
        if 0 <= index < len(call.args):
            return call.args[index]
    return None


def _missing(call: ast.Call, parameter: str, names: list[str]) -> bool:
    return not _unpacks(call) and _argument(call, parameter, names) is None


def _bind(target: ast.expr, value: ast.expr) -> Env | None:
    """The loop's names bound to one pass's value."""
    if isinstance(target, ast.Name):
        return {target.id: value}
    if isinstance(target, (ast.Tuple, ast.List)):
        elements = _elements(value)
        if elements is None or len(elements) != len(target.elts):
            return None
        env: Env = {}
        for inner, element in zip(target.elts, elements, strict=True):
            bound = _bind(inner, element)
            if bound is None:
                return None
            env.update(bound)
        return env
    return None


def _names_bound_in(loop: ast.For) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


# -- the arguments' lengths ---------------------------------------------------------------------


def _differs_each_pass(
    facts: Facts,
    loop: ast.For,
    use: Event,
    argument: ast.expr,
    runs: list[list[Env]],
    bound_in_loop: set[str],
) -> bool:
    """``argument`` is a slice by the pass's values (or a name the pass binds to one, first
    thing in the pass, before the call) whose length differs in every pass."""
    sliced: ast.expr | None = argument
    if isinstance(argument, ast.Name):
        sliced = _bound_in_pass(facts, loop, use, argument.id)
        bound_in_loop = bound_in_loop - {argument.id}
    if not isinstance(sliced, ast.Subscript):
        return False
    part = sliced.slice
    if isinstance(part, ast.Tuple):
        slices = [e for e in part.elts if isinstance(e, ast.Slice)]
        part = slices[0] if len(slices) == 1 else part
    if not isinstance(part, ast.Slice) or part.step is not None:
        return False
    bounds = [b for b in (part.lower, part.upper) if b is not None]
    if any(_reads(b) & bound_in_loop for b in bounds):
        return False  # computed from something else the pass binds
    for envs in runs:
        targets = set(envs[0])
        shared = {name for b in bounds for name in _operands(b) - targets}
        if not bounds or not any(_reads(b) & targets for b in bounds) or len(shared) > 1:
            return False
        for sample in _SAMPLES:
            lengths = [_length(part, env, sample) for env in envs]
            if any(length is None for length in lengths) or len(set(lengths)) < len(lengths):
                return False
    return True


def _bound_in_pass(facts: Facts, loop: ast.For, use: Event, name: str) -> ast.expr | None:
    """The value of ``name = value``, a statement of the loop's body (run in every pass) and
    the only binding of the name in the loop, before the call."""
    found: ast.expr | None = None
    for statement in loop.body:
        if statement.lineno >= use.at[0]:
            break
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == name
        ):
            found = statement.value
    if found is None:
        return None
    stores = [
        node
        for node in ast.walk(loop)
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
    ]
    return found if len(stores) == 1 else None


def _reads(node: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _operands(node: ast.expr) -> set[str]:
    """The names read as numbers: not the functions called (``int``, ``math.floor``)."""
    callees = {
        id(n) for call in ast.walk(node) if isinstance(call, ast.Call) for n in ast.walk(call.func)
    }
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in callees}


def _length(part: ast.Slice, env: Env, sample: int) -> float | None:
    lower = _value(part.lower, env, sample) if part.lower is not None else 0
    upper = _value(part.upper, env, sample) if part.upper is not None else _END
    if lower is None or upper is None or lower < 0 or upper < 0:
        return None  # counted from the end: the length depends on the whole's
    return max(0, min(upper, _END) - min(lower, _END))


def _value(node: ast.expr, env: Env, sample: int, depth: int = 0) -> float | None:
    """The number ``node`` gives in a pass: the pass's values from ``env``; any other name,
    shared by every pass, as ``sample``."""
    if depth > 16:
        return None
    if isinstance(node, ast.Constant):
        value = node.value
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if isinstance(node, ast.Name):
        if node.id in env:
            return _value(env[node.id], {}, sample, depth + 1)
        return sample
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _value(node.operand, env, sample, depth + 1)
        return None if inner is None else -inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left = _value(node.left, env, sample, depth + 1)
        right = _value(node.right, env, sample, depth + 1)
        if left is None or right is None or (right == 0 and isinstance(node.op, _DIVISIONS)):
            return None
        return _OPERATORS[type(node.op)](left, right)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        held = env.get(node.value.id)
        elements = _elements(held) if held is not None else None
        index = node.slice
        if (
            elements is not None
            and isinstance(index, ast.Constant)
            and isinstance(index.value, int)
            and -len(elements) <= index.value < len(elements)
        ):
            return _value(elements[index.value], {}, sample, depth + 1)
        return None
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        rounding = _ROUNDING.get(ast.unparse(node.func))
        inner = _value(node.args[0], env, sample, depth + 1)
        if rounding is None or inner is None:
            return None
        return rounding(inner)
    return None


_DIVISIONS = (ast.Div, ast.FloorDiv)
