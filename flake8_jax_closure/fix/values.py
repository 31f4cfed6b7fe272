"""What a lifted value can be, judged from the code: how a fix must pass it.

A value passed to a compiled function is either traced (arrays, numbers and pytrees of them) or
static (``static_argnames``: it must be hashable, and JAX compiles once per value). Dtypes,
functions, classes, modules and strings cannot be traced; arrays cannot be static. The evidence
is every value the variable is given (``DTYPE = jnp.float32``, ``scale = scale * 2``) and how the
compiled function uses it (``ACTIVATION(x)``, ``x.astype(DTYPE)``, ``x * scale``). Values the
code does not show (a parameter, an unknown call's result) are no evidence either way; when
nothing decides, or the evidence disagrees, the fix is unsafe and says why.
"""

from __future__ import annotations

import ast
import builtins
import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..analysis.facts.model import Binding, BindingKind, Scope, assignment
from ..analysis.facts.queries import Facts


class Kind(enum.Enum):
    STATIC = "static"  # dtypes, functions, classes, modules, strings: hashable, never traced
    NUMBER = "number"  # Python numbers and tuples of them: traced or static alike
    # Tuples of integer literals: axes, a shape, dimensions, which JAX needs as Python values.
    INTEGERS = "integers"
    # Lists of integer literals: data, or axes; not hashable, and axes cannot be traced.
    INTEGER_LIST = "integer list"
    ARRAY = "array"  # arrays and containers of them: traced, never hashable
    NONE = "none"  # ``None`` is an empty pytree and hashable: fits either way
    UNKNOWN = "unknown"  # nothing the code shows


# Library modules whose uncalled attributes are functions, classes or dtypes (or constants).
_LIBRARIES = frozenset(
    {"jax", "numpy", "math", "scipy", "flax", "optax", "equinox", "haiku", "chex", "functools",
     "operator", "jaxlib", "ml_dtypes", "torch", "tensorflow"}
)  # fmt: skip
_CONSTANTS = frozenset({"pi", "e", "inf", "nan", "euler_gamma", "tau", "NINF", "PINF", "NaN"})
# Calls whose result is a function, a dtype or another hashable, untraceable object.
_STATIC_RESULTS = frozenset(
    {"jit", "grad", "value_and_grad", "vmap", "pmap", "checkpoint", "remat", "named_call",
     "partial", "jacfwd", "jacrev", "hessian", "custom_jvp", "custom_vjp", "filter_jit",
     "filter_grad", "filter_vmap", "filter_value_and_grad", "dtype", "result_type",
     "promote_types", "canonicalize_dtype", "compose", "attrgetter", "itemgetter",
     "methodcaller"}
)  # fmt: skip
# Call prefixes whose results are arrays (or pytrees of arrays).
_ARRAY_RESULTS = (
    "jax.numpy.", "numpy.", "jax.random.", "jax.lax.", "jax.scipy.", "scipy.", "jax.tree_util.",
    "jax.tree.", "jax.nn.", "jax.device_put", "jax.numpy", "optax.apply_updates",
    "equinox.apply_updates",
)  # fmt: skip
_FUNCTION_RESULTS = ("jax.nn.initializers.", "jax.tree_util.Partial")
_NUMBER_BUILTINS = frozenset(
    {"int", "float", "bool", "complex", "len", "round", "abs", "min", "max", "sum", "pow"}
)
_STATIC_BUILTINS = frozenset({"str", "repr", "format", "chr", "type", "getattr"})
# Methods whose result is an array when called on one.
_ARRAY_METHODS = frozenset(
    {"astype", "reshape", "sum", "mean", "dot", "transpose", "squeeze", "ravel", "flatten",
     "clip", "std", "var", "cumsum", "prod", "conj", "set", "add", "multiply", "divide", "min",
     "max", "power", "swapaxes", "block_until_ready"}
)  # fmt: skip
_STRING_METHODS = frozenset(
    {"format", "upper", "lower", "strip", "lstrip", "rstrip", "join", "title", "capitalize",
     "casefold", "removeprefix", "removesuffix"}
)  # fmt: skip
# Attributes that only arrays have (``x.shape``): the value read is an array.
_ARRAY_ATTRIBUTES = frozenset({"shape", "ndim", "T", "at", "size", "dot", "reshape", "astype"})
_DEPTH = 4


@dataclass(frozen=True)
class Decision:
    """How a lifted value is passed, and why the fix would be unsafe (None: it is safe)."""

    static: bool
    explanation: str  # what decided it, for the fix's description
    unsafe: str | None = None


