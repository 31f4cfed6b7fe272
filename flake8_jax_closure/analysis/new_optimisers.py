"""Compiled calls given an optimiser made since the change: ``optimizer = nnx.Optimizer(model,
optax.adam(lr))`` or ``state = TrainState.create(apply_fn=f, params=p, tx=optax.adam(lr))``
right before ``train_step(model, optimizer, batch)``.

An optax transformation is a new object of new functions every time it is made (no two
``optax.adam(1e-3)`` are equal), and flax keeps it as static data: in the graph definition of
an ``nnx.Optimizer``, in the tree structure of a ``TrainState``. JAX keys a trace on that
structure, so a compiled call given such an object made since the change traces anew, and
reads the new value: no trace made before the change is reused.

The code must show it plainly, for every compiled call that could reuse an older trace:

- the call passes, as an argument, a name bound by an assignment that always runs before the
  call in the same code (a statement of the block holding the call, or of a block around it)
  to ``nnx.Optimizer(model, optax...(...))`` (also ``nnx.ModelAndOptimizer``, or ``tx=``), to
  flax's ``TrainState.create(..., tx=optax...(...))``, or to ``flax.jax_utils.replicate`` of
  such a name; the transformation is made there, by a call of a function of ``optax``;
- that binding runs after the change: later in the same pass (a call later than the change),
  or, for a loop's next pass, inside that loop before the call;
- nothing binds or changes the name between the binding and the call (``optimizer.tx = old``
  would give it an older transformation);
- a call of a function of the module (``evaluate(model)``) counts when each compiled call in
  its body passes such a name, made in its body before the call: each run of it comes after
  the change and makes its own. The function is a plain ``def`` of the module, bound once,
  never handed on (``atexit.register(evaluate)`` would run it later), and no generator or
  coroutine (one started before the change may resume after it);
- the compiled function is a ``def`` with its compile decorator alone (another decorator may
  drop the optimiser before the call reaches JAX); the name is bound only by the code it
  runs in (no ``global`` or ``nonlocal`` elsewhere), and nothing but other calls of the same
  compiled function reads it between its binding and the call (an alias, or a helper given
  it, may hand it an older transformation); the module reaches no names through
  ``globals()``, ``locals()``, ``vars()``, ``exec`` or ``eval``;
- the transformation is made by one of optax's optimisers or ``chain`` (not
  ``GradientTransformation`` of functions made once, nor one that may return what it is
  given), and ``optax``, ``nnx`` and ``TrainState`` are bound only by imports of one module
  and never patched in the module.

Not counted: a value read in a body handed to ``lax.cond``, ``lax.switch``, ``lax.fori_loop``
or ``lax.while_loop`` (JAX keeps that body's trace while its operands keep their shapes, which
a new optimiser leaves the same), nor in a ``lax.scan`` or ``lax.map`` body. Patching optax in
another module is not seen.
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass

from .blocks import always_runs_before
from .callgraph.events import Event, EventKind
from .facts.model import BindingKind, Scope, ScopeKind
from .facts.queries import Facts

# Holders of an optimiser, and where their transformation is given: a position (``None``
# when only ``tx=`` gives it).
_HOLDERS: dict[str, int | None] = {
    "flax.nnx.Optimizer": 1,
    "flax.nnx.ModelAndOptimizer": 1,
    "flax.nnx.optimizer.Optimizer": 1,
    "flax.training.train_state.TrainState.create": None,
}
_REPLICATE = frozenset({"flax.jax_utils.replicate"})
# Optax's optimisers and ``chain``: each call makes new functions, never equal to others.
_NEW_EACH_CALL = frozenset(
    f"optax.{name}"
    for name in (
        "adabelief", "adadelta", "adafactor", "adagrad", "adam", "adamax", "adamaxw",
        "adamw", "adan", "amsgrad", "chain", "fromage", "lamb", "lars", "lion", "nadam",
        "nadamw", "noisy_sgd", "novograd", "radam", "rmsprop", "rprop", "sgd", "sign_sgd",
        "sm3", "yogi",
    )
)  # fmt: skip
# Names that reach a module's variables unseen.
_DYNAMIC_NAMES = frozenset({"globals", "locals", "vars", "exec", "eval"})
_DEPTH = 3  # names followed back: ``state_dist = replicate(state)`` after ``state = ...``


def new_optimiser_each_call(
    facts: Facts, change: Event, uses: list[Event], reach: list[Event], loop: ast.AST | None
) -> bool:
    """Every compiled call of ``uses`` that could reuse a trace made before ``change`` is
    given an optimiser made since: those after the change in code order, or (``loop``) every
    call in the loop, the next pass of which runs after the change."""
    driver = change.driver
    if loop is None:
        checked = [u for u in uses if u.at > change.at]
    else:
        checked = [u for u in uses if loop in u.loops]
    if not checked:
        return False
    if any(u.kind is not EventKind.RUN for u in uses):
        return False  # handed on (``atexit.register(report)``): it may be called at any time
    for use in checked:
        if use.kind is not EventKind.RUN or use.driver is not driver or use.node is None:
            return False
        # The innermost loop around both: a pass of it that runs the change and then the
        # call must make the optimiser in between; the next pass must make it again.
        common = [lp for lp in use.loops if lp in change.loops]
        within = common[-1] if common else None
        if use.via is not None:
            if use.at < change.at and within is None:
                return False
            if not _made_in_each_run(facts, use.via, reach):
                return False
            continue
        call = facts.parent(use.node)
        if (
            not isinstance(call, ast.Call)
            or call.func is not use.node
            or not _plainly_compiled(facts, driver, use.node)
        ):
            return False
        if change.at < use.at:
            since, inside = change.at, None
        elif within is not None:
            since, inside = None, within
        else:
            return False
        if not any(
            _holds_new(facts, driver, argument, call, since, inside, _DEPTH)
            for argument in _arguments(call)
        ):
            return False
    return not _reaches_names_unseen(facts)


def _made_in_each_run(facts: Facts, function: Scope, reach: list[Event]) -> bool:
    """Each compiled call in ``function``'s body passes an optimiser it made before the call;
    the function runs only where it is called, to its end."""
    node = function.node
    if (
        function.kind is not ScopeKind.FUNCTION
        or not isinstance(node, ast.FunctionDef)
        or function.parent is not facts.module_scope
        or _suspends(node)
        or not _only_called(facts, function)
    ):
        return False
    inner = [e for e in reach if e.driver is function]
    if not inner:
        return False
    for event in inner:
        call = facts.parent(event.node) if event.node is not None else None
        if (
            event.kind is not EventKind.RUN
            or event.via is not None
            or not isinstance(call, ast.Call)
            or call.func is not event.node
            or event.node is None
            or not _plainly_compiled(facts, function, event.node)
        ):
            return False
        if not any(
            _holds_new(facts, function, argument, call, None, node, _DEPTH)
            for argument in _arguments(call)
        ):
            return False
    return True


def _suspends(function: ast.FunctionDef) -> bool:
    """A generator's or coroutine's body: a run may stop and go on later."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))
    return False


