"""Scope facts over the standard ``ast`` tree: where each name is bound, read and changed in place.

Python's real rules: parameters and locals shadow, class bodies are invisible to the functions
inside them, comprehensions and lambdas are their own scopes, ``global`` and ``nonlocal``
redirect bindings, ``x = f(x)`` reads before it binds.

Facts are gathered on demand, statement by statement. A first walk over statements only (not
expressions) builds the scope tree (functions, classes, their parameters and ``global`` and
``nonlocal`` declarations) and cuts the module into *units*: a simple statement, or the header
of a compound one (a ``for`` target and iterable, a ``def``'s decorators and defaults, ...).
A unit's expressions are visited the first time a question needs them, and every question about
a name first visits each unit on a line where that name occurs as a word: an identifier cannot
span lines, so no fact about the name can hide elsewhere. Questions about a scope's body visit
the whole body. Each unit is visited once, by the one collector below: the rules live in one
place, and a module that never asks about most names never pays for them.

Limits, stated first as LibCST does: names reached through ``exec``, ``globals()`` or star
imports are not seen; an object mutated through an alias (``w = weights; w[0] = 1``) or by a
function it is passed to is not seen; annotations are never treated as reads; code under
``if TYPE_CHECKING:`` never runs and is not read.
"""

from __future__ import annotations

import ast
import bisect
import enum
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..words import INDEX_AFTER, word_index, word_lines

# The way into a statement through ``if``/``try``/``match`` statements: (statement id, side).
Branches = tuple[tuple[int, int], ...]
# A place in the source: (line, column) as ``ast`` gives them (columns in UTF-8 bytes).
# Comparable, free; reporting converts columns to characters.
Pos = tuple[int, int]


class ScopeKind(enum.Enum):
    MODULE = "module"
    FUNCTION = "function"
    LAMBDA = "lambda"
    CLASS = "class"
    COMPREHENSION = "comprehension"


class BindingKind(enum.Enum):
    PARAM = "parameter"
    ASSIGN = "assignment"
    AUGMENTED = "augmented assignment"
    FOR = "for target"
    WITH = "with target"
    WALRUS = "assignment expression"
    EXCEPT = "except target"
    IMPORT = "import"
    DELETE = "del"
    DEF = "def"
    CLASS = "class"
    MATCH = "match capture"


FUNCTION_KINDS = (ScopeKind.FUNCTION, ScopeKind.LAMBDA)
_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(eq=False)
class Scope:
    kind: ScopeKind
    node: ast.AST = field(repr=False)
    parent: Scope | None = field(repr=False)
    name: str
    # Where the scope's node starts in its parent, and the parent's loops around it.
    start: Pos
    loops: tuple[ast.AST, ...]
    params: tuple[str, ...] = ()
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    # Names bound here; complete for every name a question has asked about.
    bound: set[str] = field(default_factory=set)
    children: list[Scope] = field(default_factory=list, repr=False)
    # The units of this scope's body, nested scopes included: ``units[first:last]``.
    unit_range: tuple[int, int] = (0, 0)

    def is_within(self, other: Scope) -> bool:
        scope: Scope | None = self
        while scope is not None:
            if scope is other:
                return True
            scope = scope.parent
        return False

    def function(self) -> Scope:
        """The nearest function, lambda, class or module around (or equal to) this scope: the
        code whose run runs this scope's code (comprehensions run where they stand)."""
        scope = self
        while scope.kind is ScopeKind.COMPREHENSION and scope.parent is not None:
            scope = scope.parent
        return scope

    def enclosing_function_name(self) -> str | None:
        scope: Scope | None = self
        while scope is not None:
            if scope.kind in FUNCTION_KINDS:
                return scope.name
            scope = scope.parent
        return None


@dataclass(eq=False)
class Site:
    """A node of the tree, the scope it runs in, and the loops around it within that scope."""

    scope: Scope = field(repr=False)
    node: ast.AST = field(repr=False)
    loops: tuple[ast.AST, ...] = field(repr=False)

    @property
    def start(self) -> Pos:
        return (self.node.lineno, self.node.col_offset)  # type: ignore[attr-defined]

    @property
    def end(self) -> Pos:
        return (self.node.end_lineno, self.node.end_col_offset)  # type: ignore[attr-defined]

    @property
    def line(self) -> int:
        return self.start[0]


@dataclass(eq=False)
class Binding(Site):
    name: str = ""
    kind: BindingKind = BindingKind.ASSIGN
    # Takes effect where its node starts (``def``, parameters) instead of where it ends.
    at_start: bool = False
    # The assigned expression, where there is exactly one (``x = <value>``).
    value: ast.expr | None = None
    # ``import a.b as c`` binds ``c`` to ``a.b``; other kinds leave it empty.
    imported: str | None = None
    branches: Branches = field(default=(), repr=False)

    @property
    def at(self) -> Pos:
        return self.start if self.at_start else self.end

    @property
    def line(self) -> int:
        return self.at[0]


@dataclass(eq=False)
class Read(Site):
    name: str = ""
    # The name is the callee of a call (``name(...)``).
    called: bool = False
    # The constant data path read through the name: ``CONFIG["clip"]`` reads ``('["clip"]',)``,
    # ``hparams.l2`` reads ``(".l2",)``; a method call or a computed index ends the path.
    path: tuple[str, ...] = ()
    # The expression that reads that path (the name itself when the path is empty).
    path_node: ast.expr | None = None
    # Inside an ``assert``: checked while tracing, never part of a compiled result.
    in_assert: bool = False