class ValueJudge:
    """Judges the kind of what expressions evaluate to, from the module's own code."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts

    def kinds(self, values: Iterable[tuple[ast.expr | None, Scope]]) -> set[Kind]:
        return {self.kind(value, scope, 0) for value, scope in values if value is not None}

    def kind(self, expr: ast.expr, scope: Scope, depth: int) -> Kind:
        if depth > _DEPTH:
            return Kind.UNKNOWN
        if isinstance(expr, ast.Constant):
            return _constant_kind(expr.value)
        if isinstance(expr, (ast.JoinedStr, ast.Lambda)):
            return Kind.STATIC
        if isinstance(expr, ast.UnaryOp):
            return self.kind(expr.operand, scope, depth + 1)
        if isinstance(expr, ast.BinOp):
            return _arithmetic(
                self.kind(expr.left, scope, depth + 1), self.kind(expr.right, scope, depth + 1)
            )
        if isinstance(expr, ast.IfExp):
            return _combine(
                [self.kind(expr.body, scope, depth + 1), self.kind(expr.orelse, scope, depth + 1)]
            )
        if isinstance(expr, ast.Tuple):
            if _integers(expr):
                return Kind.INTEGERS
            return _tuple(self.kind(e, scope, depth + 1) for e in expr.elts)
        if isinstance(expr, ast.List) and expr.elts and _integers(expr):
            return Kind.INTEGER_LIST
        if isinstance(expr, (ast.List, ast.Set, ast.Dict, ast.ListComp, ast.DictComp)):
            return Kind.ARRAY if self._holds_numbers(expr, scope, depth) else Kind.UNKNOWN
        if isinstance(expr, ast.Compare):
            kinds = {self.kind(e, scope, depth + 1) for e in (expr.left, *expr.comparators)}
            return Kind.ARRAY if Kind.ARRAY in kinds else Kind.NUMBER
        if isinstance(expr, ast.Name):
            return self._name(expr.id, scope, depth)
        if isinstance(expr, ast.Attribute):
            return self._attribute(expr, scope, depth)
        if isinstance(expr, ast.Call):
            return self._call(expr, scope, depth)
        if isinstance(expr, ast.Subscript):
            base = self.kind(expr.value, scope, depth + 1)
            return Kind.ARRAY if base is Kind.ARRAY else Kind.UNKNOWN
        return Kind.UNKNOWN

    def _holds_numbers(self, display: ast.expr, scope: Scope, depth: int) -> bool:
        if isinstance(display, ast.Dict):
            elements = [v for v in display.values if v is not None]
        elif isinstance(display, (ast.List, ast.Set)):
            elements = list(display.elts)
        else:
            return False  # comprehensions run in a scope of their own
        kinds = {self.kind(e, scope, depth + 1) for e in elements}
        return bool(kinds) and kinds <= {Kind.NUMBER, Kind.ARRAY, Kind.NONE}

    def binding_kind(self, binding: Binding, depth: int = 0) -> Kind:
        """The kind of what one binding gives its name."""
        if depth > _DEPTH:
            return Kind.UNKNOWN
        if binding.kind in (BindingKind.DEF, BindingKind.CLASS, BindingKind.IMPORT):
            return Kind.STATIC
        if binding.kind is BindingKind.FOR:
            return self._loop_item(binding.node, binding.scope, depth)
        if isinstance(binding.node, ast.AugAssign):
            return _arithmetic(
                Kind.UNKNOWN, self.kind(binding.node.value, binding.scope, depth + 1)
            )
        value = _assigned(binding)
        if value is not None:
            return self.kind(value, binding.scope, depth + 1)
        return Kind.UNKNOWN

    def binding_kind_at(self, binding: Binding, path: tuple[str, ...], depth: int = 0) -> Kind:
        """The kind of what ``name<path>`` holds right after ``binding``: ``CONFIG["clip"]``
        after ``CONFIG = {"clip": 1.0}``, ``Defaults.EPS`` in ``class Defaults``."""
        if not path:
            return self.binding_kind(binding, depth)
        if depth > _DEPTH:
            return Kind.UNKNOWN
        if binding.kind is BindingKind.CLASS and isinstance(binding.node, ast.ClassDef):
            return self._class_attribute(binding.node, path, depth + 1)
        value = _assigned(binding)
        if value is None:
            return Kind.UNKNOWN
        return self.kind_at(value, path, binding.scope, depth + 1)

    def kind_at(self, expr: ast.expr, path: tuple[str, ...], scope: Scope, depth: int) -> Kind:
        if not path:
            return self.kind(expr, scope, depth)
        if depth > _DEPTH:
            return Kind.UNKNOWN
        step, rest = path[0], path[1:]
        if isinstance(expr, ast.Dict):
            for key, value in zip(expr.keys, expr.values, strict=True):
                if isinstance(key, ast.Constant) and f"[{key.value!r}]" == step:
                    return self.kind_at(value, rest, scope, depth + 1)
        elif isinstance(expr, (ast.List, ast.Tuple)) and step[1:-1].isdigit():
            index = int(step[1:-1])
            if index < len(expr.elts):
                return self.kind_at(expr.elts[index], rest, scope, depth + 1)
        elif isinstance(expr, ast.Call):
            # ``Config(lr=0.1)``, ``dict(clip=1.0)``, ``SimpleNamespace(l2=0.1)``.
            for keyword in expr.keywords:
                if keyword.arg is not None and step in (f".{keyword.arg}", f"[{keyword.arg!r}]"):
                    return self.kind_at(keyword.value, rest, scope, depth + 1)
        elif isinstance(expr, ast.Name):
            facts = self.facts
            bindings = facts.bindings_of(facts.resolve(scope, expr.id), expr.id)
            return _combine([self.binding_kind_at(b, path, depth + 1) for b in bindings])
        return Kind.UNKNOWN

    def _class_attribute(self, cls: ast.ClassDef, path: tuple[str, ...], depth: int) -> Kind:
        kinds = []
        for statement in cls.body:
            parts = assignment(statement)
            if parts is None:
                continue
            targets, value = parts
            if any(isinstance(t, ast.Name) and f".{t.id}" == path[0] for t in targets):
                kinds.append(self.kind_at(value, path[1:], self.facts.scope_of(cls), depth + 1))
        return _combine(kinds)

    def _name(self, name: str, scope: Scope, depth: int) -> Kind:
        facts = self.facts
        bindings = facts.bindings_of(facts.resolve(scope, name), name)
        if not bindings:
            # A builtin: ``True``, ``None`` and the like are constants in the tree already.
            return Kind.STATIC if callable(getattr(builtins, name, None)) else Kind.UNKNOWN
        return _combine([self.binding_kind(b, depth + 1) for b in bindings])

    def _loop_item(self, target: ast.AST, scope: Scope, depth: int) -> Kind:
        loop = self.facts.parent(target)
        if not isinstance(loop, (ast.For, ast.comprehension)) or loop.target is not target:
            return Kind.UNKNOWN
        iterable = loop.iter
        if isinstance(iterable, (ast.Tuple, ast.List)):
            return _combine([self.kind(e, scope, depth + 1) for e in iterable.elts])
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
            if iterable.func.id == "range":
                return Kind.NUMBER
        return Kind.UNKNOWN

    def _attribute(self, expr: ast.Attribute, scope: Scope, depth: int) -> Kind:
        qualified = self.facts.qualified_name(scope, expr)
        if qualified is not None and qualified.split(".")[0] in _LIBRARIES:
            if expr.attr in _CONSTANTS:
                return Kind.NUMBER
            if expr.attr == "newaxis":
                return Kind.NONE
            return Kind.STATIC  # a function, class, dtype or module of the library
        if expr.attr == "dtype":
            return Kind.STATIC
        if expr.attr == "shape":
            return Kind.NUMBER
        return Kind.UNKNOWN

    def _call(self, call: ast.Call, scope: Scope, depth: int) -> Kind:
        func = call.func
        qualified = self.facts.qualified_name(scope, func)
        if qualified is not None:
            last = qualified.rsplit(".", 1)[-1]
            if last in _STATIC_RESULTS or qualified.startswith(_FUNCTION_RESULTS):
                return Kind.STATIC
            if qualified.startswith("math."):
                return Kind.NUMBER
            if qualified.startswith(_ARRAY_RESULTS):
                return Kind.ARRAY
            return Kind.UNKNOWN
        if isinstance(func, ast.Name):
            if func.id in _NUMBER_BUILTINS:
                return Kind.NUMBER
            if func.id in _STATIC_BUILTINS:
                return Kind.STATIC
            return self._returned(func.id, scope, depth)
        if isinstance(func, ast.Attribute):
            receiver = self.kind(func.value, scope, depth + 1)
            if func.attr in _STRING_METHODS and receiver is Kind.STATIC:
                return Kind.STATIC
            if func.attr in _ARRAY_METHODS and receiver is not Kind.STATIC:
                return Kind.ARRAY if receiver is not Kind.UNKNOWN or _is_at(func) else receiver
            if func.attr in ("copy", "replace"):
                return receiver
        return Kind.UNKNOWN

    def _returned(self, name: str, scope: Scope, depth: int) -> Kind:
        """What a function of this module returns, from its ``return`` statements."""
        facts = self.facts
        owner = facts.resolve(scope, name)
        bindings = facts.bindings_of(owner, name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.DEF:
            return Kind.UNKNOWN
        function = bindings[0].node
        if not isinstance(function, ast.FunctionDef) or function.decorator_list:
            return Kind.UNKNOWN
        body_scope = facts.scope_of(function)
        values = [r.value for r in _returns(function)]
        if not values or any(v is None for v in values):
            return Kind.UNKNOWN
        return _combine([self.kind(v, body_scope, depth + 1) for v in values if v is not None])

    def uses(self, nodes: Iterable[ast.expr]) -> set[Kind]:
        """What the compiled function's reads of the value say it is."""
        facts = self.facts
        kinds: set[Kind] = set()
        for node in nodes:
            parent = facts.parent(node)
            if isinstance(parent, ast.Call):
                if parent.func is node:
                    kinds.add(Kind.STATIC)  # called: a function or a class
                elif isinstance(parent.func, ast.Attribute) and parent.func.attr == "astype":
                    kinds.add(Kind.STATIC)
            elif isinstance(parent, ast.keyword) and parent.arg == "dtype":
                kinds.add(Kind.STATIC)
            elif isinstance(parent, (ast.BinOp, ast.UnaryOp)) and not _with_string(parent):
                kinds.add(Kind.NUMBER)  # arithmetic: a number or an array
            elif isinstance(parent, ast.Attribute) and parent.attr in _ARRAY_ATTRIBUTES:
                kinds.add(Kind.ARRAY)
            elif isinstance(parent, ast.Compare) and any(
                isinstance(e, ast.Constant) and isinstance(e.value, str)
                for e in (parent.left, *parent.comparators)
            ):
                kinds.add(Kind.STATIC)
        return kinds


