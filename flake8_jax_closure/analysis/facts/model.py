"""The scope model: scopes, and the bindings, reads and changes that happen in them.

Named after the Python concepts they stand for, as pyflakes names its own. Every fact is a
``Site``: a node of the tree, the scope whose code runs it, and the loops around it there. A
*path* is the constant chain of attributes and constant indexes read or changed below a name
(``CONFIG["clip"]`` is ``('["clip"]',)``, ``hparams.l2`` is ``(".l2",)``).
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterator
from dataclasses import dataclass, field

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

    def walk(self) -> Iterator[Scope]:
        """This scope and every scope nested in it, each before the scopes inside it (the
        nested scopes of expressions only once their unit was visited)."""
        pending = [self]
        while pending:
            current = pending.pop()
            yield current
            pending.extend(current.children)

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

    def qualified_name(self) -> str:
        """``Trainer.set_lr`` for a method, ``set_lr`` for a function of the module."""
        names = []
        current: Scope | None = self
        while current is not None and current.parent is not None:
            names.append(current.name)
            current = current.parent
        return ".".join(reversed(names))

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

    # The name; for ``getattr`` with a computed name, the pattern of the names it may take.
    attr: str = ""
    called: bool = False
    # The expression the attribute is taken from.
    base: ast.expr | None = None

    @property
    def computed(self) -> bool:
        return "*" in self.attr


def exclusive(first: Branches, second: Branches) -> bool:
    """Whether two statements sit in different branches of one ``if``, ``try`` or ``match``."""
    sides = dict(first)
    return any(key in sides and sides[key] != side for key, side in second)


def paths_overlap(first: tuple[str, ...], second: tuple[str, ...]) -> bool:
    """Whether changing one data path can change what reading the other returns."""
    shorter = min(len(first), len(second))
    return first[:shorter] == second[:shorter]


def assignment(statement: ast.AST) -> tuple[list[ast.expr], ast.expr] | None:
    """The targets and the value of ``a = b = value`` or ``a: T = value``; None for any other
    statement, and for an annotation without a value."""
    if isinstance(statement, ast.Assign):
        return statement.targets, statement.value
    if isinstance(statement, ast.AnnAssign) and statement.value is not None:
        return [statement.target], statement.value
    return None


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
