"""The project as the unit: callers of a module's entry points in the project's other modules.

A stale path that only code outside the module can take (an API hazard, see ``timing``) is one
the project itself may take: a training script in another module calls the compiled function,
the setter, and the compiled function again; a notebook that star-imports the training module
does it in its cells. ``ProjectIndex`` answers, for one module's hazard, whether another file of
the project runs its entry points in a stale order, and gives that path as the witness. It
also answers what a method of a class another module defines reads of ``self``
(``model.forward(x, params)`` on ``model = Force()`` imported from ``pkg.force``), so that a
change of an attribute the method never reads is no change.

Limits, first: calls are resolved through imports (``import pkg.train as t``, ``from pkg.train
import step``, ``from pkg.train import *``, relative imports) and through local names bound to
an object of an imported class in the same function or module code (``t = Trainer();
t.set_lr(0.1)``); objects handed between functions are not followed, and objects are not told
apart (any instance of the class counts). A file is read only when its text names an entry
point, and parsed once per content.
"""

from __future__ import annotations

import ast
import collections
import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..diagnostics import Role, WitnessStep
from .exports import Exports, module_exports
from .facts.model import path_element, paths_overlap
from .facts.mutating import MUTATING_METHODS_RETURNING_NONE, MUTATING_METHODS_RETURNING_VALUE
from .names import assigned_targets, dotted_name
from .parsed import parsed_tree
from .unread import text_rewrites_functions

if TYPE_CHECKING:
    from .facts.model import Scope
    from .facts.queries import Facts
    from .static_arguments import StaticParameters
    from .timing import StalePath

# Files a project's walk never enters (as ruff's default exclusions).
_SKIPPED = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "__pycache__", "build", "dist", "node_modules",
     ".ipynb_checkpoints", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox",
     "site-packages"}
)  # fmt: skip
# Folders of installed packages, which are no project.
_INSTALLED = frozenset({"site-packages", "dist-packages"})
# What marks a project's root folder.
_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
# How many re-exports a class is followed through (``pkg`` -> ``pkg.nn`` -> ``pkg.nn.optim``).
_MOST_HOPS = 4
_T = TypeVar("_T")
# Methods that change their object in place (``update``, ``append``, ``pop``).
_MUTATING = MUTATING_METHODS_RETURNING_NONE | MUTATING_METHODS_RETURNING_VALUE
# A project larger than this is not walked: its callers are not looked for.
_MOST_FILES = 20_000
# ``def name`` at a module's top level.
_TOP_LEVEL_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)", re.M)


class _Mentions:
    """The names a file's code writes, asked name by name and remembered: a name written
    there as part of a longer one counts too, which only lets a question read the file."""

    __slots__ = ("code", "known")

    def __init__(self, code: str) -> None:
        self.code = code
        self.known: dict[str, bool] = {}

    def __contains__(self, name: str) -> bool:
        found = self.known.get(name)
        if found is None:
            found = self.known[name] = name in self.code
        return found

    def isdisjoint(self, names: Iterable[str]) -> bool:
        return not any(name in self for name in names)


@dataclass(frozen=True)
class Call:
    """A call, in some driver of a file, of a function or method of a project module."""

    driver: str  # "" for module code, else the function's qualified name
    line: int
    column: int
    loops: tuple[int, ...]  # first lines of the loops around it in its driver
    module: str  # the dotted module name the callee is imported from
    name: str  # its qualified name there: ``set_lr``, ``Trainer.set_lr``
    # What happens there: a call; an attribute stored (``trainer.lr = 0.5``: ``Trainer.lr``;
    # ``config.LR = 0.5``: ``LR`` of the module ``config``); a local name bound (``t =
    # Trainer()``, module and name empty), after which ``t`` holds another object; or a
    # compiled function's cache cleared (``clear``), after which it traces anew.
    kind: str = "call"
    receiver: str | None = None  # the local name called or stored through (``t``)
    steady: bool = False  # a store of a literal, the same value every time it runs
    literal: str | None = None  # that literal, as written (``0.5``, ``-1``, ``'eval'``)
    # A call of a function that stores the attribute (``global LR`` in ``config.set_lr``).
    storing_call: bool = False
    # What a call passes, by place (``position 0``, ``keyword phase``): a constant written
    # there, as its type's name and value, or ``_UNKNOWN``; None when it spreads ``*args``.
    arguments: tuple[tuple[str, object], ...] | None = ()
    # The step, in order, of a function of another file this call runs (``evaluate()``
    # storing a setting, then running the compiled function): 0 for the call itself.
    step: int = 0
    # For a store into an item of an object, the item's constant key as a path step
    # (``["lr"]``); None when computed.
    key: str | None = None


@dataclass(frozen=True)
class _Stored:
    """What a store witness looks for: calls of the entry points ``callers`` of the file
    ``module`` (known by ``names``), and stores of the attribute ``stored`` of the file
    ``home``, directly or through its module's ``setters``."""

    module: Path
    names: frozenset[str]
    callers: tuple[str, ...]
    home: Path
    stored: str
    setters: frozenset[str]


@dataclass
class _Walk:
    """What one file imports, and the calls it makes in each driver, in order."""

    package: str  # the file's package, for relative imports
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> module
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (module, name)
    starred: list[str] = field(default_factory=list)  # modules imported with ``*``
    bound: set[str] = field(default_factory=set)  # names the file binds itself, anywhere
    calls: list[Call] = field(default_factory=list)
    # The file's own module-level functions, each defined once (``linear_anneal``), called as
    # functions of its own module (``module``).
    module: str = ""
    own: set[str] = field(default_factory=set)


def file_calls(tree: ast.Module, module_name: str) -> list[Call]:
    """Every call of an imported function or method in the file's drivers, in order."""
    package = module_name.rpartition(".")[0]
    walk = _Walk(package, module=module_name)
    defined = collections.Counter(
        s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            _record_import(walk, node)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            walk.bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            walk.bound.add(node.name)
            if not isinstance(node, ast.ClassDef):
                functions.append(node)
    walk.own = {
        name
        for name, count in defined.items()
        if count == 1 and name not in walk.imported and module_name
    }
    _walk_driver(walk, "", tree.body, (), {})
    for function in functions:
        _walk_driver(walk, function.name, function.body, (), {})
    return walk.calls


def _record_import(walk: _Walk, node: ast.Import | ast.ImportFrom) -> None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                walk.aliases[alias.asname] = alias.name
            else:
                walk.aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
                walk.aliases[alias.name] = alias.name
        return
    module = node.module or ""
    if node.level:
        base = walk.package.split(".") if walk.package else []
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        module = ".".join([*base, module] if module else base)
    for alias in node.names:
        if alias.name == "*":
            walk.starred.append(module)
        else:
            walk.imported[alias.asname or alias.name] = (module, alias.name)
            # ``from pkg import train`` may import a module.
            walk.aliases.setdefault(alias.asname or alias.name, f"{module}.{alias.name}")


def _walk_driver(
    walk: _Walk,
    driver: str,
    body: list[ast.stmt],
    loops: tuple[int, ...],
    instances: dict[str, tuple[str, str]],
) -> None:
    """The calls of one driver's straight-line code, nested functions and classes left out;
    ``instances`` maps local names to the imported class whose object they hold."""
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        inner = loops
        if isinstance(statement, (ast.For, ast.AsyncFor, ast.While)):
            inner = (*loops, statement.lineno)
        for node in _own_nodes(statement):
            if isinstance(node, ast.Call):
                for module, name in _targets(walk, node.func, instances):
                    walk.calls.append(
                        Call(driver, node.lineno, node.col_offset, inner, module, name,
                             receiver=_receiver(node.func), arguments=_arguments(node))
                    )  # fmt: skip
        for item in _stored_items(statement):
            held = _held_object(walk, item.value)
            if held is not None:
                walk.calls.append(
                    Call(driver, statement.lineno, statement.col_offset, inner,
                         held, "[]", kind="store", receiver=dotted_name(item.value),
                         steady=_literal_store(statement) is not None,
                         literal=_literal_store(statement), key=path_element(item))
                )  # fmt: skip
        for target in _stored_attributes(statement):
            stored = _stored(walk, target, instances)
            if stored is not None:
                module, name = stored
                walk.calls.append(
                    Call(driver, statement.lineno, statement.col_offset, inner, module, name,
                         kind="store", receiver=dotted_name(target.value),
                         steady=_literal_store(statement) is not None,
                         literal=_literal_store(statement))
                )  # fmt: skip
        if isinstance(statement, ast.Assign):
            made = (
                _targets(walk, statement.value.func, instances)
                if isinstance(statement.value, ast.Call)
                else []
            )
            for bound in statement.targets:
                if not isinstance(bound, ast.Name):
                    continue
                walk.calls.append(
                    Call(driver, statement.lineno, statement.col_offset, inner, "", "",
                         kind="bind", receiver=bound.id)
                )  # fmt: skip
                if made:
                    instances[bound.id] = made[0]
                else:
                    instances.pop(bound.id, None)  # no longer an object of the class
        for block in ("body", "orelse", "finalbody"):
            children = getattr(statement, block, None)
            if isinstance(children, list) and children and isinstance(children[0], ast.stmt):
                _walk_driver(walk, driver, children, inner, instances)
        for handler in getattr(statement, "handlers", []):
            _walk_driver(walk, driver, handler.body, inner, instances)


def _stored_attributes(statement: ast.stmt) -> list[ast.Attribute]:
    """The ``name.attr`` targets the statement stores (``t.lr = 0.5``, ``t.lr *= 0.9``)."""
    targets: list[ast.expr]
    if isinstance(statement, ast.Assign):
        targets = [
            t
            for target in statement.targets
            for t in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])
        ]
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)) and statement.value is not None:
        targets = [statement.target]
    else:
        return []
    # ``physsim.constants.G = g`` too: an attribute of a module named by its dotted path.
    return [t for t in targets if isinstance(t, ast.Attribute) and dotted_name(t.value) is not None]


def _touches(store: Call, paths: list[tuple[str, ...]] | None) -> bool:
    """Whether a store into an item (``CONFIG["run_name"] = n``) may change what the trace
    reads of the object (``paths``, below it: ``["lr"]``); unknown paths, or a computed key,
    may."""
    if paths is None or store.key is None:
        return True
    return any(paths_overlap((store.key,), path) for path in paths)


