"""What each compiled function reads from outside itself, and which changes to those values can
fall between a trace and a later compiled call (``timing``).

Reads count where they feed the compiled result: directly in the compiled function (and the
functions and lambdas nested in it), or inside functions of the module that it calls by name
(``l2(w)`` reading ``WEIGHT_DECAY``): plain ones, and compiled ones, since tracing the caller
traces the compiled callee inline (or reuses the callee's own trace), so what the callee reads is
baked into the caller's compiled code too. Reads only checked by ``assert`` while tracing, and
objects the compiled function itself appends to, are trace-time work, not values.

Work is done backwards, as flake8-bugbear's B023 does: the reads of each compiled function are
collected first, and the timing of changes is worked out only for variables that change at all.
"""

from __future__ import annotations

import ast
import builtins
import enum
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

from ..diagnostics import Role, WitnessStep
from .bindings import (
    fed_from_arguments,
    fields_below,
    holds_ref,
    holds_value,
    imports_settings,
    initial_bindings,
    keeps_fields_read,
    library_function_call,
    library_package,
    module_path,
    names_module,
    same_definition_everywhere,
    same_import,
    same_value_everywhere,
    unchanging_value,
    updates_traced_setting,
    waits_for_itself,
)
from .cached_bodies import SLICING_BODIES, cached_body_kinds, call_given
from .callgraph.events import END, Event, EventKind, Reach, level
from .callgraph.functions import CONSTRUCTORS
from .callgraph.graph import CallGraph
from .compiled import CompiledFunction, Form, self_is_static
from .facts.model import (
    Binding,
    BindingKind,
    Mutation,
    Pos,
    Read,
    Scope,
    ScopeKind,
    Site,
    paths_overlap,
)
from .facts.mutating import MUTATING_METHODS_RETURNING_NONE, MUTATING_METHODS_RETURNING_VALUE
from .facts.queries import Facts
from .guards import is_none, returns_when_set, unset_name
from .handed import Handing, ParameterChanges
from .layout import keeps_array_layout
from .memo_tables import fills_a_table
from .names import FUNCTIONAL_PACKAGES
from .reachable import after_a_jump
from .receiver import called_method, method_self_name, paths_read_by
from .repeated_setting import sets_what_it_holds
from .restored import restored_bindings
from .shaped_by_change import sizing_names
from .static_arguments import StaticParameters, static_parameters
from .steady import same_in_every_pass
from .structure import sets_split_structure
from .timing import CompiledLife, StalePath, compiled_life, memoised, stale_path
from .unread import handed_unread

if TYPE_CHECKING:
    from .project import ProjectView

# Statements and expressions that may run a node inside them not at all, or more than once.
_CONDITIONAL = (
    ast.If, ast.IfExp, ast.Try, ast.With, ast.For, ast.AsyncFor, ast.While, ast.Match,
    ast.BoolOp, ast.comprehension,
)  # fmt: skip
# What calling a method of a class reads of ``self`` (None: may read anything).
MethodReader = Callable[[str], list[tuple[str, ...]] | None]

# Binding kinds that make a name refer to a module or a function: in-place changes to those are
# not value changes (``jnp.append(...)`` is a call, not a mutation of ``jnp``). Classes are
# objects whose attributes do change (``Defaults.EPS = 1e-6``).
_DEFINITION_KINDS = frozenset({BindingKind.IMPORT, BindingKind.DEF, BindingKind.CLASS})
_HELPER_DEPTH = 3
# Functions that hand a function to the host, to run at every call of the compiled code.
_HOST_CALLBACKS = frozenset(
    {"io_callback", "pure_callback", "callback", "id_tap", "call", "buffer_callback"}
)
_PARTIAL = frozenset({"functools.partial"})


_COMPREHENSIONS = (
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.comprehension,
)  # fmt: skip
# Builtins that read a function's locals by name.
_NAMESPACE_READERS = frozenset({"locals", "vars", "eval", "exec"})


class Owner(enum.Enum):
    """Where a captured variable lives: what separates the rules on values."""

    ENCLOSING = "a variable of an enclosing function or class"
    MODULE = "a global"


EVERY_OWNER = frozenset(Owner)


# Transforms that keep calling the method they are given: what they read of its object is what
# the method reads.
_METHOD_WRAPPERS = frozenset(
    {"jax.vmap", "jax.jit", "jax.checkpoint", "jax.remat", "functools.partial"}
)


@dataclass(frozen=True, eq=False)
class StaleCapture:
    """A compiled function reads ``name`` from ``owner``; the value can change after a trace."""

    compiled: CompiledFunction = field(repr=False)
    name: str
    owner: Scope = field(repr=False)
    first_read: Read = field(repr=False)
    reads: tuple[Read, ...] = field(repr=False)
    rebinding: Binding | None = field(repr=False)
    mutation: Mutation | None = field(repr=False)
    # Compiled code holding ``self``: the attribute of ``self`` (``name``) that changes, and how
    # the compiled function holds ``self``: a static argument, a bound method, or a closure.
    attribute: str | None = None
    static_self: bool = False
    bound_method: bool = False
    # How the value is reached, when not directly: ``helper()`` (a function of the module, or a
    # method of the class) or a property ``k``.
    read_through: str | None = None
    # The name is a class or a module (``Defaults.EPS``, ``cls.scale``, ``config.LR``): its
    # attributes change, and are shown with it.
    class_attribute: bool = False
    # How the reported change makes a compiled call stale: a witness, or an API hazard.
    path: StalePath = field(default_factory=StalePath, repr=False)
    # The function whose callers change the object they handed it (``make_step(cfg)``).
    handed_by_callers_of: str | None = None
    # Another file of the project binds the module global again (``sim.DT = dt``).
    rebound_elsewhere: bool = False
    # Why no fix can pass the value (a global of another module, read by its own function).
    no_fix: str | None = None
    # The store another file makes in a method this module's code runs (a subclass's
    # override of a hook the class calls): its line there, and the method as ``via``.
    changed_in: WitnessStep | None = None

    @property
    def changed_elsewhere(self) -> WitnessStep | None:
        """The change step, when another file of the project makes the change (no rebinding
        or mutation of this module is the change)."""
        if self.rebinding is not None or self.mutation is not None:
            return None
        if self.changed_in is not None:
            return self.changed_in
        return next((s for s in self.path.steps if s.role is Role.CHANGE), None)

    @property
    def is_global(self) -> bool:
        return _owner(self.owner) is Owner.MODULE


