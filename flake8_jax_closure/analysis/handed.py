"""Changes made through a parameter: a function or a method that changes what its parameter holds
(``config.lr = ...``, ``table["scale"] = ...``, ``table.update(scale=0.5)``), called with the
object compiled code reads (``callback.on_epoch_end(cfg)``, ``anneal(settings, 0.5)``).

Only calls that hand the object itself on count, by position or by keyword (or by leaving out
a parameter whose default is the object: ``def enter_phase(phase, cfg=SETTINGS)``), to a
function of the module named at the call or to the methods with the called name of the
module's classes that it uses (the receiver's class is rarely known: a callback comes from a
list). The change happens where the object is handed on, and is timed from there as any change
in a function.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from .facts.model import BindingKind, Mutation, Read, Scope, paths_overlap
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
            if isinstance(call, (ast.FunctionDef, ast.AsyncFunctionDef, ast.arguments)):
                # ``def enter_phase(phase, cfg=SETTINGS)``: each call leaving ``cfg`` out hands
                # the object on.
                for mutation, handing in self._through_default(read, call):
                    found.setdefault(id(mutation), (mutation, []))[1].append(handing)
                continue
            if not isinstance(call, ast.Call) or call.func is read.node:
                continue
            for function, parameter in _receiving_parameters(facts, read.scope, call, read.node):
                for mutation in facts.mutations_of(function, parameter):
                    if mutation.path or _changes_whole(mutation):
                        handing = Handing(read.scope, call, read.loops, function)
                        found.setdefault(id(mutation), (mutation, []))[1].append(handing)
        return list(found.values())

    def _through_default(self, read: Read, holder: ast.AST) -> Iterator[tuple[Mutation, Handing]]:
        """Changes through the parameter whose default the object is, each with a call of the
        function by name that gives that parameter nothing."""
        facts = self.facts
        function_node = facts.parent(holder) if isinstance(holder, ast.arguments) else holder
        if not isinstance(function_node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        arguments = function_node.args
        parameter = _defaulted_parameter(arguments, read.node)
        if parameter is None:
            return
        function = facts.scope_of(function_node)
        changes = [
            m for m in facts.mutations_of(function, parameter) if m.path or _changes_whole(m)
        ]
        if not changes or function.parent is None:
            return
        positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        index = positional.index(parameter) if parameter in positional else None
        for caller in facts.reads_of(function.parent, function.name):
            call = facts.parent(caller.node)
            if not isinstance(call, ast.Call) or call.func is not caller.node:
                continue
            if any(isinstance(a, ast.Starred) for a in call.args):
                continue
            if any(k.arg is None or k.arg == parameter for k in call.keywords):
                continue
            if index is not None and len(call.args) > index:
                continue
            for mutation in changes:
                yield mutation, Handing(caller.scope, call, caller.loops, function)


def _defaulted_parameter(arguments: ast.arguments, default: ast.AST) -> str | None:
    """The parameter whose default value is the node ``default``."""
    positional = [*arguments.posonlyargs, *arguments.args]
    for parameter, value in zip(
        positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True
    ):
        if value is default:
            return parameter.arg
    for parameter, keyword_default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        if keyword_default is default:
            return parameter.arg
    return None


def _changes_whole(mutation: Mutation) -> bool:
    """A change that may reach any path compiled code reads: a call of a method that changes
    the whole object in place (``cfg.update(lr=0.1)``, ``members.append(m)``), or a store into
    entries it computes (``out[:] = h``, ``table[i] += 1``). A name's augmented assignment
    (``table += 1``) is not: on an immutable array it binds the parameter anew."""
    node = mutation.node
    if isinstance(node, ast.Call):
        return mutation.description.endswith("' called")
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Subscript) for t in node.targets)
    return isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript)


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
