"""Python scopes over a libcst tree: where each name is bound, read, and mutated in place.

One visitor pass records, per scope, every binding, every read of a name, and every in-place
mutation (subscript or attribute assignment, ``del``, a mutating method call) together with its
position and the loops around it. Resolution then follows Python's real rules: parameters and
locals shadow, class bodies are invisible to the functions inside them, comprehensions are their
own scopes, ``global`` and ``nonlocal`` redirect bindings.

Limits, stated first as LibCST does: names reached through ``exec``, ``globals()`` or star
imports are not seen; an object mutated through an alias (``w = weights; w[0] = 1``) or by a
function it is passed to is not seen; annotations are never treated as reads.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

# Where a site stands: the index of an event (entering or leaving a node) in one walk of the
# tree. Comparable like source positions, free to compute; lines and columns come from
# ``Locator`` and cost a pass over the module, so only reporting asks for them.
Order = int


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


@dataclass(eq=False)
class Scope:
    kind: ScopeKind
    node: cst.CSTNode
    parent: Scope | None
    name: str
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    bound: set[str] = field(default_factory=set)
    children: list[Scope] = field(default_factory=list)
    # Where the scope's node starts, and the loops of the parent scope around it.
    start: Order = 0
    loops: tuple[cst.CSTNode, ...] = ()

    def is_within(self, other: Scope) -> bool:
        scope: Scope | None = self
        while scope is not None:
            if scope is other:
                return True
            scope = scope.parent
        return False

    def enclosing_function_name(self) -> str | None:
        """The name of the nearest function or lambda around (or equal to) this scope."""
        scope: Scope | None = self
        while scope is not None:
            if scope.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
                return scope.name
            scope = scope.parent
        return None


class Locator:
    """Lines and columns of nodes, computed for the whole module on the first question."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self._wrapper = wrapper
        self._ranges: Mapping[cst.CSTNode, CodeRange] | None = None

    def range(self, node: cst.CSTNode) -> CodeRange:
        if self._ranges is None:
            self._ranges = self._wrapper.resolve(PositionProvider)
        return self._ranges[node]


@dataclass(eq=False)
class Site:
    """A place in the code: the scope it runs in, where it is, and the loops around it there."""

    scope: Scope
    node: cst.CSTNode
    start: Order
    end: Order
    loops: tuple[cst.CSTNode, ...]
    locator: Locator | None = None

    def _range(self) -> CodeRange:
        assert self.locator is not None
        return self.locator.range(self.node)

    @property
    def line(self) -> int:
        return self._range().start.line

    @property
    def column(self) -> int:
        return self._range().start.column

    @property
    def end_line(self) -> int:
        return self._range().end.line

    @property
    def end_column(self) -> int:
        return self._range().end.column


@dataclass(eq=False)
class Binding(Site):
    name: str = ""
    kind: BindingKind = BindingKind.ASSIGN
    # Takes effect where its node starts (``def``, parameters) instead of where it ends.
    at_start: bool = False
    # The assigned expression, where there is exactly one (``x = <value>``).
    value: cst.BaseExpression | None = None
    # ``import a.b as c`` binds ``c`` to ``a.b``; other kinds leave it empty.
    imported: str | None = None

    @property
    def line(self) -> int:
        """Where the binding takes effect: the end of its statement, or the start of a def."""
        code_range = self._range()
        return (code_range.start if self.at_start else code_range.end).line


@dataclass(eq=False)
class Read(Site):
    name: str = ""
    # True when the name is the callee of a call (``name(...)``).
    called: bool = False
    # The constant data path read through the name: ``CONFIG["clip"]`` reads ``('["clip"]',)``,
    # ``hparams.l2`` reads ``(".l2",)``; a method call or a computed index ends the path.
    path: tuple[str, ...] = ()
    # The expression that reads that path (the name itself when the path is empty).
    path_node: cst.BaseExpression | None = None


