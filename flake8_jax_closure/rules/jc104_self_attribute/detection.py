"""Compiled code that holds ``self``: which attributes of ``self`` it reads, and where they change.

Three ways a compiled function holds an object whose attributes JAX never looks at again:
- a method compiled with ``self`` static (``partial(jax.jit, static_argnums=0)``): a changed
  attribute never reaches the cache, not even with ``__hash__``/``__eq__`` over it (JAX serves
  the cached trace to the object changed in place, and to any object equal to it);
- a bound method compiled in call form (``jax.jit(obj.step)``): ``self`` is baked in;
- a compiled closure made inside a method that reads ``self.<attr>``.

Every change is timed against the compiled object's calls (``timing``), wherever it is made:
- in a method (of the class, a subclass or a base class): where the method is called, or by
  code outside the module when nothing in the module names it. Only construction runs before
  anything can call compiled code: constructors, and the set-up hooks a framework calls
  (``setUp``, ``setUpClass``, flax's ``setup``, pytest fixtures, private helpers reached only
  from those) when the module never calls them itself. A name such as ``load_params`` or a
  guard such as ``if self.scale is None:`` proves nothing about when the method runs;
- on an instance (``obj.attr = ...``, ``setattr(obj, "attr", v)``) or on an object a function
  is given (``def on_epoch_end(trainer): trainer.lr = ...``): where that code runs;
- later in the method that makes a compiled closure: timed in that method's code. A closure is
  made anew on every run of its method, so a change in another method reaches it only during
  that run (the method is called from there) or after the closure was handed on.
Writes the compiled code makes itself under a guard (directly or in methods it calls) are its
own trace-time state, not changes.

Flax or Equinox modules cannot change in place; frozen dataclasses and NamedTuples only inside
what an attribute holds.
"""

from __future__ import annotations

import ast
import dataclasses
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...analysis.bindings import (
    fed_from_arguments,
    fields_below,
    hands_through,
    rebuild_keeps_fields,
    same_tree,
    waits_for,
)
from ...analysis.callgraph.events import Event, EventKind, Reach, event_at, level
from ...analysis.callgraph.functions import CONSTRUCTORS
from ...analysis.callgraph.graph import CallGraph
from ...analysis.captures import CaptureAnalysis, StaleCapture
from ...analysis.compiled import CompiledFunction, CompiledFunctionFinder
from ...analysis.facts.model import (
    AttributeRef,
    Binding,
    BindingKind,
    Mutation,
    Pos,
    Read,
    Scope,
    ScopeKind,
    assignment,
    path_element,
    paths_overlap,
)
from ...analysis.facts.queries import Facts
from ...analysis.guards import is_none, tests_around, unset_flag
from ...analysis.layout import LayoutRead, kept_layout, layout_read, stored_by
from ...analysis.names import PASSTHROUGH_TRANSFORMS
from ...analysis.receiver import (
    hands_itself_on,
    has_bases,
    method_self_name,
    patched,
    sets_by_name,
)
from ...analysis.structure import sets_split_structure
from ...analysis.timing import (
    CompiledLife,
    StalePath,
    called_again_path,
    compiled_life,
    stale_path,
)
from ...analysis.unread import handed_unread
from ...diagnostics import Role, WitnessStep
from .classes import ClassFacts, MutableClasses, enclosing_method
from .held_reads import HeldParts, held_parts
from .holders import Holder, HolderFinder
from .own_functions import made_from_own_methods, no_other_value
from .rebuilt_alike import rebuilt_alike

if TYPE_CHECKING:
    from ...analysis.project import MethodStore


