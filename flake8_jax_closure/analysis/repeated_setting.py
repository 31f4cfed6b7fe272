"""A rebinding that sets fields to what they already hold.

``config = config._replace(snapshots=False)`` written a second time, on a ``config`` that an
earlier ``_replace(snapshots=False)`` already set so, with nothing in between setting that field
otherwise: a ``NamedTuple``'s ``_replace``, a dataclass's ``dataclasses.replace`` and a flax or
chex record's ``.replace`` copy every other field, so the new value equals the old one, and a
compiled call that traced with the old value computes what the new one gives.
"""

from __future__ import annotations

import ast

from .facts.model import Binding, BindingKind
from .facts.queries import Facts
from .names import dotted_name

# Methods that copy a record with the named fields set (``typing.NamedTuple``, flax's
# ``struct.dataclass``, chex's dataclasses) and functions that do it for a record handed first.
_REPLACING_METHODS = frozenset({"_replace", "replace"})
_REPLACING_FUNCTIONS = frozenset({"dataclasses.replace"})


def sets_what_it_holds(facts: Facts, binding: Binding, bindings: list[Binding]) -> bool:
    """Whether ``binding`` (one of ``bindings``, every binding of its variable) replaces fields
    of the variable's own record with the constants an earlier replace that always runs before
    it already set, no binding between setting those fields otherwise; bindings in a loop
    around it, after it, run between too."""
    fields = _settings(facts, binding)
    if not fields:
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
    facts: Facts, binding: Binding, earlier: list[Binding], field: str, value: str
) -> bool:
    """Whether the last binding before ``binding`` that sets ``field`` always runs before it
    and sets it to ``value``, and every binding after that one keeps the field or sets it so."""
    for before in reversed(earlier):
        settings = _settings(facts, before)
        if settings is None:
            return False  # bound otherwise: the field may hold anything
        if field not in settings:
            continue
        if settings[field] != value:
            return False
        if _always_before(before, binding):
            return True
    return False


def _keeps(facts: Facts, bindings: list[Binding], field: str, value: str) -> bool:
    for other in bindings:
        settings = _settings(facts, other)
        if settings is None or settings.get(field, value) != value:
            return False
    return True


def _always_before(earlier: Binding, later: Binding) -> bool:
    """Whether ``earlier`` runs whenever ``later`` does, before it: it sits in no branch and no
    loop that ``later`` is not in."""
    return set(earlier.branches) <= set(later.branches) and {id(x) for x in earlier.loops} <= {
        id(x) for x in later.loops
    }


def _settings(facts: Facts, binding: Binding) -> dict[str, str] | None:
    """The fields ``name = name._replace(a=1)`` (or ``.replace``, or ``dataclasses.replace(name,
    a=1)``) sets, each to the dump of a value that is the same wherever it is written: a
    literal, or a name bound once. None for any other binding."""
    if binding.kind is not BindingKind.ASSIGN or not isinstance(binding.value, ast.Call):
        return None
    call = binding.value
    record: ast.expr | None = None
    if (
        isinstance(call.func, ast.Attribute)
        and call.func.attr in _REPLACING_METHODS
        and not call.args
    ):
        record = call.func.value
    elif dotted_name(call.func) in _REPLACING_FUNCTIONS and len(call.args) == 1:
        record = call.args[0]
    if not (isinstance(record, ast.Name) and record.id == binding.name) or not call.keywords:
        return None
    settings: dict[str, str] = {}
    for keyword in call.keywords:
        if keyword.arg is None or not _fixed(facts, binding, keyword.value):
            return None
        settings[keyword.arg] = ast.dump(keyword.value)
    return settings


def _fixed(facts: Facts, binding: Binding, value: ast.expr) -> bool:
    """A literal (``False``, ``-1``, ``"fwd"``), or a name (with attributes taken from it)
    bound once, outside any loop, and never changed in place: the same value wherever it is
    written."""
    try:
        ast.literal_eval(value)
        return True
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass  # not a literal
    while isinstance(value, ast.Attribute):
        value = value.value
    if not isinstance(value, ast.Name) or value.id == binding.name:
        return False
    owner = facts.resolve(binding.scope, value.id)
    bound = facts.bindings_of(owner, value.id)
    return (
        len(bound) == 1
        and bound[0].kind in (BindingKind.ASSIGN, BindingKind.IMPORT)
        and not bound[0].loops  # bound once, not once in every pass
        and not facts.mutations_of(owner, value.id)
    )
