"""What a captured variable's bindings say about it: its first value, whether it names a module
or a class, whether it holds a ``jax.Ref``. The capture analysis (``captures``) asks these to
decide which changes of the variable are changes of the value the compiled code read."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Sequence
from typing import Any

from .facts.model import (
    Binding,
    BindingKind,
    Mutation,
    Pos,
    Read,
    Scope,
    ScopeKind,
    exclusive,
)
from .facts.queries import Facts
from .layout import LAYOUT_FIELDS, returns_from_arguments, stored_by, updated_at
from .names import FUNCTIONAL_PACKAGES, REF_CONSTRUCTORS
from .records import makes_record


def initial_bindings(bindings: list[Binding], owner: Scope) -> list[Binding]:
    """The bindings that first give the variable a value in its own scope, outside any loop:
    the first one, and its alternatives in other branches (``if dense: fn = a else: fn = b``,
    ``try: import x except ImportError: x = None``)."""
    own = [b for b in bindings if b.scope is owner]
    initial: list[Binding] = []
    for index, binding in enumerate(own):
        if binding.loops:
            break
        if all(exclusive(earlier.branches, binding.branches) for earlier in own[:index]):
            initial.append(binding)
    return initial


def same_import(binding: Binding, initial: Binding) -> bool:
    """``import jax.numpy as jnp`` again in a later cell binds the same module: no change."""
    return (
        binding.kind is BindingKind.IMPORT
        and initial.kind is BindingKind.IMPORT
        and binding.imported == initial.imported
    )


# Builtins that give the same result for the same arguments.
_PURE_BUILTINS = frozenset(
    {"len", "int", "float", "round", "min", "max", "abs", "bool", "dict", "list", "tuple"}
)
# Library functions that give equal values for equal arguments: array constructors and
# arithmetic of NumPy and ``jax.numpy``, ``math``, and ``jax.random`` (a function of its key).
# NumPy's own random numbers and its uninitialised ``empty`` are not.
# Optimiser and layer constructors (``optax.adam(lr)``, ``optimizers.sgd(lr)``, ``stax.Dense``)
# make new functions that do the same for equal arguments.
_PURE_MODULES = (
    "jax.numpy.", "numpy.", "math.", "jax.random.", "jax.nn.", "optax.",
    "jax.example_libraries.optimizers.", "jax.example_libraries.stax.",
    # Their names before JAX 0.2.25, still in many notebooks.
    "jax.experimental.optimizers.", "jax.experimental.stax.",
)  # fmt: skip
_IMPURE_PREFIXES = ("numpy.random.", "numpy.empty", "jax.numpy.empty")
_PURE_NODES = (
    ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Tuple, ast.List,
    ast.Load, ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.Name, ast.Call,
    ast.keyword, ast.Attribute, ast.Subscript, ast.Slice, ast.Dict,
)  # fmt: skip
# Values that are new containers: rebound to an equal display, the name holds what the trace
# read only if nothing changed the old one in place first.
_CONTAINERS = (ast.Dict, ast.List, ast.Set, ast.ListComp, ast.DictComp)


_SAME_VALUE_DEPTH = 3  # names of names of names assigned the same expression everywhere


def same_value_everywhere(facts: Facts, bindings: list[Binding], depth: int = 0) -> bool:
    """Every binding assigns the same expression of inputs that never change: ``n = 5`` in
    one notebook cell and again in a later one, ``steps = num_records // batch_size`` computed
    again in each epoch, ``opt_init, opt_update, get_params = optimizers.sgd(lr)`` run again.
    Rebinding it sets what a trace read before, or an equal value. A ``del`` between them
    sets nothing a compiled call could read instead (an eager call would fail by name)."""
    bindings = [b for b in bindings if b.kind is not BindingKind.DELETE]
    assigned = [a for a in map(_assigned, bindings) if a is not None]
    if not assigned or len(assigned) != len(bindings):
        return False
    statement, value = assigned[0]
    if not all(same_tree(statement, other) for other, _ in assigned[1:]):
        # ``GAMMA = 0.99``, then ``GAMMA = 1 - 1 / 100``: one number written two ways.
        numbers = {constant_number(v) for _, v in assigned}
        return len(numbers) == 1 and None not in numbers
    first = bindings[0]
    if _makes_container(value) and not _only_read_by_key(facts, first):
        return False  # maybe changed in place before a trace, then set back to the display
    return all(_unchanging(facts, first.scope, node, depth) for node in ast.walk(value))


_ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


def constant_number(value: ast.expr, depth: int = 0) -> tuple[type, object] | None:
    """The type and value of arithmetic on numbers written in the code (``1 - 1 / 100`` is
    ``(float, 0.99)``, ``5 * 10`` is ``(int, 50)``); None for anything else. Python computes
    it the same way every time, so two spellings of one number bind one value."""
    if depth > 8:
        return None
    if isinstance(value, ast.Constant):
        number = value.value
        if type(number) not in (int, float) or number != number:
            return None  # a NaN equals nothing, itself included
        return type(number), number
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        inner = constant_number(value.operand, depth + 1)
        if inner is None:
            return None
        signed: Any = inner[1]
        signed = -signed if isinstance(value.op, ast.USub) else signed
        return type(signed), signed
    if isinstance(value, ast.BinOp) and type(value.op) in _ARITHMETIC:
        left = constant_number(value.left, depth + 1)
        right = constant_number(value.right, depth + 1)
        if left is None or right is None:
            return None
        try:
            result = _ARITHMETIC[type(value.op)](left[1], right[1])
        except (ArithmeticError, ValueError):
            return None
        if type(result) not in (int, float) or result != result:
            return None
        return type(result), result
    return None


def _only_read_by_key(facts: Facts, binding: Binding) -> bool:
    """The container is never changed in place, nor handed anywhere it could be: the module
    changes nothing in it, and reads its name only to take an item (``H["lr"]``), not to bind
    another name to it or pass it to a function (``h = H``, ``warm(H)``)."""
    owner = facts.resolve(binding.scope, binding.name)
    if facts.mutations_of(owner, binding.name):
        return False
    loads = keyed = 0
    for node in ast.walk(facts.tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            keyed += node.value.id == binding.name and isinstance(node.ctx, ast.Load)
        elif isinstance(node, ast.Name) and node.id == binding.name:
            loads += isinstance(node.ctx, ast.Load)
    return loads == keyed


def _makes_container(value: ast.expr) -> bool:
    """``{"lr": 0.1}``, ``[1, 2]``, ``dict(lr=0.1)``: a new container each time."""
    if isinstance(value, _CONTAINERS):
        return True
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("dict", "list")
    )


def same_definition_everywhere(facts: Facts, bindings: list[Binding]) -> bool:
    """Every binding is a ``def`` of the same code (a notebook cell defining ``log_prob`` run
    again, or copied into a later cell), with defaults and decorators that give the same value
    every time: each definition makes a function that does what the first did, reading the
    same names where it runs, so a trace that called the first computes what the later one
    would. A ``del`` between them sets nothing a compiled call could read instead."""
    bindings = [b for b in bindings if b.kind is not BindingKind.DELETE]
    if len(bindings) < 2 or any(b.kind is not BindingKind.DEF for b in bindings):
        return False
    first = bindings[0].node
    if not isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if not all(same_tree(first, b.node) for b in bindings[1:]):
        return False
    arguments = first.args
    evaluated = [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
    evaluated += first.decorator_list
    scope = bindings[0].scope
    return all(unchanging_value(facts, scope, value) for value in evaluated)


def unchanging_value(facts: Facts, scope: Scope, value: ast.expr) -> bool:
    """``value``, evaluated in ``scope``, gives the same value every time: constants, names
    the module binds once outside any loop, pure functions of a library applied to them
    (``grid`` of ``grid = jnp.linspace(0, 200, 3)``)."""
    return all(_unchanging(facts, scope, node) for node in ast.walk(value))


def _assigned(binding: Binding) -> tuple[ast.AST, ast.expr] | None:
    """What identifies the assignment (the whole statement when it unpacks a tuple: the name
    gets the same element of the same expression), and the expression assigned."""
    if binding.kind is not BindingKind.ASSIGN:
        return None
    if binding.value is not None:
        return binding.value, binding.value
    node = binding.node
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return node, node.value
    return None


def same_tree(first: ast.AST, second: ast.AST) -> bool:
    """The same expression, node for node (positions aside). Not ``ast.dump``: its nested
    helper is a reference cycle on every call, left for the cyclic collector."""
    if type(first) is not type(second):
        return False
    for name in first._fields:
        a, b = getattr(first, name, None), getattr(second, name, None)
        if isinstance(a, ast.AST) and isinstance(b, ast.AST):
            if not same_tree(a, b):
                return False
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b) or not all(
                same_tree(x, y) if isinstance(x, ast.AST) else x == y
                for x, y in zip(a, b, strict=True)
            ):
                return False
        elif type(a) is not type(b) or a != b:
            return False
    return True


def _unchanging(facts: Facts, scope: Scope, node: ast.AST, depth: int = 0) -> bool:
    """A piece of an expression whose value cannot change between two evaluations."""
    if not isinstance(node, _PURE_NODES):
        return False
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in _PURE_BUILTINS:
            return True
        # ``Weights(1.0, 10.0)``: a record of its arguments, which ``ast.walk`` checks too.
        return _pure_library(facts.qualified_name(scope, node.func)) or makes_record(
            facts, scope, node
        )
    if isinstance(node, ast.Attribute):
        # ``jnp.float32``, ``np.pi``, ``jnp.ones``: an attribute of an imported module. Any
        # other attribute (``cfg.lr``, ``config.LR`` of a module of the project) may be set
        # between two evaluations.
        return _pure_library(facts.qualified_name(scope, node))
    if isinstance(node, ast.Name):
        if node.id in _PURE_BUILTINS:
            return True
        owner = facts.resolve(scope, node.id)
        bound = facts.bindings_of(owner, node.id)
        if bound and all(b.kind is BindingKind.IMPORT for b in bound):
            return True  # a module or a library function, imported
        # Assigned once, by module code outside any loop, or the same expression of such
        # names everywhere (``learning_rate = 0.1`` in two cells): a parameter, a loop target
        # or a function's local can hold another value on the next run.
        if owner.kind is not ScopeKind.MODULE or facts.mutations_of(owner, node.id):
            return False
        if len(bound) == 1:
            # A class or function defined once is one object (a record class made again).
            return (
                bound[0].kind in (BindingKind.ASSIGN, BindingKind.CLASS, BindingKind.DEF)
                and not bound[0].loops
            )
        return depth < _SAME_VALUE_DEPTH and same_value_everywhere(facts, bound, depth + 1)
    return True


def pure_library_call(facts: Facts, scope: Scope, call: ast.Call) -> bool:
    """``jnp.ones(3)``, ``optax.adam(lr)``: a function of a library that gives an equal
    value for equal arguments."""
    return _pure_library(facts.qualified_name(scope, call.func))


def _pure_library(name: str | None) -> bool:
    # ``jax.random`` itself, as the base of ``jax.random.normal``, is one of them too.
    return (
        name is not None
        and f"{name}.".startswith(_PURE_MODULES)
        and not f"{name}.".startswith(_IMPURE_PREFIXES)
    )


def holds_value(facts: Facts, bindings: list[Binding]) -> bool:
    """Whether in-place changes of the variable are changes of a value: not of a module or a
    function (``np.append(...)`` is a call), but of classes' attributes."""
    if not bindings:
        return True  # a global assigned nowhere in the module (builtins excluded by callers)
    return not all(
        b.kind in (BindingKind.IMPORT, BindingKind.DEF) or module_value(facts, b) for b in bindings
    )