@dataclass(eq=False)
class Mutation(Site):
    name: str = ""
    root: cst.Name | None = None
    description: str = ""
    # The constant path changed under the name (``CONFIG["clip"] = 1`` changes ``["clip"]``).
    path: tuple[str, ...] = ()


def paths_overlap(first: tuple[str, ...], second: tuple[str, ...]) -> bool:
    """Whether changing one data path can change what reading the other returns."""
    shorter = min(len(first), len(second))
    return first[:shorter] == second[:shorter]


def path_element(node: cst.CSTNode) -> str | None:
    """``.attr`` or ``[constant]`` for one step of an attribute or subscript chain."""
    if isinstance(node, cst.Attribute):
        return f".{node.attr.value}"
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(
            index.value, (cst.SimpleString, cst.Integer)
        ):
            try:
                return f"[{ast.literal_eval(index.value.value)!r}]"
            except (ValueError, SyntaxError):
                return None
    return None


@dataclass(eq=False)
class ScopeModel:
    module: cst.Module
    module_scope: Scope
    scopes_by_node: dict[int, Scope]
    bindings: list[Binding]
    reads: list[Read]
    mutations: list[Mutation]
    calls: list[Site]
    decorated: list[tuple[Scope, cst.FunctionDef]]
    locator: Locator
    parents: dict[int, cst.CSTNode]
    entered: dict[int, Order]
    left: dict[int, Order]
    # Sites grouped by the variable they touch: (id of the owning scope, name).
    bindings_by_variable: dict[tuple[int, str], list[Binding]] = field(default_factory=dict)
    mutations_by_variable: dict[tuple[int, str], list[Mutation]] = field(default_factory=dict)
    reads_by_variable: dict[tuple[int, str], list[Read]] = field(default_factory=dict)

    def index_variables(self) -> None:
        for binding in self.bindings:
            key = (id(self.resolve(binding.scope, binding.name)), binding.name)
            self.bindings_by_variable.setdefault(key, []).append(binding)
        for mutation in self.mutations:
            key = (id(self.resolve(mutation.scope, mutation.name)), mutation.name)
            self.mutations_by_variable.setdefault(key, []).append(mutation)
        for read in self.reads:
            key = (id(self.resolve(read.scope, read.name)), read.name)
            self.reads_by_variable.setdefault(key, []).append(read)

    def bindings_of(self, owner: Scope, name: str) -> list[Binding]:
        return self.bindings_by_variable.get((id(owner), name), [])

    def mutations_of(self, owner: Scope, name: str) -> list[Mutation]:
        return self.mutations_by_variable.get((id(owner), name), [])

    def reads_of(self, owner: Scope, name: str) -> list[Read]:
        return self.reads_by_variable.get((id(owner), name), [])

    def resolve(self, scope: Scope, name: str) -> Scope:
        """The scope owning ``name`` as seen from ``scope`` (the module for globals, builtins)."""
        return resolve(scope, name, self.module_scope)

    def qualified_name(self, scope: Scope, expr: cst.BaseExpression) -> str | None:
        """``jax.jit`` for ``jx.jit`` after ``import jax as jx``; None when not from an import."""
        if isinstance(expr, cst.Name):
            owner = self.resolve(scope, expr.value)
            for binding in self.bindings_of(owner, expr.value):
                if binding.kind is BindingKind.IMPORT:
                    return binding.imported
            return None
        if isinstance(expr, cst.Attribute):
            base = self.qualified_name(scope, expr.value)
            return f"{base}.{expr.attr.value}" if base else None
        return None

    def scope_of(self, node: cst.CSTNode) -> Scope:
        return self.scopes_by_node[id(node)]

    def position(self, node: cst.CSTNode) -> CodeRange:
        """Lines and columns: costs a pass over the module the first time; use for reporting."""
        return self.locator.range(node)

    def order(self, node: cst.CSTNode) -> Order:
        """Where ``node`` starts, for comparisons with sites."""
        return self.entered[id(node)]

    def order_end(self, node: cst.CSTNode) -> Order:
        """Where ``node`` ends, for comparisons with sites."""
        return self.left[id(node)]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(id(node))


