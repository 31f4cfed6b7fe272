"""A function made anew from the object's own methods: the same function each time.

``grad_fn = jax.grad(self._loss); self._minibatch_fn = lambda x, y: self._update(x, y,
grad_fn)`` in a method run again and again stores a new function object each time, but one that
does what the last one did: it calls the same methods of the same object, which read what they
read of it when called. A compiled method that kept the old function computes what the new one
would, so storing it again changes nothing a trace read. What those methods read of the object
is timed by the rule on its own.

Only what cannot hold a value of its own run counts: the lambda's parameters, the object
itself, constants, builtins, imported names, functions and classes the module defines once, the
object's methods, and locals the method binds once to such things or to ``functools.partial``
or a ``jax`` transform of them. A local computed from data (``lr = self.lr``) may differ from
run to run, and so may the function that closes over it. A constant stored again is the same
value too.

Only when nothing else gives the attribute a value: a class default (``mode = "train"`` in a
class body, while the method stores ``"eval"``) is read by a trace made before the first store,
so no class of the module binds the name in its body, and the class's bases are the module's
own classes or ``ABC``/``object`` (a base class elsewhere may bind it).
"""

from __future__ import annotations

import ast
import builtins
import weakref

from ...analysis.facts.model import BindingKind, Scope
from ...analysis.facts.queries import Facts

_BUILTINS = frozenset(dir(builtins))
# Base classes that give their subclasses' objects no attributes of their own.
_PLAIN_BASES = frozenset({"object", "ABC", "abc.ABC", "Generic", "typing.Generic"})
_WRAPPERS = frozenset({"functools.partial"})
# How many locals deep a made function is followed (``grad_fn`` of ``jax.grad(self._loss)``).
_DEPTH = 2


def made_from_own_methods(
    facts: Facts, method: Scope, self_name: str, value: ast.expr, methods: frozenset[str]
) -> bool:
    """Whether ``value``, stored by ``method``, is a function made only from the object's
    methods (``methods``) and things that are the same on every run (see the module's
    docstring)."""
    return _made(facts, method, self_name, value, methods, _DEPTH)


def _made(
    facts: Facts,
    method: Scope,
    self_name: str,
    value: ast.expr,
    methods: frozenset[str],
    depth: int,
) -> bool:
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Name):
        return value.id == self_name or _fixed_name(
            facts, method, self_name, value.id, methods, depth
        )
    if isinstance(value, ast.Attribute):
        return (
            isinstance(value.value, ast.Name)
            and value.value.id == self_name
            and value.attr in methods
        )
    if isinstance(value, ast.Call):
        callee = facts.qualified_name(method, value.func)
        if callee is None or not (callee in _WRAPPERS or callee.startswith("jax.")):
            return False
        given = [*value.args, *(keyword.value for keyword in value.keywords)]
        return all(_made(facts, method, self_name, g, methods, depth) for g in given)
    if isinstance(value, ast.Lambda):
        own = {n.arg for n in ast.walk(value.args) if isinstance(n, ast.arg)}
        names = {
            node.id
            for node in ast.walk(value.body)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
        }
        if any(isinstance(node, ast.Lambda) for node in ast.walk(value.body)):
            return False  # parameters of an inner lambda are not told apart
        return all(
            name in own
            or name == self_name
            or _fixed_name(facts, method, self_name, name, methods, depth)
            for name in names
        )
    return False


def _fixed_name(
    facts: Facts,
    method: Scope,
    self_name: str,
    name: str,
    methods: frozenset[str],
    depth: int,
) -> bool:
    """A name the lambda reads that holds the same thing on every run of ``method``."""
    owner = facts.resolve(method, name)
    bindings = facts.bindings_of(owner, name)
    if owner is method:
        if depth == 0 or len(bindings) != 1:
            return False
        (binding,) = bindings
        return (
            binding.kind is BindingKind.ASSIGN
            and binding.value is not None
            and not binding.loops
            and _made(facts, method, self_name, binding.value, methods, depth - 1)
        )
    if not bindings:
        return name in _BUILTINS
    if all(b.kind is BindingKind.IMPORT for b in bindings):
        return True
    return len(bindings) == 1 and bindings[0].kind in (BindingKind.DEF, BindingKind.CLASS)


def no_other_value(tree: ast.Module, cls: ast.AST, attribute: str) -> bool:
    """Whether nothing but stores into objects gives ``attribute`` a value: no class of the
    module binds it in its body, and ``cls`` derives only from the module's own classes or
    plain bases."""
    classes, class_values = _module_classes(tree)
    if attribute in class_values:
        return False
    pending = [cls]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if not isinstance(current, ast.ClassDef) or id(current) in seen:
            return False
        seen.add(id(current))
        if current.keywords:
            return False  # a metaclass may give attributes
        for base in current.bases:
            name = ast.unparse(base)
            if name in _PLAIN_BASES:
                continue
            if name not in classes:
                return False
            pending.append(classes[name])
    return True


_CLASSES: weakref.WeakKeyDictionary[ast.Module, tuple[dict[str, ast.ClassDef], frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)


def _module_classes(tree: ast.Module) -> tuple[dict[str, ast.ClassDef], frozenset[str]]:
    """The module's classes by name, and every name a class body binds to a value: one walk
    of the module, kept while its tree lives."""
    found = _CLASSES.get(tree)
    if found is None:
        classes = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
        values = frozenset(name for node in classes.values() for name in _class_values(node))
        found = _CLASSES[tree] = (classes, values)
    return found


def _class_values(cls: ast.ClassDef) -> set[str]:
    """The names a class body binds to a value (not a bare annotation)."""
    names: set[str] = set()
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, ast.Assign):
            names |= {
                n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)
            }
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and statement.value is not None:
            if isinstance(statement.target, ast.Name):
                names.add(statement.target.id)
    return names
