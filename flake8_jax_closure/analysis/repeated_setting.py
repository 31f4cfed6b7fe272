"""A rebinding that sets fields to what they already hold.

``config = config._replace(snapshots=False)`` written a second time, on a ``config`` that an
earlier ``_replace(snapshots=False)`` already set so, with nothing in between setting that field
otherwise: a ``NamedTuple``'s ``_replace`` copies every other field into a new tuple, which no
code can change in place, so the new value equals the old one, and a compiled call that traced
with the old value computes what the new one gives.

Only ``_replace`` (a mutable dataclass may be changed through another name between the two,
and a class's own ``replace`` may do anything), and only values that are the same object or an
equal one each time they are written: literals that make no new mutable object, names bound
once outside any loop to such a literal or by an import, and a module's members.
"""

from __future__ import annotations

import ast

from .bindings import same_tree
from .blocks import always_runs_before
from .facts.model import Binding, BindingKind
from .facts.queries import Facts


def sets_what_it_holds(facts: Facts, binding: Binding, bindings: list[Binding]) -> bool:
    """Whether ``binding`` (one of ``bindings``, every binding of its variable) replaces fields
    of the variable's own record with the constants an earlier replace that always runs before
    it already set, no binding between setting those fields otherwise; bindings in a loop
    around it, after it, run between too."""
    fields = _settings(facts, binding)
    if not fields or _defined_here(facts, "_replace"):
        return False
    if any(b.scope is not binding.scope for b in bindings) or facts.mutations_of(
        facts.resolve(binding.scope, binding.name), binding.name
    ):
        return False  # set where its order is not the text's, or changed in place
    earlier = [b for b in bindings if b.at < binding.at]
    loops = {id(loop) for loop in binding.loops}
    next_passes = [b for b in bindings if b.at > binding.at and loops & {id(x) for x in b.loops}]
    for name, value in fields.items():
        if not _keeps(facts, next_passes, name, value):
            return False
        if not _set_before(facts, binding, earlier, name, value):
            return False
    return True


def _set_before(
    facts: Facts, binding: Binding, earlier: list[Binding], field: str, value: ast.expr
) -> bool:
    """Whether the last binding before ``binding`` that sets ``field`` always runs before it
    and sets it to ``value``, and every binding after that one keeps the field or sets it so."""
    for before in reversed(earlier):
        settings = _settings(facts, before)
        if settings is None:
            return False  # bound otherwise: the field may hold anything
        if field not in settings:
            continue
        if not same_tree(settings[field], value):
            return False
        if always_runs_before(
            binding.scope.node, _statement(facts, before), _statement(facts, binding)
        ):
            return True
    return False


def _keeps(facts: Facts, bindings: list[Binding], field: str, value: ast.expr) -> bool:
    for other in bindings:
        settings = _settings(facts, other)
        if settings is None or not same_tree(settings.get(field, value), value):
            return False
    return True


def _statement(facts: Facts, binding: Binding) -> ast.stmt:
    statement = facts.statement_of(binding.node)
    assert statement is not None  # an assignment's target sits in its statement
    return statement


def _defined_here(facts: Facts, method: str) -> bool:
    """Whether the module may give a class a ``method`` of its own: it defines or binds the
    name (``def _replace``, ``_replace = scaled`` in a class body), stores something under it
    (``Schedule._replace = scaled``), names it in a string (``type(..., {"_replace": f})``,
    ``setattr``), or reaches ``globals()``, which may rebind anything."""
    if facts.attribute_changes(method):
        return True
    for node in ast.walk(facts.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == method:
            return True
        if isinstance(node, ast.Name) and node.id in (method, "globals"):
            return True
        if isinstance(node, ast.Constant) and node.value == method:
            return True
    return False


def _settings(facts: Facts, binding: Binding) -> dict[str, ast.expr] | None:
    """The fields ``name = name._replace(a=1)`` sets, each to the dump of a value that is the
    same wherever it is written (compared with ``same_tree``: ``ast.dump`` leaves a reference
    cycle behind on every call). None for any other binding."""
    if binding.kind is not BindingKind.ASSIGN or not isinstance(binding.value, ast.Call):
        return None
    call = binding.value
    if not (
        isinstance(call.func, ast.Attribute)
        and call.func.attr == "_replace"
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == binding.name
        and not call.args
        and call.keywords
    ):
        return None
    settings: dict[str, ast.expr] = {}
    for keyword in call.keywords:
        if keyword.arg is None or not _fixed(facts, binding, keyword.value):
            return None
        settings[keyword.arg] = keyword.value
    return settings


def _fixed(facts: Facts, binding: Binding, value: ast.expr) -> bool:
    """A literal that makes no mutable object (``False``, ``-1``, ``"fwd"``, ``(1, 2)``), or a
    name bound once, before the replace and outside any loop, to such a literal: the same
    value wherever it is written. Not what an import gives (a module, or an object its code
    may change), nor a member of a module or an object (``settings.LR``)."""
    if _immutable_literal(value):
        return True
    if not isinstance(value, ast.Name) or value.id == binding.name:
        return False
    owner = facts.resolve(binding.scope, value.id)
    bound = facts.bindings_of(owner, value.id)
    return (
        len(bound) == 1
        and bound[0].at < binding.at  # not a builtin the replace reads before the binding
        and not bound[0].loops  # bound once, not once in every pass
        and bound[0].kind is BindingKind.ASSIGN
        and _immutable_literal(bound[0].value)
        and not facts.mutations_of(owner, value.id)
    )


def _immutable_literal(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        return isinstance(value.operand, ast.Constant)
    if isinstance(value, ast.Tuple):
        return all(_immutable_literal(item) for item in value.elts)
    return False