class CaptureAnalysis:
    def __init__(
        self,
        facts: Facts,
        graph: CallGraph,
        compiled: list[CompiledFunction],
        project: ProjectView | None = None,
    ) -> None:
        self.facts = facts
        self.graph = graph
        # The project's other modules: what a method of a class one of them defines reads,
        # and the functions they define.
        self.project = project
        self.elsewhere = None if project is None else project.function_def
        self.compiled_functions = {id(site.function) for site in compiled}
        # Defs whose name is the compiled object itself (``@jax.jit def inner``): a call of the
        # name inside compiled code traces the def there.
        self.decorated_functions = {
            id(site.function) for site in compiled if site.form is Form.DECORATOR
        }
        # ``loss = jax.jit(lambda ...)``: the compile call, and the function it compiles.
        self.assigned_functions = {
            id(site.site): site.scope for site in compiled if site.form is Form.ASSIGNED
        }
        # Methods compiled with ``self`` static: the rule on ``self`` times every change of
        # the attributes they read, however the object is reached.
        self.static_self_methods = {
            id(site.scope)
            for site in compiled
            if site.form is Form.DECORATOR
            and (self_name := method_self_name(site.scope)) is not None
            and self_is_static(site, self_name)
        }
        self._lives: dict[int, CompiledLife] = {}
        # Changes made through a parameter: the calls handing the object on, by the id of the
        # copy made for them, which the entry keeps alive: a copy dropped after its question
        # would free its id for a change the lazy facts make later, which would then be
        # taken for it.
        self._handed: dict[int, tuple[Mutation, list[Handing]]] = {}
        self._parameter_changes = ParameterChanges(facts)
        # Changes a function's callers make to an object they hand it, by id.
        self._by_callers: set[int] = set()

    def groups(self, compiled: Iterable[CompiledFunction]) -> list[list[CompiledFunction]]:
        """Sites compiling one function: ``jax.jit(f)`` made twice shares f's trace cache."""
        sites: dict[int, list[CompiledFunction]] = {}
        for site in compiled:
            sites.setdefault(_cache_key(site), []).append(site)
        return list(sites.values())

    def life(self, sites: list[CompiledFunction]) -> CompiledLife:
        key = _cache_key(sites[0])
        cached = self._lives.get(key)
        if cached is None:
            cached = compiled_life(self.graph, sites)
            self._lives[key] = cached
        return cached

    def stale_captures(
        self, compiled: Iterable[CompiledFunction], owners: frozenset[Owner] = EVERY_OWNER
    ) -> Iterator[StaleCapture]:
        """The stale captures of variables living in ``owners``: the changes of the others are
        never timed (a run with only the rule on closures skips the globals)."""
        for sites in self.groups(compiled):
            yield from self._captures_of(sites, owners)
            if Owner.MODULE in owners:
                yield from self._read_by_functions_of_other_modules(sites)

    # -- reads -----------------------------------------------------------------------------------

    def free_reads(self, scope: Scope, outside: Scope) -> Iterator[tuple[Read, Scope]]:
        """Value reads in ``scope`` of names owned outside ``outside``, with their owner."""
        facts = self.facts
        reads = list(facts.reads_within(scope))
        facts.ensure_names({r.name for r in reads})
        for read in reads:
            if read.in_assert or self._receiver_of_own_mutation(read) or self._stored_into(read):
                continue
            if after_a_jump(facts.tree, read.node):
                continue  # after a ``return`` in its block: no trace runs the line
            if self._only_printed(read) or self._only_into_unread_locals(read):
                continue
            if read.scope is not scope and self._on_host(read.scope, scope):
                continue
            owner = facts.resolve(read.scope, read.name)
            if owner.is_within(outside) or owner.kind is ScopeKind.COMPREHENSION:
                continue
            yield read, owner

    def _only_printed(self, read: Read) -> bool:
        """``print(f"step {step}")`` as a statement of compiled code: Python's ``print`` runs
        while JAX traces, and what it prints is no part of the compiled result, so a value read
        only there cannot make a compiled call return stale numbers. Only as data of the text:
        not handed to another call inside the ``print`` first. (``jax.debug.print`` runs at
        every call and is not this.)"""
        node: ast.AST = read.node
        parent = self.facts.parent(node)
        while parent is not None and not isinstance(parent, ast.stmt):
            if (
                isinstance(parent, ast.Call)
                and parent.func is not node
                and isinstance(parent.func, ast.Name)
                and parent.func.id == "print"
            ):
                owner = self.facts.resolve(read.scope, "print")
                return isinstance(self.facts.parent(parent), ast.Expr) and not (
                    self.facts.bindings_of(owner, "print")
                )
            if isinstance(parent, (ast.Lambda, ast.NamedExpr, ast.Call, *_COMPREHENSIONS)):
                # Handed to another call first (``cfg.setdefault("scale", scale)``), or read
                # by a comprehension, whose element may store it: it may reach the result.
                return False
            node, parent = parent, self.facts.parent(parent)
        return False

    def _only_into_unread_locals(self, read: Read) -> bool:
        """``l_nbrs = nbrs.update(pos)`` in compiled code, where nothing reads ``l_nbrs``
        afterwards: what the read gives ends in locals that never reach the result, so the
        value cannot make a compiled call return stale numbers. Only an assignment to plain
        names of the reading function itself, none of which any code reads (nor ``locals()``,
        ``vars()``, ``eval`` or ``exec`` could), and whose value binds no other name."""
        facts = self.facts
        node: ast.AST = read.node
        statement = facts.parent(node)
        while statement is not None and not isinstance(statement, ast.stmt):
            if isinstance(statement, ast.NamedExpr):
                return False  # ``(n := value)`` binds another name
            statement = facts.parent(statement)
        if not isinstance(statement, ast.Assign) or not all(
            isinstance(target, ast.Name) for target in statement.targets
        ):
            return False
        scope = read.scope
        for target in statement.targets:
            assert isinstance(target, ast.Name)
            if facts.resolve(scope, target.id) is not scope or facts.reads_of(scope, target.id):
                return False
        # Last, as it walks the whole function: most locals are read.
        return not any(
            isinstance(inner, ast.Name) and inner.id in _NAMESPACE_READERS
            for inner in ast.walk(scope.node)
        )

    def _stored_into(self, read: Read) -> bool:
        """``seen["f"] = x`` inside compiled code: it writes into ``seen`` while tracing."""
        node: ast.AST = read.node
        parent = self.facts.parent(node)
        while isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node:
            if isinstance(parent.ctx, (ast.Store, ast.Del)):
                return True
            node, parent = parent, self.facts.parent(parent)
        return isinstance(parent, ast.AugAssign) and parent.target is node

    def _receiver_of_own_mutation(self, read: Read) -> bool:
        """``seen.append(x)`` inside compiled code: it changes ``seen`` while tracing."""
        parent = self.facts.parent(read.node)
        if not isinstance(parent, ast.Attribute) or parent.value is not read.node:
            return False
        call = self.facts.parent(parent)
        if not isinstance(call, ast.Call) or call.func is not parent:
            return False
        method = parent.attr
        whole_statement = isinstance(self.facts.parent(call), ast.Expr)
        return method in MUTATING_METHODS_RETURNING_VALUE or (
            whole_statement and method in MUTATING_METHODS_RETURNING_NONE
        )

    def _helper_reads(
        self,
        scope: Scope,
        depth: int,
        seen: set[tuple[int, frozenset[str]]],
        bodies: frozenset[str] = frozenset(),
    ) -> Iterator[tuple[Read, Scope, Read, str, frozenset[str]]]:
        """Reads inside functions of the module called by name from ``scope``, plain or
        compiled by a decorator: (the read, its owner, the call in ``scope`` that reaches it,
        the helper's name, the control flow it was handed to on the way there). A branch that a
        helper hands to ``lax.cond`` is a cached body as much as one the compiled function hands
        on itself: JAX keeps its trace by the function, wherever the call is written."""
        if depth > _HELPER_DEPTH:
            return
        facts = self.facts
        # In the order of the source, whatever order the facts were gathered in: the first
        # way to a helper names it in the message (``through 'run()'``).
        for read in sorted(facts.reads_within(scope), key=lambda r: r.start):
            if not read.called and (self._handed_to(read) is None or self._host_callback(read)):
                continue
            helper = self._traced_function(read)
            if helper is None or helper.is_within(scope):
                continue  # a function nested in ``scope``: its reads are ``scope``'s own
            handed = bodies | cached_body_kinds(self.facts, read)
            # Reached again through a cached body: its reads are in a kept trace this time.
            if (id(helper), handed) in seen:
                continue
            seen.add((id(helper), handed))
            for inner, owner in self.free_reads(helper, helper):
                if not inner.called or self._traced_function(inner) is None:
                    yield inner, owner, read, read.name, handed
            for inner, owner, _, _, deeper in self._helper_reads(helper, depth + 1, seen, handed):
                yield inner, owner, read, read.name, deeper

    def _handed_to(self, read: Read) -> ast.Call | None:
        """The call a function is handed to as an argument (``lax.scan(body, ...)``,
        ``tree_map(leaf, x)``, ``jax.vmap(per_item)``): it runs there, while tracing."""
        return self._call_given(read.node)

    def _call_given(self, node: ast.AST) -> ast.Call | None:
        return call_given(self.facts, node)

    def _host_callback(self, read: Read) -> bool:
        """``io_callback(cb, ...)``, ``jax.pure_callback(cb, ...)``, ``buffer_callback(cb,
        out)(...)``, ``jax.debug.callback(cb,
        ...)``: the function runs on the host at every call, reading current values."""
        return self._runs_on_host(read.node, read.scope)

    def _runs_on_host(self, node: ast.AST, scope: Scope) -> bool:
        """``node`` (a function, or a lambda) is handed to a host callback, directly or
        through ``functools.partial``."""
        call = self._call_given(node)
        while call is not None:
            name = self.facts.qualified_name(scope, call.func) or ""
            if name.rsplit(".", 1)[-1] in _HOST_CALLBACKS:
                return True
            if name not in _PARTIAL:
                return False
            call = self._call_given(call)
        return False

    def _on_host(self, scope: Scope, outside: Scope) -> bool:
        """Whether ``scope`` is (inside) a lambda or a nested function of ``outside`` handed
        to a host callback: it runs at every call and reads current values."""
        current: Scope | None = scope
        while current is not None and current is not outside:
            if current.kind is ScopeKind.LAMBDA and self._runs_on_host(current.node, current):
                return True
            if current.kind is ScopeKind.FUNCTION and current.parent is not None:
                handed = self.facts.reads_of(current.parent, current.name)
                if handed and all(self._host_callback(r) for r in handed):
                    return True
            current = current.parent
        return False

    def _traced_function(self, read: Read) -> Scope | None:
        """The function a call by name reaches while tracing, when it is a def of this module
        defined once: a plain one, or one compiled by its decorators (``@jax.jit def inner``) or
        by the one assignment of the name (``loss = jax.jit(lambda ...)``), which the caller's
        trace traces too. A def also bound under its own name (``f = jax.jit(f)``) is reported
        on its own."""
        facts = self.facts
        owner = facts.resolve(read.scope, read.name)
        bindings = facts.bindings_of(owner, read.name)
        if len(bindings) == 1 and id(bindings[0].value) in self.assigned_functions:
            return self.assigned_functions[id(bindings[0].value)]
        defs = [b for b in bindings if b.kind is BindingKind.DEF]
        if len(defs) != 1 or len(bindings) != 1:
            return self._called_object_method(read, owner)
        node = defs[0].node
        if id(node) in self.compiled_functions and id(node) not in self.decorated_functions:
            return None
        return facts.scope_of(node)

    def _called_object_method(self, read: Read, owner: Scope) -> Scope | None:
        """``model(x)`` on a parameter ``model`` of a module-level function that the module
        calls only by name, every call giving there a global bound once to an object of one
        class the module defines once (``model = MLP(rngs)``, then ``accuracy(model, x)``), or
        a local of the calling function bound so: that class's ``__call__``, which the trace
        runs."""
        facts = self.facts
        node = read.node
        call = facts.parent(node)
        if (
            not read.called
            or not isinstance(call, ast.Call)
            or call.func is not node
            or owner.kind is not ScopeKind.FUNCTION
            or read.name not in owner.params
            or owner.parent is None
            or owner.parent.kind is not ScopeKind.MODULE
        ):
            return None
        function = owner.node
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
        if read.name not in positional:
            return None
        index = positional.index(read.name)
        module = owner.parent
        classes: set[int] = set()
        method: Scope | None = None
        for caller in facts.reads_of(module, function.name):
            given = facts.parent(caller.node)
            if not isinstance(given, ast.Call) or given.func is not caller.node:
                return None  # handed on: other callers may give anything
            if any(isinstance(a, ast.Starred) for a in given.args) or len(given.args) <= index:
                return None
            method = self._method_of_object(caller.scope, given.args[index], "__call__")
            if method is None:
                return None
            classes.add(id(method))
        return method if len(classes) == 1 else None

    def _method_of_object(self, scope: Scope, value: ast.expr, name: str) -> Scope | None:
        """The method ``name`` of the class whose object the name ``value`` (seen from
        ``scope``: a global, or a local of the calling function) is bound to, once, by a call
        of a class the module defines once."""
        facts = self.facts
        if not isinstance(value, ast.Name):
            return None
        owner = facts.resolve(scope, value.id)
        if owner.kind not in (ScopeKind.MODULE, ScopeKind.FUNCTION):
            return None
        bindings = facts.bindings_of(owner, value.id)
        made = bindings[0].value if len(bindings) == 1 else None
        if not isinstance(made, ast.Call) or not isinstance(made.func, ast.Name):
            return None
        module = facts.module_scope
        if facts.resolve(owner, made.func.id) is not module:
            return None
        classes = facts.bindings_of(module, made.func.id)
        if len(classes) != 1 or classes[0].kind is not BindingKind.CLASS:
            return None
        cls = classes[0].node
        found = [
            statement
            for statement in getattr(cls, "body", [])
            if isinstance(statement, ast.FunctionDef) and statement.name == name
        ]
        return facts.scope_of(found[0]) if len(found) == 1 else None

    # -- captures --------------------------------------------------------------------------------

    def _captures_of(
        self, sites: list[CompiledFunction], owners: frozenset[Owner]
    ) -> Iterator[StaleCapture]:
        compiled = sites[0]
        by_variable: dict[tuple[int, str], list[Read]] = {}
        owners_by_id: dict[int, Scope] = {}
        through: dict[tuple[int, str], str] = {}
        # Every node reading each variable, in the compiled function and in the helpers it
        # calls: which fields of a record the trace takes (``state.apply_fn``).
        read_nodes: dict[tuple[int, str], list[ast.AST]] = {}
        own_state = {
            name
            for scope in compiled.scope.walk()
            for name in scope.declared_global | scope.declared_nonlocal
        }
        for read, owner in self.free_reads(compiled.scope, compiled.scope):
            if read.name == method_self_name(owner):
                continue  # ``self`` of a method: its attributes have a rule of their own
            if read.name in own_state:
                continue  # the compiled function's own trace-time state (``num_traces += 1``)
            if self._handed_unread(read):
                continue  # ``partial(loss, weights)`` of a ``loss`` that never reads it
            owners_by_id[id(owner)] = owner
            by_variable.setdefault((id(owner), read.name), []).append(read)
            read_nodes.setdefault((id(owner), read.name), []).append(read.node)
        # Read in a body JAX keeps while its slices keep their shape (``sliced``), or while
        # whatever it is given keeps its shape (``bodies``, which holds ``sliced``).
        sliced: set[tuple[int, str]] = set()
        bodies: set[tuple[int, str]] = set()
        helper_only: set[int] = set()  # reads at a helper's call, beside direct reads
        for inner, owner, call, helper, handed in self._helper_reads(compiled.scope, 1, set()):
            if inner.name == method_self_name(owner):
                continue
            if self._handed_unread(inner):
                continue
            key = (id(owner), inner.name)
            read_nodes.setdefault(key, []).append(inner.node)
            if handed & SLICING_BODIES:
                sliced.add(key)
            if handed:
                bodies.add(key)
            if key in by_variable and key not in through:
                if any(_covers(r.path, inner.path) for r in by_variable[key]):
                    continue  # read directly too: reported there
                # ``args.lr`` read directly, ``args.weight_decay`` only in ``loss()``: the
                # helper's path is read too, at the call; the finding still shows a direct read.
                at_call = Read(call.scope, call.node, call.loops, name=inner.name,
                               path=inner.path, path_node=None)  # fmt: skip
                by_variable[key].append(at_call)
                helper_only.add(id(at_call))
                continue
            owners_by_id[id(owner)] = owner
            through[key] = f"{helper}()"
            by_variable.setdefault(key, []).append(
                Read(call.scope, call.node, call.loops, name=inner.name, path=inner.path,
                     path_node=None)
            )  # fmt: skip
        for (owner_id, name), reads in by_variable.items():
            owner = owners_by_id[owner_id]
            if _owner(owner) not in owners:
                continue
            if names_module(self.facts, self.facts.bindings_of(owner, name)):
                paths = [module_path(self.facts, read) for read in reads]
            else:
                paths = self._paths_read(owner, name, reads)
            cls = self.class_of_cls(owner, name)
            # ``model.params = params`` first in the body: the trace reads the argument.
            fed = fed_from_arguments(
                compiled.scope, self.facts.mutations_of(owner, name), reads, self.facts.parent
            )
            fed += self._given_explicitly(owner, name, reads)
            if cls is not None:
                rebinding, mutation, path = self._first_class_change(sites, cls, paths)
            else:
                rebinding, mutation, path = self._first_changes(
                    sites, owner, name, paths, (owner_id, name) not in sliced, fed,
                    fields_below(self.facts, read_nodes.get((owner_id, name), [])), reads,
                    _methods_called(self.facts, read_nodes.get((owner_id, name), [])),
                    reshaped_passes=(owner_id, name) not in bodies,
                )  # fmt: skip
            rebound_elsewhere = False
            if path is None and not fed:
                stored = self._stored_in_another_file(sites, owner, name, paths)
                if stored is not None:
                    # Only the reads of the attributes stored: the finding shows them, the fix
                    # passes them.
                    attributes, path = stored
                    reads = [r for r, p in zip(reads, paths, strict=True) if p[0][1:] in attributes]
                else:
                    path = self._rebound_in_another_file(sites, owner, name)
                    rebound_elsewhere = path is not None
                    if path is None and (all(paths) or _assigned_once(self.facts, owner, name)):
                        path = self._changed_in_another_file(sites, owner, name, paths)
            if path is None:
                continue
            reads.sort(key=lambda r: (id(r) in helper_only, r.start))
            bindings = self.facts.bindings_of(owner, name)
            class_bound = (
                cls is not None
                or any(b.kind is BindingKind.CLASS for b in bindings)
                or names_module(self.facts, bindings)
            )
            by_callers = mutation is not None and id(mutation) in self._by_callers
            yield StaleCapture(
                compiled, name, owner, reads[0], tuple(reads), rebinding, mutation,
                read_through=through.get((owner_id, name)), class_attribute=class_bound,
                path=path, handed_by_callers_of=owner.name if by_callers else None,
                rebound_elsewhere=rebound_elsewhere,
            )  # fmt: skip

    def _read_by_functions_of_other_modules(
        self, sites: list[CompiledFunction]
    ) -> Iterator[StaleCapture]:
        """Globals of another module of the project that a function of that module reads when
        the compiled code calls it (``sched.lr_at(step)``, reading ``_WARMUP`` of
        ``utils/schedule.py``), bound again by another file between two compiled calls
        (``set_schedule(5, 0.5)`` in the training script, through ``global``, or
        ``sched._WARMUP = 5``). The trace baked in the value the function read then."""
        project = self.project
        if project is None:
            return
        compiled = sites[0]
        module = self.facts.module_scope
        callers: list[str] | None = None
        seen: set[tuple[str, str]] = set()
        for read in sorted(self.facts.reads_within(compiled.scope), key=lambda r: r.start):
            helper = self._function_of_other_module(read)
            if helper is None or helper in seen:
                continue
            seen.add(helper)
            imported, shown = helper
            home, names = project.helper_globals(imported)
            for name in names:
                if callers is None:
                    callers = self._entry_names(sites)
                path = project.store_witness(
                    callers, home, name, False, self._static_by_name(sites)
                )
                if path is None:
                    continue
                yield StaleCapture(
                    compiled, name, module, read, (read,), None, None,
                    read_through=f"{shown}()", path=path,
                    rebound_elsewhere=not project.changed_in_place_only(home, name),
                    no_fix=f"'{name}' is a global of another module, read inside '{shown}()'; "
                    f"pass it to '{shown}' as an argument",
                )  # fmt: skip

    def _function_of_other_module(self, read: Read) -> tuple[str, str] | None:
        """The dotted name of the function of another module of the project that ``read``
        calls (``sched.lr_at(...)`` after ``from utils import schedule as sched``, or
        ``lr_at(...)`` after ``from utils.schedule import lr_at``), and how the call names it."""
        facts, project = self.facts, self.project
        if project is None:
            return None
        module = facts.module_scope
        if facts.resolve(read.scope, read.name) is not module:
            return None
        bindings = facts.bindings_of(module, read.name)
        if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN:
            return self._called_module_object(read, bindings[0])
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.IMPORT:
            return None
        imported = bindings[0].imported or ""
        above = facts.parent(read.node)
        if isinstance(above, ast.Call) and above.func is read.node:
            source = imported.rpartition(".")[0]
            if source and project.module_file(source) is not None:
                return imported, read.name
            return None
        call = facts.parent(above) if isinstance(above, ast.Attribute) else None
        if isinstance(call, ast.Call) and call.func is above and isinstance(above, ast.Attribute):
            if project.module_file(imported) is not None:
                return f"{imported}.{above.attr}", f"{read.name}.{above.attr}"
        return None

    def _entry_names(self, sites: list[CompiledFunction]) -> list[str]:
        """What another file calls to run the compiled code: the functions that reach it, and
        a compiled object the module binds to a name of its own (``scaled_grads =
        jax.pmap(_scaled_grads)``, called by that name, not by the function's)."""
        names = [entry.qualified_name() for entry in self.life(sites).reach.entries]
        names += [
            site.bound_name
            for site in sites
            if site.form is Form.ASSIGNED
            and site.bound_name is not None
            and site.site_scope.kind is ScopeKind.MODULE
            and site.bound_name not in names
        ]
        return names

    def _called_module_object(self, read: Read, binding: Binding) -> tuple[str, str] | None:
        """The method of the class of another module of the project whose object the global
        holds (``model = MLP()`` after ``from models import MLP``) that the compiled code runs:
        ``__call__`` for ``model(x)``; ``apply`` for ``model.apply(params, x)``, which is flax's
        way to run ``__call__`` when the class does not define it."""
        facts, project = self.facts, self.project
        if project is None or not isinstance(binding.value, ast.Call):
            return None
        made = facts.qualified_name(facts.module_scope, binding.value.func)
        above = facts.parent(read.node)
        if isinstance(above, ast.Call) and above.func is read.node:
            method, shown = "__call__", read.name
        elif (
            isinstance(above, ast.Attribute)
            and above.attr == "apply"
            and isinstance(call := facts.parent(above), ast.Call)
            and not any(k.arg == "method" for k in call.keywords)
        ):
            method, shown = "apply", f"{read.name}.apply"
        else:
            return None
        if made is None or "." not in made or project.module_file(made.rpartition(".")[0]) is None:
            return None
        return f"{made}.{method}", shown

    def _stored_in_another_file(
        self, sites: list[CompiledFunction], owner: Scope, name: str, paths: list[tuple[str, ...]]
    ) -> tuple[set[str], StalePath] | None:
        """A stale path another file of the project takes by storing an attribute of a module
        of the project that the compiled code reads (``config.LR = 0.5`` in a script, between
        two calls of the compiled ``update`` that reads ``config.LR``). Only for a module this
        one imports once and never changes itself, whose attributes are read by name; with the
        attributes stored so (the path shown is the first one's)."""
        project = self.project
        if project is None or owner.kind is not ScopeKind.MODULE:
            return None
        bindings = self.facts.bindings_of(owner, name)
        if len(bindings) != 1 or bindings[0].imported is None or library_package(bindings):
            return None
        if self.facts.mutations_of(owner, name):
            return None  # changed here too: timed with the module's own changes
        if not all(path and path[0].startswith(".") for path in paths):
            return None  # the module itself is used, not only attributes read by name
        home = project.module_file(bindings[0].imported)
        if home is None:
            return None
        callers = self._entry_names(sites)
        static = self._static_by_name(sites)
        stored: dict[str, StalePath] = {}
        for attribute in dict.fromkeys(path[0][1:] for path in paths):
            if not attribute.startswith("__"):
                found = project.store_witness(callers, home, attribute, False, static)
                if found is not None:
                    stored[attribute] = found
        if not stored:
            return None
        return set(stored), next(iter(stored.values()))

    def _rebound_in_another_file(
        self, sites: list[CompiledFunction], owner: Scope, name: str
    ) -> StalePath | None:
        """A stale path another file of the project takes by binding a global of this module
        again (``sim.DT = dt`` in ``experiments.py``, between two calls of the compiled
        ``sim.integrate`` that reads ``DT``). Only for a global this module binds once, to a
        value (not a function, class or import), and never binds again itself."""
        project = self.project
        if project is None or owner.kind is not ScopeKind.MODULE:
            return None
        if project.module.suffix == ".ipynb":
            return None  # no other file imports a notebook
        bindings = self.facts.bindings_of(owner, name)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN:
            return None
        callers = self._entry_names(sites)
        static = self._static_by_name(sites)
        return project.store_witness(callers, project.module, name, False, static)

    def _changed_in_another_file(
        self,
        sites: list[CompiledFunction],
        owner: Scope,
        name: str,
        paths: list[tuple[str, ...]],
    ) -> StalePath | None:
        """A stale path another file of the project takes by changing in place an object
        this module imports from a module of the project (``from registry import HPARAMS``,
        then ``HPARAMS["gamma"] = g`` in ``tuning.anneal()``, called between two compiled
        calls in ``main.py``). Only for an object this module imports once and never changes
        itself, read below it (``HPARAMS["gamma"]``)."""
        project = self.project
        if project is None or owner.kind is not ScopeKind.MODULE:
            return None
        bindings = self.facts.bindings_of(owner, name)
        if len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN:
            # ``CLASS_WEIGHTS = np.ones(3)`` here, ``CLASS_WEIGHTS[2] = 5.0`` in a notebook
            # that star-imports this module.
            if self.facts.mutations_of(owner, name) or not _makes_mutable(
                self.facts, owner, bindings[0].value
            ):
                return None
            callers = self._entry_names(sites)
            return project.object_witness(
                callers, project.module, name, self._static_by_name(sites), paths
            )
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.IMPORT:
            return None
        imported = bindings[0].imported or ""
        source, _, member = imported.rpartition(".")
        if not source or member != name or self.facts.mutations_of(owner, name):
            return None
        home = project.module_file(source)
        if home is None or project.module_file(imported) is not None:
            return None  # not the project's, or a module
        callers = self._entry_names(sites)
        return project.object_witness(callers, home, name, self._static_by_name(sites), paths)

    def _static_by_name(self, sites: list[CompiledFunction]) -> dict[str, StaticParameters]:
        """The compiled function's static parameters, by its name: calls from another file
        that give them different constants share no trace."""
        parameters = static_parameters(sites)
        if parameters is None:
            return {}
        return {self.facts.scope_of(sites[0].function).qualified_name(): parameters}

    def _handed_unread(self, read: Read) -> bool:
        """The variable itself, handed to a parameter its function never reads."""
        node = read.node
        return (
            not read.path
            and isinstance(node, ast.Name)
            and handed_unread(self.facts, read.scope, node, self.elsewhere)
        )

    def _first_changes(
        self,
        sites: list[CompiledFunction],
        owner: Scope,
        name: str,
        paths: list[tuple[str, ...]],
        retraced_by_shape: bool = True,
        fed: list[tuple[str, ...]] | None = None,
        fields: list[str] | None = None,
        reads: list[Read] | None = None,
        methods_called: list[str] | None = None,
        reshaped_passes: bool = True,
    ) -> tuple[Binding | None, Mutation | None, StalePath | None]:
        facts = self.facts
        compiled = sites[0]
        bindings = facts.bindings_of(owner, name)
        if not bindings and owner.kind is not ScopeKind.MODULE:
            return None, None, None
        initial = initial_bindings(bindings, owner)
        # ``del x`` sets no value a compiled call could read instead of the traced one.
        rebindings = [
            b
            for b in bindings
            if b not in initial
            and b.kind is not BindingKind.DELETE
            and not any(same_import(b, i) for i in initial)
        ]
        if same_value_everywhere(facts, bindings) or same_definition_everywhere(facts, bindings):
            rebindings = []
        rebindings = [
            b
            for b in rebindings
            if not keeps_fields_read(facts, b, fields)
            and not waits_for_itself(facts, b)
            and not sets_what_it_holds(facts, b, bindings)
            and not self._set_once_before_read(b, compiled.scope, bindings, initial, reads or [])
        ]
        if rebindings:
            # ``saved = RATE; RATE = 0.0; try: ... finally: RATE = saved``, no compiled call
            # between: outside the window the name holds what it held.
            events = (event.at for event in self.life(sites).reach.events)
            restored = restored_bindings(facts, rebindings, events)
            rebindings = [b for b in rebindings if id(b) not in restored]
        mutations: list[Mutation] = []
        if names_module(facts, bindings):
            # ``config.LR = 0.5`` on an imported module: what compiled code reads as
            # ``config.LR``; a module handed on whole is not read through a path.
            mutations = [
                m
                for m in facts.mutations_of(owner, name)
                if (
                    (m.path and any(p and paths_overlap(m.path, p) for p in paths))
                    or (not m.path and imports_settings(bindings) and any(paths))
                )
                and self._mutation_applies(m)
                and not library_function_call(bindings, m)
                and not updates_traced_setting(bindings, m)
            ]  # fmt: skip
        elif not holds_ref(facts, bindings) and holds_value(facts, bindings):
            classes = [facts.scope_of(b.node) for b in bindings if b.kind is BindingKind.CLASS]
            if classes:
                # A class: only its attributes read through it (``Defaults.EPS``) count.
                paths = [p for p in paths if p and p[0].startswith(".")]
            mutations = [
                m
                for m in facts.mutations_of(owner, name)
                if any(paths_overlap(m.path, p) for p in paths)
                and self._mutation_applies(m)
                and not keeps_array_layout(m, paths)
            ]
            # ``cls.lr = v`` in a classmethod changes ``Hyper.lr`` too.
            mutations += [
                m
                for attribute in sorted({p[0][1:] for p in paths if p})
                for m in facts.attribute_changes(attribute)
                if self.class_of_cls(facts.resolve(m.scope, m.name), m.name) in classes
            ]
            made_from = self.graph.object_class(owner, name, END)
            if made_from is not None:
                mutations += self._own_method_changes(made_from, paths)
            for mutation, handings in self._parameter_changes.of(owner, name, paths):
                if self._mutation_applies(mutation):
                    # A copy per object handed on: the same change of another object handed
                    # to the function is timed at other calls.
                    handed = replace(mutation)
                    mutations.append(handed)
                    self._handed[id(handed)] = handed, handings
            if made_from is not None:
                # ``nn(x, params)`` where ``__call__`` is compiled with ``self`` static and
                # stores ``self.weights`` from its arguments: a store its own trace makes
                # and reads; what else reads it is the rule on ``self``'s to time.
                mutations = [
                    m
                    for m in mutations
                    if not self._stored_by_called_method(made_from, methods_called, m)
                ]
        if not rebindings and owner.kind is ScopeKind.FUNCTION and name in owner.params:
            # ``step = make_step(cfg)``, then ``cfg.lr = 0.01``: the closure holds the
            # caller's object, changed in place there.
            mutations += self._caller_changes(owner, name, paths)
        # Stored from the trace's own argument, through helpers or the object's methods, before
        # anything reads it: no change made elsewhere to that path reaches a compiled result.
        fed = [*(fed or ()), *self._fed_through_helpers(compiled.scope, mutations, reads or [])]
        candidates: list[Binding | Mutation] = [*rebindings, *mutations]
        changes = sorted(
            (
                c
                for c in candidates
                if not c.scope.is_within(compiled.scope)
                and not sets_split_structure(facts, c)
                and not self._before_memoised_making(c, compiled)
                and not (isinstance(c, Mutation) and any(_covers(f, c.path) for f in fed or ()))
                and not (isinstance(c, Mutation) and fills_a_table(facts, c))
            ),
            key=_change_at,
        )
        if not changes:
            return None, None, None
        life = self.life(sites)
        barrier = owner if owner.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA) else None
        stale: list[tuple[Binding | Mutation, StalePath]] = []
        for change in changes:
            reach = self.change_reach(change, None if id(change) in self._by_callers else barrier)
            path = stale_path(
                self.graph, life, reach, _varies(change), retraced_by_shape,
                steady=partial(same_in_every_pass, facts, change, elsewhere=self.elsewhere),
                reshaped_passes=reshaped_passes,
                rebound=sizing_names(facts, change) if isinstance(change, Binding) else (),
            )  # fmt: skip
            if path is None:
                continue
            stale.append((change, path))
            if path.witnessed and isinstance(change, Binding):
                break  # nothing later is reported before it
        return _reported(stale)

    def _caller_changes(
        self, function: Scope, parameter: str, paths: list[tuple[str, ...]]
    ) -> list[Mutation]:
        """Changes in place that the callers of ``function`` make to the object they pass as
        ``parameter`` (a plain name, ``make_step(cfg)``), on the paths read through it, after
        handing it over or before: the timing says which fall between two compiled calls.
        Only paths below the object count (``cfg.lr``), as read; only a function the module
        calls by name."""
        if not all(paths):
            return []
        node = function.node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return []
        positional = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
        found: list[Mutation] = []
        for event in self.graph.uses_of_function(function).events:
            if event.kind is not EventKind.RUN or not (event.via is None or event.via is function):
                continue
            call = self.facts.parent(event.node) if event.node is not None else None
            if not isinstance(call, ast.Call) or call.func is not event.node:
                continue
            argument = _argument_for(call, positional, parameter)
            if not isinstance(argument, ast.Name):
                continue
            holder = self.facts.resolve(event.driver, argument.id)
            if holder is function or holder.is_within(function):
                continue
            if len(self.facts.bindings_of(holder, argument.id)) != 1:
                continue  # bound again: a change may be of another object
            for mutation in self.facts.mutations_of(holder, argument.id):
                if (
                    mutation.path
                    and not mutation.scope.is_within(function)
                    and any(paths_overlap(mutation.path, p) for p in paths)
                    and self._mutation_applies(mutation)
                ):
                    self._by_callers.add(id(mutation))
                    found.append(mutation)
        return found

    def _before_memoised_making(self, change: Binding | Mutation, site: CompiledFunction) -> bool:
        """A change of a local of a memoised factory (``functools.cache``) in its own body,
        before the body makes the compiled object (``indices.append(i)`` filling a table,
        then ``jax.jit(product)``): the body runs once for each object it makes (a call with
        the same arguments returns that object without running it, other arguments run it
        with new locals and make a new object), so no object made earlier sees the change."""
        maker = site.site_scope
        if (
            change.scope is not maker
            or maker.kind is not ScopeKind.FUNCTION
            or self.facts.resolve(change.scope, change.name) is not maker
            or not memoised(self.graph, maker)
        ):
            return False
        if any(loop is made for loop in change.loops for made in site.created_loops):
            return False
        return _change_at(change) <= site.created_at

    def _set_once_before_read(
        self,
        binding: Binding,
        compiled: Scope,
        bindings: list[Binding],
        initial: list[Binding],
        reads: list[Read],
    ) -> bool:
        """``if _DATA is None: _DATA = DuneData()`` in ``data()``, a function the compiled
        code calls unconditionally before it reads ``_DATA``: every trace reads the value set
        (by its own call, or an earlier one), and no set can follow, as each needs the name
        unset and nothing unsets it (its other bindings are ``_DATA = None`` first, or set so
        too)."""
        if not _set_while_unset(self.facts, binding):
            return False
        for other in bindings:
            first_none = other in initial and is_none(other.value)
            if other is not binding and not first_none and not _set_while_unset(self.facts, other):
                return False
        entries = self._calls_inside(binding.scope, compiled, frozenset())
        if not entries:
            return False
        first = min(entries)
        return all(read.start >= first for read in reads if read.scope.is_within(compiled))

    def _fed_through_helpers(
        self, compiled: Scope, mutations: list[Mutation], reads: list[Read]
    ) -> list[tuple[str, ...]]:
        """The paths the compiled function stores from its own arguments, or a constant,
        through functions it calls before reading the variable: ``b.set_params(E)`` where
        ``set_params`` stores its parameter (``self.E = E``), a plain helper storing its
        argument (``def set_speed(s): env.layer.speed = s``) or a constant (``MODEL.charges =
        True``), called unconditionally in the compiled function's body. Each trace stores a
        tracer of its own call (or that constant) there before reading it, so what any other
        code stores there never reaches a compiled result (``model.params = params`` in the
        body itself, through helpers). Not when the compiled function reads
        the variable before that call (a recurrent state: ``out = x + state.prev;
        remember(x)``): the first trace read what was there."""
        return [
            mutation.path
            for mutation in mutations
            if mutation.path and self._stores_own_value(mutation, compiled, reads)
        ]

    def _stores_own_value(self, mutation: Mutation, compiled: Scope, reads: list[Read]) -> bool:
        function = mutation.scope
        if (
            function.kind is not ScopeKind.FUNCTION
            or function.is_within(compiled)
            or mutation.value is None
            or mutation.guards
            or mutation.loops
        ):
            return False
        if not _stored_on_every_run(function, mutation.node):
            return False  # ``if x.ndim == 0: return`` before it: not every trace stores it
        parent = function.parent
        is_method = parent is not None and parent.kind is ScopeKind.CLASS
        arguments = set(function.params[1:] if is_method else function.params)
        names = [node.id for node in ast.walk(mutation.value) if isinstance(node, ast.Name)]
        if not any(name in arguments for name in names) and not (
            unchanging_value(self.facts, function, mutation.value)
            and all(self._immutable_global(function, name) for name in names)
        ):
            return False  # neither the call's own value nor one every trace stores alike
        entries = self._calls_inside(function, compiled, frozenset())
        if not entries:
            return False
        first = min(entries)
        return all(read.start >= first for read in reads if read.scope.is_within(compiled))

    def _immutable_global(self, function: Scope, name: str) -> bool:
        """``grid`` of ``grid = jnp.linspace(0, 1, 3)`` (or a constant, or a tuple of them): a
        value no code can change in place, unlike a NumPy array that a helper may write into
        through another name (``np.multiply(a, k, out=a)``). Builtins and imports count too."""
        owner = self.facts.resolve(function, name)
        bindings = self.facts.bindings_of(owner, name)
        if not bindings:
            return True  # a builtin (``float``): ``unchanging_value`` has judged it
        if all(b.kind is BindingKind.IMPORT for b in bindings):
            return True
        value = bindings[0].value if len(bindings) == 1 else None
        if isinstance(value, ast.Constant):
            return True
        if isinstance(value, ast.Tuple):
            return all(isinstance(element, ast.Constant) for element in value.elts)
        if isinstance(value, ast.Call):
            return (self.facts.qualified_name(owner, value.func) or "").startswith("jax.")
        return False

    def _calls_inside(self, function: Scope, compiled: Scope, seen: frozenset[int]) -> list[Pos]:
        """Where the compiled function's code calls ``function`` unconditionally (a statement
        of its body, not under an ``if`` or in a loop), itself or through functions it calls
        so. Other calls do not matter: code outside the trace storing a value of its own
        there is overwritten by the trace before it reads."""
        if id(function) in seen or function.kind is not ScopeKind.FUNCTION:
            return []
        entries: list[Pos] = []
        for event in self.graph.uses_of_function(function).events:
            if event.kind is not EventKind.RUN or event.loops or event.node is None:
                continue
            driver = event.driver
            if not self._unconditional(event.node, driver):
                continue
            if driver is compiled:
                entries.append(event.at)
            elif driver.kind is ScopeKind.FUNCTION and not driver.is_within(compiled):
                entries.extend(self._calls_inside(driver, compiled, seen | {id(function)}))
        return entries

    def _unconditional(self, node: ast.AST, driver: Scope) -> bool:
        """No ``if``, ``try``, ``with``, loop or short-circuit between ``node`` and the body
        of ``driver``: the call runs whenever the driver does."""
        current = node
        for _ in range(64):
            parent = self.facts.parent(current)
            if parent is None or parent is current:
                # A statement: the parents the facts keep end there.
                body = getattr(driver.node, "body", [])
                return isinstance(body, list) and any(current is top for top in body)
            if parent is driver.node:
                return True
            if isinstance(parent, _CONDITIONAL):
                return False
            current = parent
        return False

    def _given_explicitly(
        self, owner: Scope, name: str, reads: list[Read]
    ) -> list[tuple[str, ...]]:
        """The attributes every call of an object of a library's class gives explicitly by
        name (``model(ids, params=params)``, ``model.generate(ids, params=params)``): such a
        model (a Flax model of ``transformers``) uses what it is given and reads
        ``model.params`` only when nothing is, so a change of that attribute never reaches
        the trace. Not for the module's own classes, whose methods are read."""
        if self.graph.object_class(owner, name, END) is not None:
            return []
        given: set[str] | None = None
        for read in reads:
            if read.path:
                continue  # a read of a path: it overlaps a change or it does not
            keywords = _keywords_given(self.facts, read.node)
            if keywords is None:
                return []
            given = keywords if given is None else given & keywords
        return [
            (f".{keyword}",)
            for keyword in sorted(given or ())
            if not any(paths_overlap((f".{keyword}",), r.path) for r in reads if r.path)
        ]

    def _paths_read(self, owner: Scope, name: str, reads: list[Read]) -> list[tuple[str, ...]]:
        """The data paths the reads read through the variable. A method called on an object
        of one of the module's classes, or of a class another module of the project defines
        (``model.forward(x, params)``), reads the attributes that method reads of ``self``,
        where the code shows them all."""
        paths: list[tuple[str, ...]] = []
        reader: MethodReader | None | bool = False  # not looked up yet
        for read in reads:
            method = called_method(self.facts, read.node) if not read.path else None
            if method is not None:
                if reader is False:
                    reader = self._method_reader(owner, name)
                if callable(reader):
                    through = self._method_paths(owner, name, reader, method)
                    if through is not None:
                        paths.extend(through)
                        continue
            paths.append(read.path)
        return paths

    def _method_reader(self, owner: Scope, name: str) -> MethodReader | None:
        """What each method of the object's class reads of ``self``: a class of the module, or
        one imported from another module of the project (``model = MolForce(...)`` after
        ``from pkg.force import MolForce``, every binding of the name making one), as that
        module defines it; None when the code does not say the class."""
        made_from = self.graph.object_class(owner, name, END)
        if made_from is not None:
            return lambda method: paths_read_by(self.facts, made_from, method)
        project = self.project
        if project is None:
            return None
        classes = set()
        for binding in self.facts.bindings_of(owner, name):
            value = binding.value
            if binding.kind is not BindingKind.ASSIGN or not isinstance(value, ast.Call):
                return None
            classes.add(self.facts.qualified_name(owner, value.func))
        qualified = classes.pop() if len(classes) == 1 else None
        if qualified is None:
            return None
        return lambda method: project.method_reads(qualified, method)

    def _method_paths(
        self, owner: Scope, name: str, reader: MethodReader, method: str
    ) -> list[tuple[str, ...]] | None:
        """What calling ``method`` on the object reads of it: a method of its class, or a
        function kept in an attribute that wraps one of them (``model.batch_forward =
        jax.vmap(model.forward, ...)``), which reads the attribute and what the method reads.
        A function the code stores there itself decides, not the class's method of that name
        (``model.forward = partial(other, model)``)."""
        stored = [m for m in self.facts.mutations_of(owner, name) if m.path == (f".{method}",)]
        if not stored:
            if self._stored_elsewhere(method):
                return None  # ``install(m)`` doing ``m.forward = ...``: not the class's code
            return reader(method)
        wrapped = {self._wrapped_method(owner, name, m.value) for m in stored}
        if len(wrapped) != 1 or None in wrapped:
            return None
        inner = reader(wrapped.pop() or "")
        return None if inner is None else [(f".{method}",), *inner]

    def _stored_elsewhere(self, method: str) -> bool:
        """Whether code stores a function under the name ``method`` on some object other than
        a method's own ``self`` (``m.forward = lambda ...`` on an object a helper is given,
        ``Net.forward = f``), which may be the object called."""
        for mutation in self.facts.attribute_changes(method):
            if mutation.path[:1] != (f".{method}",):
                continue
            owner = self.facts.resolve(mutation.scope, mutation.name)
            if method_self_name(owner) == mutation.name:
                continue  # ``self.forward = ...`` in a method: the class's own store
            return True
        return False

    def _wrapped_method(self, owner: Scope, name: str, value: ast.expr | None) -> str | None:
        """``m`` for ``obj.m``, ``jax.vmap(obj.m, ...)`` or ``functools.partial(obj.m, ...)``,
        where ``obj`` is the variable itself."""
        if isinstance(value, ast.Call) and value.args:
            if self.facts.qualified_name(owner, value.func) not in _METHOD_WRAPPERS:
                return None
            value = value.args[0]
        if (
            isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and value.value.id == name
        ):
            return value.attr
        return None

    def _own_method_changes(self, cls: Scope, paths: list[tuple[str, ...]]) -> list[Mutation]:
        """``schedule.step()`` on ``schedule = Schedule()``, where ``step`` assigns
        ``self.lr``: the changes a method of the object's class makes to ``self``, for the
        attributes read through the object. Constructors make a new object: not a change."""
        facts = self.facts
        found = []
        for attribute in sorted({p[0][1:] for p in paths if p and p[0].startswith(".")}):
            for mutation in facts.attribute_changes(attribute):
                method = facts.resolve(mutation.scope, mutation.name)
                cls_of_method = method.parent
                if (
                    method.kind is ScopeKind.FUNCTION
                    and cls_of_method is not None
                    and cls_of_method.kind is ScopeKind.CLASS
                    and method.params[:1] == (mutation.name,)
                    and method.name not in CONSTRUCTORS
                    and self.graph.related(cls_of_method, cls)
                ):
                    found.append(mutation)
        return found

    def _stored_by_called_method(
        self, cls: Scope, methods: list[str] | None, mutation: Mutation
    ) -> bool:
        """``mutation`` is a store from its own arguments, a statement of the body of a
        method of ``cls`` compiled with ``self`` static, and the compiled code reaches the
        object only by calling such methods (``methods``)."""
        if not methods or mutation.scope.parent is not cls:
            return False
        defined = {child.name: child for child in cls.children if child.kind is ScopeKind.FUNCTION}
        if not all(
            name in defined and id(defined[name]) in self.static_self_methods for name in methods
        ):
            return False
        return mutation.scope.name in methods and bool(
            fed_from_arguments(mutation.scope, [mutation], [])
        )

    def class_of_cls(self, owner: Scope, name: str) -> Scope | None:
        """The class whose ``cls`` this is: ``name`` is the first parameter of a classmethod."""
        parent = owner.parent
        node = owner.node
        if parent is None or parent.kind is not ScopeKind.CLASS or owner.params[:1] != (name,):
            return None
        decorators = getattr(node, "decorator_list", [])
        if any(isinstance(d, ast.Name) and d.id == "classmethod" for d in decorators):
            return parent
        return None

    def _first_class_change(
        self, sites: list[CompiledFunction], cls: Scope, paths: list[tuple[str, ...]]
    ) -> tuple[Binding | None, Mutation | None, StalePath | None]:
        """``cls.scale`` read in a compiled closure built by a classmethod: changed by
        ``Scaler.scale = ...`` or ``cls.scale = ...`` in another classmethod."""
        attributes = {p[0][1:] for p in paths if p and p[0].startswith(".")}
        changes = sorted(
            (
                m
                for attribute in sorted(attributes)
                for m in self.facts.attribute_changes(attribute)
                if not m.scope.is_within(sites[0].scope) and self._changes_class(m, cls)
            ),
            key=lambda m: m.end,
        )
        life = self.life(sites)
        stale: list[tuple[Binding | Mutation, StalePath]] = []
        for change in changes:
            path = stale_path(self.graph, life, self.change_reach(change, None))
            if path is not None:
                stale.append((change, path))
        return _reported(stale)

    def _changes_class(self, mutation: Mutation, cls: Scope) -> bool:
        owner = self.facts.resolve(mutation.scope, mutation.name)
        if self.class_of_cls(owner, mutation.name) is cls:
            return True
        return any(
            b.kind is BindingKind.CLASS and self.facts.scope_of(b.node) is cls
            for b in self.facts.bindings_of(owner, mutation.name)
        )

    def change_reach(self, change: Site, barrier: Scope | None) -> Reach:
        if after_a_jump(self.facts.tree, change.node):
            return Reach()  # dead code: it never runs
        handed = self._handed.get(id(change))
        if handed is not None and handed[0] is change:
            handings = handed[1]
            # Changed through a parameter: where the object is handed to the function.
            events = []
            for handing in handings:
                start = (handing.call.lineno, handing.call.col_offset)
                driver, at, loops = level(handing.scope, start, handing.loops)
                events.append(
                    Event(driver, at, loops, EventKind.RUN, via=handing.function,
                          node=handing.call)
                )  # fmt: skip
            return self.graph.propagate(events, barrier)
        at = change.at if isinstance(change, Binding) else change.end
        driver, at, loops = level(change.scope, at, change.loops)
        event = Event(driver, at, loops, EventKind.RUN, node=change.node)
        return self.graph.propagate([event], barrier)

    def _mutation_applies(self, mutation: Mutation) -> bool:
        """``np.copyto(dst, ...)`` changes ``dst`` only when ``np`` is NumPy."""
        if not mutation.needs_module:
            return True
        if mutation.receiver is None:
            return False
        module = self.facts.qualified_name(mutation.scope, mutation.receiver)
        return module in mutation.needs_module


