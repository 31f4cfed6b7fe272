"""What a module of the project defines, and what it re-exports, at its top level.

Packages hand their classes on: ``from jaxmao import optimizers`` names the module
``jaxmao.nn.optimizers`` because ``jaxmao/__init__.py`` says ``from jaxmao.nn import
optimizers``; ``from pkg import Trainer`` names the class ``pkg.trainer.Trainer`` through
``from .trainer import Trainer``. Following those imports finds where a class is defined, so
that what its methods read can be looked up.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .parsed import parsed_tree


@dataclass(frozen=True)
class Exports:
    """A module's top-level classes and functions, and the names it imports from elsewhere."""

    classes: frozenset[str] = frozenset()
    # local name -> (module, name there); ``import a.b as c`` gives c -> ("a.b", "").
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)
    functions: frozenset[str] = frozenset()
    # The modules it imports everything public from (``from .ops import *``), in order.
    starred: tuple[str, ...] = ()


def module_exports(text: str, module: str, is_package: bool) -> Exports:
    """The exports of the module ``module`` (dotted), whose source is ``text``; ``is_package``
    for an ``__init__.py``, whose relative imports start in the package itself."""
    tree = parsed_tree(text)
    if tree is None:
        return Exports()
    package = module if is_package else module.rpartition(".")[0]
    classes: set[str] = set()
    functions: set[str] = set()
    starred: list[str] = []
    imported: dict[str, tuple[str, str]] = {}
    for statement in tree.body:
        if isinstance(statement, ast.ClassDef):
            classes.add(statement.name)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(statement.name)
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    imported[alias.asname] = (alias.name, "")
        elif isinstance(statement, ast.ImportFrom):
            source = _absolute(statement.module or "", statement.level, package)
            for alias in statement.names:
                if alias.name != "*":
                    imported[alias.asname or alias.name] = (source, alias.name)
                else:
                    starred.append(source)
    return Exports(frozenset(classes), imported, frozenset(functions), tuple(starred))


def _absolute(module: str, level: int, package: str) -> str:
    """``pkg.model`` for ``from .model import`` in the package ``pkg``."""
    if not level:
        return module
    parts = package.split(".") if package else []
    parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
    return ".".join([*parts, module] if module else parts)