class MethodCaptureAnalysis:
    def __init__(
        self,
        facts: Facts,
        graph: CallGraph,
        captures: CaptureAnalysis,
        finder: CompiledFunctionFinder,
    ) -> None:
        self.facts = facts
        self.graph = graph
        self.captures = captures
        self.classes = MutableClasses(facts, graph)
        self.holders = HolderFinder(graph, self.classes, finder)
        self._by_name: bool | None = None

    def stale_captures(self, sites: list[CompiledFunction]) -> Iterator[StaleCapture]:
        found = list(self.holders.holders(sites))
        for cls, holder in found:
            yield from self._captures(cls, holder, self._sharing(holder, found))

    def _sharing(self, holder: Holder, found: list[tuple[ClassFacts, Holder]]) -> list[Holder]:
        """The other wrappers of the same bound method (``jax.jit(model.calc)`` again) that
        share this one's traces: JAX keys a bound method by equality, so a wrapper made while
        an earlier one is alive reuses its traces, and they share the traces from then on. The
        earlier one stays alive when its name is bound only once."""
        receiver = _bound_receiver(holder.site)
        if not holder.bound_method or receiver is None:
            return []
        receiver_owner = self.facts.resolve(holder.site.site_scope, receiver)
        sharing = []
        for _, other in found:
            if (
                other is holder
                or not other.bound_method
                or other.method is not holder.method
                or _bound_receiver(other.site) != receiver
                or self.facts.resolve(other.site.site_scope, receiver) is not receiver_owner
            ):
                continue
            earlier = min(holder, other, key=lambda h: h.site.created_at)
            if self._stays_alive(earlier.site):
                sharing.append(other)
        return sharing

    def _stays_alive(self, site: CompiledFunction) -> bool:
        name = site.bound_name
        if name is None:
            return False
        owner = self.facts.resolve(site.site_scope, name)
        return len(self.facts.bindings_of(owner, name)) == 1

    def _captures(
        self, cls: ClassFacts, holder: Holder, sharing: list[Holder]
    ) -> Iterator[StaleCapture]:
        facts = self.facts
        site, method, self_name = holder.site, holder.method, holder.self_name
        reads = [
            r
            for r in facts.reads_within(site.scope)
            if r.name == self_name and facts.resolve(r.scope, self_name) is method
        ]
        by_attribute: dict[str, list[Read]] = {}
        through: dict[str, str] = {}
        for read in reads:
            if self._written_into(read) or self._handed_unread(read):
                continue
            attribute = _first_attribute(read)
            if attribute is not None and attribute not in cls.methods:
                by_attribute.setdefault(attribute, []).append(read)
                continue
            # ``self.helper()`` or a property ``self.scale``: what that method reads counts.
            called = attribute or self._called_method(read)
            if called is not None and called not in cls.methods:
                if self._calls_attribute(read):
                    # ``self.loss_fn(x)``: a function kept in an attribute is a value too, and
                    # what a lambda the class keeps there reads of the object is read too.
                    by_attribute.setdefault(called, []).append(read)
                    for inner in sorted(self._read_by_kept_lambdas(cls, called)):
                        by_attribute.setdefault(inner, []).append(read)
                        through.setdefault(inner, f"{called}()")
                continue
            if called is not None:
                shown = called if attribute else f"{called}()"
                for inner in sorted(self._attributes_read_by(cls, called)):
                    by_attribute.setdefault(inner, []).append(read)
                    through.setdefault(inner, shown)
        # Writes the compiled code makes itself under a guard, directly or in the methods it
        # calls, are its own trace-time state (``if rng is None: self.rng, rng =
        # split(self.rng)``): not changes. Changes by other code are timed as any other.
        reached = {name for read in reads for name in self._methods_reached(cls, read)}
        own = [
            mutation
            for attribute in by_attribute
            for mutation, changer in self._changes(cls, attribute)
            if mutation.scope.is_within(site.scope)
            or (changer is not None and changer.name in reached)
        ]
        own_state = {id(mutation) for mutation in own if mutation.guards}
        # Written on every run (``self.n += 1; return self.n``): the compiled code writes it
        # once, while tracing, and uncompiled calls on every call.
        own_writes = {id(mutation) for mutation in own if not mutation.guards}
        life = self._life(cls, holder, sharing)
        replacers = self._replacers(cls, holder)
        # A static ``self`` hashed by value is no protection: JAX serves the cached trace to
        # an object changed in place after it was hashed, and to any object equal to it.
        for attribute, attribute_reads in sorted(
            by_attribute.items(), key=lambda item: min(r.start for r in item[1])
        ):
            # ``self.params = params`` first in the compiled body: the trace reads the argument.
            mutations = [m for m, _ in self._changes(cls, attribute)]
            fed = fed_from_arguments(site.scope, mutations, attribute_reads)
            if (f".{attribute}",) in fed:
                continue
            own_fed_safe = bool(fed) and (
                self._held_without_setters(cls, attribute)
                or self._touched_only_by(cls, attribute, site.scope)
            )
            if own_fed_safe and all(
                m.path in fed or (changer is not None and changer.name in cls.construction)
                for m, changer in self._changes(cls, attribute)
            ):
                # ``self.step.msh.cell_conn = cell_conn`` first in the compiled body, and no
                # other change of ``self.step`` after construction: each trace reads its own
                # argument there, and the rest of the object never changes.
                continue
            if self._fed_through_setter(cls, holder, attribute, attribute_reads):
                continue
            # ``self.state = self.state.apply_gradients(...)`` while the trace reads only
            # ``self.state.apply_fn``: every state holds the same function.
            fields = self._fields_read(attribute, attribute_reads)
            kept = {
                id(m)
                for m in mutations
                if _rebuilt_keeping(m, attribute, fields) or self._waits_for_itself(m, attribute)
            }
            # ``self.step_fn = lambda x: self._update(x, grad_fn)`` stored again: a function
            # that does what the last one did.
            if self._own_functions_only(cls, attribute):
                kept |= {id(m) for m in mutations}
            # ``cls.gamma = g`` (or ``TDAgent.gamma = g``) while every object stores its own
            # ``self.gamma`` in ``__init__``: the class's value is hidden on every object.
            if self._shadowed_on_every_object(cls, attribute):
                kept |= {id(m) for m in mutations if self._stores_on_the_class(m, cls)}
            # ``self.optimizer = optax.adam(self.learning_rate)`` in a ``fit`` run again: an
            # equal object each time, from settings only the constructor sets.
            if no_other_value(facts.tree, cls.scope.node, attribute) and rebuilt_alike(
                facts, attribute, cls.construction, lambda name: list(self._changes(cls, name))
            ):
                kept |= {id(m) for m in mutations}
            # ``self.model.params = p`` while the trace calls ``self.model.forward(params, x)``
            # and ``forward`` reads only ``self.scale``: a part of the object no read sees.
            parts = self._held_parts(cls, attribute, attribute_reads)
            if parts is not None:
                kept |= {id(m) for m in mutations if not parts.touches(_below(m, attribute))}
            # Only the layout read (``len(self.weights)``, ``self.weights[i].shape``), before
            # any store of the compiled body's own: a store that keeps the layout is no change.
            layout = self._layout_reads(cls, site.scope, attribute, attribute_reads, mutations)
            if layout is not None:
                kept |= {id(m) for m in mutations if layout <= self._kept_layout(cls, m, attribute)}
            # A write into another part of the container (``self.cache["last"] = x``, or
            # ``self.config.data.subset = s`` in another method, while the trace reads
            # ``self.cache["scale"]``, ``self.config.model.width``) changes nothing it reads.
            elsewhere = {
                id(m)
                for m in mutations
                if _beside(m, attribute, attribute_reads)
                and (id(m) in own_writes or not _parts_may_alias(facts.tree, m, attribute_reads))
            }
            # What the body stores from its own arguments before reading is each trace's own.
            own_fed = {
                id(m) for m in mutations if own_fed_safe and id(m) in own_writes and m.path in fed
            }
            stale: list[tuple[Mutation, StalePath]] = []
            for change, path in self._stale_changes(
                cls, holder, attribute, life, replacers,
                own_state | kept | elsewhere | own_fed, own_writes - kept - elsewhere - own_fed,
            ):  # fmt: skip
                stale.append((change, path))
                if path.witnessed:
                    break  # nothing later is reported before it
            if not any(path.witnessed for _, path in stale):
                stale += [
                    (change, path)
                    for change, path in self._held_object_changes(
                        cls, attribute, attribute_reads, life, parts
                    )
                    if parts is None or parts.touches(change.path)
                ]
            read_whole = not fed and parts is None and layout is None and fields is None
            if not stale and read_whole:
                # ``self.end_epoch()`` in ``fit``'s loop, a hook a subclass in another file
                # overrides to store ``self.clip``.
                by_hook = self._stored_by_subclass_hook(
                    cls, life, replacers, attribute
                ) or self._stored_through_handed_self(cls, life, attribute)
                if by_hook is not None:
                    hook_path, stored_in = by_hook
                    attribute_reads.sort(key=lambda r: r.start)
                    yield StaleCapture(
                        site, self_name, method, attribute_reads[0], tuple(attribute_reads),
                        None, None, attribute=attribute, static_self=holder.static_self,
                        bound_method=holder.bound_method, read_through=through.get(attribute),
                        path=hook_path, changed_in=stored_in,
                    )  # fmt: skip
                    continue
            if not stale:
                stored_elsewhere = self._stored_in_another_file(
                    cls, holder, attribute, life,
                    read_whole=not fed and parts is None and layout is None and fields is None,
                )  # fmt: skip
                if stored_elsewhere is not None:
                    attribute_reads.sort(key=lambda r: r.start)
                    yield StaleCapture(
                        site, self_name, method, attribute_reads[0], tuple(attribute_reads),
                        None, None, attribute=attribute, static_self=holder.static_self,
                        bound_method=holder.bound_method, read_through=through.get(attribute),
                        path=stored_elsewhere,
                    )  # fmt: skip
                continue
            # The first change the code shows a witness for, else the first API hazard.
            change, path = next(((c, p) for c, p in stale if p.witnessed), stale[0])
            attribute_reads.sort(key=lambda r: r.start)
            yield StaleCapture(
                site, self_name, method, attribute_reads[0], tuple(attribute_reads), None,
                change, attribute=attribute, static_self=holder.static_self,
                bound_method=holder.bound_method, read_through=through.get(attribute),
                path=path,
            )  # fmt: skip

    def _stored_in_another_file(
        self,
        cls: ClassFacts,
        holder: Holder,
        attribute: str,
        life: CompiledLife,
        read_whole: bool,
    ) -> StalePath | None:
        """A stale path another file of the project takes by storing the attribute on an object
        of the class (``trainer.lr = 0.5`` between two ``trainer.fit(...)`` calls in a script
        that imports ``Trainer``). Only for a static ``self``, which every object shares, and an
        attribute the module changes only while constructing, read whole: the module's own
        changes, and reads of a part, are timed by the rest of the rule."""
        project = self.captures.project
        if project is None or not read_whole:
            return None
        if cls.scope.parent is None or cls.scope.parent.kind is not ScopeKind.MODULE:
            return None  # only a module-level class can be imported
        if any(
            changer is None or changer.name not in cls.construction
            for _, changer in self._changes(cls, attribute)
        ):
            return None
        if holder.static_self:
            callers = [entry.qualified_name() for entry in life.reach.entries]
        else:
            kept = self._kept_by_constructor(cls, holder)
            if kept is None:
                return None
            # The wrapper itself, and the methods that call it (``trainer.fit(x)``).
            callers = [f"{cls.scope.name}.{kept}"] + [
                entry.qualified_name()
                for entry in life.reach.entries
                if entry.parent is cls.scope and entry.name not in cls.construction
            ]
        return project.store_witness(
            callers, project.module, f"{cls.scope.name}.{attribute}", per_object=True
        )

    def _stored_by_subclass_hook(
        self, cls: ClassFacts, life: CompiledLife, replacers: set[Scope], attribute: str
    ) -> tuple[StalePath, WitnessStep] | None:
        """The stale path through a method of the class that a subclass in another file of the
        project overrides to store the attribute: ``fit`` traces ``self._step``, then runs
        ``self.end_epoch()``, which ``AnnealedClipTrainer`` (``trainers/annealed.py``, whose
        objects the project makes) defines to store ``self.clip``, then calls ``self._step``
        again. The path runs through the class's own method, which runs the override on such
        an object; the change step names the override's store."""
        project = self.captures.project
        if project is None or cls.scope.parent is None:
            return None
        if cls.scope.parent.kind is not ScopeKind.MODULE:
            return None  # only a module-level class can be subclassed in another file
        for store in project.subclass_stores(f"{cls.scope.name}.{attribute}"):
            hook = cls.methods.get(store.method)
            if hook is None or hook.name in cls.construction or hook in replacers:
                continue
            body = getattr(hook.node, "body", None)
            if not body:
                continue
            first = body[0]
            driver, at, loops = level(hook, (first.lineno, first.col_offset), ())
            found = self._stored_there(
                cls, life, Event(driver, at, loops, EventKind.RUN, node=first), store
            )
            if found is not None:
                return found
        return None

    def _stored_there(
        self, cls: ClassFacts, life: CompiledLife, change: Event, store: MethodStore
    ) -> tuple[StalePath, WitnessStep] | None:
        """The witness of a change that runs the method of another file making ``store``
        where ``change`` happens, with the store as the change step the message names."""
        path = self._per_object_path(cls, life, self.graph.propagate([change], None))
        if path is None or not path.witnessed:
            return None
        # ``cb.on_epoch_end(self, epoch)`` calls no function of the module: name the method.
        steps = tuple(
            dataclasses.replace(step, via=store.method)
            if step.role is Role.CHANGE and step.via is None and step.path is None
            else step
            for step in path.steps
        )
        path = dataclasses.replace(path, steps=steps)
        return path, WitnessStep(
            Role.CHANGE, store.line, 0, via=f"{store.owner}.{store.method}", path=store.path
        )

    def _stored_through_handed_self(
        self, cls: ClassFacts, life: CompiledLife, attribute: str
    ) -> tuple[StalePath, WitnessStep] | None:
        """The stale path through a method of the class that hands its own object to a method
        of another object (``cb.on_epoch_end(self, epoch)`` for each callback it was given),
        which a class in another file of the project, whose objects it makes, defines to store
        the attribute on the object handed (``LRDecay.on_epoch_end(self, trainer, epoch)``
        storing ``trainer.lr``). The handing call is the change; the message names the
        store."""
        project = self.captures.project
        if project is None:
            return None
        for name, method in sorted(cls.methods.items()):
            self_name = method_self_name(method)
            if self_name is None or name in cls.construction:
                continue
            self.facts.ensure_scope(method)
            for read in self.facts.reads.get(self_name, ()):
                if not read.scope.is_within(method) or read.called:
                    continue
                call = self.facts.parent(read.node)
                if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
                    continue
                receiver = call.func.value
                if isinstance(receiver, ast.Name) and receiver.id == self_name:
                    continue  # a method of its own: timed by the rest of the rule
                position = next((i for i, a in enumerate(call.args) if a is read.node), None)
                if position is None:
                    continue
                for store in project.handed_stores(call.func.attr, position, attribute):
                    event = event_at(read.scope, call, read.loops, EventKind.RUN)
                    found = self._stored_there(cls, life, event, store)
                    if found is not None:
                        return found
        return None

    def _kept_by_constructor(self, cls: ClassFacts, holder: Holder) -> str | None:
        """``act`` for ``self.act = jax.jit(self._act)`` in a constructor: each object keeps a
        wrapper of its own bound method there, which importers call as ``agent.act(q)``."""
        site = holder.site
        statement = self.facts.parent(site.site)
        method = site.site_scope
        if not holder.bound_method or method.name not in cls.construction:
            return None
        if method.parent is not cls.scope or not isinstance(statement, ast.Assign):
            return None
        if len(statement.targets) != 1 or not isinstance(site.site, ast.Call):
            return None
        target = statement.targets[0]
        self_name = method_self_name(method)
        if (
            not isinstance(target, ast.Attribute)
            or not isinstance(target.value, ast.Name)
            or target.value.id != self_name
            or _bound_receiver(site) != self_name
        ):
            return None
        return target.attr

    def _handed_unread(self, read: Read) -> bool:
        """``self.weights`` handed to a parameter its function never reads
        (``loss(self.weights, x)`` of ``def loss(weights, x)`` that uses another)."""
        held = self.facts.parent(read.node)
        return (
            isinstance(held, ast.Attribute)
            and held.value is read.node
            and len(read.path) == 1
            and handed_unread(self.facts, read.scope, held, self.captures.elsewhere)
        )

    def _fed_through_setter(
        self, cls: ClassFacts, holder: Holder, attribute: str, reads: list[Read]
    ) -> bool:
        """``self.set_params(params)`` as a statement of the compiled body, before anything
        in it reads ``self.params``, where ``set_params`` stores its parameter before it
        reads the attribute: each trace reads a tracer of its own call, so no change made
        elsewhere reaches a compiled result."""
        path = (f".{attribute}",)
        for mutation, setter in self._changes(cls, attribute):
            self_name = method_self_name(setter) if setter is not None else None
            if setter is None or self_name is None or mutation.path != path:
                continue
            own_reads = [
                read
                for read in self.facts.reads_within(setter)
                if read.name == self_name and read.path[:1] == path
            ]
            if path not in fed_from_arguments(setter, [mutation], own_reads):
                continue
            for call, runner in self._top_level_calls(holder, setter.name):
                if all(_after_or_within(r.node, call, runner) for r in reads):
                    return True
        return False

    def _top_level_calls(
        self, holder: Holder, method: str
    ) -> Iterator[tuple[ast.Call, tuple[ast.AST, ast.Call] | None]]:
        """The calls ``self.<method>(...)`` that are statements of the compiled body, or the
        value such a statement assigns (not under an ``if`` or in a loop); or such a statement
        (or the value it returns) of a function the compiled body defines and runs by a
        statement of its own (``loss, grads = jax.value_and_grad(compute)(w)``), with that
        running call: the method runs first in that function, when the function runs."""
        site = holder.site
        body = getattr(site.scope.node, "body", [])
        for read in self.facts.reads_within(site.scope):
            if read.name != holder.self_name or self._called_method(read) != method:
                continue
            attribute = self.facts.parent(read.node)
            call = self.facts.parent(attribute) if attribute is not None else None
            handed = self._run_through_transform(site.scope, body, attribute, call)
            if handed is not None:
                yield handed, None
                continue
            statement = self.facts.parent(call) if call is not None else None
            if not (
                isinstance(call, ast.Call)
                and isinstance(statement, (ast.Expr, ast.Assign, ast.Return))
                and statement.value is call
            ):
                continue
            if any(statement is top for top in body) and not isinstance(statement, ast.Return):
                yield call, None
                continue
            nested = read.scope
            if nested is site.scope or nested.parent is not site.scope:
                continue
            if not any(statement is top for top in getattr(nested.node, "body", [])):
                continue
            entry = self._runs_nested(site.scope, nested)
            if entry is not None:
                yield call, (nested.node, entry)

    def _run_through_transform(
        self, compiled: Scope, body: list[ast.stmt], attribute: ast.AST | None, call: ast.AST | None
    ) -> ast.Call | None:
        """``jax.grad(self.loss)(w, x)``: the method handed to a transform that only wraps it,
        run at once, unconditionally, in a statement of the compiled body; that running call."""
        if not (
            isinstance(call, ast.Call)
            and call.args[:1] == [attribute]
            and self._wraps_only(compiled, call.func)
        ):
            return None
        runner = self.facts.parent(call)
        if not isinstance(runner, ast.Call) or runner.func is not call:
            return None
        for top in body:
            if isinstance(top, (ast.Expr, ast.Assign, ast.Return)) and top.value is not None:
                if any(found is runner for found in _unconditional_calls(top.value)):
                    return runner
        return None

    def _runs_nested(self, compiled: Scope, nested: Scope) -> ast.Call | None:
        """The call that runs the function ``nested`` (defined in the compiled body, undecorated
        or decorated by transforms that only wrap it) as a statement of the compiled body, or
        the value such a statement assigns or returns: ``compute(w)``, ``jax.grad(compute)(w)``;
        None when the body defines that name more than once or runs it otherwise."""
        node = nested.node
        if not isinstance(node, ast.FunctionDef) or not all(
            self._wraps_only(compiled, _decorator_call(d)) for d in node.decorator_list
        ):
            return None
        body = getattr(compiled.node, "body", [])
        if sum(_binds_name(top, node.name) for top in body) != 1:
            return None
        for top in body:
            if not isinstance(top, (ast.Expr, ast.Assign, ast.Return)) or top.value is None:
                continue
            for runner in _unconditional_calls(top.value):
                func = runner.func
                if isinstance(func, ast.Call) and self._wraps_only(compiled, func.func):
                    func = func.args[0] if func.args else func
                if isinstance(func, ast.Name) and func.id == node.name:
                    return runner
        return None

    def _wraps_only(self, scope: Scope, func: ast.expr) -> bool:
        return self.facts.qualified_name(scope, func) in PASSTHROUGH_TRANSFORMS

    def _layout_reads(
        self,
        cls: ClassFacts,
        compiled: Scope,
        attribute: str,
        reads: list[Read],
        mutations: list[Mutation],
    ) -> set[LayoutRead] | None:
        """What of ``self.<attribute>``'s layout the trace reads, directly or through the
        class's methods; None when it reads more. Reads after the compiled body stores its own
        arguments there (``self.weights = self.unflatten(params)``, a statement of the body)
        read that store, not what was there."""
        stores = [
            m.end
            for m in mutations
            if m.scope is compiled
            and m.path == (f".{attribute}",)
            and fed_from_arguments(compiled, [m], [])
        ]
        stored_at = min(stores, default=None)
        found: set[LayoutRead] = set()
        for read in reads:
            if stored_at is not None and read.start >= stored_at:
                continue
            called = None if _first_attribute(read) == attribute else self._called_method(read)
            inner = (
                self._layout_read(read)
                if called is None
                else self._layout_reads_in(cls, called, attribute, frozenset())
            )
            if inner is None:
                return None
            found |= inner
        return found

    def _layout_reads_in(
        self, cls: ClassFacts, name: str, attribute: str, seen: frozenset[str]
    ) -> set[LayoutRead] | None:
        """What of ``self.<attribute>``'s layout the method ``name``, and the methods it
        calls, read; None when one reads more."""
        method = cls.methods.get(name)
        self_name = method_self_name(method) if method is not None else None
        if method is None or self_name is None:
            return None
        found: set[LayoutRead] = set()
        if name in seen:
            return found
        for read in self.facts.reads_within(method):
            if read.name != self_name or self.facts.resolve(read.scope, self_name) is not method:
                continue
            if _first_attribute(read) == attribute:
                inner = self._layout_read(read)
            else:
                called = self._called_method(read)
                if called is None or called not in cls.methods:
                    continue
                inner = self._layout_reads_in(cls, called, attribute, seen | {name})
            if inner is None:
                return None
            found |= inner
        return found

    def _layout_read(self, read: Read) -> set[LayoutRead] | None:
        held = self.facts.parent(read.node)
        taken = layout_read(self.facts.parent, held) if isinstance(held, ast.Attribute) else None
        return {taken} if taken is not None else None

    def _kept_layout(
        self, cls: ClassFacts, mutation: Mutation, attribute: str
    ) -> frozenset[LayoutRead]:
        """What of the attribute's layout the change keeps (``.at[...]``, a reshape to its
        shape, or a method of the class building one, entry by entry)."""
        entry = stored_by(mutation) if mutation.path == (f".{attribute}",) else None
        if entry is None:
            return frozenset()
        methods = {name: method.node for name, method in cls.methods.items()}
        return kept_layout(entry[0], entry[1], mutation.name, attribute, methods)

    def _own_functions_only(self, cls: ClassFacts, attribute: str) -> bool:
        """Every store of ``self.<attribute>`` is one expression, stored by a method of the
        class, making a function only from the object's own methods or a constant
        (``own_functions``), and nothing else gives the attribute a value (a class default):
        whatever it held when a trace read it, it holds the same value, or a function doing the
        same, now."""
        changes = list(self._changes(cls, attribute))
        if not changes:
            return False
        first = changes[0][0].value
        methods = frozenset(cls.methods)
        for mutation, changer in changes:
            self_name = method_self_name(changer) if changer is not None else None
            value = mutation.value
            if (
                self_name is None
                or changer is None
                or mutation.name != self_name
                or mutation.path != (f".{attribute}",)
                or value is None
                or first is None
                or not same_tree(value, first)
                or not made_from_own_methods(self.facts, changer, self_name, value, methods)
            ):
                return False
        return no_other_value(self.facts.tree, cls.scope.node, attribute)

    def _shadowed_on_every_object(self, cls: ClassFacts, attribute: str) -> bool:
        """The class's own ``__init__`` stores ``self.<attribute>`` on every way through it."""
        init = cls.methods.get("__init__")
        self_name = method_self_name(init) if init is not None else None
        if init is None or self_name is None:
            return False
        return _always_stores(getattr(init.node, "body", []), self_name, attribute)

    def _stores_on_the_class(self, mutation: Mutation, cls: ClassFacts) -> bool:
        """``cls.gamma = g`` in a classmethod of the class, or ``TDAgent.gamma = g``: a store
        on the class itself, not on one of its objects."""
        if len(mutation.path) != 1 or not isinstance(mutation.node, ast.Assign):
            return False
        scope = mutation.scope
        node = scope.node
        if (
            isinstance(node, ast.FunctionDef)
            and scope.parent is cls.scope
            and any(isinstance(d, ast.Name) and d.id == "classmethod" for d in node.decorator_list)
            and node.args.args
            and node.args.args[0].arg == mutation.name
        ):
            return True
        owner = self.facts.resolve(scope, mutation.name)
        bindings = self.facts.bindings_of(owner, mutation.name)
        return (
            len(bindings) == 1
            and bindings[0].kind is BindingKind.CLASS
            and bindings[0].node is cls.scope.node
        )

    def _waits_for_itself(self, mutation: Mutation, attribute: str) -> bool:
        """``self.state = jax.block_until_ready(self.state)``: the same object again."""
        if mutation.path != (f".{attribute}",):
            return False
        record = ast.Attribute(value=ast.Name(mutation.name), attr=attribute)
        return waits_for(self.facts, mutation.scope, mutation.value, record)

    def _fields_read(self, attribute: str, reads: list[Read]) -> list[str] | None:
        """The fields each read takes of ``self.<attribute>`` (``apply_fn`` of
        ``self.state.apply_fn``); None when one takes the whole value, calls one of its
        methods, or reaches it through a method of the class."""
        held = [self.facts.parent(read.node) for read in reads]
        records = [
            node
            for node in held
            if isinstance(node, ast.Attribute) and node.attr == attribute
        ]  # fmt: skip
        return fields_below(self.facts, records) if len(records) == len(reads) else None

    def _life(self, cls: ClassFacts, holder: Holder, sharing: list[Holder]) -> CompiledLife:
        """Where the compiled object can be traced and called: the calls of a static-``self``
        method on any instance, of the object ``jax.jit(obj.method)`` made (with the other
        wrappers ``sharing`` its traces: the earliest one, alive throughout, is the cache they
        share), of a closure."""
        if holder.bound_method:
            # Each wrapper of a bound method is an object of its own: ``captures.life`` keeps
            # one life per compiled function, and two wrappers of ``obj.calc`` share one.
            wrappers = sorted([holder, *sharing], key=lambda h: h.site.created_at)
            lives = [compiled_life(self.graph, [wrapper.site]) for wrapper in wrappers]
            events = [event for life in lives for event in life.reach.events]
            entries = [entry for life in lives for entry in life.reach.entries]
            life = dataclasses.replace(lives[0], reach=Reach(events, entries))
        else:
            life = self.captures.life([holder.site])
            home = self._object_home(cls, holder, life) if holder.static_self else None
            if home is not None:
                life = compiled_life(self.graph, [holder.site], object_home=home)
        if (
            not holder.static_self
            or life.reach.outside
            or self.facts.in_script(holder.method.start[0])
        ):
            return life
        # Whoever holds an instance, in this module or outside it, can call the method.
        reach = Reach(list(life.reach.events), [holder.method])
        return dataclasses.replace(life, reach=reach)

    def _object_home(self, cls: ClassFacts, holder: Holder, life: CompiledLife) -> Scope | None:
        """The one function whose every run calls the static-``self`` method on an object it
        makes itself (``trainer = Trainer(n); trainer.solve()``), kept in a local name that
        only calls and reads go through. The class is hashed by identity, so each run's object
        has traces of its own: a run never reuses what an earlier run's object traced."""
        if self._hashed_by_value(cls):
            return None
        homes: set[int] = set()
        home: Scope | None = None
        for event in life.reach.events:
            driver = event.driver
            if self._in_class(cls, driver):
                continue  # ``self.train(...)`` inside the class's own methods
            if event.via is not None and not self._in_class(cls, event.via):
                continue  # a call of the code that made and used the object: above it
            node = event.node
            if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name):
                return None
            receiver = node.value.id
            if (
                driver.kind is not ScopeKind.FUNCTION
                or self.facts.resolve(driver, receiver) is not driver
                or self._made_here(driver, receiver) is None
                or not self._only_attributes_taken(driver, receiver)
            ):
                return None
            homes.add(id(driver))
            home = driver
        return home if len(homes) == 1 else None

    def _in_class(self, cls: ClassFacts, scope: Scope) -> bool:
        method = enclosing_method(scope, None)
        parent = method.parent if method is not None else None
        return parent is not None and (parent is cls.scope or self.graph.related(parent, cls.scope))

    def _only_attributes_taken(self, scope: Scope, name: str) -> bool:
        """Every read of the local ``name`` takes an attribute of it (``trainer.solve()``): the
        object is not handed on, returned or kept."""
        for read in self.facts.reads_of(scope, name):
            parent = self.facts.parent(read.node)
            if not isinstance(parent, ast.Attribute) or parent.value is not read.node:
                return False
        return True

    def _hashed_by_value(self, cls: ClassFacts) -> bool:
        return self._by_value(cls.scope, 0)

    def _by_value(self, scope: Scope, depth: int) -> bool:
        """Whether objects of the class may be hashed by value: its own ``__eq__`` or
        ``__hash__``, a dataclass, or a base class that is (or that this module does not
        define, such as a Flax or Equinox module: those are dataclasses)."""
        node = scope.node
        if not isinstance(node, ast.ClassDef) or depth > 8:
            return True
        own = {child.name for child in scope.children if child.kind is ScopeKind.FUNCTION}
        if {"__eq__", "__hash__"} & own or any(_names_dataclass(d) for d in node.decorator_list):
            return True
        parent = scope.parent
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id == "object":
                continue
            if not isinstance(base, ast.Name) or parent is None:
                return True
            owner = self.facts.resolve(parent, base.id)
            bindings = self.facts.bindings_of(owner, base.id)
            if len(bindings) != 1 or bindings[0].kind is not BindingKind.CLASS:
                return True
            if self._by_value(self.facts.scope_of(bindings[0].node), depth + 1):
                return True
        return False

    def _written_into(self, read: Read) -> bool:
        """``self.queue[key] = x``, ``del self.queue[key]`` or ``self.config.lr = v``: the code
        stores into what the attribute holds, and reads no value from it. Made while JAX
        traces, such a store is trace-time state (as ``seen[key] = x`` in a closure): nothing
        of the container reaches the result. A method called on it (``self.log.append(x)``,
        ``self.clip.update(g, out)``, ``self.rng.shuffle(perm)``) may read it: a read."""
        attribute = self.facts.parent(read.node)
        if not isinstance(attribute, ast.Attribute) or attribute.value is not read.node:
            return False
        parent = self.facts.parent(attribute)
        if not isinstance(parent, (ast.Subscript, ast.Attribute)) or parent.value is not attribute:
            return False
        if not isinstance(parent.ctx, (ast.Store, ast.Del)):
            return False
        return not isinstance(self.facts.parent(parent), ast.AugAssign)

    def _called_method(self, read: Read) -> str | None:
        """``helper`` for ``self.helper(...)`` or a property read ``self.helper``."""
        parent = self.facts.parent(read.node)
        if isinstance(parent, ast.Attribute) and parent.value is read.node:
            return parent.attr
        return None

    def _calls_attribute(self, read: Read) -> bool:
        """``self.f(...)``: the read calls what an attribute holds."""
        parent = self.facts.parent(read.node)
        call = self.facts.parent(parent) if parent is not None else None
        return isinstance(call, ast.Call) and call.func is parent

    def _methods_reached(self, cls: ClassFacts, read: Read) -> set[str]:
        """The methods of the class that a read of ``self`` calls (``self.helper()``), and the
        methods they call in turn."""
        called = self._called_method(read)
        if called is None or called not in cls.methods:
            return set()
        reached = {called}
        pending = [called]
        while pending:
            method = cls.methods[pending.pop()]
            self_name = method_self_name(method)
            for inner in self.facts.reads_within(method):
                if inner.name != self_name:
                    continue
                name = self._called_method(inner)
                if name is not None and name in cls.methods and name not in reached:
                    reached.add(name)
                    pending.append(name)
        return reached

    def _read_by_kept_lambdas(self, cls: ClassFacts, name: str) -> set[str]:
        """The attributes of the object that the lambdas the class's methods keep in
        ``self.<name>`` read through the object (``self.read_total = lambda: self.total``):
        calling ``self.read_total()`` reads ``self.total`` then."""
        attributes: set[str] = set()
        for mutation, changer in self._changes(cls, name):
            value = mutation.value
            if changer is None or mutation.path != (f".{name}",):
                continue
            inside = self.facts.scopes_by_node.get(id(value))
            if isinstance(value, ast.Lambda) and inside is not None:
                attributes |= self._attributes_read_by(cls, changer.name, inside=inside)
        return attributes

    def _attributes_read_by(
        self,
        cls: ClassFacts,
        name: str,
        seen: frozenset[str] = frozenset(),
        inside: Scope | None = None,
    ) -> set[str]:
        """The attributes the method ``name`` reads of its object, also through the methods
        it calls; with ``inside``, only what that part of it (a lambda it makes) reads."""
        method = cls.methods.get(name)
        self_name = method_self_name(method) if method is not None else None
        if method is None or self_name is None or name in seen:
            return set()
        attributes: set[str] = set()
        for read in self.facts.reads_within(inside or method):
            if read.name != self_name or self.facts.resolve(read.scope, self_name) is not method:
                continue
            if self._written_into(read):
                continue
            attribute = _first_attribute(read)
            if attribute is not None and attribute not in cls.methods:
                attributes.add(attribute)
                continue
            called = attribute or self._called_method(read)
            if called is not None and called not in cls.methods:
                if self._calls_attribute(read):
                    attributes.add(called)  # a function kept in an attribute, called
            elif called is not None:
                attributes |= self._attributes_read_by(cls, called, seen | {name})
        return attributes

    def _changes(self, cls: ClassFacts, attribute: str) -> Iterator[tuple[Mutation, Scope | None]]:
        """Changes of the attribute on this class's objects: in a method (with the method), or
        on an instance (with None)."""
        facts = self.facts
        for mutation in facts.attribute_changes(attribute):
            if cls.frozen and _sets_attribute(mutation):
                continue  # a frozen object's attribute cannot be set again
            owner = facts.resolve(mutation.scope, mutation.name)
            parent = owner.parent
            if (
                parent is not None
                and parent.kind is ScopeKind.CLASS
                and method_self_name(owner) == mutation.name
            ):
                # A method of the class, or of a class derived from it or that it derives from.
                if parent is cls.scope or self.graph.related(parent, cls.scope):
                    yield mutation, owner
                continue
            made = self.graph.object_class(mutation.scope, mutation.name, mutation.start)
            if made is cls.scope or (
                made is None
                and mutation.name in owner.params
                and self.classes.may_be_instance(owner, mutation.name, cls)
            ):
                # An instance of the class, or an object handed to a function: its class is
                # the callers' to say, and may be this one.
                yield mutation, None
        for mutation in facts.nested_attribute_changes(attribute):
            # ``self.target.mul = v``: an object held by another, of a class the code does not
            # say; it may be one of this class's. Only through objects that can hold one: a
            # parameter (``self`` too) or a global, not a local the function made itself
            # (``proto = Model(); proto.neighbors.order.extend(...)``).
            # Below the attribute too: ``self.model.cfg["temperature"] = v`` changes what
            # ``cfg`` holds in place.
            owner = facts.resolve(mutation.scope, mutation.name)
            held = mutation.name in owner.params or owner.kind is ScopeKind.MODULE
            steps = mutation.path
            at = next((i for i in range(1, len(steps)) if steps[i] == f".{attribute}"), None)
            if held and at is not None and self._may_hold(cls, steps[at - 1]):
                yield mutation, None

    def _may_hold(self, cls: ClassFacts, step: str) -> bool:
        """Whether what ``.<step>`` holds can be an object of the class: the module stores
        something there that can be one (an object of the class or a related one, or a value
        the code does not say). Nothing stored there, or only objects of other classes,
        literals and containers: another object (``config.policy.flag = v`` is no
        ``Policy.flag``)."""
        if not step.startswith("."):
            return True  # an item of a container: the code does not say what it holds
        for store in self.facts.attribute_changes(step[1:]):
            if store.path[-1:] != (step,):
                continue  # a change below it (``config.policy.flag = v`` itself)
            value = store.value
            if value is None or isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)):
                return True
            if isinstance(value, ast.Call):
                if self._made_elsewhere(store.scope, value):
                    continue  # ``types.SimpleNamespace(...)``, ``dict(...)``: not the class
                made = self.graph.object_class_of_call(store.scope, value)
                if made is None or made is cls.scope or self.graph.related(made, cls.scope):
                    return True
        return False

    def _made_elsewhere(self, scope: Scope, call: ast.Call) -> bool:
        """The call makes an object of a class this module does not define: an imported
        callable, or a builtin (a name the module never binds)."""
        if self.facts.qualified_name(scope, call.func) is not None:
            return True
        if isinstance(call.func, ast.Name):
            owner = self.facts.resolve(scope, call.func.id)
            return not self.facts.bindings_of(owner, call.func.id)
        return False

    def _stale_changes(
        self,
        cls: ClassFacts,
        holder: Holder,
        attribute: str,
        life: CompiledLife,
        replacers: set[Scope],
        own_state: set[int],
        own_writes: set[int],
    ) -> Iterator[tuple[Mutation, StalePath]]:
        """The changes that can make the compiled object stale, in order, each with its path."""
        changes = sorted(self._changes(cls, attribute), key=lambda c: c[0].end)
        per_run = self._wrapper_per_run(holder, life)
        for mutation, method in changes:
            if per_run and id(mutation) not in own_writes:
                # Only a change the run makes after making its wrapper reaches that wrapper.
                site = holder.site
                reach = self.captures.change_reach(mutation, None)
                later = [
                    e
                    for e in reach.events
                    if e.driver is site.site_scope and e.at > site.created_at
                ]  # fmt: skip
                path = stale_path(self.graph, life, Reach(later)) if later else None
                if path is not None:
                    yield mutation, path
                continue
            if id(mutation) in own_writes:
                # Written once, while tracing: stale from the second compiled call on.
                written = Event(mutation.scope, mutation.end, mutation.loops, EventKind.RUN)
                own = called_again_path(life, written)
                if own is not None:
                    yield mutation, own
                continue
            if mutation.scope.is_within(holder.site.scope) or id(mutation) in own_state:
                continue  # trace-time work of the compiled function itself
            if sets_split_structure(self.facts, mutation):
                continue
            if (
                method is holder.method
                and (method.name in CONSTRUCTORS or self._remade_in_place(holder))
                and _before_making(mutation, holder.site, method)
            ):
                # Each construction sets a new object up before making the closure; a setter
                # that changes the value and then makes the closure again, where the old one
                # was kept, leaves no closure traced with the old value.
                continue
            if method is not None and method is not holder.method:
                if method.name in CONSTRUCTORS:
                    # A constructor, the class's or a related one's (``Base.__init__``, run
                    # by ``Model()``), builds a new object: it changes one already made only
                    # where code runs it again on it (``Base.__init__(self, width)``).
                    again = self._run_again(method, shown=True)
                    path = stale_path(self.graph, life, again) if again is not None else None
                    if path is not None:
                        yield mutation, path
                    continue
                if method.name in cls.construction or method in replacers:
                    continue  # before the object exists, or only for the next object made
            if method is None:
                path = self._instance_change(mutation, life, cls)
                if path is not None:
                    yield mutation, path
                continue
            if method is holder.method and holder.bound_method:
                continue  # the compiled method's own trace-time work
            # A method's change happens where the method is called (or from outside, when
            # nothing in the module names it).
            reach = self.captures.change_reach(mutation, None)
            # A method that runs at most once per object cannot repeat the change after a
            # trace: only a compiled call before its one run makes it stale.
            once = self._runs_once(cls, method)
            if once and _changed_before_every_use(life.reach, reach):
                continue  # lazy set-up: the first compiled call of each object follows it
            if self._set_while_unset(cls, mutation, method) and _changed_before_every_use(
                life.reach, reach, entry=method
            ):
                continue  # ``if self._mean is None: self._mean = ...`` before each use
            path = self._per_object_path(cls, life, reach, varies=not once)
            if path is not None:
                yield mutation, path

    def _per_object_path(
        self,
        cls: ClassFacts,
        life: CompiledLife,
        change: Reach,
        varies: bool = True,
        changed: str | None = None,
    ) -> StalePath | None:
        """The change's path, object by object. A static ``self`` is hashed by identity, so a
        call of a method that changes one object (``cold.calibrate(0.25)``) makes only that
        object's calls stale: those on an object another name made are not (``hot``), and
        one on an object the same statement makes (``Ridge(a).fit(x)``) comes before all of
        its calls. A name bound to a new object at the top of each pass of a loop holds
        another object in the next pass (``m = Member(seed)``): no pass reuses the last one's
        trace through it. A class hashed by value shares traces between equal objects: every
        call counts. ``changed``: the name an instance change goes through, where its
        statement does not show it (``setattr(obj, "a", v)``)."""
        if self._hashed_by_value(cls):
            return stale_path(self.graph, life, change, varies=varies)
        groups: dict[tuple[int, str] | None, list[Event]] = {}
        split = False  # whether telling objects apart changes anything
        for event in change.events:
            receiver = _changed_receiver(event)
            if receiver is None and changed is not None and event.via is None:
                receiver = ast.Name(changed)
            if isinstance(receiver, ast.Call) and (
                self.graph.object_class_of_call(event.driver, receiver) is cls.scope
            ):
                split = True
                continue  # a new object, changed before anything can call it
            key = None
            if isinstance(receiver, ast.Name):
                key = self._made_here(event.driver, receiver.id)
            if key is not None and (
                self._fresh_each_pass(key)
                or any(self._other_object(u, key) for u in life.reach.events)
            ):
                split = True
            groups.setdefault(key, []).append(event)
        if not split:
            return stale_path(self.graph, life, change, varies=varies)
        if None not in groups and change.entries:
            groups[None] = []
        found: StalePath | None = None
        for key, events in groups.items():
            if key is None:
                path = stale_path(self.graph, life, Reach(events, change.entries), varies=varies)
            else:
                fresh = self._fresh_each_pass(key)
                made = self._made_before(key, events)
                uses = [
                    _outside_loops(u, fresh) if self._on_object(u, key) else u
                    for u in life.reach.events
                    if not self._other_object(u, key)
                    and not (
                        made is not None
                        and self._on_object(u, key)
                        and u.driver is made[0]
                        and u.at < made[1]
                    )
                ]
                own = dataclasses.replace(life, reach=Reach(uses, life.reach.entries))
                moved = Reach([_outside_loops(e, fresh) for e in events])
                path = stale_path(self.graph, own, moved, varies=varies)
            if path is not None and path.witnessed:
                return path
            found = found or path
        return found

    def _fresh_each_pass(self, key: tuple[int, str]) -> frozenset[int]:
        """The loops (by id) at the top of whose body the name is bound to a new object."""
        loops = set()
        for binding in self._bindings_by_key(key):
            # Unconditional in the pass: a statement of the innermost loop's own body.
            for loop in binding.loops[-1:]:
                if isinstance(loop, (ast.For, ast.While)) and any(
                    statement is binding.node for statement in loop.body
                ):
                    loops.add(id(loop))
        return frozenset(loops)

    def _made_before(self, key: tuple[int, str], changes: list[Event]) -> tuple[Scope, Pos] | None:
        """Where the name was last bound to a new object before every change, when each change
        follows that binding in the same run of its code (the binding is a statement of the
        body that holds the change): calls through the name before it called another object.
        """
        drivers = {id(event.driver) for event in changes}
        if len(drivers) != 1:
            return None
        driver = changes[0].driver
        found: Pos | None = None
        for binding in self._bindings_by_key(key):
            if binding.scope is not driver:
                continue
            if binding.loops:
                loop = binding.loops[-1]
                body = getattr(loop, "body", [])
                holds = all(loop in event.loops for event in changes)
            else:
                body = getattr(driver.node, "body", [])
                holds = True
            if not holds or not any(statement is binding.node for statement in body):
                continue
            at = binding.start
            if all(event.at > binding.end for event in changes) and (found is None or at > found):
                found = at
        return None if found is None else (driver, found)

    def _bindings_by_key(self, key: tuple[int, str]) -> list[Binding]:
        owner_id, name = key
        for scope in self.facts.module_scope.walk():
            if id(scope) == owner_id:
                return self.facts.bindings_of(scope, name)
        return []

    def _on_object(self, event: Event, key: tuple[int, str]) -> bool:
        """The event calls the compiled method through the name ``key`` names."""
        receiver = _called_receiver(event)
        return isinstance(receiver, ast.Name) and self._made_here(event.driver, receiver.id) == key

    def _held_object_changes(
        self,
        cls: ClassFacts,
        attribute: str,
        reads: list[Read],
        life: CompiledLife,
        parts: HeldParts | None,
    ) -> Iterator[tuple[Mutation, StalePath]]:
        """``self.opt.lr`` read, or ``self.model.forward(x)`` whose method reads
        ``self.scale`` (``parts``), and ``self.lr = ...`` in a method of the object ``self.opt``
        holds (of the class it is made from in this class, or of any class when the code does
        not say): timed where that method is called."""
        inner = {r.path[1][1:] for r in reads if len(r.path) > 1 and r.path[1].startswith(".")}
        if parts is not None:
            inner |= {path[0][1:] for path in parts.paths if path and path[0].startswith(".")}
        if not inner:
            return
        held = self._held_classes(cls, attribute)
        for name in sorted(inner):
            for mutation in sorted(self.facts.attribute_changes(name), key=lambda m: m.end):
                owner = self.facts.resolve(mutation.scope, mutation.name)
                other = owner.parent
                if (
                    other is None
                    or other.kind is not ScopeKind.CLASS
                    or other is cls.scope
                    or method_self_name(owner) != mutation.name
                    or (held and not any(self.graph.related(other, c) for c in held))
                ):
                    continue
                if _builds_its_own_object(self.facts, mutation, owner):
                    # A constructor stores into the object it makes, not into one already
                    # held, unless code runs it again on an object (``x.__init__(...)``).
                    reach = self._run_again(owner)
                    if reach is None:
                        continue
                else:
                    reach = self.captures.change_reach(mutation, None)
                path = stale_path(self.graph, life, reach)
                if path is not None:
                    yield mutation, path

    def _run_again(self, constructor: Scope, shown: bool = False) -> Reach | None:
        """Where code runs a constructor again on an existing object (``self.kernel.__init__
        (basis)``, or through ``getattr``); not ``super().__init__(...)`` or
        ``Base.__init__(self)`` in a constructor, which builds the new object. None when
        nothing does. ``shown``: only where the code names the constructor and says the
        object is of its class or a related one (``Base.__init__(self, w)``, ``self.__init__()``
        in a method)."""
        events = []
        made = constructor.parent
        for ref in self.facts.attribute_refs(constructor.name):
            if not ref.called:
                continue  # ``str(getattr(config, field))``: taken, never run
            base = ref.base
            other = self._class_of(ref.scope, base, ref.start) or self._named_class(ref.scope, base)
            if shown and (ref.computed or other is None):
                continue
            if (
                made is not None
                and other is not None
                and not (other is made or self.graph.related(other, made))
            ):
                continue  # ``meter.__init__()`` on an object of an unrelated class
            building = isinstance(base, ast.Name) or (
                isinstance(base, ast.Call)
                and isinstance(base.func, ast.Name)
                and base.func.id == "super"
            )
            function = ref.scope
            while function.kind is not ScopeKind.FUNCTION and function.parent is not None:
                function = function.parent
            if building and function.name in CONSTRUCTORS:
                continue
            node = ref.node
            start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
            driver, at, loops = level(ref.scope, start, ref.loops)
            events.append(Event(driver, at, loops, EventKind.RUN, node=node))
        return self.graph.propagate(events, None) if events else None

    def _named_class(self, scope: Scope, base: ast.expr | None) -> Scope | None:
        """The class ``base`` names (``Base`` of ``Base.__init__(self, w)``), when every
        binding of that name is that one ``class`` statement."""
        if not isinstance(base, ast.Name):
            return None
        bindings = self.facts.bindings_of(self.facts.resolve(scope, base.id), base.id)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.CLASS:
            return None
        return self.facts.scope_of(bindings[0].node)

    def _class_of(self, scope: Scope, base: ast.expr | None, at: Pos) -> Scope | None:
        """The class of the object ``base`` names where the code says: ``self`` in a method
        of a class, or a name bound to ``SomeClass(...)``."""
        if not isinstance(base, ast.Name):
            return None
        owner = self.facts.resolve(scope, base.id)
        if method_self_name(owner) == base.id and owner.parent is not None:
            return owner.parent
        return self.graph.object_class(scope, base.id, at)

    def _held_parts(self, cls: ClassFacts, attribute: str, reads: list[Read]) -> HeldParts | None:
        """What the reads of ``self.<attribute>`` read of the object every store of it makes
        (a class of the module or of another module of the project); None when the code
        does not say."""
        changes = [mutation for mutation, _ in self._changes(cls, attribute)]
        stores = [mutation for mutation in changes if mutation.path == (f".{attribute}",)]
        if not stores or self._sets_by_name() or hands_itself_on(self.facts, cls.scope):
            # ``self.__dict__["model"] = Other()``; ``Net(2.0, self)`` reading the trainer
            # back through the object it holds.
            return None
        deep: list[Read] = []
        for read in reads:
            if _first_attribute(read) == attribute:
                deep.append(read)
                continue
            called = self._called_method(read)  # ``self.update_model()`` reading it
            if called is None or called not in cls.methods:
                return None
            deep.extend(self._reads_of_attribute(cls, called, attribute))
        parts = held_parts(self.facts, self.graph, self.captures.project, attribute, deep, stores)
        if parts is not None and any(
            parts.replaces_code(_below(mutation, attribute)) for mutation in changes
        ):
            return None  # ``trainer.model.forward = lambda ...``: not the class's method
        return parts

    def _sets_by_name(self) -> bool:
        """Whether the module sets attributes by a computed name anywhere (``setattr``,
        ``vars``, ``__dict__``), which may store any attribute of any object."""
        if self._by_name is None:
            self._by_name = sets_by_name(self.facts.tree)
        return self._by_name

    def _reads_of_attribute(
        self, cls: ClassFacts, name: str, attribute: str, seen: frozenset[str] = frozenset()
    ) -> Iterator[Read]:
        """The reads of ``self.<attribute>`` that the method ``name`` makes, directly or
        through the methods it calls (as ``_attributes_read_by`` follows them)."""
        method = cls.methods.get(name)
        self_name = method_self_name(method) if method is not None else None
        if method is None or self_name is None or name in seen:
            return
        for read in self.facts.reads_within(method):
            if read.name != self_name or self.facts.resolve(read.scope, self_name) is not method:
                continue
            if self._written_into(read):
                continue
            first = _first_attribute(read)
            if first == attribute:
                yield read
            elif first is None or first in cls.methods:
                called = first or self._called_method(read)
                if called is not None and called in cls.methods:
                    yield from self._reads_of_attribute(cls, called, attribute, seen | {name})

    def _held_classes(self, cls: ClassFacts, attribute: str) -> list[Scope]:
        """The classes ``self.<attribute> = SomeClass(...)`` makes in this class; empty when
        any assignment makes something else."""
        found: list[Scope] = []
        for mutation, method in self._changes(cls, attribute):
            value = mutation.value
            if method is None or mutation.path != (f".{attribute}",):
                continue
            made = None
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
                made = self.graph.object_class_of_call(mutation.scope, value)
            if made is None:
                return []
            found.append(made)
        return found

    def _held_without_setters(self, cls: ClassFacts, attribute: str) -> bool:
        """``self.<attribute>`` is made in this class from classes of the module, with no base
        class, none of whose methods but its constructors changes the object (``rescale``
        setting ``self.scale`` could change it from anywhere)."""
        held = self._held_classes(cls, attribute)
        return bool(held) and all(
            isinstance(made.node, ast.ClassDef)
            and not made.node.bases
            and not any(
                isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
                and method.name not in CONSTRUCTORS
                and _changes_own_object(method)
                for method in made.node.body
            )
            for made in held
        )

    def _touched_only_by(self, cls: ClassFacts, attribute: str, compiled: Scope) -> bool:
        """Every ``.<attribute>`` of the module lies in the construction of ``cls``, which has
        no base class, or in the compiled function (``self.model = Model(...)`` made while
        constructing, then only ``self.model.config.mode = "action"`` and
        ``self.model.generate(...)`` in the compiled body): no method of what it holds runs
        anywhere else, so only the changes the compiled body makes can change it."""
        node = cls.scope.node
        if not isinstance(node, ast.ClassDef) or node.bases or node.keywords:
            return False
        constructing = [cls.methods[name] for name in cls.construction if name in cls.methods]
        refs = self.facts.attribute_refs(attribute)
        return bool(refs) and all(
            ref.attr == attribute
            and (
                ref.scope.is_within(compiled)
                or any(ref.scope.is_within(method) for method in constructing)
            )
            for ref in refs
        )

    def _runs_once(self, cls: ClassFacts, method: Scope, depth: int = 3) -> bool:
        """Whether the method runs at most once per object: every call of it is under
        ``if self.F is None:`` (or ``if not self.F:``, ``if not hasattr(self, "F")``), it sets
        ``self.F`` to something else on every run, and only construction sets ``F`` besides;
        or every call of it is a statement of a method that runs at most once, outside any
        loop there (``_make_opt()`` called by ``_initialize_train``, itself run under ``if
        self._train_input is None:``)."""
        refs = [
            ref
            for ref in self.facts.attribute_refs(method.name)
            if self.graph.classes.may_reach(ref, cls.scope)
        ]
        if not refs or not all(ref.called for ref in refs):
            return False
        if self._called_by_once_only(cls, method, refs, depth):
            return True
        flags: set[str] = set()
        for ref in refs:
            caller = enclosing_method(ref.scope, cls.scope)
            if caller is None or caller is method:
                return False
            tests = tests_around(caller.node, ref.node)
            flags |= {flag for test in tests if (flag := unset_flag(test)) is not None}
        for flag in sorted(flags):
            sets = [
                (m, changer) for m, changer in self._changes(cls, flag) if m.path == (f".{flag}",)
            ]
            sets_it = any(
                changer is method and not m.guards and not is_none(m.value) for m, changer in sets
            )
            others = all(
                changer is method or (changer is not None and changer.name in cls.construction)
                for m, changer in sets
            )
            every_call_guarded = all(
                any(unset_flag(t) == flag for t in tests_around(caller.node, ref.node))
                for ref in refs
                if (caller := enclosing_method(ref.scope, cls.scope)) is not None
            )
            if sets_it and others and every_call_guarded:
                return True
        return False

    def _set_while_unset(self, cls: ClassFacts, mutation: Mutation, method: Scope) -> bool:
        """Whether the change sits under ``if self.F is None:`` in its method, whose body sets
        ``self.F`` to a value that is never None, straight under that test, and only the
        object's construction sets ``F`` besides (``if self._mean is None: self._mean =
        obs.mean(0)``): it runs in the method's first run on each object only."""
        tests = _block_tests(method.node, mutation.node, loops=False)
        if not tests:
            return False
        guard = tests[0]
        flag = _none_tested_attribute(guard, method_self_name(method))
        if flag is None:
            return False
        sets_flag = False
        for store, changer in self._changes(cls, flag):
            if store.path != (f".{flag}",):
                return False  # ``self._mean[0] = ...``, or through another object
            if changer is not None and changer.name in cls.construction:
                continue
            if changer is not method:
                return False  # ``reset()`` may unset it
            if is_none(store.value) or isinstance(store.value, _MAYBE_NONE):
                return False
            sets_flag = sets_flag or _block_tests(method.node, store.node, loops=False) == [guard]
        return sets_flag

    def _called_by_once_only(
        self, cls: ClassFacts, method: Scope, refs: list[AttributeRef], depth: int
    ) -> bool:
        if depth == 0:
            return False
        callers = []
        for ref in refs:
            caller = enclosing_method(ref.scope, cls.scope)
            if caller is None or caller is method or ref.loops or ref.scope is not caller:
                return False
            callers.append(caller)
        unique = {id(caller): caller for caller in callers}.values()
        return all(self._runs_once(cls, caller, depth - 1) for caller in unique)

    def _replacers(self, cls: ClassFacts, holder: Holder) -> set[Scope]:
        """Methods that replace the compiled object kept in ``self.<attr>`` (``self._step =
        None``): what they change reaches only the object made next."""
        statement = self.facts.parent(holder.site.site)
        target = statement.targets[0] if isinstance(statement, ast.Assign) else None
        if isinstance(target, ast.Name):
            target = _attribute_holding_wrapper(holder.site.site_scope.node, target.id)
        if not isinstance(target, ast.Attribute):
            return set()
        return {method for _, method in self._changes(cls, target.attr) if method is not None}

    def _wrapper_per_run(self, holder: Holder, life: CompiledLife) -> bool:
        """``step_fn = jax.jit(self.step)`` as a statement of a function's own body, kept only
        in that local name and called only there: each run makes a new wrapper, and the last
        run's is gone by then (it returned), so the new one starts with no trace (JAX keeps a
        bound method's traces only while a wrapper of it is alive)."""
        site = holder.site
        function = site.site_scope
        statement = self.facts.parent(site.site)
        if not holder.bound_method or not isinstance(function.node, ast.FunctionDef):
            return False
        if _suspends(function.node):
            return False  # a suspended run keeps its wrapper alive while another runs
        if site.created_loops or not isinstance(statement, ast.Assign):
            return False
        if not any(s is statement for s in getattr(function.node, "body", [])):
            return False
        name = site.bound_name
        if name is None or len(statement.targets) != 1:
            return False
        target = statement.targets[0]
        if not isinstance(target, ast.Name) or target.id != name:
            return False
        if name in function.declared_global | function.declared_nonlocal:
            return False
        if len(self.facts.bindings_of(function, name)) != 1:
            return False
        # Called there, or by running the function (its callers' calls of it).
        return all(
            e.kind is EventKind.RUN
            and ((e.driver is function and e.via is None) or e.via is function)
            for e in life.reach.events
        )

    def _remade_in_place(self, holder: Holder) -> bool:
        """The closure is made on every run of its method, by a statement of the method's own
        body (not under a branch or in a loop), and stored in an attribute of ``self``
        (``self.step = jax.jit(lambda x: x * self.lr)``): the new one replaces the old."""
        site = holder.site
        statement = self.facts.parent(site.site)
        method = holder.method.node
        return (
            isinstance(statement, ast.Assign)
            and isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
            and statement in method.body
            and len(statement.targets) == 1
            and isinstance(target := statement.targets[0], ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == holder.self_name
        )

    def _made_here(self, scope: Scope, name: str) -> tuple[int, str] | None:
        """The variable ``name`` names, when every value it is given is an object it makes
        (``first = Scaler(1.0)``): no other variable holds the same object."""
        owner = self.facts.resolve(scope, name)
        bindings = self.facts.bindings_of(owner, name)
        if not bindings or name in owner.params:
            return None
        for binding in bindings:
            value = binding.value
            if not isinstance(value, ast.Call):
                return None
            if self.graph.object_class_of_call(binding.scope, value) is None:
                return None
        return id(owner), name

    def _other_object(self, event: Event, changed: tuple[int, str]) -> bool:
        """The event calls the compiled method on another object than the one changed."""
        receiver = _called_receiver(event)
        if not isinstance(receiver, ast.Name):
            return False
        called = self._made_here(event.driver, receiver.id)
        return called is not None and called != changed

    def _instance_change(
        self, mutation: Mutation, life: CompiledLife, cls: ClassFacts
    ) -> StalePath | None:
        """``obj.attr = ...`` (or ``param.attr = ...`` in a function given the object): timed
        where it runs against the calls of the compiled object on that object."""
        owner = self.facts.resolve(mutation.scope, mutation.name)
        barrier = owner if owner.kind in (ScopeKind.FUNCTION, ScopeKind.LAMBDA) else None
        if mutation.name in owner.params:
            barrier = None  # the object comes from the callers: each call changes it
        reach = self.captures.change_reach(mutation, barrier)
        return self._per_object_path(cls, life, reach, changed=mutation.name)


def _suspends(function: ast.FunctionDef) -> bool:
    """A generator: each run may stay suspended, its locals alive, while others run."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))
    return False


def _changed_receiver(event: Event) -> ast.expr | None:
    """The object a change event changes: ``cold`` of ``cold.calibrate(...)``, or of
    ``cold.temperature = t``."""
    node = event.node
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if len(targets) == 1 and isinstance(targets[0], ast.Attribute):
            return targets[0].value
        return None
    if isinstance(node, ast.Attribute):
        return node.value
    return None


def _outside_loops(event: Event, loops: frozenset[int]) -> Event:
    """The event as seen by one object: the passes of ``loops`` hold other objects, and so do
    the passes of the loops around them, each of which runs them again."""
    inner = max((i for i, loop in enumerate(event.loops) if id(loop) in loops), default=None)
    if inner is None:
        return event
    return dataclasses.replace(event, loops=event.loops[inner + 1 :])


def _sets_attribute(mutation: Mutation) -> bool:
    """``obj.attr = v``, ``obj.attr += v``, ``del obj.attr``: the attribute itself, not a change
    inside what it holds (``obj.attr[0] = v``, ``obj.attr.append(v)``)."""
    return len(mutation.path) == 1 and mutation.description.startswith(("attribute", "augmented"))


def _bound_receiver(site: CompiledFunction) -> str | None:
    """``model`` for ``jax.jit(model.calc)``."""
    call = site.site
    if isinstance(call, ast.Call) and call.args:
        target = call.args[0]
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            return target.value.id
    return None


def _names_dataclass(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in ("dataclass", "define", "frozen", "attrs")


def _before_making(mutation: Mutation, site: CompiledFunction, method: Scope) -> bool:
    """The change runs in ``method`` before the compiled object is made there, outside any loop
    around both."""
    if mutation.scope is not method:
        return False
    if site.site_scope is method:
        made, loops = site.created_at, site.created_loops
    else:
        scope: Scope | None = site.site_scope
        while scope is not None and scope.parent is not method:
            scope = scope.parent
        if scope is None:
            return False
        made, loops = scope.start, scope.loops
    return mutation.end <= made and not set(mutation.loops) & set(loops)


def _attribute_holding_wrapper(function: ast.AST, compiled: str) -> ast.Attribute | None:
    """``self.f = wrapper`` where ``def wrapper(...)`` beside it calls the compiled object bound
    to ``compiled`` (the form ``fix`` writes): the attribute holds that compiled object."""
    wrappers = {
        node.name
        for node in ast.walk(function)
        if isinstance(node, ast.FunctionDef)
        and any(isinstance(n, ast.Name) and n.id == compiled for n in ast.walk(node))
    }
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in wrappers
        ):
            return node.targets[0]
    return None


def _rebuilt_keeping(mutation: Mutation, attribute: str, fields: list[str] | None) -> bool:
    """``self.state = self.state.apply_gradients(...)`` or ``self.state =
    self.update(self.state, grads)``, keeping every field read."""
    if mutation.path != (f".{attribute}",):
        return False
    record = ast.Attribute(value=ast.Name(mutation.name), attr=attribute)
    return rebuild_keeps_fields(mutation.value, record, fields) or hands_through(
        mutation.value, record, fields
    )


def _beside(mutation: Mutation, attribute: str, reads: list[Read]) -> bool:
    """Every read is of the attribute itself (not through a method or a property, whose read
    names another attribute), at a path the mutation cannot change. Not a deletion: ``del
    self.schedule[0]`` shifts every later item."""
    if mutation.description.endswith("deleted"):
        return False
    return all(
        len(read.path) > 1
        and read.path[0] == f".{attribute}"
        and not paths_overlap(mutation.path, read.path)
        for read in reads
    )


def _parts_may_alias(tree: ast.Module, mutation: Mutation, reads: list[Read]) -> bool:
    """Whether the module may keep one object under two of the paths (``self.model_cfg =
    cfg["model"]``, then a read of ``.model_cfg["scale"]`` and a store into
    ``.cfg["model"]["scale"]``): a store, anywhere, under the name of a step the paths pass
    through, of something other than a new object or a constant."""
    steps = {
        _step_name(step)
        for path in (mutation.path, *(read.path for read in reads))
        for step in path[1:-1]
    }
    return not steps.isdisjoint(_aliasing_steps(tree))


def _aliasing_steps(tree: ast.Module) -> frozenset[str]:
    """The names under which the module stores something other than a new object or a
    constant (``self.model_cfg = cfg["model"]``, ``config.eval = config.model``): one walk of
    the module, kept for its later questions."""
    known = _ALIASING_STEPS.get(tree)
    if known is not None:
        return known
    found: set[str] = set()
    for node in ast.walk(tree):
        parts = assignment(node)
        if parts is None:
            continue
        targets, value = parts
        if isinstance(value, (ast.Call, ast.Constant)):
            continue
        for target in targets:
            step = path_element(target) if isinstance(target, ast.expr) else None
            if step is not None:
                found.add(_step_name(step))
    known = _ALIASING_STEPS[tree] = frozenset(found)
    return known


_ALIASING_STEPS: weakref.WeakKeyDictionary[ast.Module, frozenset[str]] = weakref.WeakKeyDictionary()


def _step_name(step: str) -> str:
    """``model`` for ``.model`` and ``['model']``."""
    return step.strip(".[]'\"")


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return any(node is inner for inner in ast.walk(outer))


def _end(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)


def _after_or_within(
    node: ast.AST, call: ast.Call, runner: tuple[ast.AST, ast.Call] | None
) -> bool:
    """A read at ``node`` runs after the setter ``call`` has stored, or is part of it: after
    it in the same body; for a setter called in a nested function that ``runner`` (the
    function, the call running it) names, after it in that function, or after the running
    call in the compiled body."""
    start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
    if _inside(node, call):
        return True
    if runner is None:
        return start >= _end(call)
    nested, entry = runner
    return (_inside(node, nested) and start >= _end(call)) or start >= _end(entry)


def _decorator_call(decorator: ast.expr) -> ast.expr:
    """``jax.grad`` of ``@jax.grad`` and of ``@jax.grad(argnums=1)``."""
    return decorator.func if isinstance(decorator, ast.Call) else decorator


def _binds_name(statement: ast.stmt, name: str) -> bool:
    return any(
        (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.name == name
        )
        or (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store))
        for node in ast.walk(statement)
    )


# Expressions whose parts may not run: ``a if c else b``, ``a and b``, a lambda's body, a
# comprehension's element.
_MAYBE_RUN = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
              ast.GeneratorExp)  # fmt: skip


def _unconditional_calls(value: ast.expr) -> Iterator[ast.Call]:
    """The calls in ``value`` that run whenever it is computed."""
    pending: list[ast.AST] = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, _MAYBE_RUN):
            continue
        if isinstance(node, ast.Call):
            yield node
        pending.extend(ast.iter_child_nodes(node))


def _builds_its_own_object(facts: Facts, mutation: Mutation, owner: Scope) -> bool:
    """Whether ``mutation`` is a constructor storing a plain attribute into the object it
    makes: a statement of ``__init__`` itself (not of a function it defines and keeps, which
    may run later on the object), ``self.basis = value`` (not into what the attribute holds,
    which may be shared: a given or default dict), with ``self`` never rebound, in a class
    without base classes, decorators but a dataclass's, ``__new__`` (anywhere in its body)
    or metaclass, which may hand back an existing object to construct again, and that no
    code patches (``Kernel.__new__ = ...``)."""
    cls = owner.parent
    if owner.name not in CONSTRUCTORS or cls is None or mutation.scope is not owner:
        return False
    if len(mutation.path) != 1 or not isinstance(cls.node, ast.ClassDef):
        return False
    node = cls.node
    binds_new = any(
        (isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)) and inner.name == "__new__")
        or (isinstance(inner, ast.Name) and inner.id == "__new__")
        for inner in ast.walk(node)
    )
    if has_bases(node) or node.keywords or binds_new or patched(facts, node.name):
        return False
    if any(_decorator_word(d) != "dataclass" for d in node.decorator_list):
        return False
    self_name = method_self_name(owner)
    return self_name is not None and all(
        binding.kind is BindingKind.PARAM for binding in facts.bindings_of(owner, self_name)
    )


def _decorator_word(decorator: ast.expr) -> str:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def _below(mutation: Mutation, attribute: str) -> tuple[str, ...]:
    """The path a change makes below ``self.<attribute>`` (``(".params",)`` for
    ``self.model.params = p``); the whole path when the attribute is not in it."""
    steps = mutation.path
    at = next((i for i, step in enumerate(steps) if step == f".{attribute}"), None)
    return steps if at is None else steps[at + 1 :]


def _first_attribute(read: Read) -> str | None:
    return read.path[0][1:] if read.path and read.path[0].startswith(".") else None


# Values that may be None: a name, an attribute, an item or a choice could hold it.
_MAYBE_NONE = (ast.Name, ast.Attribute, ast.Subscript, ast.IfExp, ast.BoolOp, ast.NamedExpr)


def _none_tested_attribute(test: ast.expr, self_name: str | None) -> str | None:
    """``F`` of ``self.F is None``."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and is_none(test.comparators[0])
    ):
        return None
    left = test.left
    if isinstance(left, ast.Attribute) and isinstance(left.value, ast.Name):
        return left.attr if left.value.id == self_name else None
    return None