# NumPy's makers of arrays, which another file can write into; JAX arrays cannot be.
_NUMPY_MAKERS = frozenset(
    f"numpy.{name}"
    for name in ("array", "asarray", "zeros", "ones", "empty", "full", "arange", "linspace",
                 "eye", "zeros_like", "ones_like", "full_like", "copy")
)  # fmt: skip


def _makes_mutable(facts: Facts, scope: Scope, value: ast.expr | None) -> bool:
    """``{...}``, ``[...]``, ``dict(...)``, ``np.ones(3)``: an object changed in place by
    writing into it."""
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp)):
        return True
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Name) and value.func.id in ("dict", "list", "set"):
        return not facts.bindings_of(facts.resolve(scope, value.func.id), value.func.id)
    return facts.qualified_name(scope, value.func) in _NUMPY_MAKERS


def _assigned_once(facts: Facts, owner: Scope, name: str) -> bool:
    """A global the module assigns once: an object it makes itself, read whole or in part."""
    bindings = facts.bindings_of(owner, name)
    return len(bindings) == 1 and bindings[0].kind is BindingKind.ASSIGN


def _reported(
    stale: list[tuple[Binding | Mutation, StalePath]],
) -> tuple[Binding | None, Mutation | None, StalePath | None]:
    """The rebinding and the mutation a finding reports, and the path of the one it names (a
    rebinding, when there is one): among the changes the code shows a witness for, when there
    are any, since those are what a user can check; else among the API hazards. The first
    rebinding, and a mutation only when it comes before every rebinding."""
    witnessed = [(change, path) for change, path in stale if path.witnessed]
    rebinding: Binding | None = None
    mutation: Mutation | None = None
    paths: dict[int, StalePath] = {}
    for change, path in witnessed or stale:
        if isinstance(change, Binding) and rebinding is None:
            rebinding, paths[id(change)] = change, path
        elif isinstance(change, Mutation) and rebinding is None and mutation is None:
            mutation, paths[id(change)] = change, path
    named = rebinding or mutation
    return rebinding, mutation, None if named is None else paths[id(named)]