# Only names of methods that return what they take out (``dict.pop``): a package function of
# that name returns a copy. A call returning nothing through a package changes its state
# (``np.random.shuffle(order)`` advances NumPy's global generator).
_VALUE_RETURNING_CALLS = frozenset(
    f"'.{name}()' called" for name in ("pop", "popitem", "setdefault", "popleft")
)


def library_package(bindings: list[Binding]) -> bool:
    """Every binding imports one of ``FUNCTIONAL_PACKAGES`` (not its ``config``)."""
    return bool(bindings) and all(
        b.kind is BindingKind.IMPORT
        and b.imported is not None
        and b.imported.split(".")[0] in FUNCTIONAL_PACKAGES
        and "config" not in b.imported.split(".")[1:]
        for b in bindings
    )


# The settings of JAX's trace context (``jax._src.config.trace_context_names()``, JAX 0.10) that
# programs set: each is part of the cache key, so a call after a change traces again.
TRACE_CONTEXT_SETTINGS = frozenset({
    "jax_enable_x64", "jax_default_matmul_precision", "jax_numpy_rank_promotion",
    "jax_numpy_dtype_promotion", "jax_default_device", "jax_disable_jit",
    "jax_threefry_partitionable", "jax_softmax_custom_jvp", "jax_random_seed_offset",
    "jax_debug_key_reuse", "jax_check_static_indices", "jax_explicit_x64_dtypes",
    "jax_enable_pgle", "jax_pgle_profiling_runs", "jax_use_shardy_partitioner",
    "jax_allow_f16_reductions", "jax_high_dynamic_range_gumbel", "jax_xla_profile_version",
    "jax_error_checking_behavior_nan", "jax_error_checking_behavior_divide",
    "jax_error_checking_behavior_oob", "jax_use_direct_linearize",
})  # fmt: skip