def _stored_items(statement: ast.stmt) -> list[ast.Subscript]:
    """The items the statement stores (``table["lr"] = 0.5``, ``cfg.table[k] += 1``)."""
    return [
        target
        for target in assigned_targets(statement)
        if isinstance(target, ast.Subscript) and isinstance(target.value, (ast.Name, ast.Attribute))
    ]


def _held_object(walk: _Walk, base: ast.expr) -> str | None:
    """``registry.HPARAMS`` for ``HPARAMS`` imported from ``registry``, or for
    ``registry.HPARAMS`` after ``import registry``, or for ``HPARAMS`` that the file never
    binds after its one ``from registry import *``."""
    if isinstance(base, ast.Name) and base.id in walk.imported:
        module, name = walk.imported[base.id]
        return f"{module}.{name}"
    if isinstance(base, ast.Name) and len(walk.starred) == 1 and base.id not in walk.bound:
        return None if base.id.startswith("_") else f"{walk.starred[0]}.{base.id}"
    if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
        alias = walk.aliases.get(base.value.id)
        return None if alias is None else f"{alias}.{base.attr}"
    return None


def _stored(
    walk: _Walk, target: ast.Attribute, instances: dict[str, tuple[str, str]]
) -> tuple[str, str] | None:
    """The (module, qualified name) an attribute store changes: an attribute of an object of
    an imported class (``Trainer.lr``), or of an imported module (``LR`` of ``config``)."""
    base = dotted_name(target.value)
    if base is None:
        return None
    if "." in base:  # ``physsim.constants.G``: only a module's dotted name
        return (walk.aliases[base], target.attr) if base in walk.aliases else None
    if base in instances:
        module, cls = instances[base]
        return module, f"{cls}.{target.attr}"
    if base in walk.aliases and base not in walk.imported:
        return walk.aliases[base], target.attr
    if base in walk.imported:
        # ``from pkg import config``: a module of the package, when one is (``_module_file``).
        module, name = walk.imported[base]
        return f"{module}.{name}", target.attr
    return None


def _literal_store(statement: ast.stmt) -> str | None:
    """``t.lr = 0.5``: a store that sets one value every time (not ``t.lr *= 0.5``), as
    written."""
    value = getattr(statement, "value", None)
    if isinstance(statement, ast.AugAssign) or value is None:
        return None
    constant = value.operand if isinstance(value, ast.UnaryOp) else value
    return ast.unparse(value) if isinstance(constant, ast.Constant) else None


# An argument that is no constant written at the call.
_UNKNOWN = ("", None)


def _arguments(call: ast.Call) -> tuple[tuple[str, object], ...] | None:
    """What the call writes at each place: a constant (``phase="eval"``), else unknown."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    places = [(f"position {i}", a) for i, a in enumerate(call.args)]
    places += [(f"keyword {k.arg}", k.value) for k in call.keywords]
    return tuple(
        (place, (type(v.value).__name__, v.value) if isinstance(v, ast.Constant) else _UNKNOWN)
        for place, v in places
    )


def _static_key(call: Call, static: StaticParameters) -> tuple[tuple[str, object], ...] | None:
    """What the call gives the static parameters, as JAX keys its trace on them; None when
    the code does not say (an argument that is not a constant, or spread)."""
    if call.arguments is None:
        return None
    given = dict(call.arguments)
    key: list[tuple[str, object]] = []
    for parameter in static.parameters:
        position = f"position {parameter.index}"
        keyword = f"keyword {parameter.name}"
        if parameter.index is not None and position in given:
            place, keyed = position, parameter.by_position
        elif keyword in given:
            place, keyed = keyword, parameter.by_keyword
        else:
            key.append(("default", None))  # JAX keys the call without it
            continue
        if not keyed or given[place] == _UNKNOWN:
            return None
        key.append((place, given[place]))
    return tuple(key)


def _apart(first: Call, second: Call, static: dict[str, StaticParameters]) -> bool:
    """The two calls of one compiled function give its static parameters different
    constants: they never share a trace (``forward(x, phase="train")``, then ``"eval"``)."""
    parameters = static.get(first.name)
    if parameters is None or first.name != second.name or first.module != second.module:
        return False
    keys = _static_key(first, parameters), _static_key(second, parameters)
    if keys[0] is None or keys[1] is None:
        return False
    # One argument spelt both ways (by keyword, then by position) is left undecided, as
    # ``static_arguments`` leaves it.
    same_places = all(a[0] == b[0] for a, b in zip(keys[0], keys[1], strict=True))
    return same_places and keys[0] != keys[1]


def _receiver(func: ast.expr) -> str | None:
    """The local name a method is called on (``t`` in ``t.fit()``)."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id
    return None


def _own_nodes(statement: ast.stmt) -> Iterator[ast.AST]:
    """The expressions of a statement itself, not of the statements nested in it."""
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        for name, value in ast.iter_fields(node):
            if name in ("body", "orelse", "finalbody", "handlers"):
                continue
            children = value if isinstance(value, list) else [value]
            for child in children:
                if isinstance(child, ast.AST) and not isinstance(child, (ast.stmt, ast.Lambda)):
                    yield child
                    pending.append(child)


def _targets(
    walk: _Walk, func: ast.expr, instances: dict[str, tuple[str, str]]
) -> list[tuple[str, str]]:
    """The (module, qualified name) a callee expression may name."""
    if isinstance(func, ast.Name):
        if func.id in walk.imported:
            return [walk.imported[func.id]]
        if func.id in walk.own:
            return [(walk.module, func.id)]
        return [(module, func.id) for module in walk.starred]
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        base = func.value.id
        if base in instances:
            module, cls = instances[base]
            return [(module, f"{cls}.{func.attr}")]
        if base in walk.imported:
            module, cls = walk.imported[base]
            return [(module, f"{cls}.{func.attr}"), (f"{module}.{cls}", func.attr)]
        if base in walk.aliases:
            return [(walk.aliases[base], func.attr)]
        return [(module, f"{base}.{func.attr}") for module in walk.starred]
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute):
        dotted = dotted_name(func.value)
        if dotted is not None and dotted.split(".")[0] in walk.aliases:
            head, _, rest = dotted.partition(".")
            module = walk.aliases[head] + (f".{rest}" if rest else "")
            return [(module, func.attr)]
    return []


@functools.lru_cache(maxsize=16384)
def module_names(path: Path, root: Path) -> frozenset[str]:
    """The dotted names the file may be imported by: every tail of its path under the root
    (``src/pkg/train.py``: ``src.pkg.train``, ``pkg.train``, ``train``); a root that is a
    package itself is named too (``jax/_src/api.py``: ``jax._src.api``)."""
    base = root.resolve()
    if (base / "__init__.py").exists():
        base = base.parent
    relative = path.resolve().relative_to(base).with_suffix("")
    parts = [p for p in relative.parts if p]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return frozenset(".".join(parts[i:]) for i in range(len(parts)))


def project_root(path: Path) -> Path:
    """The nearest folder above the file holding a project marker; else the folder holding the
    outermost package the file is in, when it holds scripts or notebooks beside it, or the
    package itself (an installed package has no marker); else the folder above the file's,
    when a script or notebook there imports the file's folder as a namespace package; else the
    file's folder."""
    return _root_of_folder(path.resolve().parent)


@functools.lru_cache(maxsize=4096)
def _root_of_folder(folder: Path) -> Path:
    # Asked once per folder: a run over a project asks for every file of it.
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in _ROOT_MARKERS):
            return candidate
    top = folder
    while (top / "__init__.py").exists() and (top.parent / "__init__.py").exists():
        top = top.parent
    # ``physsim/`` beside the scripts or notebooks that import it (``main.py``): the folder
    # holding both is the project, unless it holds installed packages.
    beside = top.parent
    if beside.name in _INSTALLED or beside == top:
        return top
    entries = [path for path in _entries(beside) if path.suffix in (".py", ".ipynb")]
    if (top / "__init__.py").exists() and entries:
        return beside
    # ``trainers/`` without ``__init__.py`` (a namespace package) beside a script that
    # imports it (``from trainers.sgd import step`` in ``main.py``, or in a sibling folder's
    # ``scripts/train.py``).
    if not entries:
        return top
    imports = re.compile(rf"^[ \t]*(?:from|import)[ \t]+{re.escape(top.name)}\b", re.M)
    siblings = [
        path
        for folder in _entries(beside)
        if folder != top and folder.is_dir() and folder.name not in _SKIPPED
        for path in _entries(folder)
        if path.suffix == ".py"
    ]
    scripts = [*entries, *siblings][:_MOST_SCRIPTS_BESIDE]
    if any(_imports_folder(path, imports) for path in scripts):
        return beside
    return top


# The longest module a re-exported function is followed into (see ``ProjectIndex._small``).
_MOST_CHARACTERS_FOLLOWED = 60_000

# How many scripts beside a folder are read to see whether one imports it.
_MOST_SCRIPTS_BESIDE = 50


