"""Arguments sliced to a new length in each pass of a loop, by the pass's own values.

``for lr, length in zip(lrs, (0.1, 1.0)): optim = adam(lr); _ts = ts[: int(n * length)]``
and then ``make_step(_ts, ...)`` in the pass: JAX keys a trace on the shapes of the
arguments, so when every pass gives an argument a length no other pass gives, each pass traces
anew and reads the value its own pass set; no pass reuses the trace of another.

The code must show it plainly:

- the change is made in the pass itself (not in an inner loop, whose passes share the outer
  pass's shapes), and the compiled object is called only there: in that loop of that function,
  directly, neither handed on nor called from elsewhere (a call before or after the loop may
  have the shape of one of its passes);
- the loop goes through numbers written in the code: a tuple or list in the ``for``, a ``zip``
  of them, a local name bound once to a tuple, or a parameter of a function that the module
  only calls by name, from its default and the literal values those calls give; the loop's
  names are bound again nowhere (not in the pass, nor by ``nonlocal`` in a helper);
- the argument is ``x[: bound]`` (or ``x[:, : bound]``), written in the call, or bound first
  thing in the pass by nothing else and read there only as the compiled calls' argument (a
  list may be padded in place), unless ``n`` is a length ``.shape`` gave (an array's length
  cannot change in place); ``x`` is a local or parameter of the function (a global may be
  bound again by a later cell or an importer), bound before the loop and never in it nor after
  its length is taken, and only sliced there (not handed to a helper that may cut it in place);
  ``bound`` computes from the pass's values and one such name ``n`` bound once to the length
  of the axis sliced (``len(x)``, ``x.shape[1]``, ``_, n, _ = x.shape``), or to a length of an
  array made beside ``x`` (``ts, ys = get_data()`` then ``_, n, _ = ys.shape``: the time grid
  and the series on it are taken to be as long). A bound past ``n`` would be cut to the end,
  so none may pass it;
- the lengths differ between every two passes for every ``n`` from 1 to 256 and for a few far
  larger ones: ``int(100 * 0.28)`` and ``int(100 * 0.29)`` are both 28, and ``x[i * b : (i +
  1) * b]`` has one length in every pass.

Two things are taken rather than shown: an array made beside the one sliced is as long, and
the data is not empty (with ``n`` of 0 every pass has one shape).
"""

from __future__ import annotations

import ast
import enum
import itertools
import math
import operator
import weakref
from collections.abc import Callable

from .callgraph.events import Event, EventKind, Reach
from .facts.model import Binding, BindingKind, Scope, ScopeKind
from .facts.queries import Facts

# Lengths from 1 to 256, and some far larger ones: a bound must stay apart and within ``n``
# for each (an empty array, ``n`` of 0, gives every pass one shape: it is taken not to be).
_SAMPLES = (*range(1, 257), 512, 1000, 1024, 4096, 10_000, 65_536, 1_000_000)
_MOST_PASSES = 16
_MOST_ALTERNATIVES = 8
_MOST_SLICES = 16
_MOST_BOUND_NODES = 40
_OPERATORS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
}
_ROUNDING: dict[str, Callable[[float], int]] = {
    "int": math.trunc,
    "round": round,
    "math.floor": math.floor,
    "math.ceil": math.ceil,
}

Env = dict[str, ast.expr]
# Per module, by the loop and the slice's text: whether the slice has a length of its own in
# every pass (each compiled function reading each changed name asks again).
_answers: weakref.WeakKeyDictionary[ast.Module, dict[tuple[int, str], bool]] = (
    weakref.WeakKeyDictionary()
)


class PassShapes(enum.Enum):
    """Whether every pass of a loop gives the compiled calls arguments of its own shapes."""

    # The values the loop goes through are written in the code that runs.
    FIXED = "fixed"
    # They come from the parameters of the function around the loop: the module's own calls
    # give lengths that differ, a caller outside the project may give equal ones.
    GIVEN = "given"