def resolve(scope: Scope, name: str, module_scope: Scope) -> Scope:
    if name in scope.declared_global:
        return module_scope
    if name in scope.bound and name not in scope.declared_nonlocal:
        return scope
    current = scope.parent
    while current is not None:
        if current.kind is ScopeKind.CLASS:
            # Functions nested in a class body do not see the class's names.
            current = current.parent
            continue
        if current.kind is ScopeKind.MODULE:
            return current
        if name in current.declared_global:
            return module_scope
        if name in current.bound and name not in current.declared_nonlocal:
            return current
        current = current.parent
    return module_scope


# Methods that change their receiver in place. Those that return None only count as a whole
# statement (``d.update(x)``): ``state = tx.update(g, s)`` is optax, not dict.update.
MUTATING_METHODS_RETURNING_NONE = frozenset(
    {
        "append", "extend", "insert", "remove", "clear", "update", "sort", "reverse",
        "add", "discard", "difference_update", "intersection_update",
        "symmetric_difference_update", "appendleft", "extendleft", "rotate",
        "fill", "resize", "put", "itemset", "setfield", "__setitem__", "__delitem__",
    }
)  # fmt: skip
MUTATING_METHODS_RETURNING_VALUE = frozenset({"pop", "popitem", "setdefault", "popleft"})


def mutation_root(expr: cst.BaseExpression) -> tuple[cst.Name | None, tuple[str, ...]]:
    """The variable at the bottom of ``a.b[c].d``, and the constant path below it."""
    steps: list[str | None] = []
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        steps.append(path_element(expr))
        expr = expr.value
    steps.reverse()
    # A computed index (``a[k]``) may reach anything below it: the path stops there.
    path = tuple(steps[: steps.index(None)] if None in steps else steps)
    return (expr if isinstance(expr, cst.Name) else None), path  # type: ignore[return-value]