def _imports_folder(path: Path, imports: re.Pattern[str]) -> bool:
    try:
        if path.stat().st_size > 1_000_000:
            return False
        return imports.search(path.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False


def _entries(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


class ProjectIndex:
    """The source files of one project, read and parsed on demand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: list[Path] | None = None
        self._texts: dict[Path, tuple[tuple[int, int], str]] = {}
        self._calls: dict[tuple[Path, int], tuple[list[Call], _Lines]] = {}
        self._reads: dict[tuple[Path, int, str, str], list[tuple[str, ...]] | None] = {}
        self._answers: dict[tuple[Path, int, str, str], object] = {}
        self._by_module: dict[str, list[Path]] | None = None
        self._exported: dict[tuple[Path, int, str], Exports] = {}
        self._functions: dict[tuple[Path, int, str], ast.FunctionDef | None] = {}
        self._fingerprint: bytes | None = None
        self._resolved: dict[Path, Path] = {}
        self._codes: dict[tuple[Path, int], str] = {}
        self._named: dict[Path, tuple[int, _Mentions]] = {}
        self._with_reals: list[tuple[Path, Path]] | None = None
        self._subclasses_found: dict[tuple[Path, str], list[tuple[Path, _ClassDefined]]] = {}
        # Files whose state was looked at since the last ``refresh``: each question walks
        # every file, and one look a file is enough for one answer.
        self._looked: set[Path] = set()

    def files(self) -> list[Path]:
        if self._files is None:
            found: list[Path] = []
            for folder, subfolders, names in os.walk(self.root):
                subfolders[:] = sorted(d for d in subfolders if d not in _SKIPPED)
                found.extend(
                    path
                    for path in (
                        Path(folder) / n for n in sorted(names) if n.endswith((".py", ".ipynb"))
                    )
                    if _readable(path)
                )
                if len(found) > _MOST_FILES:
                    found = []
                    break
            self._files = found
        return self._files

    def fingerprint(self) -> bytes:
        """What the project's files are (names, sizes, times) as the index first saw them: a
        module's findings may depend on any of them. A run starts with new indexes
        (``forget_projects``), so each run sees the files as they are then."""
        if self._fingerprint is None:
            self._fingerprint = self._stat_all()
        return self._fingerprint

    def _stat_all(self) -> bytes:
        parts = []
        for path in self.files():
            try:
                stat = path.stat()
            except OSError:
                continue
            parts.append(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}")
        return "\n".join(parts).encode()

    def refresh(self) -> None:
        """Look at the files again at their next use: an editor's process lives long, and the
        files it did not hand over may have been saved since."""
        self._looked.clear()
        self._subclasses_found.clear()
        module_names.cache_clear()  # a package's ``__init__.py`` may have come or gone

    def _text(self, path: Path) -> str:
        """The file's text, read again once it changed since the last ``refresh``."""
        known = self._texts.get(path)
        if known is not None and path in self._looked:
            return known[1]
        self._looked.add(path)
        try:
            stat = path.stat()
            state = (stat.st_size, stat.st_mtime_ns)
        except OSError:
            return ""
        known = self._texts.get(path)
        if known is None or known[0] != state:
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            known = self._texts[path] = (state, text)
        return known[1]

    def _file_calls(self, path: Path) -> tuple[list[Call], _Lines]:
        text = self._text(path)
        key = (path, hash(text))
        if key not in self._calls:
            lines = _Lines(path, self.root, None)
            if path.suffix == ".ipynb":
                text, lines = _notebook_module(path, text, self.root)
            tree = parsed_tree(text) or ast.Module(body=[], type_ignores=[])
            name = max(module_names(path, self.root), key=len, default="")
            self._calls[key] = file_calls(tree, name), lines
        return self._calls[key]

    def method_reads(
        self, module: Path, qualified: str, method: str
    ) -> list[tuple[str, ...]] | None:
        """The attribute paths of ``self`` that calling ``method`` on an object of the class
        ``qualified`` (``pkg.model.Force``, or ``.model.Force`` relative to ``module``) reads,
        when the class is defined in a module of the project; None when it is not, or when
        the method may read anything (``receiver.paths_read_by``)."""
        home = self._home(module, qualified)
        if home is None:
            return None
        path, class_name = home
        text = self._text(path)
        key = (path, hash(text), class_name, method)
        if key not in self._reads:
            self._reads[key] = _class_method_reads(text, class_name, method)
        return self._reads[key]

    def plain_attribute(self, module: Path, qualified: str, name: str) -> bool:
        """Whether storing ``obj.name = value`` on an object of the class ``qualified`` only
        stores it, when a module of the project defines the class (``receiver.plain_attribute``);
        False when it is not the project's, or the code does not say."""
        from .receiver import plain_attribute

        found = self._class_answer(
            module, qualified, f"plain {name}", partial_query(plain_attribute, name)
        )
        return found is True

    def setter_stores(self, module: Path, qualified: str, name: str) -> list[str] | None:
        """The attributes a property's setter stores (``receiver.setter_stores``) when a
        module of the project defines the class ``qualified``; None otherwise."""
        from .receiver import setter_stores

        found = self._class_answer(
            module, qualified, f"setter {name}", partial_query(setter_stores, name)
        )
        return list(found) if isinstance(found, tuple) else None

    def attribute_aliases(self, module: Path, qualified: str, name: str) -> tuple[str, ...]:
        """The attributes that may hold what ``name`` holds (``receiver.attribute_aliases``)
        when a module of the project defines the class ``qualified``; empty otherwise."""
        from .receiver import attribute_aliases

        found = self._class_answer(
            module, qualified, f"aliases {name}", partial_query(attribute_aliases, name)
        )
        return found if isinstance(found, tuple) else ()

    def _class_answer(
        self, module: Path, qualified: str, question: str, query: Callable[[Facts, Scope], object]
    ) -> object:
        """``query``'s answer about the class ``qualified`` of the project, kept while the
        file defining it is unchanged; None when the project does not define it."""
        home = self._home(module, qualified)
        if home is None:
            return None
        path, class_name = home
        text = self._text(path)
        key = (path, hash(text), class_name, question)
        if key not in self._answers:
            found = _class_query(text, class_name, query)
            self._answers[key] = tuple(found) if isinstance(found, list) else found
        return self._answers[key]

    def _home(self, module: Path, qualified: str) -> tuple[Path, str] | None:
        module_name, _, class_name = qualified.rpartition(".")
        if module_name.startswith("."):
            module_name = _absolute(module_name, max(module_names(module, self.root), key=len))
        return self._class_home(module_name, class_name, _MOST_HOPS)

    def function_def(self, module: Path, qualified: str) -> ast.FunctionDef | None:
        """The ``def`` of the function ``qualified`` (``pkg.data.load``, or ``.data.load``
        relative to ``module``) names, when a module of the project defines it once at its
        top level, undecorated; None otherwise."""
        module_name, _, name = qualified.rpartition(".")
        if module_name.startswith("."):
            module_name = _absolute(module_name, max(module_names(module, self.root), key=len))
        path = self._module_file(module_name)
        if path is None:
            return None
        text = self._text(path)
        key = (path, hash(text), name)
        if key not in self._functions:
            self._functions[key] = _module_function(text, name)
        return self._functions[key]

    def _small(self, path: Path) -> bool:
        """Whether the module is short enough to be read for a function a package re-exports
        (the package's file, and the function's): a registry or a settings module is; a
        library's core (``jax/_src/lax/lax.py``, re-exported by ``jax.lax``) is not, and
        parsing each would cost a project-wide check more than the file's own check."""
        return len(self._text(path)) <= _MOST_CHARACTERS_FOLLOWED

    def _method_def(self, qualified_class: str, method: str) -> tuple[Path, ast.FunctionDef] | None:
        """The file and the ``def`` of the method ``method`` of the class ``qualified_class``
        (``models.MLP``, also re-exported by a package), when the class is defined once at
        its module's top level and defines the method once, undecorated or ``nn.compact``."""
        module_name, _, class_name = qualified_class.rpartition(".")
        found = self._class_home(module_name, class_name, _MOST_HOPS) if module_name else None
        if found is None:
            return None
        path, name = found
        text = self._text(path)
        key = (path, hash(text), f"{name}.{method}")
        if key not in self._functions:
            self._functions[key] = _class_method(text, name, method)
        function = self._functions[key]
        return None if function is None else (path, function)

    def helper_globals(self, module: Path, qualified: str) -> tuple[Path, tuple[str, ...]]:
        """The file of the function ``qualified`` (as ``function_def`` finds it) and the
        globals of that file it reads: names its module binds by assignment only (no ``def``,
        class or import), which the function never binds itself (``lr_at`` of
        ``utils.schedule`` reading ``_WARMUP``). Nothing for a function the project does not
        define once."""
        function = self.function_def(module, qualified)
        module_name, _, name = qualified.rpartition(".")
        if module_name.startswith("."):
            module_name = _absolute(module_name, max(module_names(module, self.root), key=len))
        package = self._module_file(module_name) if function is None else None
        if package is not None and self._small(package):
            # ``utils.get_activation``, which ``utils/__init__.py`` imports from a module.
            home = self._function_home(module_name, name, _MOST_HOPS)
            target = self._module_file(home[0]) if home is not None else None
            if home is not None and target is not None and self._small(target):
                module_name = home[0]
                function = self.function_def(module, ".".join(home))
        path = self._module_file(module_name)
        if function is None and path is None:
            # ``models.MLP.__call__``: a method of a class a module of the project defines.
            method = self._method_def(module_name, qualified.rpartition(".")[2])
            if method is not None:
                path, function = method
        if function is None or path is None:
            return Path(), ()
        text = self._text(path)
        key = (path, hash(text), qualified, "globals")
        if key not in self._answers:
            self._answers[key] = _globals_read(text, function)
        found = self._answers[key]
        return path, found if isinstance(found, tuple) else ()

    def _function_home(self, module: str, name: str, hops: int) -> tuple[str, str] | None:
        """The module and name a function that ``module`` re-exports as ``name`` has where it
        is defined, following at most ``hops`` imports (``from .integrate import simulate`` in
        ``physsim/__init__.py``); None when ``module`` does not import it."""
        path = self._module_file(module)
        if path is None or hops == 0:
            return None
        exports = self._exports(path, module)
        source = exports.imported.get(name)
        if source is None:
            # ``from .ops import *`` in ``layers/__init__.py``: the last such module that
            # defines or re-exports the name (a later star import binds it over).
            for starred in reversed(exports.starred):
                if name.startswith("_"):
                    break  # a star import leaves private names alone
                found = self._defined_in(starred, name)
                if found is None:
                    found = self._function_home(starred, name, hops - 1)
                if found is not None:
                    return found
            return None
        if not source[1]:
            return None
        return self._function_home(source[0], source[1], hops - 1) or source

    def _defined_in(self, module: str, name: str) -> tuple[str, str] | None:
        """``(module, name)`` when the project's module ``module`` defines the function or
        class ``name`` at its top level."""
        path = self._module_file(module)
        if path is None:
            return None
        exports = self._exports(path, module)
        return (module, name) if name in exports.functions | exports.classes else None

    def _class_home(self, module: str, name: str, hops: int) -> tuple[Path, str] | None:
        """The file defining the class ``name`` that ``module`` gives, and its name there,
        following the imports that re-export it (``exports``); None when it is not the
        project's, or the code does not say which file (two files by that name)."""
        path = self._module_file(module)
        if path is not None:
            exports = self._exports(path, module)
            if name in exports.classes:
                return path, name
            source = exports.imported.get(name)
            if source is None and hops and not name.startswith("_"):
                # ``from .model import *``: the last such module giving the name.
                for starred in reversed(exports.starred):
                    found = self._class_home(starred, name, hops - 1)
                    if found is not None:
                        return found
            if source is None or not source[1] or hops == 0:
                return None
            return self._class_home(source[0], source[1], hops - 1)
        parent, _, child = module.rpartition(".")
        holder = self._module_file(parent) if parent and hops else None
        if holder is None:
            return None
        # ``from pkg import optimizers`` where ``pkg/__init__.py`` imports the module.
        source = self._exports(holder, parent).imported.get(child)
        if source is None:
            return None
        inner = f"{source[0]}.{source[1]}" if source[1] else source[0]
        return self._class_home(inner, name, hops - 1)

    def module_file(self, module: Path, imported: str) -> Path | None:
        """The file of the module ``imported``, as ``module`` imports it (``.config`` relative
        to it)."""
        if imported.startswith("."):
            imported = _absolute(imported, max(module_names(module, self.root), key=len))
        return self._module_file(imported)

    def _module_file(self, module: str) -> Path | None:
        candidates = self._modules().get(module, [])
        if len(candidates) != 1 or candidates[0].suffix != ".py":
            return None
        return candidates[0]

    def _exports(self, path: Path, module: str) -> Exports:
        text = self._text(path)
        key = (path, hash(text), module)
        if key not in self._exported:
            self._exported[key] = module_exports(text, module, path.stem == "__init__")
        return self._exported[key]

    def _modules(self) -> dict[str, list[Path]]:
        """Each dotted name a file of the project may be imported by, with those files."""
        if self._by_module is None:
            self._by_module = {}
            for path in self.files():
                for name in module_names(path, self.root):
                    self._by_module.setdefault(name, []).append(path)
        return self._by_module

    def promoted(self, module: Path, path: StalePath) -> StalePath | None:
        """The hazard's path as a witness, when another file of the project takes it."""
        steps = self.witness(
            module,
            [scope.qualified_name() for scope in path.changers],
            [scope.qualified_name() for scope in path.callers],
        )
        from .timing import StalePath

        return None if steps is None else StalePath(steps)

    def witness(
        self, module: Path, changers: list[str], callers: list[str]
    ) -> tuple[WitnessStep, ...] | None:
        """A stale path through the entry points of ``module`` that another file of the
        project takes: it calls a caller, a changer, and a caller again in one driver, or a
        changer and a caller in one loop, or (a function that does both) one twice or in a
        loop."""
        if not changers or not callers:
            return None
        names = module_names(module, self.root)
        # A witness calls a changer and a caller: a text naming no one of either has none.
        changers_bare = {name.rsplit(".", 1)[-1] for name in changers}
        callers_bare = {name.rsplit(".", 1)[-1] for name in callers}
        for path in self._others(self._real(module)):
            named = self._names(path)
            if named.isdisjoint(changers_bare) or named.isdisjoint(callers_bare):
                continue
            calls, lines = self._file_calls(path)
            found = _stale_order(
                [
                    resolved
                    for c in calls
                    if c.kind == "call" and (resolved := self._call_of_module(c, names))
                ],
                set(changers),
                set(callers),
            )
            if found is not None:
                return tuple(lines.step(role, call, again) for role, call, again in found)
        return None

    def _call_of_module(self, call: Call, names: frozenset[str]) -> Call | None:
        """The call as a call of a function of the module ``names`` name, also through a
        package that re-exports it (``from layers import scaled_forward``); else None."""
        if call.module in names:
            return call
        if "." in call.name:
            return None
        home = self._function_home(call.module, call.name, _MOST_HOPS)
        if home is None or home[0] not in names:
            return None
        return replace(call, module=home[0], name=home[1])

    def store_witness(
        self,
        module: Path,
        callers: list[str],
        home: Path,
        stored: str,
        per_object: bool,
        static: dict[str, StaticParameters] | None = None,
    ) -> tuple[WitnessStep, ...] | None:
        """A stale path another file of the project takes by storing an attribute the compiled
        code of ``module`` reads: a call of an entry point (``callers``), the store, and a call
        again, in one driver, or the store and a call in one loop. ``stored``: the attribute's
        qualified name in the file ``home`` (``Trainer.lr`` of an object of a class, ``LR`` of a
        module). ``per_object``: the attribute belongs to one object, so the calls and the
        store must go through one local name that holds one object all along. ``static``:
        the static parameters of the callers that are the compiled function itself, whose
        calls given different constants there share no trace."""
        if not callers:
            return None
        names = module_names(module, self.root)
        home = self._real(home)
        bare = stored.rsplit(".", 1)[-1]
        # ``settings.enable_regularisation(0.02)``, whose ``global WEIGHT_DECAY`` binds the
        # module attribute again (the compiled code's own module times its own setters).
        setters = (
            self._global_setters(home, stored)
            if "." not in stored and home != self._real(module)
            else frozenset()
        )
        # ``agent.end_episode()`` of a subclass another file defines, whose method stores
        # ``self.epsilon``; and the base's compiled entry points called on its objects.
        subclasses = self._subclass_setters(home, stored) if per_object else []
        question = _Stored(module, names, tuple(callers), home, stored, setters)
        callers_bare = {c.rsplit(".", 1)[-1] for c in callers}
        callers_named = [*setters, *(m for sub in subclasses for m in sub.setters)]
        # ``.LR = ``, ``.LR *= ``: a store of the attribute written in the text.
        store = re.compile(rf"\.[ \t]*{re.escape(bare)}[ \t]*(?:[-+*/@%&|^]|//|\*\*|<<|>>)?=(?!=)")
        # The module is named where it is imported (``import sim``, ``from pkg import sim``).
        imported_as = home.parent.name if home.stem == "__init__" else home.stem
        candidates: list[Path] = []
        for path in self._others(self._real(module), home):
            named = self._names(path)
            # Only a text that stores the attribute (``.LR``) or calls a setter.
            setting = not named.isdisjoint(callers_named)
            if not ((bare in named and store.search(self._code(path))) or setting) or (
                not per_object and imported_as not in named and not setting
            ):
                continue
            # Its functions may store it for a file that calls them (``adjust(g)``).
            candidates.append(path)
            if named.isdisjoint(callers_bare):
                continue  # runs no entry point itself
            calls, lines = self._file_calls(path)
            relevant = self._store_events(calls, question)
            for sub in subclasses:
                relevant += sub.steps(calls, callers, partial(self._names_class, sub))
            # ``s.blend = jax.jit(s._blend)``: the object's compiled attribute made again.
            remade = [
                replace(c, kind="bind")
                for c in calls
                if c.kind == "store"
                and any(self._stores(c, self._real(module), caller) for caller in callers)
            ]
            found = _store_order(relevant + remade, per_object, static or {})
            if found is not None:
                return tuple(lines.step(role, call, again) for role, call, again in found)
        if per_object:
            return None
        return self._wrapped_store_witness(question, static, candidates)

    def _store_events(self, calls: list[Call], question: _Stored) -> list[Call]:
        """Among one file's calls, the runs of an entry point, the stores of the attribute
        (also by a call of a setter of ``home``), the names bound, and the caches cleared
        (``kernels.apply_gain.clear_cache()``, ``jax.clear_caches()``)."""
        module, names, callers, home = (
            question.module, question.names, list(question.callers), question.home
        )  # fmt: skip
        callers_bare = {c.rsplit(".", 1)[-1] for c in callers}
        return (
            [
                c
                for c in calls
                if self._runs_entry(c, module, names, callers)
                or (c.kind == "store" and self._stores(c, home, question.stored))
                or c.kind == "bind"
            ]
            + [
                replace(c, kind="store", storing_call=True)
                for c in calls
                if c.kind == "call"
                and c.name in question.setters
                and (self._is_file(c.module, home) or self._function_in(c, home))
            ]
            + [
                replace(c, kind="clear")
                for c in calls
                if c.kind == "call"
                and (
                    (c.module == "jax" and c.name == "clear_caches")
                    or (c.name == "clear_cache" and c.module.rsplit(".", 1)[-1] in callers_bare)
                )
            ]
        )

    def _wrapped_store_witness(
        self,
        question: _Stored,
        static: dict[str, StaticParameters] | None,
        storing_files: list[Path],
    ) -> tuple[WitnessStep, ...] | None:
        """The stale path a file takes through functions another file defines: ``main.py``
        calls ``train.train_epoch()``, which runs the entry point, then ``train.evaluate()``,
        which stores the attribute and runs it again. Each such function counts, at its call,
        as its own runs and stores in order. Only ``storing_files``, whose text stores the
        attribute or calls a setter, are read for the functions that store; a function that only
        runs an entry point is looked up where a file calls it."""
        module, home = question.module, question.home
        steps_by_file: dict[Path, dict[str, tuple[Call, ...]]] = {}

        def steps_in(path: Path) -> dict[str, tuple[Call, ...]]:
            if path not in steps_by_file:
                steps_by_file[path] = self._wrapping_functions(path, question)
            return steps_by_file[path]

        callers_bare = {c.rsplit(".", 1)[-1] for c in question.callers}
        storing = {
            name
            for path in storing_files
            for name, steps in steps_in(path).items()
            if any(step.kind == "store" for step in steps)
        }
        if not storing:
            return None
        for path in self._others(self._real(module)):
            if self._names(path).isdisjoint(storing):
                continue
            calls, lines = self._file_calls(path)
            events = self._store_events(calls, question)
            for call in calls:
                if call.kind != "call" or "." in call.name:
                    continue
                defined = self._module_file(call.module)
                if defined is None or self._real(defined) in (self._real(module), home):
                    continue
                if self._names(defined).isdisjoint(callers_bare) and defined not in storing_files:
                    continue  # its functions neither run an entry point nor store
                steps = steps_in(defined).get(call.name, ())
                for number, step in enumerate(steps, start=1):
                    events.append(
                        replace(call, kind=step.kind, storing_call=step.kind == "store",
                                step=number, steady=step.steady, literal=step.literal)
                    )  # fmt: skip
            found = _store_order(events, False, static or {})
            if found is not None and any(c.step for _, c, _ in found):
                return tuple(lines.step(role, call, again) for role, call, again in found)
        return None

    def _wrapping_functions(self, path: Path, question: _Stored) -> dict[str, tuple[Call, ...]]:
        """The module-level functions of the file ``path`` that run an entry point or store
        the attribute the question is about, with those steps in the order written."""
        if path.suffix != ".py":
            return {}
        top_level = set(_TOP_LEVEL_DEF.findall(self._code(path)))
        calls, _ = self._file_calls(path)
        events = self._store_events(calls, question)
        by_function: dict[str, list[Call]] = {}
        for event in sorted(events, key=_at):
            if event.kind != "bind" and event.driver in top_level:
                by_function.setdefault(event.driver, []).append(event)
        return {function: tuple(steps) for function, steps in by_function.items()}

    def subclass_stores(self, module: Path, stored: str) -> list[MethodStore]:
        """The methods that subclasses other files of the project define of the class
        ``stored`` names in ``module`` (``BaseTrainer.clip``), and that store the attribute on
        ``self`` outside construction (``AnnealedClipTrainer.end_epoch``), each with the line
        of its first store."""
        found: list[MethodStore] = []
        for subclass in self._subclass_setters(self._real(module), stored):
            if not self._made(subclass):
                continue  # no object of it runs the override
            found.extend(
                MethodStore(method, subclass.name, subclass.lines.shown(), line)
                for method, line in subclass.stores
            )
        return found

    def _names_class(self, subclass: _Subclass, module: str, name: str) -> bool:
        """Whether ``name`` of ``module`` is the subclass (also through a package)."""
        return self._is_class(module, name, self._real(subclass.lines.path), subclass.name)

    def _classes_defined(self, path: Path) -> tuple[_ClassDefined, ...]:
        """The file's top-level classes with bases: one parse a file, whatever base or
        attribute is asked about."""
        text = self._text(path)
        key = (path, hash(text), "", "subclasses")
        if key not in self._answers:
            module = max(module_names(path, self.root), key=len, default="")
            self._answers[key] = _subclasses(text, module, path)
        answer = self._answers[key]
        return answer if isinstance(answer, tuple) else ()

    def _inherits(self, module: str, owner: str, method: str, home: Path, defined: str) -> bool:
        """Whether ``owner.method`` (a class ``module`` names) is the method ``method`` of the
        class ``defined`` of the file ``home``: the class itself, or a subclass of it that
        does not define the method again (``AnnealedClipTrainer.fit``, inherited from
        ``BaseTrainer``)."""
        found = self._class_home(module, owner, _MOST_HOPS)
        if found is None:
            return False
        path, name = found
        if self._real(path) == home:
            return name == defined
        for cls in self._classes_defined(path):
            if cls.name != name:
                continue
            if method == "__init__" or any(m == method for m, _ in cls.stores):
                return False  # its own method runs, not the base's
            return any(self._is_class(m, n, home, defined) for m, n in cls.bases)
        return False

    def _made(self, subclass: _Subclass) -> bool:
        return self._makes_objects_of(subclass.lines.path, subclass.name)

    def _makes_objects_of(self, path: Path, class_name: str) -> bool:
        """Whether the project makes an object of the class the file defines: a call of it in
        its own file, or in another file that imports it."""
        own = re.compile(rf"(?<![\w.])(?<!class ){re.escape(class_name)}[ \t]*\(")
        if own.search(self._code(path)):
            return True
        real = self._real(path)
        for other in self._others(real):
            if class_name not in self._names(other):
                continue
            calls, _ = self._file_calls(other)
            for call in calls:
                if call.kind != "call" or call.name != class_name:
                    continue
                # Also through a package that imports it (``from trainers import Annealed``).
                found = self._class_home(call.module, call.name, _MOST_HOPS)
                if found is not None and self._real(found[0]) == real:
                    return True
        return False

    def handed_stores(
        self, module: Path, method: str, position: int, attribute: str
    ) -> list[MethodStore]:
        """The methods named ``method`` of classes other files of the project define, whose
        parameter at ``position`` (after their own ``self``) is stored into as ``<param>.
        <attribute>``: ``LRDecay.on_epoch_end(self, trainer, epoch)`` storing ``trainer.lr``,
        for ``cb.on_epoch_end(self, epoch)`` in a method of the module that hands its own
        object on. Only classes the project makes objects of."""
        found: list[MethodStore] = []
        for path in self._others(self._real(module)):
            if path.suffix != ".py":
                continue
            named = self._names(path)
            if method not in named or attribute not in named:
                continue
            text = self._text(path)
            key = (path, hash(text), "", "parameter stores")
            if key not in self._answers:
                self._answers[key] = _parameter_stores(text)
            answer = self._answers[key]
            if not isinstance(answer, tuple):
                continue
            for class_name, stores in answer:
                if class_name is None:
                    continue
                for name, index, stored, line in stores:
                    if (name, index, stored) != (method, position, attribute):
                        continue
                    if self._makes_objects_of(path, class_name):
                        shown = _Lines(path, self.root, None).shown()
                        found.append(MethodStore(method, class_name, shown, line))
        return found

    def _subclass_setters(self, home: Path, stored: str) -> list[_Subclass]:
        """The subclasses other files of the project define of the class ``stored`` names
        (``BaseAgent.epsilon``) in ``home``, with their methods that store the attribute on
        ``self`` outside construction (``ExploringAgent.end_episode``)."""
        base, _, attribute = stored.rpartition(".")
        if not base or "." in base:
            return []
        found: list[_Subclass] = []
        for path, subclass in self._subclasses_of(home, base):
            lines = tuple(
                (method, stored[attribute])
                for method, stored in subclass.stores
                if attribute in stored
            )
            if lines:
                found.append(
                    _Subclass(
                        module_names(path, self.root), subclass.name,
                        frozenset(m for m, _ in lines), _Lines(path, self.root, None), lines,
                    )
                )  # fmt: skip
        return found

    def _subclasses_of(self, home: Path, base: str) -> list[tuple[Path, _ClassDefined]]:
        """The classes other files of the project define with the class ``base`` of ``home``
        among their bases: found once between two ``refresh``es, whatever attribute is asked
        about."""
        key = (home, base)
        if key not in self._subclasses_found:
            self._subclasses_found[key] = [
                (path, subclass)
                for path in self._others(home)
                if path.suffix == ".py" and base in self._names(path)
                for subclass in self._classes_defined(path)
                if any(self._is_class(m, n, home, base) for m, n in subclass.bases)
            ]
        return self._subclasses_found[key]

    def object_witness(
        self,
        module: Path,
        callers: list[str],
        home: Path,
        name: str,
        static: dict[str, StaticParameters] | None = None,
        paths: list[tuple[str, ...]] | None = None,
    ) -> tuple[WitnessStep, ...] | None:
        """A stale path another file of the project takes by changing in place the object
        ``name`` that the module ``home`` defines and the compiled code of ``module`` imports
        (``from registry import HPARAMS``): a call of an entry point (``callers``), a store into
        the object there (``HPARAMS["gamma"] = 0.99``, also through ``registry.HPARAMS``) or a
        call of a function of the project that stores into it, and a call again, in one driver,
        or the change and a call in one loop."""
        if not callers:
            return None
        names = module_names(module, self.root)
        home = self._real(home)
        held = {f"{home_name}.{name}" for home_name in module_names(home, self.root)}
        mutators = self._object_mutators(home, name)
        callers_bare = {c.rsplit(".", 1)[-1] for c in callers}
        for path in self._others(self._real(module), home):
            named = self._names(path)
            if named.isdisjoint(callers_bare) or not (
                name in named or any(function in named for _, function in mutators)
            ):
                continue
            calls, lines = self._file_calls(path)
            relevant = [
                c
                for c in calls
                if self._runs_entry(c, module, names, callers)
                or (c.kind == "store" and c.module in held and _touches(c, paths))
                or c.kind == "bind"
            ] + [
                replace(c, kind="store", storing_call=True)
                for c in calls
                if c.kind == "call"
                and any(c.module in modules and c.name == f for modules, f in mutators)
            ]
            found = _store_order(relevant, False, static or {})
            if found is not None:
                return tuple(lines.step(role, call, again) for role, call, again in found)
        return None

    def _object_mutators(self, home: Path, name: str) -> list[tuple[frozenset[str], str]]:
        """The module-level functions of the project's other files that change in place the
        object ``name`` they import from ``home`` (``HPARAMS["gamma"] = g`` in ``tuning.py``
        after ``from registry import HPARAMS``), with the names of their files."""
        homes = module_names(home, self.root)
        found: list[tuple[frozenset[str], str]] = []
        for path in self._others(home):
            if path.suffix != ".py" or name not in self._names(path):
                continue
            text = self._text(path)
            key = (path, hash(text), "", f"mutators {name}")
            if key not in self._answers:
                module = max(module_names(path, self.root), key=len, default="")
                self._answers[key] = _mutators(text, module, path, name)
            answer = self._answers[key]
            if not isinstance(answer, tuple):
                continue
            for source, function in answer:
                if source in homes:
                    found.append((module_names(path, self.root), function))
        return found

    def _is_class(self, module: str, name: str, home: Path, defined: str) -> bool:
        """Whether ``name`` of ``module`` is the class ``defined`` of the file ``home``."""
        found = self._class_home(module, name, _MOST_HOPS)
        return found is not None and self._real(found[0]) == home and found[1] == defined

    def _code(self, path: Path) -> str:
        """The file's code: its text, or a notebook's code cells (its JSON is long, with the
        cells' outputs, and every question of the index looks for names in every file)."""
        text = self._text(path)
        if path.suffix != ".ipynb":
            return text
        key = (path, hash(text))
        code = self._codes.get(key)
        if code is None:
            code = self._codes[key] = _notebook_module(path, text, self.root)[0]
        return code

    def _others(self, *excluded: Path) -> Iterator[Path]:
        """The project's files but those whose real paths are ``excluded``."""
        if self._with_reals is None:
            self._with_reals = [(path, self._real(path)) for path in self.files()]
        return (path for path, real in self._with_reals if real not in excluded)

    def _names(self, path: Path) -> _Mentions:
        """What names the file's code writes: every question of the index first skips the
        files that name none of what it is about, and each answer is kept."""
        known = self._named.get(path)
        if known is not None and path in self._looked:
            return known[1]
        code = self._code(path)
        if known is None or known[0] != hash(code):
            known = self._named[path] = (hash(code), _Mentions(code))
        return known[1]

    def _real(self, path: Path) -> Path:
        """The path with links resolved, asked once a path: each question of the index walks
        every file of the project."""
        found = self._resolved.get(path)
        if found is None:
            found = self._resolved[path] = path.resolve()
        return found

    def _function_in(self, call: Call, path: Path) -> bool:
        """Whether the call's function is defined in ``path``, reached through a package that
        imports it (``utils.register_activation`` from ``utils/registry.py``)."""
        found = self._function_home(call.module, call.name, _MOST_HOPS)
        return found is not None and self._is_file(found[0], path)

    def _is_file(self, module: str, path: Path) -> bool:
        found = self._module_file(module)
        return found is not None and self._real(found) == path

    def changed_in_place_only(self, home: Path, name: str) -> bool:
        """Whether the module-level functions of ``home`` change its global ``name`` only in
        place (``ACTIVATIONS[name] = fn`` in ``register_activation``), never binding it
        again."""
        text = self._text(home)
        return not _global_setters(text, name) and bool(_in_place_setters(text, name))

    def _global_setters(self, home: Path, name: str) -> frozenset[str]:
        """The module-level functions of ``home`` that bind its global ``name`` again,
        through ``global name``, or change it in place (``ACTIVATIONS[name] = fn``)."""
        text = self._text(home)
        key = (home, hash(text), "", f"global setters {name}")
        if key not in self._answers:
            setters = _global_setters(text, name) | _in_place_setters(text, name)
            # ``set_label_smoothing`` that then calls ``invalidate_compiled()``, which clears
            # the compiled functions' caches: the next call traces anew.
            self._answers[key] = frozenset(s for s in setters if not self._clears(home, s))
        found = self._answers[key]
        return found if isinstance(found, frozenset) else frozenset()

    def _clears(self, home: Path, function: str) -> bool:
        """Whether the function ``function`` of ``home`` clears compiled caches
        (``f.clear_cache()``, ``jax.clear_caches()``), itself or in a function of the project it
        calls by name."""
        module = max(module_names(home, self.root), key=len, default="")
        defined = self.function_def(home, f"{module}.{function}") if module else None
        if defined is None:
            return False
        if _clears_caches(defined):
            return True
        exports = self._exports(home, module)
        for node in ast.walk(defined):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            source = exports.imported.get(node.func.id) or (module, node.func.id)
            if not source[1]:
                continue
            home_of = self._function_home(source[0], source[1], _MOST_HOPS) or source
            callee = self.function_def(home, ".".join(home_of))
            if callee is not None and _clears_caches(callee):
                return True
        return False

    def _stores(self, call: Call, home: Path, stored: str) -> bool:
        """Whether the store changes the attribute ``stored`` of the file ``home``."""
        owner, _, attribute = stored.rpartition(".")
        call_owner, _, call_attribute = call.name.rpartition(".")
        if attribute != call_attribute or bool(owner) != bool(call_owner):
            return False
        if owner:  # an object of a class, which imports may re-export
            found = self._class_home(call.module, call_owner, _MOST_HOPS)
            return found is not None and self._real(found[0]) == home and found[1] == owner
        path = self._module_file(call.module)
        return path is not None and self._real(path) == home

    def _runs_entry(
        self, call: Call, module: Path, names: frozenset[str], callers: list[str]
    ) -> bool:
        """Whether the call runs one of ``callers`` of ``module``: by one of the module's names,
        or as a method of a class that imports re-export."""
        if call.kind != "call":
            return False
        if call.module in names:
            return call.name in callers
        if "." not in call.name and call.name in callers:
            # ``physsim.simulate`` where ``physsim/__init__.py`` imports it from a module.
            home = self._function_home(call.module, call.name, _MOST_HOPS)
            return home is not None and home[0] in names and home[1] in callers
        owner, _, method = call.name.rpartition(".")
        if not owner or "." in owner or not any(c.endswith(f".{method}") for c in callers):
            return False
        real = self._real(module)
        return any(
            c.rpartition(".")[2] == method
            and "." not in c.rpartition(".")[0]
            and self._inherits(call.module, owner, method, real, c.rpartition(".")[0])
            for c in callers
        )

    def called_elsewhere(self, module: Path, qualified: str) -> bool:
        """Whether another file of the project calls the function or method ``qualified``
        (``train``, ``Trainer.fit``) of ``module``: then it runs."""
        names = module_names(module, self.root)
        bare = qualified.rsplit(".", 1)[-1]
        home = self._real(module)
        for path in self._others(home):
            if bare not in self._names(path):
                continue
            calls, _ = self._file_calls(path)
            if any(c.kind == "call" and c.module in names and c.name == qualified for c in calls):
                return True
            # ``trainer.fit(...)`` on an object of a subclass that inherits ``Trainer.fit``.
            owner, _, method = qualified.rpartition(".")
            if (
                owner
                and "." not in owner
                and any(
                    c.kind == "call"
                    and c.name.endswith(f".{method}")
                    and c.name.count(".") == 1
                    and self._inherits(c.module, c.name.partition(".")[0], method, home, owner)
                    for c in calls
                )
            ):
                return True
        return False


@dataclass(frozen=True)
class MethodStore:
    """A method of a class another file defines that stores an attribute of an object the
    module's code runs it on or hands it: ``end_epoch`` of the subclass ``AnnealedClipTrainer``,
    storing ``self.clip`` in ``trainers/annealed.py`` at line 13; ``on_epoch_end`` of the
    callback ``LRDecay``, storing ``trainer.lr``."""

    method: str
    owner: str  # the class defining the method
    path: str  # as a witness shows it
    line: int


@dataclass(frozen=True)
class _Subclass:
    """A subclass another file defines, and its methods that store the attribute on
    ``self``."""

    modules: frozenset[str]  # the dotted names its file may be imported by
    name: str
    setters: frozenset[str]
    lines: _Lines  # how its file's lines are shown
    stores: tuple[tuple[str, int], ...] = ()  # each setter, with the line of its first store

    def steps(
        self, calls: list[Call], callers: list[str], names_it: Callable[[str, str], bool]
    ) -> list[Call]:
        """Among a file's calls, those of a setter method on an object of the subclass (as
        stores through that object), and those of the base's entry points ``callers`` (as
        uses), where the subclass does not define them again. ``names_it``: whether a class
        a module names (``agents.EpsilonGreedyAgent``, which ``agents/__init__.py`` imports)
        is the subclass."""
        found: list[Call] = []
        inherited = {c.rpartition(".")[2] for c in callers if "." in c} - self.setters
        for call in calls:
            owner, _, method = call.name.rpartition(".")
            if call.kind != "call" or not owner or "." in owner:
                continue
            if not (owner == self.name and call.module in self.modules) and not names_it(
                call.module, owner
            ):
                continue
            if method in self.setters:
                found.append(replace(call, kind="store", storing_call=True))
            elif method in inherited:
                found.append(call)
        return found


@dataclass(frozen=True)
class _ClassDefined:
    """A module's top-level class with bases: the (module, name) of each base as the module's
    imports give it, and the attributes each method but ``__init__`` stores on ``self``."""

    name: str
    bases: tuple[tuple[str, str], ...]
    stores: tuple[tuple[str, dict[str, int]], ...]  # each method, with its first store lines


def _parameter_stores(
    text: str,
) -> tuple[tuple[str, tuple[tuple[str, int, str, int], ...]], ...]:
    """The module's top-level classes, each with the stores its methods make into attributes
    of their parameters after ``self``: (method, the parameter's place counted from 0 after
    ``self``, attribute, line), for a method that binds the parameter to nothing else."""
    tree = parsed_tree(text)
    if tree is None:
        return ()
    found = []
    for statement in tree.body:
        if not isinstance(statement, ast.ClassDef):
            continue
        stores: list[tuple[str, int, str, int]] = []
        for method in statement.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if any(
                isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                for d in method.decorator_list
            ):
                continue
            parameters = [a.arg for a in method.args.posonlyargs + method.args.args][1:]
            rebound = {
                n.id
                for n in ast.walk(method)
                if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
            }
            for node in ast.walk(method):
                for target in assigned_targets(node):
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id in parameters
                        and target.value.id not in rebound
                    ):
                        index = parameters.index(target.value.id)
                        stores.append((method.name, index, target.attr, target.lineno))
        if stores:
            found.append((statement.name, tuple(stores)))
    return tuple(found)


def _subclasses(text: str, module: str, path: Path) -> tuple[_ClassDefined, ...]:
    """The module's top-level classes that name a base (``_ClassDefined``)."""
    tree = parsed_tree(text)
    if tree is None:
        return ()
    imported = module_exports(text, module, path.stem == "__init__").imported
    found = []
    for statement in tree.body:
        if not isinstance(statement, ast.ClassDef):
            continue
        bases: list[tuple[str, str]] = []
        for base in statement.bases:
            dotted = dotted_name(base)
            if dotted is None:
                continue
            head, _, rest = dotted.rpartition(".")
            if not head and dotted in imported:
                bases.append(imported[dotted])
            elif head:
                source = imported.get(head)
                bases.append((source[0], rest) if source and not source[1] else (head, rest))
        if not bases:
            continue
        stores = tuple(
            (method.name, _stored_on_self(method))
            for method in statement.body
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
            and method.name != "__init__"
        )
        found.append(_ClassDefined(statement.name, tuple(bases), stores))
    return tuple(found)


def _mutators(text: str, module: str, path: Path, name: str) -> tuple[tuple[str, str], ...]:
    """The module that the file imports ``name`` from, with each of its module-level
    functions that changes that object in place (stores into it, or calls a mutating method
    on it) and binds no ``name`` of its own."""
    tree = parsed_tree(text)
    if tree is None:
        return ()
    source = module_exports(text, module, path.stem == "__init__").imported.get(name)
    if source is None or not source[1] or source[1] != name:
        return ()
    return tuple(
        (source[0], statement.name)
        for statement in tree.body
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
        and _changes_in_place(statement, name)
    )


def _changes_in_place(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    parameters = function.args
    every = [*parameters.posonlyargs, *parameters.args, *parameters.kwonlyargs]
    if any(a.arg == name for a in every) or any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
        for n in ast.walk(function)
    ):
        return False  # a name of its own
    for node in ast.walk(function):
        for target in assigned_targets(node):
            if isinstance(target, (ast.Subscript, ast.Attribute)) and _rooted(target, name):
                return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATING
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
        ):
            return True
    return False