def reshaped_each_pass(
    facts: Facts, loop: ast.AST, change: Event, uses: Reach
) -> PassShapes | None:
    """How every pass of ``loop``, which makes ``change``, gives each compiled call in it an
    argument sliced to a length no other pass gives; None when the code does not show that it
    does. ``uses``: every use of the compiled object."""
    driver = change.driver
    if not isinstance(loop, ast.For) or change.loops[-1:] != (loop,):
        return None
    if uses.escapes or not uses.events:
        return None
    calls: list[tuple[Event, ast.Call]] = []
    for use in uses.events:
        call = facts.parent(use.node) if use.node is not None else None
        if (
            use.kind is not EventKind.RUN
            or use.via is not None
            or use.driver is not driver
            or loop not in use.loops
            or not isinstance(call, ast.Call)
            or call.func is not use.node
        ):
            return None
        calls.append((use, call))
    found = _passes(facts, driver, loop.iter)
    if found is None:
        return None
    alternatives, given = found
    runs: list[list[Env]] = []
    for values in alternatives:
        envs = [_bind(loop.target, value) for value in values]
        if not 2 <= len(envs) <= _MOST_PASSES:
            return None
        if any(env is None for env in envs):
            return None
        runs.append([env for env in envs if env is not None])
    targets = set(runs[0][0])
    if _stores_in(loop.body, targets) or _stores_in(loop.orelse, targets):
        return None  # ``frac = min(frac, cap)``: the pass's value is not the loop's
    for name in targets:
        owner = facts.resolve(driver, name)
        if any(b.scope is not owner for b in facts.bindings_of(owner, name)):
            return None  # ``nonlocal frac`` in a helper the pass calls
    lengths = _Lengths(facts, loop, runs, [call for _, call in calls])
    for use, call in calls:
        arguments = (*call.args, *(k.value for k in call.keywords))
        if not any(lengths.differ(use, argument) for argument in arguments):
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
    if owner.kind not in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
        return None  # a global: an importer or a later cell may bind it again
    value = _bound_once(bindings)
    if isinstance(value, ast.Tuple):
        # A tuple: no alias can append to it.
        elements = _elements(value)
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
    the module leaves it out, and what each call gives. None unless the function is a plain
    function the module names only to call it (not a method, not ``run = phases``, not handed
    on), each call giving a literal or nothing."""
    node = function.node
    parent = function.parent
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or parent is None:
        return None
    if parent.kind not in (ScopeKind.MODULE, ScopeKind.FUNCTION) or node.decorator_list:
        return None
    arguments = node.args
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    keyword_only = [a.arg for a in arguments.kwonlyargs]
    if parameter in positional:
        index = positional.index(parameter) - (len(positional) - len(arguments.defaults))
        default = arguments.defaults[index] if index >= 0 else None
    elif parameter in keyword_only:
        default = arguments.kw_defaults[keyword_only.index(parameter)]
    else:
        return None
    calls: list[ast.Call] = []
    for read in facts.reads_of(parent, function.name):
        call = facts.parent(read.node)
        if not isinstance(call, ast.Call) or call.func is not read.node:
            return None
        calls.append(call)
    given: list[ast.expr | None] = [default] if not calls else []
    for call in calls:
        value = _argument(call, parameter, positional)
        if value is None and _unpacks(call):
            return None  # ``*args`` or ``**kwargs``: anything
        given.append(default if value is None else value)
    found: list[list[ast.expr]] = []
    for value in given:
        elements = _elements(value) if value is not None else None
        if elements is None:
            return None
        found.append(elements)
    return found


def _unpacks(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    )


def _argument(call: ast.Call, parameter: str, positional: list[str]) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    if parameter in positional:
        index = positional.index(parameter)
        if index < len(call.args) and not any(
            isinstance(a, ast.Starred) for a in call.args[: index + 1]
        ):
            return call.args[index]
    return None


def _bind(target: ast.expr, value: ast.expr) -> Env | None:
    """The loop's names bound to one pass's value: numbers, or tuples of them."""
    if isinstance(target, ast.Name):
        return {target.id: value} if _numeric(value) else None
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


def _numeric(value: ast.expr) -> bool:
    """A number written out (``0.5``, ``-1``), or a tuple of them; not a name, whose value the
    lengths would have to guess."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        value = value.operand
    if isinstance(value, ast.Constant):
        return isinstance(value.value, (int, float)) and not isinstance(value.value, bool)
    elements = _elements(value)
    return elements is not None and all(_numeric(e) for e in elements)