def _keywords_given(facts: Facts, receiver: ast.AST) -> set[str] | None:
    """The keywords of the call that calls ``receiver`` or a method of it (``receiver(x,
    params=p)``, ``receiver.generate(x, params=p)``); None when ``receiver`` is used
    otherwise."""
    parent = facts.parent(receiver)
    if isinstance(parent, ast.Attribute) and parent.value is receiver:
        receiver, parent = parent, facts.parent(parent)
    if isinstance(parent, ast.Call) and parent.func is receiver:
        return {keyword.arg for keyword in parent.keywords if keyword.arg}
    return None


def _stored_on_every_run(function: Scope, statement: ast.AST) -> bool:
    """``statement`` is a statement of the function's own body, and nothing before it there
    can leave the function (``return``, ``raise``, ``yield``, outside nested functions)."""
    body = getattr(function.node, "body", None)
    if not isinstance(body, list):
        return False
    index = next((i for i, st in enumerate(body) if st is statement), None)
    if index is None:
        return False
    return not any(_may_leave(st) for st in body[:index])


def _may_leave(statement: ast.stmt) -> bool:
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Return, ast.Raise, ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        pending.extend(ast.iter_child_nodes(node))
    return False


def _covers(prefix: tuple[str, ...], path: tuple[str, ...]) -> bool:
    """Whether replacing ``prefix`` replaces what ``path`` holds (``.params`` covers
    ``.params.w``)."""
    return bool(prefix) and path[: len(prefix)] == prefix