def _rooted(target: ast.expr, name: str) -> bool:
    """``name[...]``, ``name.x``, ``name["a"]["b"]``: a part of the object ``name``."""
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return isinstance(target, ast.Name) and target.id == name


def _stored_on_self(method: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """The attributes the method stores on ``self`` (its first parameter), or stores into,
    each with the first line that does."""
    parameters = method.args.posonlyargs + method.args.args
    if not parameters:
        return {}
    self_name = parameters[0].arg
    found: dict[str, int] = {}
    for node in ast.walk(method):
        for target in assigned_targets(node):
            # ``self.clip = v``; in place, ``self.schedule.base_lr = v`` or ``self.cfg[k] = v``.
            while isinstance(target, (ast.Attribute, ast.Subscript)) and not (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == self_name
            ):
                target = target.value
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                if target.value.id == self_name:
                    found[target.attr] = min(found.get(target.attr, target.lineno), target.lineno)
    return found


@dataclass(frozen=True)
class _Lines:
    """How a file's lines are shown: its path from the root, and for a notebook, its cells."""

    path: Path
    root: Path
    cells: tuple[tuple[int, int], ...] | None  # (module line the cell starts at, cell number)

    def shown(self) -> str:
        """The file's path from the project's root (from above it, when the root is a
        package)."""
        base = self.root.resolve()
        base = base.parent if (base / "__init__.py").exists() else base
        return self.path.resolve().relative_to(base).as_posix()

    def step(self, role: Role, call: Call, again: str | None) -> WitnessStep:
        shown = self.shown()
        line = call.line
        if self.cells:
            start, number = max((c for c in self.cells if c[0] <= line), default=self.cells[0])
            shown, line = f"{shown}:cell {number}", line - start + 1
        via = call.name if call.kind == "call" or call.storing_call else None
        return WitnessStep(role, line, call.column, via=via, again=again, path=shown)


def _notebook_module(path: Path, text: str, root: Path) -> tuple[str, _Lines]:
    """A notebook's code cells as one module, and where each cell starts in it."""
    from ..files import Source
    from ..notebook.reader import read_notebook

    try:
        notebook = read_notebook(Source(str(path), text, text.encode(), "utf-8"))
    except Exception:  # noqa: BLE001 - a notebook that cannot be read has no callers
        return "", _Lines(path, root, None)
    cell_map = notebook.cell_map
    cells = tuple(zip(cell_map.starts, cell_map.numbers, strict=True))
    return notebook.module, _Lines(path, root, cells)


def _stale_order(
    calls: list[Call], changers: set[str], callers: set[str]
) -> list[tuple[Role, Call, str | None]] | None:
    """Trace, change and reuse among one file's calls of the module, in one driver."""
    by_driver: dict[str, list[Call]] = {}
    for call in sorted(calls, key=lambda c: (c.line, c.column)):
        by_driver.setdefault(call.driver, []).append(call)
    for driver_calls in by_driver.values():
        uses = [c for c in driver_calls if c.name in callers]
        changes = [c for c in driver_calls if c.name in changers]
        for change in changes:
            before = [u for u in uses if (u.line, u.column) < (change.line, change.column)]
            after = [u for u in uses if (u.line, u.column) > (change.line, change.column)]
            if before and after:
                return [(Role.TRACE, before[0], None), (Role.CHANGE, change, None),
                        (Role.REUSE, after[0], None)]  # fmt: skip
            for use in uses:
                shared = set(use.loops) & set(change.loops)
                if shared and (use is not change or change.name in callers):
                    again = f"next pass of the loop at line {max(shared)}"
                    return [(Role.TRACE, use, None), (Role.CHANGE, change, None),
                            (Role.REUSE, use, again)]  # fmt: skip
        both = [c for c in changes if c.name in callers]
        if len(both) > 1:
            return [(Role.TRACE, both[0], None), (Role.CHANGE, both[0], None),
                    (Role.REUSE, both[1], None)]  # fmt: skip
    return None


def _store_order(
    calls: list[Call], per_object: bool, static: dict[str, StaticParameters]
) -> list[tuple[Role, Call, str | None]] | None:
    """Trace, store and reuse among one file's calls and stores, in one driver. Through one
    object (``per_object``), a name bound again between two steps holds another object, and
    a loop that binds it makes a new object each pass."""
    by_driver: dict[str, list[Call]] = {}
    for call in sorted(calls, key=lambda c: (c.line, c.column)):
        by_driver.setdefault(call.driver, []).append(call)
    for events in by_driver.values():
        events.sort(key=_at)
        binds = [c for c in events if c.kind == "bind"]
        uses = [c for c in events if c.kind == "call"]
        clears = [c for c in events if c.kind == "clear"]
        for store in (c for c in events if c.kind == "store"):
            receiver = store.receiver if per_object else None
            mine = [u for u in uses if receiver is None or u.receiver == receiver]
            before = [
                u for u in mine if _at(u) < _at(store) and not _rebound(binds, receiver, u, store)
            ]
            after = [
                u for u in mine if _at(u) > _at(store) and not _rebound(binds, receiver, store, u)
            ]
            pair = next(
                (
                    (b, a)
                    for b in before
                    for a in after
                    if not _apart(b, a, static)
                    and not _stored_again(events, store, b, receiver)
                    and not any(_at(b) < _at(c) < _at(a) for c in clears)
                ),
                None,
            )
            if pair is not None:
                return [(Role.TRACE, pair[0], None), (Role.CHANGE, store, None),
                        (Role.REUSE, pair[1], None)]  # fmt: skip
            for use in mine:
                shared = set(use.loops) & set(store.loops)
                if not shared:
                    continue
                loop = max(shared)
                if receiver is not None and any(
                    b.receiver == receiver and loop in b.loops for b in binds
                ):
                    continue  # a new object each pass
                if store.steady and not any(loop in u.loops and _at(u) < _at(store) for u in mine):
                    continue  # one value, stored before every call of the pass
                if any(loop in c.loops for c in clears):
                    continue  # the pass clears the cache: a later pass may trace anew
                again = f"next pass of the loop at line {loop}"
                return [(Role.TRACE, use, None), (Role.CHANGE, store, None),
                        (Role.REUSE, use, again)]  # fmt: skip
    return None


def _stored_again(events: list[Call], store: Call, trace: Call, receiver: str | None) -> bool:
    """In straight-line code, ``store`` writes the literal that the last store before
    ``trace``, and every store since, wrote (``settings.LR = 0.0`` before each call): the
    trace read the value the reuse reads."""
    if store.literal is None or store.loops or trace.loops:
        return False
    stores = [
        e
        for e in events
        if e.kind == "store" and (receiver is None or e.receiver == receiver)
        and _at(e) < _at(store)
    ]  # fmt: skip
    earlier = [e for e in stores if _at(e) < _at(trace)]
    if not earlier:
        return False  # the trace read the value the attribute started with
    since = [e for e in stores if _at(e) >= _at(earlier[-1])]
    return all(e.literal == store.literal and not e.loops for e in since)


def _rebound(binds: list[Call], receiver: str | None, first: Call, second: Call) -> bool:
    """The name is bound again between the two steps: it holds another object at the second."""
    return receiver is not None and any(
        b.receiver == receiver and _at(first) < _at(b) <= _at(second) for b in binds
    )


def _at(call: Call) -> tuple[int, int, int]:
    return call.line, call.column, call.step


# One index a project and process: its files are walked once, each read and parsed once.
_INDEXES: dict[Path, ProjectIndex] = {}


def forget_projects() -> None:
    """Start afresh: the next question walks each project again (a new run of a command)."""
    _INDEXES.clear()


def index_for(path: str) -> ProjectIndex | None:
    """The index of the project the file belongs to; None for standard input (``-``), which
    has no folder."""
    if path in ("", "-", "stdin"):
        return None
    root = project_root(Path(path))
    if root not in _INDEXES:
        _INDEXES[root] = ProjectIndex(root)
    return _INDEXES[root]


class ProjectView:
    """What one file's analysis may ask of the project's other modules: a witness they show
    for a stale path of the file, and what a method of a class they define reads."""

    def __init__(self, path: str, index: ProjectIndex | None) -> None:
        self.module = Path(path)
        self.index = index

    def _asked(self) -> None:
        """Called by every question: a view that notes whether the analysis asked the
        project anything (then its findings depend on the other files) overrides it."""

    def promoted(self, stale: StalePath) -> StalePath | None:
        self._asked()
        return None if self.index is None else self.index.promoted(self.module, stale)

    def method_reads(self, qualified: str, method: str) -> list[tuple[str, ...]] | None:
        self._asked()
        if self.index is None:
            return None
        return self.index.method_reads(self.module, qualified, method)

    def plain_attribute(self, qualified: str, name: str) -> bool:
        self._asked()
        return self.index is not None and self.index.plain_attribute(self.module, qualified, name)

    def attribute_aliases(self, qualified: str, name: str) -> tuple[str, ...]:
        self._asked()
        if self.index is None:
            return ()
        return self.index.attribute_aliases(self.module, qualified, name)

    def setter_stores(self, qualified: str, name: str) -> list[str] | None:
        self._asked()
        if self.index is None:
            return None
        return self.index.setter_stores(self.module, qualified, name)

    def called_elsewhere(self, qualified: str) -> bool:
        self._asked()
        return self.index is not None and self.index.called_elsewhere(self.module, qualified)

    def changed_in_place_only(self, home: Path, name: str) -> bool:
        self._asked()
        return self.index is not None and self.index.changed_in_place_only(home, name)

    def handed_stores(self, method: str, position: int, attribute: str) -> list[MethodStore]:
        """Methods of classes in other files storing into the object handed to them
        (``ProjectIndex.handed_stores``)."""
        self._asked()
        if self.index is None:
            return []
        return self.index.handed_stores(self.module, method, position, attribute)

    def subclass_stores(self, stored: str) -> list[MethodStore]:
        """Methods of subclasses in other files storing ``stored`` (``Trainer.lr``) of a class
        of this module (``ProjectIndex.subclass_stores``)."""
        self._asked()
        return [] if self.index is None else self.index.subclass_stores(self.module, stored)

    def store_witness(
        self,
        callers: list[str],
        home: Path,
        stored: str,
        per_object: bool,
        static: dict[str, StaticParameters] | None = None,
    ) -> StalePath | None:
        """A stale path another file takes by storing ``stored`` of the file ``home``
        (``ProjectIndex.store_witness``)."""
        self._asked()
        if self.index is None:
            return None
        steps = self.index.store_witness(self.module, callers, home, stored, per_object, static)
        from .timing import StalePath

        return None if steps is None else StalePath(steps)

    def object_witness(
        self,
        callers: list[str],
        home: Path,
        name: str,
        static: dict[str, StaticParameters] | None = None,
        paths: list[tuple[str, ...]] | None = None,
    ) -> StalePath | None:
        """A stale path another file takes by changing in place the object ``name`` of the
        file ``home`` (``ProjectIndex.object_witness``)."""
        self._asked()
        if self.index is None:
            return None
        steps = self.index.object_witness(self.module, callers, home, name, static, paths)
        from .timing import StalePath

        return None if steps is None else StalePath(steps)

    def module_file(self, imported: str) -> Path | None:
        """The project's file of the module ``imported`` (``pkg.config``, or ``.config``
        relative to this file); None when the project has no one such file."""
        self._asked()
        if self.index is None:
            return None
        return self.index.module_file(self.module, imported)

    def function_def(self, qualified: str) -> ast.FunctionDef | None:
        self._asked()
        return None if self.index is None else self.index.function_def(self.module, qualified)

    def helper_globals(self, qualified: str) -> tuple[Path, tuple[str, ...]]:
        self._asked()
        if self.index is None:
            return Path(), ()
        return self.index.helper_globals(self.module, qualified)


def _absolute(relative: str, module: str) -> str:
    """``pkg.model`` for ``.model`` imported in ``pkg.train``; ``..`` goes one package up."""
    dots = len(relative) - len(relative.lstrip("."))
    package = module.split(".")[:-dots] if dots else module.split(".")
    tail = relative[dots:]
    return ".".join([*package, tail] if tail else package)


def _class_method_reads(text: str, class_name: str, method: str) -> list[tuple[str, ...]] | None:
    """What ``method`` of the module-level class ``class_name`` reads of ``self``."""
    from .receiver import paths_read_by

    return _class_query(text, class_name, lambda facts, cls: paths_read_by(facts, cls, method))


def partial_query(question: Callable[[Scope, str], _T], name: str) -> Callable[[Facts, Scope], _T]:
    """A class query asking ``question(cls, name)``."""
    return lambda _, cls: question(cls, name)


def _class_query(text: str, class_name: str, query: Callable[[Facts, Scope], _T]) -> _T | None:
    """``query`` asked of the module-level class ``class_name`` of the module ``text``; None
    when the module does not parse or defines no such class, or two."""
    from .facts.model import ScopeKind

    facts = _module_facts(text)
    if facts is None:
        return None
    classes = [
        scope
        for scope in facts.module_scope.children
        if scope.kind is ScopeKind.CLASS and scope.name == class_name
    ]
    if len(classes) != 1:
        return None  # defined twice: the code does not say which
    return query(facts, classes[0])


# The facts of the modules whose classes were asked about last: one class is asked several
# questions (what each compiled method reads), and a large module takes long to visit.
_FACTS: collections.OrderedDict[str, Facts | None] = collections.OrderedDict()
_MOST_FACTS = 4


def _module_facts(text: str) -> Facts | None:
    """The module's facts with its whole body visited; None when it does not parse."""
    from .facts.queries import Facts

    if text in _FACTS:
        _FACTS.move_to_end(text)
        return _FACTS[text]
    tree = parsed_tree(text)
    facts = Facts(tree, text) if tree is not None else None
    if facts is not None:
        facts.ensure_scope(facts.module_scope)
    _FACTS[text] = facts
    while len(_FACTS) > _MOST_FACTS:
        _, dropped = _FACTS.popitem(last=False)
        if dropped is not None:
            dropped.release()
    return facts


def _module_function(text: str, name: str) -> ast.FunctionDef | None:
    """The module-level ``def name``, when it is the only binding of the name there: no other
    ``def``, class, import or assignment of the name anywhere in the module (also under an
    ``if`` or ``try``), no ``from m import *``, which may bind it again, and nothing that
    binds it unseen or reads a caller's frame (``unread.rewrites_functions``)."""
    return _module_functions(text).get(name)


@functools.lru_cache(maxsize=64)
def _module_functions(text: str) -> dict[str, ast.FunctionDef]:
    """Every function ``_module_function`` finds in the module, by name: one parse and one
    walk a text, however many of its functions are asked for."""
    tree = parsed_tree(text)
    if tree is None:
        return {}
    if text_rewrites_functions(text, tree):
        return {}
    defined: dict[str, list[ast.FunctionDef]] = {}
    bound: collections.Counter[str] = collections.Counter()
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef):
            defined.setdefault(statement.name, []).append(statement)
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound[node.id] += 1
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound[node.name] += 1
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                if any(alias.name == "*" for alias in node.names):
                    return {}  # a star import may bind any name
                bound.update(_bound_by(node))
    return {
        name: found[0]
        for name, found in defined.items()
        if len(found) == 1 and not found[0].decorator_list and not bound[name]
    }