def updates_traced_setting(bindings: list[Binding], mutation: Mutation) -> bool:
    """``config.update("jax_enable_x64", True)`` on a package's ``config`` (``jax.config``, or
    ``config`` from ``from jax import config``): a setting of the trace context, which JAX
    compares on every call, so the next call traces again with it."""
    call = mutation.node
    on_config = mutation.path[-1:] == (".config",) or (
        not mutation.path and imports_settings(bindings)
    )
    if mutation.description != "'.update()' called" or not on_config:
        return False
    first = call.args[0] if isinstance(call, ast.Call) and call.args else None
    return isinstance(first, ast.Constant) and first.value in TRACE_CONTEXT_SETTINGS


def imports_settings(bindings: list[Binding]) -> bool:
    """``from jax import config``: every binding imports a package's ``config``, an object
    whose methods (``config.update("jax_debug_nans", True)``) change what a trace read through
    it (``config.jax_debug_nans``), as ``jax.config.update`` does."""
    return bool(bindings) and all(
        b.kind is BindingKind.IMPORT
        and b.imported is not None
        and b.imported.split(".")[0] in FUNCTIONAL_PACKAGES
        and b.imported.split(".")[-1] == "config"
        for b in bindings
    )


def library_function_call(bindings: list[Binding], mutation: Mutation) -> bool:
    """``flax.core.pop(x, key)``: the change a mutating method's name suggests (``.pop()``,
    ``.update()``) is a call of a function of a package whose members are modules and
    functions, when every binding of the name imports such a package. Not through a
    package's ``config``, an object whose ``update`` changes settings a trace may have read
    (``jax.config.update("jax_debug_nans", True)``, also after ``from jax import config``)."""
    return (
        mutation.description in _VALUE_RETURNING_CALLS
        and ".config" not in mutation.path
        and library_package(bindings)
    )


