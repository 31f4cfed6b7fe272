"""What a closure returns that its factory fixed when it made it.

``train_init, train_fetch = load_dataset(...)`` made once, then ``num_train, train_idx =
train_init()`` in every epoch: ``init`` returns ``num_records // batch_size``, two locals of
``load_dataset`` that nothing sets again once ``init`` is defined. Each call gives the same
count (the permuted indices beside it are new each time), so rebinding ``num_train`` to it
sets the value every earlier trace read.

Only what the code shows is taken: the factory is a ``def`` of this module, or of another
module of the project (through the project index), that returns the closure by name; the
closure returns a tuple whose item is arithmetic of the factory's parameters and locals (bound
before the closure's ``def`` and never after, nor declared ``nonlocal`` anywhere inside), of
literals and of a few pure builtins.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator

from .facts.model import Binding, BindingKind, Scope
from .facts.queries import Facts

# Finds the ``def`` of a function another module of the project defines, by qualified name.
FunctionFinder = Callable[[str], "ast.FunctionDef | None"]

_PURE_BUILTINS = frozenset({"len", "int", "float", "round", "abs", "min", "max", "bool"})
# Library factories, as what their code does with what the closures return: numpyro's example
# loader (``init, fetch = load_dataset(MNIST, batch_size=128)``) counts the batches when it is
# made; each ``init()`` returns that count and newly permuted indices.
_LIBRARY_FACTORIES = {
    "numpyro.examples.datasets.load_dataset": """
def load_dataset(dset, batch_size=None, split="train", shuffle=True, num_datapoints=None):
    num_records = len(records(dset, split, num_datapoints))
    if not batch_size:
        batch_size = num_records

    def init():
        return num_records // batch_size, permuted(shuffle)

    def get_batch(i=0):
        return batch(i)

    return init, get_batch
""",
}
_VALUE_NODES = (
    ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Name, ast.Load,
    ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
)  # fmt: skip


def fixed_call_result(
    facts: Facts, scope: Scope, statement: ast.AST, name: str, elsewhere: FunctionFinder | None
) -> bool:
    """``statement`` is ``a, name = closure()`` where ``closure`` is bound once to a closure a
    factory made, and the closure's result at ``name``'s position is fixed at its making."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return False
    item = _position(statement.targets[0], name)
    call = statement.value
    if (
        item is None
        or not isinstance(call, ast.Call)
        or call.args
        or call.keywords
        or not isinstance(call.func, ast.Name)
    ):
        return False
    made = _made_by_factory(facts, scope, call.func.id, elsewhere)
    if made is None:
        return False
    factory, element = made
    return closure_fixes(factory, element, item)


def closure_fixes(factory: ast.FunctionDef, element: int | None, item: int) -> bool:
    """``factory`` returns a closure (at ``element`` of the tuple it returns, or alone) whose
    every return gives a tuple whose ``item`` depends only on what the factory fixed before
    defining the closure."""
    returned = {_returned_name(node.value, element) for node in _returns(factory)}
    closure_name = returned.pop() if len(returned) == 1 else None
    if closure_name is None:
        return False
    definitions = [
        s for s in factory.body if isinstance(s, ast.FunctionDef) and s.name == closure_name
    ]
    if len(definitions) != 1 or _bindings_in(factory.body, closure_name) != 1:
        return False
    closure = definitions[0]
    values = [_item(node.value, item) for node in _returns(closure)]
    if not values or any(value is None for value in values):
        return False
    own = _assigned_in(closure) | _parameters(closure)
    for value in values:
        assert value is not None
        for node in ast.walk(value):
            if isinstance(node, ast.Call):
                if not (isinstance(node.func, ast.Name) and node.func.id in _PURE_BUILTINS):
                    return False
                continue
            if not isinstance(node, _VALUE_NODES):
                return False
            if isinstance(node, ast.Name) and node.id not in _PURE_BUILTINS:
                if node.id in own or not _fixed_before(factory, node.id, closure.lineno):
                    return False
    return True


def _position(target: ast.expr, name: str) -> int | None:
    if not isinstance(target, ast.Tuple):
        return None
    for index, element in enumerate(target.elts):
        if isinstance(element, ast.Name) and element.id == name:
            return index
    return None


