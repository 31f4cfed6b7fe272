"""A compiled method that reads a misspelt attribute of ``self``: its trace never finishes.

``self.critic(self.ciritc_params, s)`` in the body of a ``jax.jit`` method, where nothing ever
stores ``ciritc_params`` and the class stores ``critic_params``: every trace raises
``AttributeError`` at that line (Python even suggests the right name), so no compiled call of
the method returns, nothing is cached, and nothing it reads can go stale.

Only what the module shows for certain counts. The read is a statement of the method's own
body that every run reaches (not under an ``if``, a loop, a ``try``, a conditional expression,
a short-circuit, a comprehension or a lambda). The class has no base class and no decorator
(either may give the attribute), defines no ``__getattr__``, ``__getattribute__`` or
``__slots__``, and binds no such name anywhere in its body (under an ``if``, by an import).
The module never stores an attribute of that name, names it in a string or as a keyword, nor
names anything that sets attributes by a computed name (``setattr``, called or held in a
``partial``; ``__setattr__``, ``__dict__``, ``vars``, ``locals``, ``globals``, ``exec``,
``eval``). And the name is a misspelling: close to an attribute the class does store. An
attribute that only a caller outside the module sets (``agent.env = env``) is no misspelling
and is left alone.
"""

from __future__ import annotations

import ast
import difflib
import weakref
from collections.abc import Iterator

# Statements whose blocks may not run, or may stop with the error caught.
_BRANCHING = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, getattr(ast, "TryStar", ast.Try),
    ast.With, ast.AsyncWith, ast.Match,
)  # fmt: skip
_NESTED = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
    ast.DictComp, ast.GeneratorExp,
)  # fmt: skip
_DYNAMIC_CLASS_NAMES = frozenset(
    {"__getattr__", "__getattribute__", "__slots__", "__dict__", "__setattr__"}
)
# Named at all, not only called: ``partial(setattr, self)`` sets attributes as well.
_DYNAMIC_NAMES = frozenset({"setattr", "vars", "exec", "eval", "locals", "globals"})
# How close a name must be to a stored one to be its misspelling (``difflib``'s ratio).
_CLOSENESS = 0.8


def misspelt_attribute(tree: ast.Module, method: ast.FunctionDef, cls: ast.ClassDef) -> str | None:
    """The attribute of ``self`` that the method's body always reads and the module never
    gives any object, when it is a misspelling of one the class stores; else None."""
    if cls.bases or cls.keywords or cls.decorator_list:
        return None
    arguments = [*method.args.posonlyargs, *method.args.args]
    if not arguments:
        return None
    self_name = arguments[0].arg
    read = [
        node.attr
        for statement in _always_run(method.body)
        for node in _always_evaluated(statement)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Load)
        and isinstance(node.value, ast.Name)
        and node.value.id == self_name
    ]
    if not read:
        return None
    given = _given_names(tree)
    if given is None:
        return None
    stored = _stored_by(cls)
    for name in read:
        if name in given or (name.startswith("__") and name.endswith("__")):
            continue
        if difflib.get_close_matches(name, stored, n=1, cutoff=_CLOSENESS):
            return name
    return None


def _always_run(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of the body every run reaches, up to the first that may leave it."""
    for statement in body:
        if isinstance(statement, _BRANCHING):
            return  # what follows may run only after an error there was caught
        yield statement
        if isinstance(statement, (ast.Return, ast.Raise)):
            return


def _always_evaluated(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a statement that Python evaluates whenever it runs the statement: not the
    branches of a conditional expression, the later operands of ``and``/``or``, nor what a
    comprehension, a lambda or a nested definition holds."""
    pending: list[ast.AST] = [node]
    while pending:
        current = pending.pop()
        yield current
        if isinstance(current, _NESTED):
            continue
        if isinstance(current, ast.IfExp):
            pending.append(current.test)
        elif isinstance(current, ast.BoolOp):
            pending.append(current.values[0])
        else:
            pending.extend(ast.iter_child_nodes(current))


_GIVEN: weakref.WeakKeyDictionary[ast.Module, frozenset[str] | None] = weakref.WeakKeyDictionary()


def _given_names(tree: ast.Module) -> frozenset[str] | None:
    """Every attribute name the module may give an object (stored, deleted, bound in a class
    body, or named in a string); None when it may give any (a computed ``setattr``, ``vars()``,
    ``__dict__``, ``__getattr__``). One walk of the module, kept while its tree lives."""
    if tree in _GIVEN:
        return _GIVEN[tree]
    given = _walk_given(tree)
    _GIVEN[tree] = given
    return given


def _walk_given(tree: ast.Module) -> frozenset[str] | None:
    given: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in _DYNAMIC_CLASS_NAMES:
                return None
            if not isinstance(node.ctx, ast.Load):
                given.add(node.attr)
        elif isinstance(node, ast.Name):
            if node.id in _DYNAMIC_NAMES:
                return None
        elif isinstance(node, ast.keyword) and node.arg is not None:
            given.add(node.arg)  # ``SimpleNamespace(name=v)``, ``replace(obj, name=v)``
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            given.add(node.value)
        elif isinstance(node, ast.ClassDef):
            names = _class_body_names(node)
            if names & _DYNAMIC_CLASS_NAMES:
                return None
            given |= names
    return frozenset(given)


def _stored_by(cls: ast.ClassDef) -> list[str]:
    """The attributes the class gives its objects: bound in its body, or stored through
    ``self`` in its methods."""
    stored = set(_class_body_names(cls))
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            stored.add(node.attr)
    return sorted(stored)


def _class_body_names(cls: ast.ClassDef) -> set[str]:
    """The names the class body binds, wherever its statements stand (under an ``if``, a
    ``try``, a loop): its attributes. Not inside its functions or nested classes, whose names
    are their own."""
    names: set[str] = set()
    pending: list[ast.AST] = list(cls.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            pending.extend(node.decorator_list)
            continue
        if isinstance(
            node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
        ):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).partition(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        pending.extend(ast.iter_child_nodes(node))
    return names