def _stores_in(body: list[ast.stmt], names: set[str]) -> bool:
    return any(
        isinstance(node, ast.Name) and node.id in names and not isinstance(node.ctx, ast.Load)
        for statement in body
        for node in ast.walk(statement)
    ) or any(
        isinstance(node, (ast.Global, ast.Nonlocal)) and names & set(node.names)
        for statement in body
        for node in ast.walk(statement)
    )


def _bound_once(bindings: list[Binding]) -> ast.expr | None:
    """The value of the one binding, ``name = value`` outside any loop."""
    if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN or bindings[0].loops:
        return None
    return bindings[0].value


# -- the arguments' lengths ---------------------------------------------------------------------


class _Lengths:
    """Whether an argument of a call in the loop has a length of its own in every pass."""

    def __init__(
        self, facts: Facts, loop: ast.For, runs: list[list[Env]], calls: list[ast.Call]
    ) -> None:
        self.facts = facts
        self.loop = loop
        self.runs = runs
        self.targets = set(runs[0][0])
        self.calls = {id(call) for call in calls}
        self._known = _answers.setdefault(facts.tree, {})

    def differ(self, use: Event, argument: ast.expr) -> bool:
        sliced: ast.expr | None = argument
        if isinstance(argument, ast.Name):
            if not self._owned(use.driver, argument.id):
                return False  # ``global _ts`` in a helper the pass calls may cut it again
            sliced = _bound_in_pass(self.loop, use, argument.id)
        if not isinstance(sliced, ast.Subscript):
            return False
        key = (id(self.loop), ast.unparse(sliced))
        known = self._known.get(key)
        if known is None:
            if sum(1 for k in self._known if k[0] == id(self.loop)) >= _MOST_SLICES:
                return False
            known = self._known[key] = self._sliced_apart(use.driver, sliced)
        if known and isinstance(argument, ast.Name) and not self._only_handed(argument.id):
            # Handed to other calls in the pass: a list may be padded in place there
            # (``batch.extend(pad)``); an array, whose length ``.shape`` gave, cannot be.
            return self._of_an_array(use.driver, sliced)
        return known

    def _of_an_array(self, driver: Scope, sliced: ast.Subscript) -> bool:
        part = _the_slice(sliced.slice)
        if part is None or part[1].upper is None:
            return False
        (length,) = _operands(part[1].upper) - self.targets
        owner = self.facts.resolve(driver, length)
        (binding,) = self.facts.bindings_of(owner, length)
        value = binding.value
        if value is None and isinstance(binding.node, ast.Assign):
            value = binding.node.value
        return value is not None and any(
            isinstance(n, ast.Attribute) and n.attr == "shape" for n in ast.walk(value)
        )

    def _only_handed(self, name: str) -> bool:
        """The loop reads the name only as an argument of the compiled calls: nothing in the
        pass can change what it holds in place (``batch.extend(pad)``, ``pad_to(batch, n)``)."""
        for node in ast.walk(self.loop):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                parent = self.facts.parent(node)
                if isinstance(parent, ast.keyword):
                    parent = self.facts.parent(parent)
                if id(parent) not in self.calls or getattr(parent, "func", None) is node:
                    return False
        return True

    def _sliced_apart(self, driver: Scope, sliced: ast.Subscript) -> bool:
        base, axis_and_part = sliced.value, _the_slice(sliced.slice)
        if axis_and_part is None or not isinstance(base, ast.Name):
            return False
        axis, part = axis_and_part
        if part.lower is not None or part.step is not None or part.upper is None:
            return False
        bound = part.upper
        if sum(1 for _ in ast.walk(bound)) > _MOST_BOUND_NODES:
            return False
        names = _operands(bound)
        shared = names - self.targets
        if not names & self.targets or len(shared) != 1:
            return False
        (length,) = shared
        if not (
            self._fixed(driver, base.id)
            and self._only_sliced(driver, base.id)
            and self._fixed(driver, length)
            and self._a_length(driver, length, base.id, axis)
            and self._measured_last(driver, length, base.id)
        ):
            return False
        for envs in self.runs:
            for sample in _SAMPLES:
                lengths = [_value(bound, env, length, sample) for env in envs]
                if any(not isinstance(n, int) or not 0 <= n <= sample for n in lengths):
                    return False  # not a whole number, or past the end: cut to it
                if len(set(lengths)) < len(lengths):
                    return False
        return True

    def _owned(self, driver: Scope, name: str) -> bool:
        """Every binding of the name is the driver's own: no ``global`` or ``nonlocal`` in a
        function the loop may call rebinds it."""
        owner = self.facts.resolve(driver, name)
        return all(b.scope is owner for b in self.facts.bindings_of(owner, name))

    def _measured_last(self, driver: Scope, length: str, base: str) -> bool:
        """No binding of the array comes after the length is taken (``n = len(ts); ts =
        ts[:50]`` would cut every bound past 50 to it)."""
        owner = self.facts.resolve(driver, length)
        (measure,) = self.facts.bindings_of(owner, length)
        made = self.facts.bindings_of(self.facts.resolve(driver, base), base)
        return all(b.start <= measure.start for b in made)

    def _fixed(self, driver: Scope, name: str) -> bool:
        """A local or parameter of a function (a global may be bound again by a later
        notebook cell or by an importer, which this module does not show), bound before the
        loop and never in it, by that function alone (no ``nonlocal`` elsewhere), changed in
        place nowhere, and not one of the loop's names."""
        if name in self.targets or _stores_in([self.loop], {name}):
            return False
        owner = self.facts.resolve(driver, name)
        if owner.kind not in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
            return False
        bindings = self.facts.bindings_of(owner, name)
        first, last = self.loop.lineno, self.loop.end_lineno or self.loop.lineno
        return (
            bool(bindings)
            and all(
                b.scope is owner
                and b.kind in (BindingKind.ASSIGN, BindingKind.PARAM)
                and not first <= b.line <= last
                for b in bindings
            )
            and not self.facts.mutations_of(owner, name)
        )

    def _only_sliced(self, driver: Scope, name: str) -> bool:
        """The loop reads the array only to slice it: not handed to a helper that may cut it
        in place (``del xs[k:]``)."""
        for node in ast.walk(self.loop):
            if isinstance(node, ast.Name) and node.id == name:
                parent = self.facts.parent(node)
                if not (isinstance(parent, ast.Subscript) and parent.value is node):
                    return False
        return True

    def _a_length(self, driver: Scope, name: str, base: str, axis: int) -> bool:
        """``n = len(x)``, ``n = x.shape[1]``, or ``_, n, _ = x.shape``: the length of the
        axis sliced of the array sliced, or a length of an array made beside it (``ts, ys =
        get_data()`` then ``_, n, _ = ys.shape``, the time grid and the series on it, taken to
        be as long)."""
        owner = self.facts.resolve(driver, name)
        bindings = self.facts.bindings_of(owner, name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN:
            return False
        binding = bindings[0]
        found = _measured(binding)
        if found is None:
            return False
        measured, measured_axis = found
        measured_owner = self.facts.resolve(binding.scope, measured)
        base_owner = self.facts.resolve(driver, base)
        if measured == base and measured_owner is base_owner:
            return measured_axis == axis
        if measured_owner is not base_owner:
            return False
        made = self.facts.bindings_of(base_owner, base)
        beside = self.facts.bindings_of(measured_owner, measured)
        statements = {id(b.node) for b in beside if isinstance(b.node, ast.Assign)}
        return bool(made) and all(
            isinstance(b.node, ast.Assign)
            and isinstance(b.node.targets[0], ast.Tuple)
            and id(b.node) in statements
            for b in made
        )


def _measured(binding: Binding) -> tuple[str, int] | None:
    """The array a length is taken from, and the axis: ``x`` and 0 of ``len(x)``, 1 of
    ``x.shape[1]``, the position of ``n`` in ``_, n, _ = x.shape``."""
    value = binding.value
    node = binding.node
    if value is None and isinstance(node, ast.Assign):
        shape = node.value
        target = node.targets[0]
        if (
            isinstance(shape, ast.Attribute)
            and shape.attr == "shape"
            and isinstance(shape.value, ast.Name)
            and isinstance(target, ast.Tuple)
            and not any(isinstance(e, ast.Starred) for e in target.elts)
        ):
            for axis, element in enumerate(target.elts):
                if isinstance(element, ast.Name) and element.id == binding.name:
                    return shape.value.id, axis
        return None
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "len"
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], ast.Name)
    ):
        return value.args[0].id, 0
    if (
        isinstance(value, ast.Subscript)
        and isinstance(value.value, ast.Attribute)
        and value.value.attr == "shape"
        and isinstance(value.value.value, ast.Name)
        and isinstance(value.slice, ast.Constant)
        and isinstance(value.slice.value, int)
        and value.slice.value >= 0
    ):
        return value.value.value.id, value.slice.value
    return None