def _changed_before_every_use(uses: Reach, change: Reach, entry: Scope | None = None) -> bool:
    """Every use of the compiled object, in every function the project shows it in, follows
    a change in the same function (``if self._inputs is None: self._initialize_train()``
    before ``self.train_fn(x)``); the call running both (``experiment.step(x)``) is ordered
    inside the callee. Nothing outside the code shown uses or changes it, but through
    ``entry``, the method holding both, in that order."""
    if uses.handed_on or change.handed_on or not uses.events:
        return False
    if any(e is not entry for e in [*uses.entries, *change.entries]):
        return False
    return all(
        any(
            c.driver is u.driver
            and (
                (c.at == u.at and c.via is not None and c.via is u.via)
                or (c.at < u.at and _set_up_then_used(c, u))
            )
            for c in change.events
        )
        for u in uses.events
    )


def _set_up_then_used(change: Event, use: Event) -> bool:
    """In their driver's body, the change sits only under tests of an unset flag (``if
    self._inputs is None:``) and the use under no ``if`` or ``try`` at all (a loop is fine):
    whenever the use runs, the set-up has run before it, if it ever runs."""
    body = change.driver.node
    if change.node is None or use.node is None:
        return False
    change_tests = _block_tests(body, change.node, loops=False)
    use_tests = _block_tests(body, use.node, loops=True)
    return (
        change_tests is not None
        and all(unset_flag(test) is not None for test in change_tests)
        and use_tests == []
    )