def decide(name: str, values: set[Kind], uses: set[Kind], needs_concrete: bool) -> Decision:
    """How to pass the value, from what its values and uses show."""
    evidence = (values | uses) - {Kind.UNKNOWN, Kind.NONE}
    if evidence == {Kind.INTEGERS} or evidence == {Kind.INTEGERS, Kind.NUMBER}:
        return Decision(
            True, f"'{name}' is static: a tuple of integers (axes or a shape), which JAX needs "
            "as a Python value",
        )  # fmt: skip
    if Kind.INTEGER_LIST in evidence:
        return Decision(
            False, f"'{name}' is traced",
            f"'{name}' holds a list of integers: not hashable, so not a static argument, and "
            "as a traced one it fails where JAX needs integers (axes, a shape)",
        )  # fmt: skip
    evidence = {Kind.STATIC if kind is Kind.INTEGERS else kind for kind in evidence}
    if Kind.STATIC in evidence and Kind.ARRAY in evidence:
        return Decision(
            True, f"'{name}' holds arrays and values that cannot be traced",
            f"'{name}' holds both arrays and values that cannot be traced (functions, dtypes, "
            "strings); neither a traced nor a static argument fits every value",
        )  # fmt: skip
    if Kind.STATIC in evidence:
        return Decision(True, f"'{name}' is static: {_static_words(values, uses)}")
    if Kind.ARRAY in evidence:
        if needs_concrete:
            return Decision(
                True, f"'{name}' is static: JAX needs its Python value",
                f"'{name}' is used where JAX needs a Python value (a shape, 'range', 'if'), but "
                "it holds arrays, which cannot be static",
            )  # fmt: skip
        return Decision(False, f"'{name}' is traced: it holds arrays")
    if Kind.NUMBER in evidence:
        if needs_concrete:
            return Decision(True, f"'{name}' is static: a number JAX needs as a Python value")
        return Decision(False, f"'{name}' is traced: it holds numbers")
    if values == {Kind.NONE}:
        return Decision(True, f"'{name}' is static: it is None")
    return Decision(
        needs_concrete, f"'{name}' is {'static' if needs_concrete else 'traced'}",
        f"the code does not show what '{name}' holds; it is passed as a "
        f"{'static' if needs_concrete else 'traced'} argument, which fails for "
        f"{'arrays' if needs_concrete else 'functions, dtypes and strings'}",
    )  # fmt: skip