@dataclass(eq=False)
class Mutation(Site):
    """An in-place change of what ``name`` refers to, at the constant ``path`` below it."""

    name: str = ""
    description: str = ""
    path: tuple[str, ...] = ()
    # The assigned expression for ``a.b = <value>`` and ``a[k] = <value>``.
    value: ast.expr | None = None
    # ``np.copyto(dst, ...)``: counts only when the callee's receiver is one of these modules.
    needs_module: frozenset[str] = frozenset()
    receiver: ast.expr | None = None
    # Tests of the ``if`` statements around the change (``if self.rng is None:``).
    guards: tuple[ast.expr, ...] = field(default=(), repr=False)


@dataclass(eq=False)
class AttributeRef(Site):
    """``anything.attr``: how methods and instance attributes are reached by name."""

    attr: str = ""
    called: bool = False
    # The expression the attribute is taken from.
    base: ast.expr | None = None


def exclusive(first: Branches, second: Branches) -> bool:
    """Whether two statements sit in different branches of one ``if``, ``try`` or ``match``."""
    sides = dict(first)
    return any(key in sides and sides[key] != side for key, side in second)


def paths_overlap(first: tuple[str, ...], second: tuple[str, ...]) -> bool:
    """Whether changing one data path can change what reading the other returns."""
    shorter = min(len(first), len(second))
    return first[:shorter] == second[:shorter]


def path_element(node: ast.expr) -> str | None:
    """``.attr`` or ``[constant]`` for one step of an attribute or subscript chain."""
    if isinstance(node, ast.Attribute):
        return f".{node.attr}"
    if isinstance(node, ast.Subscript):
        index = node.slice
        if isinstance(index, ast.Constant) and isinstance(index.value, (str, int)):
            if not isinstance(index.value, bool):
                return f"[{index.value!r}]"
    return None


def chain_root(expr: ast.expr) -> tuple[ast.expr, tuple[str, ...], list[ast.expr]]:
    """The expression at the bottom of ``a.b[c].d``, the constant path below it (cut at the first
    computed index) and the chain's steps from the outermost in."""
    steps: list[ast.expr] = []
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        steps.append(expr)
        expr = expr.value
    path: list[str] = []
    for step in reversed(steps):
        element = path_element(step)
        if element is None:
            break
        path.append(element)
    return expr, tuple(path), steps


# Methods that change their receiver in place. Those that return None only count as a whole
# statement (``d.update(x)``): ``state = tx.update(g, s)`` is optax, not dict.update.
MUTATING_METHODS_RETURNING_NONE = frozenset(
    {
        "append", "extend", "insert", "remove", "clear", "update", "sort", "reverse",
        "add", "discard", "difference_update", "intersection_update",
        "symmetric_difference_update", "appendleft", "extendleft", "rotate",
        "fill", "resize", "put", "itemset", "setfield", "__setitem__", "__delitem__",
        "shuffle",
    }
)  # fmt: skip
MUTATING_METHODS_RETURNING_VALUE = frozenset({"pop", "popitem", "setdefault", "popleft"})
# Functions that write into their first argument, by the modules that define them.
_IN_PLACE_FUNCTIONS: dict[str, frozenset[str]] = {
    "copyto": frozenset({"numpy"}),
    "put": frozenset({"numpy"}),
    "place": frozenset({"numpy"}),
    "putmask": frozenset({"numpy"}),
    "fill_diagonal": frozenset({"numpy"}),
    # ``random.shuffle(x)``, ``np.random.shuffle(x)``, ``rng.shuffle(x)``: any receiver.
    "shuffle": frozenset(),
}
_TYPE_CHECKING = frozenset({"TYPE_CHECKING"})


@dataclass(eq=False, slots=True)
class _Unit:
    node: ast.AST  # a statement, an ``except`` handler or a ``match`` case
    scope: Scope
    loops: tuple[ast.AST, ...]
    first: int
    last: int
    # Tests of the ``if`` statements whose body holds the unit, within its scope.
    guards: tuple[ast.expr, ...] = ()
    # The branches of ``if``, ``try`` and ``match`` statements that lead to the unit.
    branches: Branches = ()
    visited: bool = False


def _word(expr: ast.expr) -> str:
    """The last name of ``a.b.c`` or ``c``."""
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else ""


def _params(arguments: ast.arguments) -> tuple[str, ...]:
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    if arguments.vararg is not None:
        names.append(arguments.vararg.arg)
    names.extend(a.arg for a in arguments.kwonlyargs)
    if arguments.kwarg is not None:
        names.append(arguments.kwarg.arg)
    return tuple(names)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id in _TYPE_CHECKING
    return isinstance(test, ast.Attribute) and test.attr in _TYPE_CHECKING


def _header_last_line(node: ast.AST, parts: Iterable[ast.AST | None]) -> int:
    last: int = node.lineno  # type: ignore[attr-defined]
    for part in parts:
        if part is not None:
            last = max(last, part.end_lineno or last)  # type: ignore[attr-defined]
    return last


