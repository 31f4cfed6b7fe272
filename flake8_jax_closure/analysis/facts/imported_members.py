"""What a ``getattr`` with a computed name takes from an imported module.

``getattr(optim, self.config.schedule)`` after ``from nfnets import optim`` takes a function,
class or value of that module. It can be a method of the file's own objects, or a compiled
function the file keeps on them, only if the module holds one: the file stored it there
(``optim.hook = trainer.decay``), or handed it to the module's code (``optim.register(f)``,
``@optim.hook``), or the module is the running script itself (``import __main__``,
``importlib.import_module(__name__)``), whose globals may hold anything. Nor when the file
hands the function it takes something of its own to call (``getattr(tu, name)(self.bump, w)``,
``getattr(operator, name)(hook)(trainer)``).
"""

from __future__ import annotations

import ast
import sys
from typing import TYPE_CHECKING

from ..names import FUNCTIONAL_PACKAGES, dotted_name
from .model import AttributeRef, BindingKind, Scope, ScopeKind

if TYPE_CHECKING:
    from .queries import Facts

# Calls that return the module their first argument names.
_IMPORTING_CALLS = frozenset({"importlib.import_module", "import_module", "__import__"})
_RUNNING_SCRIPT = "__main__"


def member_of_an_import(facts: Facts, ref: AttributeRef) -> bool:
    """Whether the computed ``getattr`` of ``ref`` takes a member of an imported module that
    holds nothing of the file's own (see the module docstring)."""
    if not _only_called_with_data(facts, ref):
        return False
    base = ref.base
    if isinstance(base, ast.Attribute) and dotted_name(base) is None:
        return False
    if isinstance(base, ast.Attribute) and _made_by_importing(facts, base.attr):
        return True  # ``getattr(self.model_module, name)``
    while isinstance(base, ast.Attribute):
        base = base.value  # ``getattr(jax.nn, name)``: a member of a member of ``jax``
    if not isinstance(base, ast.Name):
        return False
    owner = facts.resolve(ref.scope, base.id)
    bindings = facts.bindings_of(owner, base.id)
    return (
        bool(bindings)
        and all(
            b.kind is BindingKind.IMPORT and _RUNNING_SCRIPT not in (b.imported or "").split(".")
            for b in bindings
        )
        and not facts.mutations_of(owner, base.id)
        and (
            all(_library((b.imported or "").split(".")[0]) for b in bindings)
            or not any(_hands_code(facts, r.scope, r.node) for r in facts.reads_of(owner, base.id))
        )
    )


def _library(package: str) -> bool:
    """A package of functions (``jax``, ``numpy``) or of Python's own library, whose members
    are what it defines: handing it the file's functions (``jax.jit(step)``) registers no
    member under their names."""
    return package in FUNCTIONAL_PACKAGES or package in sys.stdlib_module_names


def _only_called_with_data(facts: Facts, ref: AttributeRef) -> bool:
    """What ``ref`` gives is only called (at once, or through the one name it is kept in),
    each call's result is not called again, and no call is given anything that may be code
    of the file or an object of it."""
    node = ref.node
    parent = facts.parent(node)
    calls: list[ast.Call] = []
    if isinstance(parent, ast.Call):
        if parent.func is not node:
            return False  # handed to a call: it may be called with anything
        calls.append(parent)
    elif isinstance(parent, ast.Assign):
        targets = parent.targets
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            return False
        name = targets[0].id
        for read in facts.reads_of(facts.resolve(ref.scope, name), name):
            call = facts.parent(read.node)
            if not (isinstance(call, ast.Call) and call.func is read.node):
                return False
            calls.append(call)
    for call in calls:
        outer = facts.parent(call)
        if isinstance(outer, ast.Call) and outer.func is call:
            return False  # ``getattr(operator, name)(hook)(trainer)``: what it made is run
        if _given_code(facts, ref.scope, call):
            return False
    return True


def _hands_code(facts: Facts, scope: Scope, node: ast.AST) -> bool:
    """A read of the imported name that hands the module something of the file's: a
    decorator taken from it, or a call of one of its members given such a thing."""
    chain: ast.AST = node
    parent = facts.parent(chain)
    while isinstance(parent, ast.Attribute) and parent.value is chain:
        chain, parent = parent, facts.parent(parent)
    if isinstance(parent, ast.Call) and parent.func is chain:
        return _given_code(facts, scope, parent)
    statement = facts.statement_of(node)
    return isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
        _contains(decorator, node) for decorator in statement.decorator_list
    )


def _given_code(facts: Facts, scope: Scope, call: ast.Call) -> bool:
    arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
    return any(_may_be_code(facts, scope, argument, follow=True) for argument in arguments)