def _made_by_factory(
    facts: Facts, scope: Scope, name: str, elsewhere: FunctionFinder | None
) -> tuple[ast.FunctionDef, int | None] | None:
    """The factory whose call bound ``name`` (once, outside any loop), and the position of
    ``name`` in what it returned (None: the whole result)."""
    owner, binding = _only_binding(facts, scope, name)
    if binding is None or binding.kind is not BindingKind.ASSIGN or binding.loops:
        return None
    statement = binding.node
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0]
    element = None if isinstance(target, ast.Name) else _position(target, name)
    call = statement.value
    if (isinstance(target, ast.Tuple) and element is None) or not isinstance(call, ast.Call):
        return None
    if not isinstance(call.func, ast.Name):
        return None
    factory = _function_named(facts, owner, call.func.id, elsewhere)
    return None if factory is None else (factory, element)


def _function_named(
    facts: Facts, scope: Scope, name: str, elsewhere: FunctionFinder | None
) -> ast.FunctionDef | None:
    _, binding = _only_binding(facts, scope, name)
    if binding is None:
        return None
    node = binding.node
    if binding.kind is BindingKind.DEF and isinstance(node, ast.FunctionDef):
        return None if node.decorator_list else node
    if binding.kind is BindingKind.IMPORT and binding.imported in _LIBRARY_FACTORIES:
        return _library_factory(binding.imported)
    if binding.kind is BindingKind.IMPORT and binding.imported and elsewhere is not None:
        return elsewhere(binding.imported)
    return None


@functools.cache
def _library_factory(name: str) -> ast.FunctionDef:
    definition = ast.parse(_LIBRARY_FACTORIES[name]).body[0]
    assert isinstance(definition, ast.FunctionDef)
    return definition


def _only_binding(facts: Facts, scope: Scope, name: str) -> tuple[Scope, Binding | None]:
    """Where ``name`` is bound, and its one binding there (None when it has several)."""
    owner = facts.resolve(scope, name)
    bindings = facts.bindings_of(owner, name)
    return owner, bindings[0] if len(bindings) == 1 else None


def _returns(function: ast.FunctionDef) -> Iterator[ast.Return]:
    """The ``return`` statements of the function itself, not of functions defined in it."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return):
            yield node
        pending.extend(ast.iter_child_nodes(node))


def _returned_name(value: ast.expr | None, element: int | None) -> str | None:
    if element is not None:
        value = _item(value, element)
    return value.id if isinstance(value, ast.Name) else None


def _item(value: ast.expr | None, index: int) -> ast.expr | None:
    if isinstance(value, ast.Tuple) and index < len(value.elts):
        item = value.elts[index]
        return None if isinstance(item, ast.Starred) else item
    return None


def _parameters(function: ast.FunctionDef) -> set[str]:
    arguments = function.args
    names = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    names |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    return names


def _assigned_in(function: ast.FunctionDef) -> set[str]:
    return {
        node.id
        for node in ast.walk(function)
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del))
    }


def _fixed_before(factory: ast.FunctionDef, name: str, line: int) -> bool:
    """``name`` is a parameter or local of ``factory`` bound only before ``line``, and nothing
    in it (its closures included) declares it ``nonlocal`` or changes it in place."""
    stores = [
        node
        for node in ast.walk(factory)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
    ]
    if not stores and name not in _parameters(factory):
        return False  # a global, or a builtin: not the factory's to fix
    if any(node.lineno >= line for node in stores):
        return False
    for node in ast.walk(factory):
        if isinstance(node, (ast.Nonlocal, ast.Global)) and name in node.names:
            return False
        if isinstance(node, ast.AugAssign) and _names(node.target, name):
            return False
        if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(
            node.ctx, (ast.Store, ast.Del)
        ):
            if _names(node.value, name):
                return False
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and _names(node.func.value, name)
        ):
            return False  # ``counts.append(...)``: a method may change it
    return True


def _names(node: ast.expr, name: str) -> bool:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return isinstance(node, ast.Name) and node.id == name


def _bindings_in(body: list[ast.stmt], name: str) -> int:
    """How many statements of ``body`` bind ``name`` (a ``def`` counts)."""
    count = 0
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                count += 1
            elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                count += 1
    return count