def names_module(facts: Facts, bindings: list[Binding]) -> bool:
    """Whether every binding of the variable is a module."""
    return bool(bindings) and all(
        b.kind is BindingKind.IMPORT and b.imported is not None or module_value(facts, b)
        for b in bindings
    )


def module_path(facts: Facts, read: Read) -> tuple[str, ...]:
    """The path read through a module: ``np.sum(x)`` reads ``.sum``, where for other values a
    method call may read anything of its receiver."""
    node = read.path_node if read.path_node is not None else read.node
    attribute = facts.parent(node)
    if isinstance(attribute, ast.Attribute) and attribute.value is node:
        call = facts.parent(attribute)
        if isinstance(call, ast.Call) and call.func is attribute:
            return (*read.path, f".{attribute.attr}")
    return read.path


def module_value(facts: Facts, binding: Binding) -> bool:
    """``d2l = sys.modules[__name__]``, ``np = importlib.import_module("numpy")``: an import."""
    value = binding.value
    if isinstance(value, ast.Subscript):
        return facts.qualified_name(binding.scope, value.value) == "sys.modules"
    if isinstance(value, ast.Call):
        return facts.qualified_name(binding.scope, value.func) == "importlib.import_module"
    return False


def holds_ref(facts: Facts, bindings: list[Binding]) -> bool:
    """Whether the variable holds a ``jax.Ref``: compiled code reads its contents live."""
    return any(
        isinstance(b.value, ast.Call)
        and facts.qualified_name(b.scope, b.value.func) in REF_CONSTRUCTORS
        for b in bindings
    )


