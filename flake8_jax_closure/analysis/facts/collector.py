"""The expression collector: visits the expressions of a unit, once, and records its bindings,
reads, in-place changes and attribute references in the facts.

Python's rules as the collector applies them: ``x = f(x)`` reads before it binds; lambdas and
comprehensions are scopes of their own (the first iterable of a comprehension runs outside it);
an assignment expression binds in the function around its comprehension; ``a.b[k] = v`` and the
mutating methods and functions of ``mutating`` change what ``a`` refers to, they bind nothing;
annotations are never read.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..names import last_name
from .loop_names import literal_loop_names
from .model import (
    AttributeRef,
    Binding,
    BindingKind,
    Branches,
    Mutation,
    Read,
    Scope,
    ScopeKind,
    chain_root,
)
from .mutating import (
    IN_PLACE_FUNCTIONS,
    MUTATING_METHODS_RETURNING_NONE,
    MUTATING_METHODS_RETURNING_VALUE,
)
from .skeleton import FUNCTION_NODES, Unit, parameter_names

if TYPE_CHECKING:
    from .queries import Facts


class Collector:
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

    def release(self) -> None:
        """Drop the handlers: bound methods, which hold the collector and so the facts."""
        self._expr_handlers.clear()

    # -- units -----------------------------------------------------------------------------------

    def visit_unit(self, unit: Unit) -> None:
        self.scope, self.loops, self.in_assert = unit.scope, unit.loops, False
        self.guards, self.branches = unit.guards, unit.branches
        node = unit.node
        if isinstance(node, FUNCTION_NODES):
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
        if last == "at" and isinstance(func, ast.Attribute) and node.args:
            self._ufunc_at(func.value, node)
        modules = IN_PLACE_FUNCTIONS.get(last or "")
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

    def _ufunc_at(self, ufunc: ast.expr, node: ast.Call) -> None:
        """``np.add.at(a, indices, b)``: a NumPy ufunc's ``at`` writes into ``a``, unbuffered.
        Only ``<numpy>.<name>.at(...)`` counts: JAX's ``x.at[i]`` is a subscript, not a call."""
        if isinstance(ufunc, ast.Attribute):
            self._mutate(
                node.args[0], node, f"written by '{ufunc.attr}.at()'", None,
                frozenset({"numpy"}), ufunc.value, visit=False,
            )  # fmt: skip

    def _getattr(self, node: ast.Call) -> None:
        """``getattr(obj, "name")`` reaches ``obj.name``; ``getattr(obj, attr)`` in ``for attr
        in ["nx", "omega"]:`` reaches those two (``loop_names``); ``getattr(obj, f"{k}_act")``
        may reach any attribute whose name ends in ``_act``, recorded under ``*_act``, and
        ``getattr(obj, key)`` any attribute, under ``*`` (see ``Facts.attribute_refs``)."""
        if len(node.args) < 2:
            return
        name = node.args[1]
        if isinstance(name, ast.Constant):
            attributes: tuple[object, ...] = (name.value,)
        else:
            attributes = literal_loop_names(name, self.loops, self.scope) or (_name_pattern(name),)
        parent = self.facts.parents.get(id(node))
        called = isinstance(parent, ast.Call) and parent.func is node
        for attribute in attributes:
            if isinstance(attribute, str):
                self.facts.add_attribute(
                    AttributeRef(self.scope, node, self.loops, attr=attribute, called=called,
                                 base=node.args[0])
                )  # fmt: skip

    def _setattr(self, node: ast.Call) -> None:
        """``setattr(obj, "name", value)`` assigns ``obj.name``; with a computed name
        (``setattr(args, key, value)`` over a dict of overrides) it may assign any attribute,
        so it changes ``obj`` itself."""
        if len(node.args) != 3 or node.keywords:
            return
        target, name, value = node.args
        if not isinstance(name, ast.Constant):
            self._mutate(target, node, "attributes set by 'setattr()' by name", visit=False)
            return
        attribute = name.value
        if not isinstance(attribute, str) or not attribute.isidentifier():
            return
        stored = ast.Attribute(value=target, attr=attribute, ctx=ast.Store())
        ast.copy_location(stored, node)
        self._mutate(stored, node, "attribute set by 'setattr()'", value, visit=False)

    def _lambda(self, node: ast.Lambda) -> None:
        for default in (*node.args.defaults, *node.args.kw_defaults):
            if default is not None:
                self.expr(default, node)
        scope = self._enter(ScopeKind.LAMBDA, node, "<lambda>", parameter_names(node.args))
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


def _word(expr: ast.expr) -> str:
    return last_name(expr) or ""


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


def _name_pattern(name: ast.expr) -> str:
    """The names a computed attribute name may take, as a ``fnmatch`` pattern: an f-string's
    text kept and each of its fields any text (``f"{method}_act"`` is ``*_act``); else any."""
    if not isinstance(name, ast.JoinedStr):
        return "*"
    parts = []
    for value in name.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(_escaped(value.value))
        elif not parts or parts[-1] != "*":
            parts.append("*")
    return "".join(parts) or "*"


def _escaped(text: str) -> str:
    """``text`` matched as it is by ``fnmatch`` (its ``*``, ``?`` and ``[`` taken literally)."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)