def _static_words(values: set[Kind], uses: set[Kind]) -> str:
    if Kind.STATIC in uses and Kind.STATIC not in values:
        return "it is used as a function, dtype or string, which cannot be traced"
    return "a function, dtype, class or string (hashable, cannot be traced)"


def _integers(display: ast.Tuple | ast.List) -> bool:
    """Integer literals only, or tuples of them: ``()``, ``(0, 1)``, ``((1, 2), (3,))``."""
    return all(
        (isinstance(e, ast.Constant) and type(e.value) is int)
        or (isinstance(e, ast.Tuple) and _integers(e))
        for e in display.elts
    )


def _assigned(binding: Binding) -> ast.expr | None:
    """The value a binding gives, also for each name of ``a = b = 0.0``."""
    if binding.value is not None:
        return binding.value
    node = binding.node
    if isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == binding.name for t in node.targets
    ):
        return node.value
    return None


def _with_string(operation: ast.BinOp | ast.UnaryOp) -> bool:
    """``"prefix" + name``, ``"%s" % name``: string formatting, not arithmetic."""
    operands = (
        [operation.operand]
        if isinstance(operation, ast.UnaryOp)
        else [operation.left, operation.right]
    )
    return any(
        isinstance(o, ast.JoinedStr) or (isinstance(o, ast.Constant) and isinstance(o.value, str))
        for o in operands
    )