def fed_from_arguments(
    scope: Scope,
    mutations: list[Mutation],
    reads: list[Read],
    parent: Callable[[ast.AST], ast.AST | None] | None = None,
) -> list[tuple[str, ...]]:
    """The paths the compiled function sets before it reads them, from its own arguments
    (``model.params = params`` as a statement of its body, before any read of ``model``) or
    from a value that never reads the path (``self.tick_fn = self.make_tick(lvl.shape)``):
    every run of the body, traced or not, reads what that run stored, so no change made
    elsewhere reaches the compiled result through them. Only unconditional statements of the
    body itself count. Given ``parent`` (the node each node sits in), a read of another
    attribute before the store does not count when it cannot reach the stored one (``if
    self.multi_level:`` before ``self.tick_fn = ...``): a data attribute, or a method that
    never names it."""
    body = getattr(scope.node, "body", [])
    top = {id(statement) for statement in body} if isinstance(body, list) else set()
    arguments = set(scope.params[1:] if _is_method(scope) else scope.params)
    fed = []
    for mutation in mutations:
        statement = mutation.node
        if not (
            mutation.scope is scope
            and id(statement) in top
            and not mutation.guards
            and not mutation.loops
        ):
            continue
        entry = stored_by(mutation) if mutation.value is None else (mutation.value, None)
        if entry is None:
            continue
        value = entry[0]
        fresh = not isinstance(statement, ast.AugAssign) and leaves_path_unread(
            scope, value, mutation
        )  # ``self.n += 1`` reads it first
        if (
            not fresh
            and entry[1] is not None
            and not _method_returns_arguments(scope, entry[0], entry[1])
        ):
            # ``a, b = split(x)``: which entries come from ``x`` is not shown. A value that
            # never reads the path (``self.V, self.p = self.model.run(params=params)``) feeds
            # every entry afresh.
            continue
        if not (fresh or _names_any_of(value, arguments)):
            continue
        # The store's own target (``self.step`` of ``self.step.msh.cell_conn = c``) names the
        # object only to reach where it stores.
        if not any(
            r.start < mutation.end
            and not _in_target(statement, r.node)
            and not _reads_elsewhere(scope, r.node, mutation, parent)
            for r in reads
        ):
            fed.append(mutation.path)
    return fed


# Names through which code can read an attribute without writing its name.
_INDIRECT_READERS = frozenset({"getattr", "vars", "locals", "globals", "eval", "exec"})


# Builtins that compute a value from their arguments alone.
_BUILTINS_OF_VALUES = frozenset(
    {"len", "int", "float", "bool", "abs", "min", "max", "sum", "round", "tuple", "list"}
)


def leaves_path_unread(scope: Scope, value: ast.expr, mutation: Mutation) -> bool:
    """Computing ``value`` cannot read the attribute ``mutation`` stores into: it never
    names it (not even in a string, for ``getattr``), never hands the object itself on, and
    the methods of its class it reaches through the object (``self.make_tick(...)``, and the
    ones those reach) never name it either. A module function the value calls is not
    handed the object, so it sees the attribute only through a global holding it, which the
    body of the compiled function would show (``obj = self``); such a body is left out. When
    a global holds the object itself (``state.w, state.s = split(params)``), a function the
    value calls may read it there."""
    path = mutation.path
    if not path or not path[0].startswith("."):
        return False
    attribute, holder = path[0][1:], mutation.name
    if holder not in scope.params and any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id not in _BUILTINS_OF_VALUES
        for node in ast.walk(value)
    ):
        return False  # ``split(params)`` may read the global ``state`` holding the object
    if any(
        isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)
        and node.value.id == holder
        for node in ast.walk(scope.node)
    ):  # fmt: skip
        return False  # an alias of the object: it may reach the attribute unseen
    parent = scope.parent
    own = _is_method(scope) and parent is not None and scope.params[:1] == (holder,)
    methods = (
        {c.name: c.node for c in parent.children if c.kind is ScopeKind.FUNCTION}
        if own and parent is not None
        else {}
    )
    # Methods a base class defines are not shown: a class with bases reaches the object's
    # attributes only through its own methods and data.
    based = own and parent is not None and bool(getattr(parent.node, "bases", None))
    pending: list[tuple[ast.AST, str]] = [(value, holder)]
    seen: set[str] = set()
    while pending:
        node, self_name = pending.pop()
        held = {
            id(inner.value)
            for inner in ast.walk(node)
            if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name)
        }
        for inner in ast.walk(node):
            if isinstance(inner, ast.Attribute) and inner.attr in (attribute, "__dict__"):
                return False
            if isinstance(inner, ast.Constant) and inner.value == attribute:
                return False
            if isinstance(inner, ast.Name) and inner.id in _INDIRECT_READERS:
                return False
            if isinstance(inner, ast.Name) and inner.id == self_name and id(inner) not in held:
                return False  # the object itself handed on
            if not (
                isinstance(inner, ast.Attribute)
                and isinstance(inner.value, ast.Name)
                and inner.value.id == self_name
            ):
                continue
            if not own:
                return False  # not a method's own object: its class is not known
            if inner.attr not in methods and based:
                return False  # perhaps an inherited method or property
            if inner.attr not in methods and _called(node, inner):
                # A callable held in another attribute: what each store there puts in it.
                stores = _stores_of(_module_of(scope), parent, inner.attr)
                if stores is None:
                    return False
                if inner.attr not in seen:
                    seen.add(inner.attr)
                    pending.extend(stores)
                continue
            if inner.attr in methods and inner.attr not in seen:
                seen.add(inner.attr)
                method = methods[inner.attr]
                first = _first_parameter(method)
                if first is None:
                    return False
                pending.append((method, first))
    return True