def _only_called(facts: Facts, function: Scope) -> bool:
    """The function is bound once, by its ``def``, and its name is only ever called."""
    name = function.name
    bindings = facts.bindings_of(facts.module_scope, name)
    if len(bindings) != 1 or bindings[0].kind is not BindingKind.DEF:
        return False
    for node in ast.walk(facts.tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            parent = facts.parent(node)
            if not (isinstance(parent, ast.Call) and parent.func is node):
                return False
    return True


def _plainly_compiled(facts: Facts, scope: Scope, callee: ast.AST) -> bool:
    """The callee names a ``def`` of the module, bound once, under its compile decorator
    alone: nothing between the call and JAX may drop an argument."""
    if not isinstance(callee, ast.Name):
        return False
    bindings = facts.bindings_of(facts.resolve(scope, callee.id), callee.id)
    if len(bindings) != 1 or bindings[0].kind is not BindingKind.DEF:
        return False
    node = bindings[0].node
    return isinstance(node, ast.FunctionDef) and len(node.decorator_list) == 1


def _reaches_names_unseen(facts: Facts) -> bool:
    return _module_facts(facts.tree).dynamic


@dataclass(frozen=True)
class _ModuleFacts:
    """What one walk of the module finds: whether it names ``globals`` and its kin, and the
    roots of the attributes it stores into (``optax`` of ``optax.sgd = ...``)."""

    dynamic: bool
    stored_roots: frozenset[str]


_MODULES: weakref.WeakKeyDictionary[ast.Module, _ModuleFacts] = weakref.WeakKeyDictionary()


def _module_facts(tree: ast.Module) -> _ModuleFacts:
    """One walk per module, kept while its tree lives: each change asks again."""
    known = _MODULES.get(tree)
    if known is None:
        dynamic = False
        roots: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in _DYNAMIC_NAMES:
                dynamic = True
            elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                root = node.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name):
                    roots.add(root.id)
        known = _MODULES[tree] = _ModuleFacts(dynamic, frozenset(roots))
    return known


def _arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords if k.arg is not None)]