def _may_be_code(facts: Facts, scope: Scope, expression: ast.AST, follow: bool) -> bool:
    """Whether ``expression`` may hold code of the file or an object of its classes: a lambda,
    an attribute taken from anything but an import (``trainer.decay``, ``self``'s), a method's
    ``self``, a function or class of the file or what calling one returns (``Trainer()``),
    or (``follow``) a name whose assigned values may. What a library's function or a method
    returns (``jnp.ones(2)``, ``net.apply(...)``) is taken for data."""
    if isinstance(expression, ast.Lambda):
        return True
    if isinstance(expression, ast.Call):
        func = expression.func
        return isinstance(func, ast.Name) and _name_may_be_code(facts, scope, func.id, follow)
    if isinstance(expression, ast.Attribute):
        root: ast.expr = expression
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and _imported(facts, scope, root.id):
            return False
        return _code_attribute(facts, expression.attr)
    if isinstance(expression, ast.Name):
        return _name_may_be_code(facts, scope, expression.id, follow)
    return any(
        _may_be_code(facts, scope, inner, follow)
        for inner in ast.iter_child_nodes(expression)
        if isinstance(inner, ast.expr)
    )


def _name_may_be_code(facts: Facts, scope: Scope, name: str, follow: bool) -> bool:
    owner = facts.resolve(scope, name)
    if name in owner.params:
        # ``self``, whose methods the function may call; another parameter is what a call
        # hands in, and a method handed there is followed from that call.
        return (
            name == owner.params[0]
            and owner.parent is not None
            and owner.parent.kind is ScopeKind.CLASS
        )
    for binding in facts.bindings_of(owner, name):
        if binding.kind in (BindingKind.DEF, BindingKind.CLASS):
            return True
        if binding.kind is BindingKind.IMPORT or not follow:
            continue
        value = binding.value
        if value is None:
            # ``logits, state = net.apply(...)``: what the whole statement assigns.
            statement = facts.statement_of(binding.node)
            value = statement.value if isinstance(statement, ast.Assign) else None
        if value is None or _may_be_code(facts, binding.scope, value, follow=False):
            return True
    return False


def _code_attribute(facts: Facts, attr: str) -> bool:
    """Whether ``<object>.attr`` may be code: a method of a class of the file
    (``trainer.decay``), or an attribute some store of the file gives a function, a class or
    what a call makes (``self.step = jax.jit(...)``); not plain data such as ``self.config``,
    stored from a parameter, or ``config.kwargs``, never stored here."""
    for node in ast.walk(facts.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == attr:
            return True
    for change in facts.attribute_changes(attr):
        value = change.value
        if change.path != (f".{attr}",):
            continue
        if value is None or isinstance(value, (ast.Lambda, ast.Call)):
            return True
        if isinstance(value, ast.Name) and _name_may_be_code(
            facts, change.scope, value.id, follow=False
        ):
            return True
    return False


def _imported(facts: Facts, scope: Scope, name: str) -> bool:
    owner = facts.resolve(scope, name)
    bindings = facts.bindings_of(owner, name)
    return bool(bindings) and all(b.kind is BindingKind.IMPORT for b in bindings)


def _made_by_importing(facts: Facts, attr: str) -> bool:
    """Every store into ``<object>.attr`` is ``importlib.import_module(...)`` of a module named
    by a string that is not the running script."""
    stores = [m for m in facts.attribute_changes(attr) if m.path == (f".{attr}",)]
    return bool(stores) and all(
        isinstance(m.value, ast.Call)
        and dotted_name(m.value.func) in _IMPORTING_CALLS
        and len(m.value.args) >= 1
        and _names_another_module(facts, m.scope, m.value.args[0])
        for m in stores
    )


def _names_another_module(facts: Facts, scope: Scope, name: ast.expr) -> bool:
    """``"nfnets.resnet"``, or ``prefix + kind`` after ``prefix = "nfnets."``: a module named
    by a string that starts with a package's name; not ``__name__`` or ``"__main__"``, the
    running script."""
    while isinstance(name, ast.BinOp) and isinstance(name.op, ast.Add):
        name = name.left
    if isinstance(name, ast.JoinedStr) and name.values:
        name = name.values[0]
    if isinstance(name, ast.Name):
        bound = facts.bindings_of(facts.resolve(scope, name.id), name.id)
        if len(bound) != 1 or bound[0].value is None:
            return False
        name = bound[0].value
    return (
        isinstance(name, ast.Constant)
        and isinstance(name.value, str)
        and bool(name.value)
        and name.value.split(".")[0] != _RUNNING_SCRIPT
    )


def _contains(expression: ast.AST, node: ast.AST) -> bool:
    return any(inner is node for inner in ast.walk(expression))