def _reads_elsewhere(
    scope: Scope,
    node: ast.AST,
    mutation: Mutation,
    parent: Callable[[ast.AST], ast.AST | None] | None,
) -> bool:
    """The read ``node`` (``self`` of ``self.multi_level``) takes another attribute of the
    object, one that cannot reach the attribute ``mutation`` stores into."""
    taken = parent(node) if parent is not None else None
    return (
        isinstance(taken, ast.Attribute)
        and taken.value is node
        and mutation.path[:1] != (f".{taken.attr}",)
        and leaves_path_unread(scope, taken, mutation)
    )


def _names_any_of(value: ast.expr, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(value))


def _module_of(scope: Scope) -> ast.AST:
    while scope.parent is not None:
        scope = scope.parent
    return scope.node


def _stores_of(
    module: ast.AST, cls: Scope | None, attribute: str
) -> list[tuple[ast.AST, str]] | None:
    """The values the methods of ``cls`` store into ``self.attribute`` by plain assignment,
    each with the name of its method's object; None when anything else in the module stores
    into an attribute of that name (``self.a, self.b = ...``, ``self.a += ...``, ``env.a =
    ...`` outside the class) or nothing does."""
    if cls is None or not isinstance(cls.node, ast.ClassDef):
        return None
    stores = sum(
        1
        for node in ast.walk(module)
        if isinstance(node, ast.Attribute)
        and node.attr == attribute
        and isinstance(node.ctx, (ast.Store, ast.Del))
    )
    found: list[tuple[ast.AST, str]] = []
    for method in cls.node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        own = _first_parameter(method)
        for node in ast.walk(method):
            if (
                own is not None
                and isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Attribute)
                and node.targets[0].attr == attribute
                and isinstance(node.targets[0].value, ast.Name)
                and node.targets[0].value.id == own
            ):
                found.append((node.value, own))
    return found if found and len(found) == stores else None


def _called(tree: ast.AST, attribute: ast.Attribute) -> bool:
    return any(isinstance(n, ast.Call) and n.func is attribute for n in ast.walk(tree))


def _first_parameter(function: ast.AST) -> str | None:
    arguments = getattr(function, "args", None)
    if arguments is None:
        return None
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    return names[0] if names else None