def _holds_new(
    facts: Facts,
    scope: Scope,
    argument: ast.expr,
    call: ast.AST,
    since: tuple[int, int] | None,
    within: ast.AST | None,
    depth: int,
) -> bool:
    """``argument`` is a name last bound, before ``call`` and always before it, to an optimiser
    holder made with a new transformation; after ``since`` when given, else inside
    ``within`` (the loop, or the function, whose run makes it)."""
    if depth == 0 or not isinstance(argument, ast.Name):
        return False
    owner = facts.resolve(scope, argument.id)
    if owner is not scope:
        return False  # a global or a closure's variable: any code may bind it
    at = (getattr(call, "lineno", 0), getattr(call, "col_offset", 0))
    bindings = facts.bindings_of(owner, argument.id)
    if any(b.scope is not scope for b in bindings):
        return False  # bound by ``global`` or ``nonlocal`` code elsewhere
    earlier = [b for b in bindings if b.at < at]
    if not earlier:
        return False
    made = max(earlier, key=lambda b: b.at)
    statement = facts.statement_of(made.node)
    holding = facts.statement_of(call)
    if (
        made.kind is not BindingKind.ASSIGN
        or not isinstance(statement, ast.Assign)
        or len(statement.targets) != 1
        or not isinstance(statement.targets[0], ast.Name)
        or holding is None
        or not always_runs_before(scope.node, statement, holding)
    ):
        return False
    if since is not None and not since < made.at:
        return False
    if since is None and (within is None or not _inside(within, statement)):
        return False
    # Nothing changes what the name holds between the binding and the call, nor reads it
    # there (an alias or a helper given it could).
    if any(made.at < m.start < at for m in facts.mutations_of(owner, argument.id)):
        return False
    if _read_between(facts, scope, argument.id, statement, call):
        return False
    value = statement.value
    if not isinstance(value, ast.Call):
        return False
    name = _library_name(facts, scope, value.func)
    if name in _REPLICATE:
        return len(value.args) == 1 and _holds_new(
            facts, scope, value.args[0], statement, since, within, depth - 1
        )
    return name in _HOLDERS and _new_transformation(facts, scope, value, _HOLDERS[name])


def _new_transformation(facts: Facts, scope: Scope, holder: ast.Call, position: int | None) -> bool:
    """The holder is given a transformation made right there by an optimiser of ``optax``."""
    given = [k.value for k in holder.keywords if k.arg == "tx"]
    if position is not None and len(holder.args) > position:
        given.append(holder.args[position])
    if len(given) != 1 or not isinstance(given[0], ast.Call):
        return False
    made = _library_name(facts, scope, given[0].func)
    return made in _NEW_EACH_CALL


def _library_name(facts: Facts, scope: Scope, function: ast.expr) -> str | None:
    """The dotted name of ``function`` when it is reached through a name only ever bound by
    imports of one module, with nothing in the module storing into what it names."""
    root = function
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return None
    # Imported again in a later notebook cell is the same module; bound otherwise, anything.
    bindings = facts.bindings_of(facts.resolve(scope, root.id), root.id)
    if not bindings or any(
        b.kind is not BindingKind.IMPORT or b.imported != bindings[0].imported for b in bindings
    ):
        return None
    name = facts.qualified_name(scope, function)
    if name is None or _patched(facts, name.partition(".")[0]):
        return None
    return name


def _patched(facts: Facts, package: str) -> bool:
    """Whether the module stores into an attribute of what it imported from ``package``
    (``optax.sgd = cache(optax.sgd)``, ``TrainState.create = ...``)."""
    scope = facts.module_scope
    for root in _module_facts(facts.tree).stored_roots:
        base = facts.qualified_name(scope, ast.Name(root)) or ""
        if base.partition(".")[0] == package:
            return True
    return False


def _read_between(
    facts: Facts, scope: Scope, name: str, statement: ast.stmt, call: ast.AST
) -> bool:
    """Whether the code of ``scope`` reads ``name`` after ``statement`` and before ``call``,
    outside the call itself and other calls of the same compiled function."""
    first = (getattr(statement, "end_lineno", 0) or 0, getattr(statement, "end_col_offset", 0))
    last = (getattr(call, "lineno", 0), getattr(call, "col_offset", 0))
    callee = call.func if isinstance(call, ast.Call) else None
    for read in facts.reads_of(scope, name):
        if not first <= read.start < last:
            continue
        # Given to another call of the same compiled function, which JAX keys the same way.
        holder = facts.parent(read.node)
        if (
            isinstance(callee, ast.Name)
            and isinstance(holder, ast.Call)
            and read.node in holder.args
            and isinstance(holder.func, ast.Name)
            and holder.func.id == callee.id
        ):
            continue
        return True
    return False


def _inside(outer: ast.AST, node: ast.AST) -> bool:
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    return (
        (getattr(outer, "lineno", 0), getattr(outer, "col_offset", 0)) <= start
        and (getattr(node, "end_lineno", 0) or 0) <= (getattr(outer, "end_lineno", 0) or 0)
        and outer is not node
    )