class _Skeleton:
    """The statement walk: scopes, declarations and units, in source order."""

    def __init__(self, tree: ast.Module) -> None:
        self.units: list[_Unit] = []
        self.module = Scope(ScopeKind.MODULE, tree, None, "<module>", (0, 0), ())
        self.global_declarers: dict[str, list[Scope]] = {}
        self.nonlocal_declarers: dict[str, list[Scope]] = {}
        self.scopes: list[Scope] = [self.module]
        self._guards: tuple[ast.expr, ...] = ()
        self._branches: Branches = ()
        self._body(tree.body, self.module, ())
        self.module.unit_range = (0, len(self.units))

    def _unit(self, node: ast.AST, scope: Scope, loops: tuple[ast.AST, ...], last: int) -> None:
        first: int = node.lineno  # type: ignore[attr-defined]
        self.units.append(_Unit(node, scope, loops, first, last, self._guards, self._branches))

    def _scope(
        self, kind: ScopeKind, node: ast.stmt, parent: Scope, loops: tuple[ast.AST, ...]
    ) -> Scope:
        params = _params(node.args) if isinstance(node, _FUNCTION_NODES) else ()
        name: str = node.name  # type: ignore[attr-defined]
        scope = Scope(kind, node, parent, name, (node.lineno, node.col_offset), loops, params)
        scope.bound.update(params)
        parent.children.append(scope)
        self.scopes.append(scope)
        begin = len(self.units)
        saved = self._guards, self._branches
        self._guards, self._branches = (), ()
        self._body(node.body, scope, ())  # type: ignore[attr-defined]
        self._guards, self._branches = saved
        scope.unit_range = (begin, len(self.units))
        return scope

    def _branch(
        self,
        statement: ast.stmt,
        side: int,
        body: list[ast.stmt],
        scope: Scope,
        loops: tuple[ast.AST, ...],
    ) -> None:
        saved = self._branches
        self._branches = (*saved, (id(statement), side))
        self._body(body, scope, loops)
        self._branches = saved

    def _body(self, body: list[ast.stmt], scope: Scope, loops: tuple[ast.AST, ...]) -> None:
        units, compound = self.units, _COMPOUND
        for stmt in body:
            if type(stmt) not in compound:
                # Most statements are simple: one unit each, no nesting.
                units.append(
                    _Unit(stmt, scope, loops, stmt.lineno, stmt.end_lineno or stmt.lineno,
                          self._guards, self._branches)
                )  # fmt: skip
            else:
                self._compound(stmt, scope, loops)

    def _compound(self, stmt: ast.stmt, scope: Scope, loops: tuple[ast.AST, ...]) -> None:
        if isinstance(stmt, _FUNCTION_NODES):
            decorators = [d.lineno for d in stmt.decorator_list]
            header_last = _header_last_line(stmt, [*stmt.args.defaults, *stmt.args.kw_defaults])
            first = min([stmt.lineno, *decorators])
            self.units.append(
                _Unit(stmt, scope, loops, first, header_last, self._guards, self._branches)
            )
            self._scope(ScopeKind.FUNCTION, stmt, scope, loops)
        elif isinstance(stmt, ast.ClassDef):
            decorators = [d.lineno for d in stmt.decorator_list]
            parts = [*stmt.bases, *(k.value for k in stmt.keywords)]
            header_last = _header_last_line(stmt, parts)
            first = min([stmt.lineno, *decorators])
            self.units.append(
                _Unit(stmt, scope, loops, first, header_last, self._guards, self._branches)
            )
            self._scope(ScopeKind.CLASS, stmt, scope, loops)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._unit(stmt, scope, loops, _header_last_line(stmt, [stmt.target, stmt.iter]))
            self._body(stmt.body, scope, (*loops, stmt))
            self._body(stmt.orelse, scope, loops)
        elif isinstance(stmt, ast.While):
            self._unit(stmt, scope, loops, _header_last_line(stmt, [stmt.test]))
            self._body(stmt.body, scope, (*loops, stmt))
            self._body(stmt.orelse, scope, loops)
        elif isinstance(stmt, ast.If):
            self._unit(stmt, scope, loops, _header_last_line(stmt, [stmt.test]))
            if not _is_type_checking(stmt.test):
                saved_guards = self._guards
                self._guards = (*saved_guards, stmt.test)
                self._branch(stmt, 0, stmt.body, scope, loops)
                self._guards = saved_guards
            self._branch(stmt, 1, stmt.orelse, scope, loops)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            items: list[ast.AST | None] = [
                p for i in stmt.items for p in (i.context_expr, i.optional_vars)
            ]
            self._unit(stmt, scope, loops, _header_last_line(stmt, items))
            self._body(stmt.body, scope, loops)
        elif isinstance(stmt, ast.Match):
            self._unit(stmt, scope, loops, _header_last_line(stmt, [stmt.subject]))
            for index, case in enumerate(stmt.cases):
                saved = self._branches
                self._branches = (*saved, (id(stmt), index))
                last = max(case.pattern.end_lineno or 0, getattr(case.guard, "end_lineno", 0))
                self.units.append(
                    _Unit(case, scope, loops, case.pattern.lineno, last, self._guards,
                          self._branches)
                )  # fmt: skip
                self._body(case.body, scope, loops)
                self._branches = saved
        elif isinstance(stmt, ast.Global):
            scope.declared_global.update(stmt.names)
            for name in stmt.names:
                self.global_declarers.setdefault(name, []).append(scope)
        elif isinstance(stmt, ast.Nonlocal):
            scope.declared_nonlocal.update(stmt.names)
            for name in stmt.names:
                self.nonlocal_declarers.setdefault(name, []).append(scope)
        else:  # try
            # The body (and its ``else``) or a handler: an import and its fallback in
            # ``except ImportError`` are alternatives, not a change.
            self._branch(stmt, 0, stmt.body, scope, loops)  # type: ignore[attr-defined]
            for index, handler in enumerate(stmt.handlers, 1):  # type: ignore[attr-defined]
                saved = self._branches
                self._branches = (*saved, (id(stmt), index))
                self._unit(handler, scope, loops, _header_last_line(handler, [handler.type]))
                self._body(handler.body, scope, loops)
                self._branches = saved
            self._branch(stmt, 0, stmt.orelse, scope, loops)  # type: ignore[attr-defined]
            self._body(stmt.finalbody, scope, loops)  # type: ignore[attr-defined]