def _class_method(text: str, class_name: str, method: str) -> ast.FunctionDef | None:
    """The ``def`` of ``method`` in the module-level class ``class_name``, when the module
    defines the class once and the class defines the method once, undecorated or with flax's
    ``compact``; for ``apply`` that a class with bases does not define, its ``__call__``."""
    tree = parsed_tree(text)
    if tree is None:
        return None
    classes = [s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == class_name]
    if len(classes) != 1:
        return None
    defined = [
        s
        for s in classes[0].body
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign)) and (
            s.name == method if not isinstance(s, ast.Assign)
            else any(isinstance(t, ast.Name) and t.id == method for t in s.targets)
        )
    ]  # fmt: skip
    if not defined and method == "apply" and classes[0].bases:
        # flax's ``Module.apply(variables, x)`` runs the module's ``__call__``.
        return _class_method(text, class_name, "__call__")
    if len(defined) != 1 or not isinstance(defined[0], ast.FunctionDef):
        return None
    if any(dotted_name(d) not in ("compact", "nn.compact") for d in defined[0].decorator_list):
        return None
    return defined[0]


def _globals_read(text: str, function: ast.FunctionDef) -> tuple[str, ...]:
    """The module-level variables of ``text`` (bound there only by assignment) that
    ``function`` reads and never binds."""
    variables = _module_variables(text)
    local = {
        n.id
        for n in ast.walk(function)
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    arguments = function.args
    local.update(
        a.arg
        for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                  arguments.vararg, arguments.kwarg)
        if a is not None
    )  # fmt: skip
    read = dict.fromkeys(
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    )
    return tuple(name for name in read if name in variables and name not in local)