def _the_slice(index: ast.expr) -> tuple[int, ast.Slice] | None:
    """The axis and the one slice with bounds of ``x[: b]`` or ``x[:, : b]`` (the axes before
    it whole; none taken by an index, which would move it)."""
    if isinstance(index, ast.Slice):
        return 0, index
    if not isinstance(index, ast.Tuple):
        return None
    found: list[tuple[int, ast.Slice]] = []
    for axis, element in enumerate(index.elts):
        if not isinstance(element, ast.Slice):
            return None
        if element.lower is None and element.upper is None and element.step is None:
            continue  # the whole axis
        found.append((axis, element))
    return found[0] if len(found) == 1 else None


def _bound_in_pass(loop: ast.For, use: Event, name: str) -> ast.expr | None:
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


def _operands(node: ast.expr) -> set[str]:
    """The names read as numbers: not the functions called (``int``, ``math.floor``)."""
    callees = {
        id(n) for call in ast.walk(node) if isinstance(call, ast.Call) for n in ast.walk(call.func)
    }
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and id(n) not in callees}


def _value(node: ast.expr, env: Env, length: str, sample: int) -> float | None:
    """The number ``node`` gives in a pass: the pass's values from ``env``, ``length`` as
    ``sample``; None for anything else, or a number too large to be a length."""
    try:
        result = _evaluate(node, env, length, sample, 0)
    except (ArithmeticError, ValueError):
        return None
    if result is None or not math.isfinite(result) or abs(result) > 2**53:
        return None
    return result


def _evaluate(node: ast.expr, env: Env, length: str, sample: int, depth: int) -> float | None:
    if depth > 16:
        return None
    inner = depth + 1
    if isinstance(node, ast.Constant):
        value = node.value
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if isinstance(node, ast.Name):
        if node.id in env:
            return _evaluate(env[node.id], {}, "", sample, inner)
        return sample if node.id == length else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = _evaluate(node.operand, env, length, sample, inner)
        return None if operand is None else -operand
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left = _evaluate(node.left, env, length, sample, inner)
        right = _evaluate(node.right, env, length, sample, inner)
        if left is None or right is None:
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
            return _evaluate(elements[index.value], {}, "", sample, inner)
        return None
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        rounding = _ROUNDING.get(ast.unparse(node.func))
        argument = _evaluate(node.args[0], env, length, sample, inner)
        if rounding is None or argument is None or not math.isfinite(argument):
            return None
        return rounding(argument)
    return None
