"""Module-level statements of a notebook that always raise ``NameError``: in a cell the saved
session did not run, they read a name that nothing in the notebook binds, in a part of the
statement that always runs.

A cell left over from an earlier version (``for X, y in data_iter(batch_size, features,
labels):`` where no cell defines ``data_iter``) stops a run of the notebook there: nothing
after it runs, so a compiled call after it neither traces nor reuses a trace. A cell the saved
session ran (an execution count or outputs, no ``NameError`` among them) found its names, from
cells deleted since perhaps; a script may be run where IPython's ``--pylab`` or ``%run -i``
gives it names. Neither is looked at. Only module-level code is: a function's globals may be
set before it runs.

A name counts as bound when any code of the module binds it in any scope (the test is
deliberately blunt: a local of the same name elsewhere is enough), when it is a builtin, a
dunder, or one of the names IPython gives a notebook's namespace. A module that may bind names
unseen (``from m import *``, ``globals()``, ``exec``, ``setattr``, IPython's ``%run``) has no
such statements.
"""

from __future__ import annotations

import ast
import builtins
import re
import weakref
from collections.abc import Sequence

from .unbindable import star_imported

# Builtins of later Pythons than the one running the check.
_LATER_BUILTINS = frozenset({"PythonFinalizationError", "_IncompleteInputError"})
_BUILTINS = frozenset(dir(builtins)) | _LATER_BUILTINS
# Names IPython defines in a notebook's namespace: its helpers and its input and output
# history (``_``, ``__``, ``_i3``, ``_3``).
_IPYTHON_NAMES = frozenset({"display", "get_ipython", "In", "Out", "exit", "quit"})
_IPYTHON_HISTORY = re.compile(r"_{1,3}|_i{1,3}|_i?\d+|_[iod]h")
# Modules through which code binds a global of this module by attribute.
_NAMESPACE_MODULES = frozenset({"builtins", "__builtin__", "__main__"})
# Per module (a notebook's): the lines (first, last) of the cells the saved session did not run.
_not_run: weakref.WeakKeyDictionary[ast.Module, tuple[tuple[int, int], ...]] = (
    weakref.WeakKeyDictionary()
)
# Calls and attributes through which code binds a global without a statement that shows it:
# ``globals()["f"] = g``, ``exec(...)``, ``sys.modules[__name__].f = g``, a frame's globals.
_NAMESPACE_CALLS = frozenset({"globals", "vars", "locals", "exec", "eval", "__import__"})
_NAMESPACE_ATTRIBUTES = frozenset({"__dict__", "modules", "f_globals", "f_locals", "__globals__"})

_bound: weakref.WeakKeyDictionary[ast.Module, frozenset[str] | None] = weakref.WeakKeyDictionary()


def note_lines_not_run(tree: ast.Module, lines: Sequence[tuple[int, int]]) -> None:
    """Record which lines of the notebook's module ``tree`` lie in cells its saved session did
    not run; only their statements are looked at."""
    if lines:
        _not_run[tree] = tuple(lines)


def raises_name_error(tree: ast.Module, statement: ast.stmt) -> ast.expr | None:
    """The part of the module-level ``statement``, in a notebook cell the saved session did
    not run, that always runs when the statement does and reads a name the notebook never
    binds (the ``for`` statement's iterable, an assignment's value), else None."""
    if not any(first <= statement.lineno <= last for first, last in _not_run.get(tree, ())):
        return None
    bound = _bound_names(tree)
    if bound is None:
        return None
    for part in _always_evaluated(statement):
        for name in _names_read_always(part):
            if _unbound(name.id, bound):
                return part
    return None


def _unbound(name: str, bound: frozenset[str]) -> bool:
    return not (
        name in bound
        or name in _BUILTINS
        or name in _IPYTHON_NAMES
        or (name.startswith("__") and name.endswith("__"))
        or _IPYTHON_HISTORY.fullmatch(name) is not None
    )


def _bound_names(tree: ast.Module) -> frozenset[str] | None:
    """Every name any code of the module binds; None when it may bind names unseen."""
    if tree in _bound:
        return _bound[tree]
    found: frozenset[str] | None = None
    if not star_imported(tree):
        names: set[str] = set()
        unseen = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                if not isinstance(node.ctx, ast.Load):
                    names.add(node.id)
                unseen |= node.id in _NAMESPACE_CALLS
            elif isinstance(node, ast.Attribute):
                unseen |= node.attr in _NAMESPACE_ATTRIBUTES
            elif isinstance(node, ast.Call) and _sets_attribute_of_a_module(node):
                unseen = True
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    names.add(alias.asname or alias.name.split(".")[0])
                    unseen |= alias.name.split(".")[0] in _NAMESPACE_MODULES
                unseen |= isinstance(node, ast.ImportFrom) and node.module in _NAMESPACE_MODULES
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                names.update(node.names)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                names.add(node.name)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                names.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                names.add(node.rest)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
        if not unseen:
            found = frozenset(names)
    _bound[tree] = found
    return found


def _sets_attribute_of_a_module(call: ast.Call) -> bool:
    """``setattr(obj, name, value)`` on anything but ``self``: it may be this module."""
    return (
        isinstance(call.func, ast.Name)
        and call.func.id == "setattr"
        and not (call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == "self")
    )


def _always_evaluated(statement: ast.stmt) -> list[ast.expr]:
    """The expressions Python evaluates whenever the statement runs: a simple statement's
    whole value, a compound statement's head. Not a ``def`` or ``class`` (their decorators
    and defaults would do, but a ``def`` is rarely the broken line), nor annotations (not
    evaluated under ``from __future__ import annotations``)."""
    if isinstance(statement, ast.Expr):
        return [statement.value]
    if isinstance(statement, ast.Assign):
        return [statement.value, *statement.targets]
    if isinstance(statement, ast.AugAssign):
        return [statement.value, statement.target]
    if isinstance(statement, ast.AnnAssign):
        return [statement.value, statement.target] if statement.value is not None else []
    if isinstance(statement, (ast.If, ast.While)):
        return [statement.test]
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        return [statement.iter]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in statement.items[:1]]
    if isinstance(statement, ast.Assert):
        return [statement.test]
    return []


def _names_read_always(expression: ast.expr) -> list[ast.Name]:
    """The names the expression reads whenever it is evaluated in full: not in a lambda or a
    comprehension, nor in what a short circuit, a conditional expression or a chained
    comparison may skip."""
    found: list[ast.Name] = []
    pending: list[ast.AST] = [expression]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                found.append(node)
        elif isinstance(node, ast.BoolOp):
            pending.append(node.values[0])
        elif isinstance(node, ast.IfExp):
            pending.append(node.test)
        elif isinstance(node, ast.Compare):
            pending.extend((node.left, node.comparators[0]))
        elif not isinstance(
            node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
        ):
            pending.extend(ast.iter_child_nodes(node))
    return found