def _block_tests(function: ast.AST, node: ast.AST, loops: bool) -> list[ast.expr] | None:
    """The tests of the ``if`` statements whose body holds ``node``, from the function's body
    down; None when ``node`` sits in an ``else`` branch, a ``try``, a ``with`` or (unless
    ``loops``) a loop."""
    statements: list[ast.stmt] = list(getattr(function, "body", []))
    tests: list[ast.expr] = []
    while True:
        holder = next((st for st in statements if _holds_node(st, node)), None)
        if holder is None:
            return None
        if isinstance(holder, ast.If) and any(_holds_node(st, node) for st in holder.body):
            tests.append(holder.test)
            statements = holder.body
        elif (
            loops
            and isinstance(holder, (ast.For, ast.AsyncFor, ast.While))
            and any(_holds_node(st, node) for st in holder.body)
        ):
            statements = holder.body
        elif isinstance(holder, _HOLDING_STATEMENTS):
            return None
        else:
            return tests


_HOLDING_STATEMENTS = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
    getattr(ast, "TryStar", ast.Try), ast.Match, ast.FunctionDef, ast.AsyncFunctionDef,
    ast.ClassDef,
)  # fmt: skip


def _holds_node(statement: ast.stmt, node: ast.AST) -> bool:
    return any(inner is node for inner in ast.walk(statement))