class _Collector(cst.CSTVisitor):
    def __init__(self, module: cst.Module, call_names: frozenset[str]) -> None:
        super().__init__()
        self.events = 0
        self.entered: dict[int, Order] = {}
        self.left: dict[int, Order] = {}
        self.module_scope = Scope(ScopeKind.MODULE, module, None, "<module>")
        self.scope = self.module_scope
        self.scopes_by_node: dict[int, Scope] = {id(module): self.module_scope}
        self.loops: list[cst.CSTNode] = []
        self.not_reads: set[int] = set()
        self.targets: dict[int, tuple[BindingKind, cst.CSTNode, cst.BaseExpression | None]] = {}
        self.stack: list[cst.CSTNode] = []
        self.parents: dict[int, cst.CSTNode] = {}
        self.call_names = set(call_names)
        self.bindings: list[Binding] = []
        self.reads: list[Read] = []
        self.mutations: list[Mutation] = []
        self.calls: list[Site] = []
        self.decorated: list[tuple[Scope, cst.FunctionDef]] = []

    # -- bookkeeping ---------------------------------------------------------------------------

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parents[id(node)] = self.stack[-1]
        self.stack.append(node)
        self.entered[id(node)] = self.events
        self.events += 1
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        self.stack.pop()
        self.left[id(original_node)] = self.events
        self.events += 1

    def finish(self, locator: Locator) -> None:
        """Give every site its order (ends are known only once the walk has left the node)."""
        for binding in self.bindings:
            at = (self.entered if binding.at_start else self.left)[id(binding.node)]
            binding.start = binding.end = at
        for site in (*self.reads, *self.mutations, *self.calls):
            site.start, site.end = self.entered[id(site.node)], self.left[id(site.node)]
        for site in (*self.bindings, *self.reads, *self.mutations, *self.calls):
            site.locator = locator

    @contextmanager
    def _enter(self, kind: ScopeKind, node: cst.CSTNode, name: str) -> Iterator[Scope]:
        scope = Scope(
            kind, node, self.scope, name, start=self.entered[id(node)], loops=tuple(self.loops)
        )
        self.scope.children.append(scope)
        self.scopes_by_node[id(node)] = scope
        saved_scope, saved_loops = self.scope, self.loops
        self.scope, self.loops = scope, []
        try:
            yield scope
        finally:
            self.scope, self.loops = saved_scope, saved_loops

    def _bind(
        self,
        name_node: cst.Name,
        kind: BindingKind,
        site: cst.CSTNode,
        *,
        value: cst.BaseExpression | None = None,
        imported: str | None = None,
        scope: Scope | None = None,
        at_start: bool = False,
    ) -> None:
        scope = scope or self.scope
        scope.bound.add(name_node.value)
        if imported is not None and imported.rsplit(".", 1)[-1] in self.call_names:
            # ``from jax import jit as J``: calls of ``J`` are calls of ``jit``.
            self.call_names.add(name_node.value)
        self.not_reads.add(id(name_node))
        # A binding takes effect when its statement completes (``x = f(x)`` reads first).
        self.bindings.append(
            Binding(
                scope, site, 0, 0, tuple(self.loops), name=name_node.value, kind=kind,
                value=value, imported=imported, at_start=at_start,
            )
        )  # fmt: skip

    def _mark_target(
        self,
        target: cst.BaseExpression,
        kind: BindingKind,
        site: cst.CSTNode,
        value: cst.BaseExpression | None = None,
    ) -> None:
        if isinstance(target, cst.Name):
            self.targets[id(target)] = (kind, site, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._mark_target(element.value, kind, site)
        elif isinstance(target, cst.StarredElement):
            self._mark_target(target.value, kind, site)
        elif isinstance(target, (cst.Attribute, cst.Subscript)):
            what = "attribute" if isinstance(target, cst.Attribute) else "item"
            verb = "deleted" if kind is BindingKind.DELETE else "assigned"
            self._mutate(target, site, f"{what} {verb}")

    def _mutate(self, target: cst.BaseExpression, site: cst.CSTNode, description: str) -> None:
        """Record an in-place change of what ``target`` refers to."""
        root, path = mutation_root(target)
        if root is None:
            return
        self.mutations.append(
            Mutation(
                self.scope, site, 0, 0, tuple(self.loops),
                name=root.value, root=root, description=description, path=path,
            )
        )  # fmt: skip

    def _read_path(self, node: cst.Name) -> tuple[tuple[str, ...], cst.BaseExpression]:
        path: list[str] = []
        current: cst.BaseExpression = node
        index = len(self.stack) - 2
        while index >= 0:
            parent = self.stack[index]
            if (
                not isinstance(parent, (cst.Attribute, cst.Subscript))
                or parent.value is not current
            ):
                break
            grandparent = self.stack[index - 1] if index > 0 else None
            if isinstance(grandparent, cst.Call) and grandparent.func is parent:
                break  # a method call reads the whole object
            element = path_element(parent)
            if element is None:
                break
            path.append(element)
            current = parent
            index -= 1
        return tuple(path), current

    def _nearest_non_comprehension(self) -> Scope:
        scope = self.scope
        while scope.kind is ScopeKind.COMPREHENSION and scope.parent is not None:
            scope = scope.parent
        return scope

    # -- names -----------------------------------------------------------------------------------

    def visit_Name(self, node: cst.Name) -> bool:
        key = id(node)
        if key in self.targets:
            kind, site, value = self.targets.pop(key)
            scope = self._nearest_non_comprehension() if kind is BindingKind.WALRUS else None
            self._bind(node, kind, site, value=value, scope=scope)
        elif key not in self.not_reads:
            parent = self.stack[-2] if len(self.stack) > 1 else None
            called = isinstance(parent, cst.Call) and parent.func is node
            path, path_node = self._read_path(node)
            self.reads.append(
                Read(
                    self.scope, node, 0, 0, tuple(self.loops),
                    name=node.value, called=called, path=path, path_node=path_node,
                )
            )  # fmt: skip
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.not_reads.add(id(node.attr))
        return True

    def visit_Arg(self, node: cst.Arg) -> bool:
        if node.keyword is not None:
            self.not_reads.add(id(node.keyword))
        return True

    def visit_Annotation(self, node: cst.Annotation) -> bool:
        # Annotations never feed values into compiled code.
        return False

    def visit_TypeParameters(self, node: cst.TypeParameters) -> bool:
        return False

    def visit_Global(self, node: cst.Global) -> bool:
        self.scope.declared_global.update(item.name.value for item in node.names)
        return False

    def visit_Nonlocal(self, node: cst.Nonlocal) -> bool:
        self.scope.declared_nonlocal.update(item.name.value for item in node.names)
        return False

    # -- scopes ----------------------------------------------------------------------------------

    def _visit_defaults(self, params: cst.Parameters) -> None:
        for param in _all_params(params):
            if param.default is not None:
                param.default.visit(self)

    def _bind_params(self, params: cst.Parameters, site: cst.CSTNode) -> None:
        for param in _all_params(params):
            self._bind(param.name, BindingKind.PARAM, site, at_start=True)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        for decorator in node.decorators:
            decorator.visit(self)
        self._visit_defaults(node.params)
        if node.decorators:
            self.decorated.append((self.scope, node))
        self._bind(node.name, BindingKind.DEF, node, at_start=True)
        with self._enter(ScopeKind.FUNCTION, node, node.name.value):
            self._bind_params(node.params, node)
            node.body.visit(self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self._visit_defaults(node.params)
        with self._enter(ScopeKind.LAMBDA, node, "<lambda>"):
            self._bind_params(node.params, node)
            node.body.visit(self)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        for decorator in node.decorators:
            decorator.visit(self)
        for arg in (*node.bases, *node.keywords):
            arg.visit(self)
        self._bind(node.name, BindingKind.CLASS, node, at_start=True)
        with self._enter(ScopeKind.CLASS, node, node.name.value):
            node.body.visit(self)
        return False

    def _visit_comprehension(
        self, node: cst.BaseComp, elements: Sequence[cst.BaseExpression]
    ) -> bool:
        # The first iterable is evaluated in the enclosing scope, everything else inside.
        for_in: cst.CompFor | None = node.for_in
        assert for_in is not None
        for_in.iter.visit(self)
        with self._enter(ScopeKind.COMPREHENSION, node, "<comprehension>"):
            first = True
            while for_in is not None:
                if not first:
                    for_in.iter.visit(self)
                self._mark_target(for_in.target, BindingKind.FOR, for_in.target)
                for_in.target.visit(self)
                for condition in for_in.ifs:
                    condition.visit(self)
                for_in, first = for_in.inner_for_in, False
            for element in elements:
                element.visit(self)
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return self._visit_comprehension(node, [node.elt])

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return self._visit_comprehension(node, [node.elt])

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return self._visit_comprehension(node, [node.elt])

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return self._visit_comprehension(node, [node.key, node.value])

    # -- loops -----------------------------------------------------------------------------------

    def visit_For(self, node: cst.For) -> bool:
        node.iter.visit(self)
        self.loops.append(node)
        self._mark_target(node.target, BindingKind.FOR, node.target)
        node.target.visit(self)
        node.body.visit(self)
        self.loops.pop()
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_While(self, node: cst.While) -> bool:
        self.loops.append(node)
        node.test.visit(self)
        node.body.visit(self)
        self.loops.pop()
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    # -- bindings --------------------------------------------------------------------------------

    def visit_Assign(self, node: cst.Assign) -> bool:
        single = len(node.targets) == 1
        for target in node.targets:
            self._mark_target(
                target.target, BindingKind.ASSIGN, node, node.value if single else None
            )
        return True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        if node.value is not None:
            self._mark_target(node.target, BindingKind.ASSIGN, node, node.value)
            node.target.visit(self)
            node.value.visit(self)
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        target = node.target
        if isinstance(target, cst.Name):
            # ``x += 1`` reads ``x`` and then rebinds it.
            self.reads.append(
                Read(
                    self.scope, target, 0, 0,
                    tuple(self.loops), name=target.value,
                )
            )  # fmt: skip
            self.targets[id(target)] = (BindingKind.AUGMENTED, node, None)
        else:
            self._mutate(target, node, "augmented in place")
        return True

    def visit_Del(self, node: cst.Del) -> bool:
        self._mark_target(node.target, BindingKind.DELETE, node)
        return True

    def visit_WithItem(self, node: cst.WithItem) -> bool:
        if node.asname is not None:
            self._mark_target(node.asname.name, BindingKind.WITH, node)
        return True

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> bool:
        if node.name is not None:
            self._mark_target(node.name.name, BindingKind.EXCEPT, node.name)
        return True

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        self._mark_target(node.target, BindingKind.WALRUS, node, node.value)
        return True

    def visit_MatchAs(self, node: cst.MatchAs) -> bool:
        if node.name is not None:
            self._mark_target(node.name, BindingKind.MATCH, node)
        return True

    def visit_MatchStar(self, node: cst.MatchStar) -> bool:
        if node.name is not None:
            self._mark_target(node.name, BindingKind.MATCH, node)
        return True

    def visit_MatchMapping(self, node: cst.MatchMapping) -> bool:
        if node.rest is not None:
            self._mark_target(node.rest, BindingKind.MATCH, node)
        return True

    def visit_MatchKeywordElement(self, node: cst.MatchKeywordElement) -> bool:
        self.not_reads.add(id(node.key))
        return True

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            dotted = _dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind(alias.asname.name, BindingKind.IMPORT, node, imported=dotted)
            else:
                head: cst.BaseExpression = alias.name
                while isinstance(head, cst.Attribute):
                    head = head.value
                assert isinstance(head, cst.Name)
                self._bind(head, BindingKind.IMPORT, node, imported=head.value)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if isinstance(node.names, cst.ImportStar):
            return False
        base = "." * len(node.relative) + (_dotted(node.module) if node.module is not None else "")
        for alias in node.names:
            name = _dotted(alias.name)
            target = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(target, cst.Name):
                dotted = f"{base}.{name}" if base and not base.endswith(".") else base + name
                self._bind(target, BindingKind.IMPORT, node, imported=dotted)
        return False

    # -- calls -----------------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        last = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
        # ``partial(jax.jit, ...)(f)``: the callee is itself a call.
        if last in self.call_names or isinstance(func, cst.Call):
            self.calls.append(Site(self.scope, node, 0, 0, tuple(self.loops)))
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            parent = self.stack[-2] if len(self.stack) > 1 else None
            whole_statement = isinstance(parent, cst.Expr)
            if method in MUTATING_METHODS_RETURNING_VALUE or (
                whole_statement and method in MUTATING_METHODS_RETURNING_NONE
            ):
                self._mutate(func.value, node, f"'.{method}()' called")
        return True


def _all_params(params: cst.Parameters) -> Iterator[cst.Param]:
    yield from params.posonly_params
    yield from params.params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    yield from params.kwonly_params
    if params.star_kwarg is not None:
        yield params.star_kwarg


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def build_scope_model(module: cst.Module, call_names: frozenset[str]) -> ScopeModel:
    """Collect scopes, bindings, reads and mutations of ``module``.

    ``call_names`` are the last name components of callees worth remembering (``jit``,
    ``partial``, ...), so that finding compiled functions later does not walk the tree again.
    """
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    locator = Locator(wrapper)
    collector = _Collector(module, call_names)
    module.visit(collector)
    collector.finish(locator)
    model = ScopeModel(
        module=module,
        module_scope=collector.module_scope,
        scopes_by_node=collector.scopes_by_node,
        bindings=collector.bindings,
        reads=collector.reads,
        mutations=collector.mutations,
        calls=collector.calls,
        decorated=collector.decorated,
        locator=locator,
        parents=collector.parents,
        entered=collector.entered,
        left=collector.left,
    )
    model.index_variables()
    return model