def _owner(scope: Scope) -> Owner:
    return Owner.MODULE if scope.kind is ScopeKind.MODULE else Owner.ENCLOSING


def _varies(change: Binding | Mutation) -> bool:
    """Whether running the change again can set another value: it depends on the arguments of
    the function it is in, or on the variable's old value. ``BATCH_SIZE = len(devices) * 8``
    in a test sets the same value on every run."""
    if not isinstance(change, Binding) or change.kind is not BindingKind.ASSIGN:
        return True
    if change.value is None:
        return True
    inputs = {change.name, *change.scope.function().params}
    return any(isinstance(node, ast.Name) and node.id in inputs for node in ast.walk(change.value))


def _change_at(site: Binding | Mutation) -> tuple[int, int]:
    return site.at if isinstance(site, Binding) else site.end


def _methods_called(facts: Facts, nodes: list[ast.AST]) -> list[str] | None:
    """The methods each node calls on the object it holds: ``__call__`` for ``nn(x)``,
    ``step`` for ``nn.step(x)``; None when one node does anything else with it."""
    called = []
    for node in nodes:
        parent = facts.parent(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            called.append("__call__")
            continue
        call = facts.parent(parent) if isinstance(parent, ast.Attribute) else None
        if not isinstance(call, ast.Call) or call.func is not parent:
            return None
        assert isinstance(parent, ast.Attribute)
        called.append(parent.attr)
    return called


def _cache_key(site: CompiledFunction) -> int:
    """What the site's traces are cached under: the compiled Python function, shared by every
    ``jax.jit(f)`` of it; but a site compiling a function object it makes itself
    (``jax.jit(jax.vmap(partial(f, a)))``, ``jax.jit(jax.grad(f))``) caches under that new
    object, which no other site compiles."""
    call = site.site
    if site.form is Form.DECORATOR or not isinstance(call, ast.Call) or not call.args:
        return id(site.function)
    argument = call.args[0]
    return id(site) if isinstance(argument, ast.Call) else id(site.function)


def _set_while_unset(facts: Facts, binding: Binding) -> bool:
    """``name = value`` in a function, set whenever the function runs while ``name`` is None:
    a statement of the body of ``if name is None:`` (itself a statement of the function's
    body), or of the function's body after ``if name is not None: return name``, with only
    plain statements before it there (no branch, loop or return that could skip it), of a
    value that is never None (so the name cannot be unset again by its own set). What runs
    before the set calls only builtins and libraries: a call of the project's own could
    trace the compiled function, whose read runs another setter first."""
    if (
        binding.kind is not BindingKind.ASSIGN
        or binding.scope.kind is not ScopeKind.FUNCTION
        or binding.loops
        or not _never_none(binding.value, binding.scope.node)
        or not _calls_outside_the_project_before(facts, binding)
    ):
        return False
    body = getattr(binding.scope.node, "body", [])
    for index, statement in enumerate(body):
        if (
            isinstance(statement, ast.If)
            and unset_name(statement.test, none_only=True) == binding.name
            and _plainly_reaches(statement.body, binding.node)
        ):
            return True
        if returns_when_set(statement, none_only=True) == binding.name:
            return _plainly_reaches(body[index + 1 :], binding.node)
    return False


def _calls_outside_the_project_before(facts: Facts, binding: Binding) -> bool:
    """Whether every call the function makes on the lines before the set is of a builtin the
    module leaves alone (``range``, ``float``) or of a library (``np.zeros``)."""
    scope = binding.scope
    line = binding.start[0]
    for statement in getattr(scope.node, "body", []):
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call) or node.lineno >= line:
                continue
            func = node.func
            if isinstance(func, ast.Name) and hasattr(builtins, func.id):
                if not facts.bindings_of(facts.resolve(scope, func.id), func.id):
                    continue
            qualified = facts.qualified_name(scope, func)
            if qualified is None or qualified.split(".")[0] not in FUNCTIONAL_PACKAGES:
                return False
    return True