def _changes_own_object(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The method stores into its object (``self.scale = f``, ``self.w[0] = v``, ``del
    self.x``, ``setattr``), or calls a method of something the object holds
    (``self.msh.update()``), which may."""
    arguments = method.args.posonlyargs + method.args.args
    if not arguments:
        return False
    own = arguments[0].arg
    for node in ast.walk(method):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.Call):
            function = node.func
            word = (
                function.attr
                if isinstance(function, ast.Attribute)
                else getattr(function, "id", "")
            )
            if word in ("setattr", "__setattr__"):
                return True
            if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Attribute):
                if _rooted_at(function.value, own):
                    return True
        for target in targets:
            for inner in ast.walk(target):
                if isinstance(inner, (ast.Attribute, ast.Subscript)) and _rooted_at(inner, own):
                    return True
    return False


def _rooted_at(node: ast.expr, name: str) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name) and node.id == name


def _called_receiver(event: Event) -> ast.expr | None:
    """The object the event calls the compiled method on: ``hot`` of ``hot.probs(x)``, or of
    ``hot.entropy(x)`` when ``entropy`` is a method that runs it (on its own ``self``, which
    is that object)."""
    node = event.node
    if not isinstance(node, ast.Attribute):
        return None
    via = event.via
    if via is not None:
        parent = via.parent
        if (
            parent is None
            or parent.kind is not ScopeKind.CLASS
            or method_self_name(via) is None
            or node.attr != via.name
        ):
            return None
    return node.value


def _always_stores(body: list[ast.stmt], self_name: str, attribute: str) -> bool:
    """Whether running ``body`` always stores ``self.<attribute>`` before it can leave: a
    statement of it that does, or an ``if`` both of whose branches always do."""
    for statement in body:
        if isinstance(statement, (ast.Return, ast.Raise)):
            return False
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(
                isinstance(t, ast.Attribute)
                and t.attr == attribute
                and isinstance(t.value, ast.Name)
                and t.value.id == self_name
                for t in targets
            ):
                return True
        if (
            isinstance(statement, ast.If)
            and statement.orelse
            and _always_stores(statement.body, self_name, attribute)
            and _always_stores(statement.orelse, self_name, attribute)
        ):
            return True
        if any(isinstance(n, (ast.Return, ast.Raise)) for n in ast.walk(statement)):
            return False  # may leave before a later store
    return False