_COMPOUND = frozenset(
    {
        ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While,
        ast.If, ast.With, ast.AsyncWith, ast.Match, ast.Global, ast.Nonlocal, ast.Try,
        getattr(ast, "TryStar", ast.Try),
    }
)  # fmt: skip


class _Collector:
    """Visits the expressions of units and records bindings, reads, mutations and calls."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self.scope = facts.module_scope
        self.loops: tuple[ast.AST, ...] = ()
        self.guards: tuple[ast.expr, ...] = ()
        self.branches: Branches = ()
        self.in_assert = False
        self._expr_handlers: dict[type[ast.AST], Callable[[Any], None]] = {
            ast.Name: self._name,
            ast.Attribute: self._chain,
            ast.Subscript: self._chain,
            ast.Call: self._call,
            ast.Lambda: self._lambda,
            ast.ListComp: self._comprehension,
            ast.SetComp: self._comprehension,
            ast.GeneratorExp: self._comprehension,
            ast.DictComp: self._comprehension,
            ast.NamedExpr: self._walrus,
        }

    # -- units -----------------------------------------------------------------------------------

    def visit_unit(self, unit: _Unit) -> None:
        self.scope, self.loops, self.in_assert = unit.scope, unit.loops, False
        self.guards, self.branches = unit.guards, unit.branches
        node = unit.node
        if isinstance(node, _FUNCTION_NODES):
            self._function_header(node)
        elif isinstance(node, ast.ClassDef):
            for expr in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
                self.expr(expr, node)
            self._bind_name(node.name, BindingKind.CLASS, node, at_start=True)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.expr(node.iter, node)
            self.loops = (*self.loops, node)
            self.target(node.target, BindingKind.FOR, node.target)
        elif isinstance(node, ast.While):
            self.loops = (*self.loops, node)
            self.expr(node.test, node)
        elif isinstance(node, ast.If):
            self.expr(node.test, node)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                self.expr(item.context_expr, node)
                if item.optional_vars is not None:
                    self.target(item.optional_vars, BindingKind.WITH, item.optional_vars)
        elif isinstance(node, ast.ExceptHandler):
            if node.type is not None:
                self.expr(node.type, node)
            if node.name is not None:
                self._bind_name(node.name, BindingKind.EXCEPT, node, at_start=True)
        elif isinstance(node, ast.Match):
            self.expr(node.subject, node)
        elif isinstance(node, ast.match_case):
            self._pattern(node.pattern)
            if node.guard is not None:
                self.expr(node.guard, node.pattern)
        else:
            self._statement(node)

    def _function_header(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.expr(decorator, node)
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                self.expr(default, node)
        if node.decorator_list:
            self.facts.decorated.append((self.scope, node))
        if any(_word(d) == "overload" for d in node.decorator_list):
            # A typing stub: the implementation that follows is the binding.
            self.scope.bound.add(node.name)
            return
        self._bind_name(node.name, BindingKind.DEF, node, at_start=True)

    def _statement(self, node: ast.AST) -> None:
        if isinstance(node, ast.Expr):
            value = node.value
            if isinstance(value, ast.Call):
                self.facts.parents[id(value)] = node
                self._call(value, whole_statement=True)
            else:
                self.expr(value, node)
        elif isinstance(node, ast.Assign):
            self.expr(node.value, node)
            single = node.value if len(node.targets) == 1 else None
            for target in node.targets:
                self.target(target, BindingKind.ASSIGN, node, single)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.expr(node.value, node)
                self.target(node.target, BindingKind.ASSIGN, node, node.value)
            elif isinstance(node.target, ast.Name):
                # ``x: int`` makes ``x`` local to a function without giving it a value.
                self.scope.bound.add(node.target.id)
        elif isinstance(node, ast.AugAssign):
            self.expr(node.value, node)
            target = node.target
            if isinstance(target, ast.Name):
                self._read(target, target, called=False)
                self._bind_name(target.id, BindingKind.AUGMENTED, node)
            else:
                self._mutate(target, node, "augmented in place", node.value)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                self.target(target, BindingKind.DELETE, node)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is not None:
                    self._bind_name(alias.asname, BindingKind.IMPORT, node, imported=alias.name)
                else:
                    head = alias.name.split(".", 1)[0]
                    self._bind_name(head, BindingKind.IMPORT, node, imported=head)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    continue
                dotted = (
                    f"{base}.{alias.name}" if base and not base.endswith(".") else base + alias.name
                )
                self._bind_name(
                    alias.asname or alias.name, BindingKind.IMPORT, node, imported=dotted
                )
        elif isinstance(node, ast.Assert):
            self.in_assert = True
            self._children(node)
            self.in_assert = False
        else:
            self._children(node)

    def _pattern(self, pattern: ast.AST) -> None:
        for node in ast.walk(pattern):
            if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name is not None:
                self._bind_name(node.name, BindingKind.MATCH, node)
            elif isinstance(node, ast.MatchMapping) and node.rest is not None:
                self._bind_name(node.rest, BindingKind.MATCH, node)
            elif isinstance(node, ast.MatchValue):
                self.expr(node.value, node)
            elif isinstance(node, ast.MatchClass):
                self.expr(node.cls, node)
            elif isinstance(node, ast.MatchMapping):
                for key in node.keys:
                    self.expr(key, node)

    # -- expressions -----------------------------------------------------------------------------

    def expr(self, node: ast.expr, parent: ast.AST) -> None:
        self.facts.parents[id(node)] = parent
        handler = self._expr_handlers.get(type(node))
        if handler is not None:
            handler(node)
        else:
            self._children(node)

    def _children(self, node: ast.AST) -> None:
        for child in _child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child, node)
            elif isinstance(child, ast.keyword):
                self.facts.parents[id(child)] = node
                self.expr(child.value, child)
            elif isinstance(child, (ast.comprehension, ast.arguments, ast.withitem)):
                self._children(child)

    def _name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._read(node, node, called=False)
        # Stores and deletes are reached through ``target``.

    def _read(
        self,
        node: ast.Name,
        path_node: ast.expr,
        *,
        called: bool,
        path: tuple[str, ...] = (),
    ) -> None:
        read = Read(
            self.scope, node, self.loops, name=node.id, called=called, path=path,
            path_node=path_node, in_assert=self.in_assert,
        )  # fmt: skip
        self.facts.add_read(read)

    def _chain(self, node: ast.expr) -> None:
        """``a.b[c].d`` read as a whole: one read of ``a`` with its constant path."""
        root, path, steps = chain_root(node)
        facts = self.facts
        for index, step in enumerate(steps):
            if index:
                facts.parents[id(step)] = steps[index - 1]
            if isinstance(step, ast.Attribute):
                facts.add_attribute(
                    AttributeRef(self.scope, step, self.loops, attr=step.attr, base=step.value)
                )
            else:
                self.expr(step.slice, step)  # type: ignore[attr-defined]
        facts.parents[id(root)] = steps[-1]
        if isinstance(root, ast.Name):
            depth = len(path)
            path_node: ast.expr = steps[len(steps) - depth] if depth else root
            self._read(root, path_node, called=False, path=path)
        else:
            handler = self._expr_handlers.get(type(root))
            if handler is not None:
                handler(root)
            else:
                self._children(root)

    def _call(self, node: ast.Call, whole_statement: bool = False) -> None:
        facts = self.facts
        func = node.func
        facts.parents[id(func)] = node
        last: str | None = None
        if isinstance(func, ast.Attribute):
            # ``a.b.method(...)``: the method name ends the path read through ``a``.
            last = func.attr
            facts.add_attribute(
                AttributeRef(self.scope, func, self.loops, attr=last, called=True, base=func.value)
            )
            self.expr(func.value, func)
            if last in MUTATING_METHODS_RETURNING_VALUE or (
                whole_statement and last in MUTATING_METHODS_RETURNING_NONE
            ):
                self._mutate(func.value, node, f"'.{last}()' called", visit=False)
        elif isinstance(func, ast.Name):
            last = func.id
            self._read(func, func, called=True)
        else:
            self.expr(func, node)
        if last == "setattr" and isinstance(func, ast.Name):
            self._setattr(node)
        if last == "getattr" and isinstance(func, ast.Name):
            self._getattr(node)
        modules = _IN_PLACE_FUNCTIONS.get(last or "")
        if modules is not None and node.args:
            receiver_expr = func.value if isinstance(func, ast.Attribute) else None
            self._mutate(
                node.args[0], node, f"written by '{last}()'", None, modules, receiver_expr,
                visit=False,
            )  # fmt: skip
        for argument in node.args:
            self.expr(argument, node)
        for keyword in node.keywords:
            facts.parents[id(keyword)] = node
            self.expr(keyword.value, keyword)
            if keyword.arg == "out":
                self._mutate(keyword.value, node, "written through 'out='", visit=False)

    def _getattr(self, node: ast.Call) -> None:
        """``getattr(obj, "name")`` reaches ``obj.name``; ``getattr(obj, f"set_{k}")`` may reach
        any attribute, recorded under ``*`` (see ``Facts.attribute_refs``)."""
        if len(node.args) < 2:
            return
        name = node.args[1]
        attribute = name.value if isinstance(name, ast.Constant) else "*"
        if not isinstance(attribute, str):
            return
        parent = self.facts.parents.get(id(node))
        called = isinstance(parent, ast.Call) and parent.func is node
        self.facts.add_attribute(
            AttributeRef(self.scope, node, self.loops, attr=attribute, called=called,
                         base=node.args[0])
        )  # fmt: skip

    def _setattr(self, node: ast.Call) -> None:
        """``setattr(obj, "name", value)`` assigns ``obj.name`` (a computed name is not
        followed)."""
        if len(node.args) != 3 or node.keywords:
            return
        target, name, value = node.args
        attribute = name.value if isinstance(name, ast.Constant) else None
        if not isinstance(attribute, str) or not attribute.isidentifier():
            return
        stored = ast.Attribute(value=target, attr=attribute, ctx=ast.Store())
        ast.copy_location(stored, node)
        self._mutate(stored, node, "attribute set by 'setattr()'", value, visit=False)

    def _lambda(self, node: ast.Lambda) -> None:
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                self.expr(default, node)
        scope = self._enter(ScopeKind.LAMBDA, node, "<lambda>", _params(node.args))
        saved = self.scope, self.loops
        self.scope, self.loops = scope, ()
        self.expr(node.body, node)
        self.scope, self.loops = saved

    def _comprehension(self, node: ast.expr) -> None:
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        # The first iterable is evaluated in the enclosing scope, everything else inside.
        self.expr(generators[0].iter, node)
        scope = self._enter(ScopeKind.COMPREHENSION, node, "<comprehension>", ())
        saved = self.scope, self.loops
        self.scope, self.loops = scope, ()
        for index, generator in enumerate(generators):
            if index:
                self.expr(generator.iter, node)
            self.target(generator.target, BindingKind.FOR, generator.target)
            for condition in generator.ifs:
                self.expr(condition, node)
        if isinstance(node, ast.DictComp):
            self.expr(node.key, node)
            self.expr(node.value, node)
        else:
            self.expr(node.elt, node)  # type: ignore[attr-defined]
        self.scope, self.loops = saved

    def _walrus(self, node: ast.NamedExpr) -> None:
        self.expr(node.value, node)
        scope = self.scope
        while scope.kind is ScopeKind.COMPREHENSION and scope.parent is not None:
            scope = scope.parent
        self._bind_name(node.target.id, BindingKind.WALRUS, node, value=node.value, scope=scope)

    def _enter(self, kind: ScopeKind, node: ast.expr, name: str, params: tuple[str, ...]) -> Scope:
        start = (node.lineno, node.col_offset)
        scope = Scope(kind, node, self.scope, name, start, self.loops, params)
        scope.bound.update(params)
        self.scope.children.append(scope)
        self.facts.scopes_by_node[id(node)] = scope
        return scope

    # -- bindings and changes --------------------------------------------------------------------

    def target(
        self,
        target: ast.expr,
        kind: BindingKind,
        site: ast.AST,
        value: ast.expr | None = None,
    ) -> None:
        self.facts.parents[id(target)] = site
        if isinstance(target, ast.Name):
            self._bind_name(target.id, kind, site, value=value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.target(element, kind, site)
        elif isinstance(target, ast.Starred):
            self.target(target.value, kind, site)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            what = "attribute" if isinstance(target, ast.Attribute) else "item"
            verb = "deleted" if kind is BindingKind.DELETE else "assigned"
            self._mutate(target, site, f"{what} {verb}", value if value is not None else None)
        else:
            self.expr(target, site)

    def _bind_name(
        self,
        name: str,
        kind: BindingKind,
        site: ast.AST,
        *,
        value: ast.expr | None = None,
        imported: str | None = None,
        scope: Scope | None = None,
        at_start: bool = False,
    ) -> None:
        scope = scope or self.scope
        scope.bound.add(name)
        binding = Binding(
            scope, site, self.loops, name=name, kind=kind, at_start=at_start, value=value,
            imported=imported, branches=self.branches if scope is self.scope else (),
        )  # fmt: skip
        self.facts.add_binding(binding)

    def _mutate(
        self,
        target: ast.expr,
        site: ast.AST,
        description: str,
        value: ast.expr | None = None,
        needs_module: frozenset[str] = frozenset(),
        receiver: ast.expr | None = None,
        *,
        visit: bool = True,
    ) -> None:
        """Record an in-place change of what ``target`` refers to. With ``visit``, the target is
        an assignment target whose parts are read: ``a.b[k] = v`` loads ``a.b`` and ``k``."""
        root, path, steps = chain_root(target)
        if visit:
            if steps:
                outer = steps[0]
                self.facts.parents[id(outer)] = site
                if isinstance(outer, ast.Subscript):
                    self.expr(outer.slice, outer)
                self.expr(outer.value, outer)  # type: ignore[attr-defined]
            else:
                self.expr(root, site)
        if not isinstance(root, ast.Name):
            return
        mutation = Mutation(
            self.scope, site, self.loops, name=root.id, description=description, path=path,
            value=value, needs_module=needs_module, receiver=receiver,
            guards=self.guards if self.scope.kind is not ScopeKind.LAMBDA else (),
        )  # fmt: skip
        self.facts.add_mutation(mutation)


class Facts:
    """The scope facts of one module, gathered on demand (see the module docstring)."""

    def __init__(self, tree: ast.Module, text: str) -> None:
        self.tree = tree
        skeleton = _Skeleton(tree)
        self.module_scope = skeleton.module
        self.scopes: list[Scope] = skeleton.scopes
        self.units = skeleton.units
        self._firsts = [unit.first for unit in self.units]
        self.global_declarers = skeleton.global_declarers
        self.nonlocal_declarers = skeleton.nonlocal_declarers
        self.scopes_by_node: dict[int, Scope] = {id(s.node): s for s in self.scopes}
        self.parents: dict[int, ast.AST] = {}
        self.bindings: dict[str, list[Binding]] = {}
        self.reads: dict[str, list[Read]] = {}
        self.reads_by_scope: dict[int, list[Read]] = {}
        self.mutations: dict[str, list[Mutation]] = {}
        self.mutated_attributes: dict[str, list[Mutation]] = {}
        self.nested_mutated_attributes: dict[str, list[Mutation]] = {}
        self.attributes: dict[str, list[AttributeRef]] = {}
        self.decorated: list[tuple[Scope, ast.FunctionDef | ast.AsyncFunctionDef]] = []
        self._collector = _Collector(self)
        self._text = _searchable(text)
        self._lines: dict[str, list[int]] = {}
        self._word_index: dict[str, list[int]] | None = None
        self._local: set[tuple[int, str]] = set()
        self._resolved: dict[tuple[int, str], Scope] = {}

    # -- recording (the collector) ---------------------------------------------------------------

    def add_read(self, read: Read) -> None:
        self.reads.setdefault(read.name, []).append(read)
        self.reads_by_scope.setdefault(id(read.scope), []).append(read)

    def add_binding(self, binding: Binding) -> None:
        self.bindings.setdefault(binding.name, []).append(binding)

    def add_mutation(self, mutation: Mutation) -> None:
        self.mutations.setdefault(mutation.name, []).append(mutation)
        if mutation.path and mutation.path[0].startswith("."):
            attribute = mutation.path[0][1:]
            self.mutated_attributes.setdefault(attribute, []).append(mutation)
        for step in mutation.path[1:]:
            if step.startswith("."):
                self.nested_mutated_attributes.setdefault(step[1:], []).append(mutation)

    def add_attribute(self, ref: AttributeRef) -> None:
        self.attributes.setdefault(ref.attr, []).append(ref)

    # -- visiting units on demand ----------------------------------------------------------------

    def lines_of(self, names: Iterable[str]) -> dict[str, list[int]]:
        """The lines where each name occurs as a word (cached per name). A few names are each
        found with ``str.find``; past ``INDEX_AFTER`` names, one pass indexes every word, so
        that a module with thousands of names costs its length once, not once per name."""
        found = {}
        for name in names:
            lines = self._lines.get(name)
            if lines is None:
                if self._word_index is None and len(self._lines) >= INDEX_AFTER:
                    self._word_index = word_index(self._text)
                if self._word_index is not None:
                    lines = self._word_index.get(name, [])
                else:
                    lines = word_lines(self._text, name)
                self._lines[name] = lines
            found[name] = lines
        return found

    def _visit_lines(self, lines: Iterable[int], begin: int, end: int) -> None:
        units, firsts = self.units, self._firsts
        for line in lines:
            index = bisect.bisect_right(firsts, line, begin, end) - 1
            # Units never overlap except on a shared line: the ones starting on the line, and
            # at most one before them that ends on it.
            while index >= begin:
                unit = units[index]
                if unit.last >= line:
                    self._visit(unit)
                if unit.first < line:
                    break
                index -= 1

    def _visit(self, unit: _Unit) -> None:
        if not unit.visited:
            unit.visited = True
            self._collector.visit_unit(unit)

    def ensure_names(self, names: Iterable[str], within: Scope | None = None) -> None:
        """Visit every unit (of ``within``'s body, or of the module) where a name occurs."""
        scope = within or self.module_scope
        begin, end = scope.unit_range
        names = list(names)
        keys = [(id(scope), n) for n in names]
        missing = [n for n, key in zip(names, keys, strict=True) if key not in self._local]
        if not missing:
            return
        if begin >= end:
            self._local.update((id(scope), name) for name in missing)
            return
        # Only the lines within the scope: a common name ("x", "jnp") occurs everywhere, and
        # walking all its lines for each small scope would make a module's cost quadratic.
        first = self.units[begin].first
        last = max(self.units[end - 1].last, getattr(scope.node, "end_lineno", 0) or 0)
        for name, lines in self.lines_of(missing).items():
            self._local.add((id(scope), name))
            low = bisect.bisect_left(lines, first)
            high = bisect.bisect_right(lines, last, low)
            self._visit_lines(lines[low:high], begin, end)

    def ensure_scope(self, scope: Scope) -> None:
        """Visit the whole body of a function, class or module."""
        if scope.kind in (ScopeKind.LAMBDA, ScopeKind.COMPREHENSION):
            return  # complete once the unit holding it was visited
        begin, end = scope.unit_range
        for unit in self.units[begin:end]:
            self._visit(unit)

    # -- questions -------------------------------------------------------------------------------

    def resolve(self, scope: Scope, name: str) -> Scope:
        """The scope owning ``name`` as seen from ``scope`` (the module for globals, builtins)."""
        key = (id(scope), name)
        cached = self._resolved.get(key)
        if cached is not None:
            return cached
        current: Scope | None = scope
        result = self.module_scope
        while current is not None:
            if current is not scope and current.kind is ScopeKind.CLASS:
                # Functions nested in a class body do not see the class's names.
                current = current.parent
                continue
            if current.kind is ScopeKind.MODULE or name in current.declared_global:
                break
            if name not in current.declared_nonlocal:
                if name in current.params:
                    result = current
                    break
                if current.kind in (ScopeKind.FUNCTION, ScopeKind.CLASS):
                    self.ensure_names([name], within=current)
                if name in current.bound:
                    result = current
                    break
            current = current.parent
        self._resolved[key] = result
        return result

    def _declarers(self, owner: Scope, name: str) -> list[Scope]:
        """Scopes that bind ``name`` in ``owner`` through ``global`` or ``nonlocal``."""
        if owner.kind is ScopeKind.MODULE:
            return self.global_declarers.get(name, [])
        return [
            s
            for s in self.nonlocal_declarers.get(name, [])
            if s.is_within(owner) and s is not owner and self.resolve(s, name) is owner
        ]

    def bindings_of(self, owner: Scope, name: str) -> list[Binding]:
        self.ensure_names([name], within=owner)
        for declarer in self._declarers(owner, name):
            self.ensure_names([name], within=declarer)
        result = [b for b in self.bindings.get(name, ()) if self.resolve(b.scope, name) is owner]
        if name in owner.params:
            result.append(self._param_binding(owner, name))
        result.sort(key=lambda b: b.at)
        return result

    def _param_binding(self, owner: Scope, name: str) -> Binding:
        return Binding(owner, owner.node, (), name=name, kind=BindingKind.PARAM, at_start=True)

    def reads_of(self, owner: Scope, name: str) -> list[Read]:
        """Reads of the variable ``name`` of ``owner``, anywhere in the code that can see it."""
        self.ensure_names([name], within=owner)
        return [r for r in self.reads.get(name, ()) if self.resolve(r.scope, name) is owner]

    def mutations_of(self, owner: Scope, name: str) -> list[Mutation]:
        self.ensure_names([name], within=owner)
        return [m for m in self.mutations.get(name, ()) if self.resolve(m.scope, name) is owner]

    def attribute_changes(self, attr: str) -> list[Mutation]:
        """Every ``<name>.attr... = ...`` and in-place change below ``<name>.attr``."""
        self.ensure_names([attr])
        return self.mutated_attributes.get(attr, [])

    def nested_attribute_changes(self, attr: str) -> list[Mutation]:
        """Every ``<name>.<other>...attr = ...``: the attribute of an object reached through
        another (``self.target.mul = v``)."""
        self.ensure_names([attr])
        return self.nested_mutated_attributes.get(attr, [])

    def attribute_refs(self, attr: str) -> list[AttributeRef]:
        """Every ``<anything>.attr`` in the module, with ``getattr(obj, "attr")`` and the
        ``getattr`` calls whose name is computed (they may reach it)."""
        self.ensure_names([attr, "getattr"])
        return self.attributes.get(attr, []) + self.attributes.get("*", [])

    def reads_within(self, scope: Scope) -> Iterator[Read]:
        """Every read in ``scope`` and the scopes nested in it."""
        self.ensure_scope(scope)
        pending = [scope]
        while pending:
            current = pending.pop()
            yield from self.reads_by_scope.get(id(current), ())
            pending.extend(current.children)

    def scope_of(self, node: ast.AST) -> Scope:
        return self.scopes_by_node[id(node)]

    @cached_property
    def script_lines(self) -> tuple[tuple[int, int], ...]:
        """The lines of the module's ``if __name__ == "__main__":`` blocks: code that runs only
        when the module is the program, after which no importer's code runs."""
        found = []
        for statement in self.tree.body:
            if isinstance(statement, ast.If) and _tests_main(statement.test) and statement.body:
                found.append((statement.body[0].lineno, statement.body[-1].end_lineno or 0))
        return tuple(found)

    def in_script(self, line: int) -> bool:
        return any(first <= line <= last for first, last in self.script_lines)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def qualified_name(self, scope: Scope, expr: ast.expr) -> str | None:
        """``jax.jit`` for ``jx.jit`` after ``import jax as jx``; None when not from an import."""
        if isinstance(expr, ast.Name):
            owner = self.resolve(scope, expr.id)
            for binding in self.bindings_of(owner, expr.id):
                if binding.kind is BindingKind.IMPORT:
                    return binding.imported
            return None
        if isinstance(expr, ast.Attribute):
            base = self.qualified_name(scope, expr.value)
            return f"{base}.{expr.attr}" if base else None
        return None

    def release(self) -> None:
        """Break the reference cycles (scopes and their parents, the collector and these
        facts), so that reference counting frees a module's facts the moment they are dropped,
        instead of the cyclic collector walking all of them once per file."""
        for scope in list(self.all_scopes()):
            scope.parent = None
            scope.children = []
        self._collector._expr_handlers.clear()  # bound methods of the collector
        self._collector = None  # type: ignore[assignment]

    def all_scopes(self) -> Iterator[Scope]:
        """Function and class scopes from the statement walk; expression scopes as visited."""
        pending = [self.module_scope]
        while pending:
            current = pending.pop()
            yield current
            pending.extend(reversed(current.children))


_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}


def _child_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.iter_child_nodes`` without its per-field generator: the field names per node type
    are looked up once."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        fields = _FIELDS[type(node)] = type(node)._fields
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    yield item


def _searchable(text: str) -> str:
    """The text as the tokenizer sees its lines and identifiers: every line break is ``\\n``
    and identifiers are NFKC-normalised, as the parser normalises them."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return text


def _tests_main(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    strings = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(strings) == 1