def _plainly_reaches(block: list[ast.stmt], statement: ast.AST) -> bool:
    """``statement`` is in ``block``, after statements that always go on to the next one:
    assignments, expressions, and branches or ``for`` loops with no ``return``, ``raise`` or
    ``yield`` of the function's own (a table filled in a ``for`` loop)."""
    for inner in block:
        if inner is statement:
            return True
        if isinstance(inner, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
            continue
        if not isinstance(inner, (ast.If, ast.For, ast.With)) or _may_leave(inner):
            return False
    return False


def _never_none(value: ast.expr | None, function: ast.AST, depth: int = 0) -> bool:
    """A value that cannot be None: a literal other than None, a display, a class called by
    its name (``DuneData()``, capitalised as classes are), a NumPy or ``jax.numpy`` array
    maker, or a local name of the function bound once to one of those."""
    if isinstance(value, ast.Constant):
        return value.value is not None
    if isinstance(value, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        module = func.value if isinstance(func, ast.Attribute) else None
        array_maker = isinstance(module, ast.Name) and module.id in ("np", "jnp", "numpy")
        return array_maker or name[:1].isupper()
    if isinstance(value, ast.Name) and depth == 0:
        # Every store counts: a ``for`` or ``with`` target or ``:=`` can bind None as well.
        stores = [
            node
            for node in ast.walk(function)
            if isinstance(node, ast.Name)
            and node.id == value.id
            and isinstance(node.ctx, (ast.Store, ast.Del))
        ]
        assigns = [
            node
            for node in ast.walk(function)
            if isinstance(node, ast.Assign)
            and any(target is store for target in node.targets for store in stores)
        ]
        return (
            len(stores) == 1
            and len(assigns) == 1
            and _never_none(assigns[0].value, function, depth + 1)
        )
    return False


def _argument_for(call: ast.Call, positional: list[str], parameter: str) -> ast.expr | None:
    """The expression a call passes as ``parameter``: by keyword, or by position when no
    ``*args`` comes before it."""
    for keyword in call.keywords:
        if keyword.arg == parameter:
            return keyword.value
    if parameter not in positional:
        return None
    index = positional.index(parameter)
    before = call.args[: index + 1]
    if len(call.args) <= index or any(isinstance(a, ast.Starred) for a in before):
        return None
    return call.args[index]