def _in_target(statement: ast.AST, node: ast.AST) -> bool:
    """``node`` is part of what a plain assignment ``statement`` stores into."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AnnAssign):
        targets = [statement.target]
    else:
        return False
    return any(inner is node for target in targets for inner in ast.walk(target))


def _method_returns_arguments(scope: Scope, call: ast.expr, index: int) -> bool:
    """``call`` is ``self.m(...)`` in a method, and entry ``index`` of what ``m`` of the same
    class returns is computed from its parameters (``self.weights, self.biases =
    self.unflatten(params)``)."""
    parent = scope.parent
    if not (_is_method(scope) and parent is not None and isinstance(call, ast.Call)):
        return False
    func = call.func
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and scope.params[:1] == (func.value.id,)
    ):
        return False
    methods = {c.name: c.node for c in parent.children if c.kind is ScopeKind.FUNCTION}
    method = methods.get(func.attr)
    return method is not None and returns_from_arguments(method, index)


def _is_method(scope: Scope) -> bool:
    parent = scope.parent
    return parent is not None and parent.kind is ScopeKind.CLASS


# Methods that rebuild a record from itself, and the fields each sets besides its keywords:
# ``dataclasses``/flax ``replace`` sets only the fields it names; flax's ``TrainState``
# ``apply_gradients`` sets ``step``, ``params`` and ``opt_state``.
_REBUILDS = {"replace": frozenset(), "apply_gradients": frozenset({"step", "params", "opt_state"})}
# Fields of a record that hold a function, called as ``state.apply_fn(...)``: calling one
# reads that field only (a method of the record could read any field).
_FUNCTION_FIELDS = frozenset({"apply_fn"})


def fields_read(facts: Facts, reads: list[Read]) -> list[str] | None:
    """The first attribute of each read (``state.apply_fn`` reads ``apply_fn``); None when
    a read takes the whole object, or calls a method on it."""
    return fields_below(facts, [read.node for read in reads])


def fields_below(facts: Facts, records: Sequence[ast.AST]) -> list[str] | None:
    """The attribute taken from each expression that holds the record (``state`` in
    ``state.apply_fn``, ``self.state`` in ``self.state.apply_fn``); None when one takes the
    whole record, or calls a method on it."""
    fields = []
    for record in records:
        attribute = facts.parent(record)
        if not isinstance(attribute, ast.Attribute) or attribute.value is not record:
            return None
        call = facts.parent(attribute)
        if isinstance(call, ast.Call) and call.func is attribute:
            if attribute.attr not in _FUNCTION_FIELDS:
                return None
        fields.append(attribute.attr)
    return fields


def keeps_fields_read(facts: Facts, binding: Binding, fields: list[str] | None) -> bool:
    """``state = state.apply_gradients(grads=g)``, or ``state = train_step(state, batch)``,
    while compiled code reads only ``state.apply_fn``: the new record keeps every field the
    trace read."""
    record = ast.Name(binding.name)
    if rebuild_keeps_fields(binding.value, record, fields):
        return True
    updated = updated_at(binding.value)
    if fields and set(fields) <= LAYOUT_FIELDS and isinstance(updated, ast.Name):
        if updated.id == binding.name:
            return True  # ``x = x.at[i].set(v)``: the layout read is kept
    assigned = _assigned(binding)
    if assigned is None:
        return False
    value = assigned[1]
    if isinstance(value, ast.Name) and value.id != binding.name:
        # ``state = new_state`` after ``new_state, metrics = train_step(state, batch)``: the
        # copy holds what the step made of the record, when every binding of the copied name
        # makes it so (another branch may bind ``state.replace(apply_fn=f)``).
        copied = facts.bindings_of(facts.resolve(binding.scope, value.id), value.id)
        sources = [(b, _assigned(b)) for b in copied]
        return bool(sources) and all(
            b.scope is binding.scope
            and source is not None
            and (
                rebuild_keeps_fields(source[1], record, fields)
                or hands_through(source[1], record, fields, facts, binding.scope, b.at)
            )
            for b, source in sources
        )
    return hands_through(value, record, fields, facts, binding.scope, binding.at)


def hands_through(
    value: ast.expr | None,
    record: ast.expr,
    fields: list[str] | None,
    facts: Facts | None = None,
    scope: Scope | None = None,
    at: Pos | None = None,
) -> bool:
    """``state = train_step(state, batch)``, ``actor, critic = update((actor, critic), x)``
    (or with ``init = (actor, critic)`` bound before), ``jax.block_until_ready(state)``, while
    the compiled code reads only the function a training state holds (``state.apply_fn``): a
    call given the old record returns it, or the record a step made of it; the function is a
    static field (flax's ``TrainState``), handed through every step unchanged, and a compiled
    step returns the one its input held."""
    if not fields or not set(fields) <= _FUNCTION_FIELDS or not isinstance(value, ast.Call):
        return False
    if _own_method_keeping(value, record, fields, facts):
        return True
    for argument in (*value.args, *(keyword.value for keyword in value.keywords)):
        if _holds(argument, record):
            return True
        if isinstance(argument, ast.Name) and facts is not None and scope is not None:
            # ``init = (actor_state, critic_state)`` bound before the call, in the same code.
            owner = facts.resolve(scope, argument.id)
            earlier = [
                b
                for b in facts.bindings_of(owner, argument.id)
                if b.scope is scope and (at is None or b.at < at)
            ]
            latest = max(earlier, key=lambda b: b.at) if earlier else None
            if latest is not None and latest.value is not None and _holds(latest.value, record):
                return True
    return False


def _own_method_keeping(
    call: ast.Call, record: ast.expr, fields: list[str], facts: Facts | None
) -> bool:
    """``state = state.ema_update(step)``: a plain method of the record's class, defined once
    in this module, whose body only binds locals and then returns ``self.replace(...)``
    naming none of the fields, hands the function through as ``replace`` does. Not a method
    that is decorated, returns another call (``self.swap_model(fn)``), builds the record by
    position (``State(fn, self.params)``), rebinds ``self`` or sets attributes by name, is
    bound again under another name (``finetune = swap_model``), or is defined elsewhere; nor
    in a module whose classes define ``replace`` themselves."""
    func = call.func
    if facts is None or not (
        isinstance(func, ast.Attribute) and _same_reference(func.value, record)
    ):
        return False
    if any(keyword.arg is None or keyword.arg in fields for keyword in call.keywords):
        return False
    methods: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for cls in ast.walk(facts.tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for node in cls.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name == "replace":
                    return False  # ``replace`` itself may set anything
                if node.name == func.attr:
                    methods.append(node)
            elif _binds_name(node, func.attr):
                return False  # ``finetune = swap_model``
    return len(methods) == 1 and _returns_self_replaced(methods[0], fields)


def _binds_name(statement: ast.stmt, name: str) -> bool:
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    return any(isinstance(t, ast.Name) and t.id == name for t in targets)


def _returns_self_replaced(
    method: ast.FunctionDef | ast.AsyncFunctionDef, fields: list[str]
) -> bool:
    """No decorators; a body of docstrings and assignments to plain local names (never
    ``self``, no ``setattr``), ending in ``return self.replace(...)`` that keeps the fields."""
    arguments = method.args.posonlyargs + method.args.args
    if method.decorator_list or not arguments or not method.body:
        return False
    self_name = arguments[0].arg
    *before, last = method.body
    for statement in before:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # a docstring
        if not (
            isinstance(statement, ast.Assign)
            and all(isinstance(t, ast.Name) and t.id != self_name for t in statement.targets)
        ):
            return False
        if any(
            isinstance(node, ast.Call) and _word(node.func) in ("setattr", "__setattr__")
            for node in ast.walk(statement.value)
        ):
            return False
    value = last.value if isinstance(last, ast.Return) else None
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "replace"
        and rebuild_keeps_fields(value, ast.Name(self_name), fields)
    )


def _word(expr: ast.expr) -> str:
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else ""


def _holds(expression: ast.expr, record: ast.expr) -> bool:
    """``state``, or a tuple or list literal with ``state`` among its elements."""
    if isinstance(expression, (ast.Tuple, ast.List)):
        return any(_same_reference(element, record) for element in expression.elts)
    return _same_reference(expression, record)


def rebuild_keeps_fields(
    value: ast.expr | None, record: ast.expr, fields: list[str] | None
) -> bool:
    """Whether ``value`` rebuilds ``record`` from itself (``record.apply_gradients(...)``,
    ``record.replace(...)``, ``record`` being ``state`` or ``self.state``) keeping every one
    of ``fields``."""
    if not fields or not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and _same_reference(value.func.value, record)
        and value.func.attr in _REBUILDS
        and all(keyword.arg is not None for keyword in value.keywords)
    ):
        return False
    changed = _REBUILDS[value.func.attr] | {k.arg for k in value.keywords if k.arg}
    return not set(fields) & changed


def _same_reference(expression: ast.expr, record: ast.expr) -> bool:
    """``self.state`` and ``self.state``, ``state`` and ``state``: the same name and the same
    attributes taken from it."""
    while isinstance(expression, ast.Attribute) and isinstance(record, ast.Attribute):
        if expression.attr != record.attr:
            return False
        expression, record = expression.value, record.value
    return (
        isinstance(expression, ast.Name)
        and isinstance(record, ast.Name)
        and expression.id == record.id
    )


# Calls that return their argument itself, once JAX has computed it.
_WAITS = frozenset({"jax.block_until_ready"})
# Calls that return an array of their argument's values, as a trace takes them in: a NumPy
# array or a list read by a trace becomes a constant of the dtype ``jnp.asarray`` gives it.
_SAME_VALUES = frozenset(
    {"jax.numpy.asarray", "jax.numpy.array", "numpy.asarray", "numpy.array", "jax.device_put"}
)
# ``jax.device_put(x, device)`` also places it; the values stay.
_PLACING = frozenset({"jax.device_put"})


def waits_for_itself(facts: Facts, binding: Binding) -> bool:
    """``x = jax.block_until_ready(x)``, ``x = x.block_until_ready()`` or ``x =
    jnp.asarray(x)``: the name is bound to the object it held, once computed, or to an array of
    its values; nothing a trace reads is new."""
    return waits_for(facts, binding.scope, binding.value, ast.Name(binding.name))


def waits_for(facts: Facts, scope: Scope, value: ast.expr | None, record: ast.expr) -> bool:
    """``value`` is ``record`` itself once JAX has computed it (``jax.block_until_ready(record)``,
    ``record.block_until_ready()``; ``record`` being ``x`` or ``self.state``), or an array of
    its values (``jnp.asarray(record)``, ``jax.device_put(record)``, with no dtype given)."""
    if not isinstance(value, ast.Call) or value.keywords:
        return False
    called = facts.qualified_name(scope, value.func)
    if called in _WAITS or called in _SAME_VALUES:
        given = 2 if called in _PLACING else 1
        return 1 <= len(value.args) <= given and _same_reference(value.args[0], record)
    return (
        isinstance(value.func, ast.Attribute)
        and value.func.attr == "block_until_ready"
        and not value.args
        and _same_reference(value.func.value, record)
    )