@functools.lru_cache(maxsize=64)
def _module_variables(text: str) -> frozenset[str]:
    """The names a module binds at its top level by assignment only."""
    tree = parsed_tree(text)
    if tree is None:
        return frozenset()
    assigned: set[str] = set()
    other: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            assigned.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        else:
            other.update(_bound_by_statement(statement))
    return frozenset(assigned - other)


def _bound_by_statement(statement: ast.stmt) -> set[str]:
    """Names a top-level statement other than an assignment binds (``def``, ``class``,
    imports, and whatever a ``for``, ``with`` or ``if`` block binds inside)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in statement.names}
    return {
        n.id
        for n in ast.walk(statement)
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }


def _clears_caches(function: ast.FunctionDef) -> bool:
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("clear_cache", "clear_caches")
        for node in ast.walk(function)
    )


@functools.lru_cache(maxsize=256)
def _in_place_setters(text: str, name: str) -> frozenset[str]:
    """The module-level functions that change the module's global ``name`` in place (store
    into it, or call a mutating method on it) and bind no ``name`` of their own."""
    tree = parsed_tree(text)
    if tree is None:
        return frozenset()
    return frozenset(
        statement.name
        for statement in tree.body
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
        and _changes_in_place(statement, name)
    )


@functools.lru_cache(maxsize=256)
def _global_setters(text: str, name: str) -> frozenset[str]:
    """The module-level functions that declare ``global name`` and bind it."""
    tree = parsed_tree(text)
    if tree is None:
        return frozenset()
    found = set()
    for statement in tree.body:
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        inside = list(ast.walk(statement))
        if any(isinstance(n, ast.Global) and name in n.names for n in inside) and any(
            _binds(n, name) for n in inside if n is not statement
        ):
            found.add(statement.name)
    return frozenset(found)


def _binds(node: ast.AST, name: str) -> bool:
    """Whether ``node`` binds ``name``, or may (a star import)."""
    if isinstance(node, ast.Name):
        return node.id == name and isinstance(node.ctx, ast.Store)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return name in _bound_by(node) or any(alias.name == "*" for alias in node.names)
    return False


def _bound_by(statement: ast.Import | ast.ImportFrom | ast.ClassDef) -> set[str]:
    if isinstance(statement, ast.ClassDef):
        return {statement.name}
    return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}


def _readable(path: Path) -> bool:
    """A file that can be read: not a link that leads nowhere or back to itself
    (``a.py -> a.py``), on which ``resolve()`` raises."""
    try:
        path.resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    return path.is_file()
