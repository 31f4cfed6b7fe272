"""Changes made through a parameter: a function or a method that changes what its parameter holds
(``config.lr = ...``, ``table["scale"] = ...``, ``table.update(scale=0.5)``), called with the
object compiled code reads (``callback.on_epoch_end(cfg)``, ``anneal(settings, 0.5)``).

Only calls that hand the object itself on count, by position or by keyword, to a function of the
module named at the call or to the methods with the called name of the module's classes that it
uses (the receiver's class is rarely known: a callback comes from a list). The change happens
where the object is handed on, and is timed from there as any change in a function.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from .facts.model import BindingKind, Mutation, Scope, paths_overlap
from .facts.queries import Facts


@dataclass(frozen=True, eq=False)
class Handing:
    """A call handing the object to ``function``, which changes it through a parameter."""

    scope: Scope
    call: ast.Call
    loops: tuple[ast.AST, ...]
    function: Scope


class ParameterChanges:
    """Changes through a parameter of the variables of one module, found once per variable:
    every compiled function reading the variable asks again."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self._found: dict[tuple[int, str], list[tuple[Mutation, list[Handing]]]] = {}

    def of(
        self, owner: Scope, name: str, paths: list[tuple[str, ...]]
    ) -> list[tuple[Mutation, list[Handing]]]:
        """Changes, through a parameter, of the object ``name`` of ``owner`` holds, at a path
        overlapping one compiled code reads, each with the calls that hand the object on:
        the change happens there, not at the function's other calls."""
        key = (id(owner), name)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = self._all(owner, name)
        return [
            (mutation, handings)
            for mutation, handings in found
            if any(paths_overlap(mutation.path, p) for p in paths)
        ]

    def _all(self, owner: Scope, name: str) -> list[tuple[Mutation, list[Handing]]]:
        facts = self.facts
        found: dict[int, tuple[Mutation, list[Handing]]] = {}
        for read in facts.reads_of(owner, name):
            if read.path:
                continue  # ``f(cfg.sub)`` hands on what an attribute holds, not the object
            call = facts.parent(read.node)
            if not isinstance(call, ast.Call) or call.func is read.node:
                continue
            for function, parameter in _receiving_parameters(facts, read.scope, call, read.node):
                for mutation in facts.mutations_of(function, parameter):
                    if mutation.path or _method_changing(mutation):
                        handing = Handing(read.scope, call, read.loops, function)
                        found.setdefault(id(mutation), (mutation, []))[1].append(handing)
        return list(found.values())


def _method_changing(mutation: Mutation) -> bool:
    """A call of a method that changes the whole object in place (``cfg.update(lr=0.1)``,
    ``members.append(m)``), which may change any path compiled code reads. A name's augmented
    assignment (``table += 1``) is not: on an immutable array it binds the parameter anew."""
    return isinstance(mutation.node, ast.Call) and mutation.description.endswith("' called")


def _receiving_parameters(
    facts: Facts, scope: Scope, call: ast.Call, argument: ast.AST
) -> Iterator[tuple[Scope, str]]:
    """The functions ``call`` may run, with the parameter that receives ``argument``."""
    position = next((i for i, a in enumerate(call.args) if a is argument), None)
    keyword = next((k.arg for k in call.keywords if k.value is argument), None)
    if position is None and keyword is None:
        return
    for function, skipped in _callees(facts, scope, call.func):
        params = function.params[skipped:]
        if keyword is not None and keyword in params:
            yield function, keyword
        elif position is not None and position < len(params):
            yield function, params[position]


def _callees(facts: Facts, scope: Scope, callee: ast.expr) -> Iterator[tuple[Scope, int]]:
    """Functions a call of ``callee`` may run, with the number of leading parameters the call
    does not fill (``self`` of a method called on an object)."""
    if isinstance(callee, ast.Name):
        holder = facts.resolve(scope, callee.id)
        for binding in facts.bindings_of(holder, callee.id):
            if binding.kind is BindingKind.DEF:
                yield facts.scope_of(binding.node), 0
    elif isinstance(callee, ast.Attribute):
        if facts.qualified_name(scope, callee) is not None:
            return  # ``jnp.sum(x)``, ``np.copyto(...)``: a function of an imported module
        for function in facts.methods_by_name.get(callee.attr, ()):
            parent = function.parent
            if parent is not None and not _static(function) and _has_objects(facts, parent):
                yield function, 1


def _has_objects(facts: Facts, cls: Scope) -> bool:
    """Whether the module makes objects of the class (or names it, as a base class or by
    handing it on): a method of a class it never uses cannot run on one of its objects."""
    binder = cls.parent
    assert binder is not None
    return bool(facts.reads_of(binder.function(), cls.name))


def _static(function: Scope) -> bool:
    return any(
        isinstance(d, ast.Name) and d.id == "staticmethod"
        for d in getattr(function.node, "decorator_list", [])
    )