def _constant_kind(value: object) -> Kind:
    if value is None:
        return Kind.NONE
    if isinstance(value, (bool, int, float, complex)):
        return Kind.NUMBER
    return Kind.STATIC  # str, bytes, Ellipsis


def _arithmetic(left: Kind, right: Kind) -> Kind:
    if left is Kind.INTEGERS and right is Kind.INTEGERS:
        return Kind.INTEGERS  # ``(0,) + (1,)``
    left, right = _plain(left), _plain(right)
    if Kind.STATIC in (left, right):
        return Kind.STATIC if left in (Kind.STATIC, Kind.NUMBER) else Kind.UNKNOWN
    if left is Kind.NUMBER and right is Kind.NUMBER:
        return Kind.NUMBER
    if Kind.ARRAY in (left, right):
        return Kind.ARRAY
    # ``scale * 2``: arithmetic on a value the code does not show; numbers or arrays, or a
    # tuple or string repeated. Tuples and strings stay unknown.
    return Kind.NUMBER if Kind.NUMBER in (left, right) else Kind.UNKNOWN


def _plain(kind: Kind) -> Kind:
    """The kind inside a tuple, a sum or a choice: integer tuples are static, lists unknown."""
    if kind is Kind.INTEGERS:
        return Kind.STATIC
    return Kind.UNKNOWN if kind is Kind.INTEGER_LIST else kind


def _tuple(kinds: Iterable[Kind]) -> Kind:
    found = {_plain(kind) for kind in kinds}
    if not found:
        return Kind.NUMBER
    if found <= {Kind.STATIC, Kind.NONE, Kind.NUMBER} and Kind.STATIC in found:
        return Kind.STATIC
    if found <= {Kind.NUMBER, Kind.NONE}:
        return Kind.NUMBER
    if found <= {Kind.NUMBER, Kind.ARRAY, Kind.NONE}:
        return Kind.ARRAY
    return Kind.UNKNOWN


def _combine(kinds: Iterable[Kind]) -> Kind:
    found = set(kinds) - {Kind.UNKNOWN}
    if len(found) == 1:
        return found.pop()
    found = {_plain(kind) for kind in found} - {Kind.UNKNOWN}
    if not found:
        return Kind.UNKNOWN
    if Kind.STATIC in found and Kind.ARRAY in found:
        return Kind.UNKNOWN
    if Kind.ARRAY in found:
        return Kind.ARRAY
    if Kind.STATIC in found:
        return Kind.STATIC
    return Kind.NUMBER


def _is_at(func: ast.Attribute) -> bool:
    """``x.at[i].set(v)``: the result is an array whatever ``x`` is said to be."""
    base = func.value
    return (
        isinstance(base, ast.Subscript)
        and isinstance(base.value, ast.Attribute)
        and (base.value.attr == "at")
    )


def _returns(function: ast.FunctionDef) -> Iterator[ast.Return]:
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Return):
            yield node
        elif not isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
        ):
            pending.extend(ast.iter_child_nodes(node))
