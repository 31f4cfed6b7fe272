"""Which code runs what, in module order: where a function is called or handed on, and where a
compiled object (or anything made from it) is called or handed on.

The call graph puts together the uses of functions (``functions``), where objects go once made
(``holders``) and the classes of objects (``classes``), and follows events up the callers of the
functions where they happen (``propagate``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from ..compiled import CompiledFunction, Form
from ..facts.model import Pos, Scope, ScopeKind
from ..facts.queries import Facts
from ..reachable import never_runs
from .classes import ObjectClasses
from .events import Event, EventKind, Reach, event_at, made_in_its_run
from .functions import FunctionUses, Uses
from .holders import HolderEvents

if TYPE_CHECKING:
    from ..failing import FailingCalls


class CallGraph:
    """The call graph of one module, built as questions need it."""

    def __init__(
        self, facts: Facts, elsewhere: Callable[[str], ast.FunctionDef | None] | None = None
    ) -> None:
        self.facts = facts
        self.classes = ObjectClasses(facts)
        self.holders = HolderEvents(facts, self.classes, elsewhere)
        self.functions = FunctionUses(facts, self.holders, self.classes)
        # Calls that always raise (a trace that cannot finish), once the compiled functions
        # are known.
        self.failing: FailingCalls | None = None

    # -- the questions of the other analyses -----------------------------------------------------

    def uses_of_function(self, function: Scope) -> Uses:
        return self.functions.uses_of_function(function)

    def object_class(self, scope: Scope, name: str, at: Pos) -> Scope | None:
        return self.classes.object_class(scope, name, at)

    def object_class_of_call(self, scope: Scope, call: ast.Call) -> Scope | None:
        return self.classes.object_class_of_call(scope, call)

    def stops_in_first_pass(self, driver: Scope, loop: ast.AST) -> bool:
        """The loop's body always raises in its first pass: it never runs a second."""
        return self.failing is not None and self.failing.loop_stops_in_first_pass(driver, loop)

    def related(self, first: Scope, second: Scope) -> bool:
        return self.classes.related(first, second)

    def next_binding(
        self, binder: Scope, name: str, since: Pos, loops: tuple[ast.AST, ...] = ()
    ) -> Pos:
        return self.holders.next_binding(binder, name, since, loops)

    # -- following events up the callers ---------------------------------------------------------

    def propagate(self, direct: Iterable[Event], barrier: Scope | None) -> Reach:
        """Events of ``direct`` plus, for every function where one happens, the calls and
        escapes of that function, up the call graph; never past ``barrier``, whose every call
        makes a new instance of what happens inside. Calling a function that hands the thing
        on hands it on; a function that returns it hands it to its callers, and what they do
        with the result is what happens to it (unless code outside the module calls it)."""
        # Each batch of events in the order the code stands, whatever order the facts were
        # gathered in (that follows the names asked about first, which can follow a set's
        # order): the first witness found is then the same on every run.
        # Code after a jump in its block never runs: nothing happens there.
        reach = Reach(sorted((e for e in direct if self._runs(e)), key=_in_code_order))
        pending = [event.driver for event in reach.events]
        done: set[int] = set()
        followed: set[int] = set()
        while pending:
            while pending:
                driver = pending.pop()
                if id(driver) in done:
                    continue
                done.add(id(driver))
                if driver is barrier or driver.kind is ScopeKind.MODULE:
                    continue
                uses = self.uses_of_function(driver)
                if uses.outside:
                    reach.add_entry(driver)
                per_run = _objects_made_per_run(reach, driver)
                for use in sorted(uses.events, key=_in_code_order):
                    if not self._runs(use):
                        continue
                    lifted = replace(use, via=driver)
                    if per_run and use.kind is EventKind.RUN:
                        # Each call of the driver makes its own objects: a call is an object.
                        lifted = replace(lifted, origin=use.at)
                    reach.events.append(lifted)
                    pending.append(use.driver)
            returned = [e for e in reach.events if self._returned(e)]
            for event in returned:
                reach.events.remove(event)
                if id(event.driver) in followed:
                    continue  # its callers' results are in already
                followed.add(id(event.driver))
                # What the callers do with the result, done through the function returned
                # (``tester.update(w)`` runs ``update``): named as the events' ``via``.
                results = [
                    replace(result, via=result.via or event.via)
                    for result in sorted(
                        self.holders.result_events(
                            event.driver, event.driver is barrier, event.element, event.member
                        ),
                        key=_in_code_order,
                    )
                ]
                results = [result for result in results if self._runs(result)]
                reach.events.extend(results)
                pending.extend(e.driver for e in results)
        self._escapes_through_calls(reach)
        return reach

    def _runs(self, event: Event) -> bool:
        return not never_runs(self.facts.tree, event.at[0])

    def _returned(self, event: Event) -> bool:
        """An escape by ``return`` from a function that only this module calls."""
        driver = event.driver
        return (
            event.kind is EventKind.ESCAPE
            and event.node is not None
            and isinstance(self.facts.parent(event.node), ast.Return)
            and driver.kind is ScopeKind.FUNCTION
            and not self.uses_of_function(driver).outside
        )

    def _escapes_through_calls(self, reach: Reach) -> None:
        escaping = {id(e.driver) for e in reach.events if e.kind is EventKind.ESCAPE}
        changed = bool(escaping)
        while changed:
            changed = False
            for index, event in enumerate(reach.events):
                if (
                    event.kind is EventKind.RUN
                    and event.via is not None
                    and id(event.via) in escaping
                ):
                    reach.events[index] = replace(event, kind=EventKind.ESCAPE)
                    if id(event.driver) not in escaping:
                        escaping.add(id(event.driver))
                        changed = True

    # -- compiled objects ------------------------------------------------------------------------

    def compiled_events(self, sites: list[CompiledFunction]) -> Iterator[Event]:
        """Direct events of a compiled object: calls and escapes of every name holding it, in
        the code that names it."""
        facts = self.facts
        for site in sites:
            if site.form is Form.INLINE:
                yield event_at(site.site_scope, site.site, site.created_loops, EventKind.RUN)
            elif site.form is Form.PASSED:
                yield from self.holders.value_use(site.site_scope, site.site, site.created_loops)
            elif site.bound_name is not None:
                binder = facts.resolve(site.site_scope, site.bound_name)
                yield from self.holders.holder_events(binder, site.bound_name, site.created_at)
                if binder.kind is ScopeKind.CLASS and site.bound_name == "__call__":
                    # ``model(x)`` runs a compiled ``__call__`` of the object's class.
                    yield from self.functions.instance_calls(binder)

    def holders_outside(self, sites: list[CompiledFunction]) -> bool:
        """A module-level compiled function that nothing in the module names is called from
        outside; a compiled method that nothing names is called on instances from outside."""
        for site in sites:
            if site.form is Form.DECORATOR:
                decorators = site.function.decorator_list  # type: ignore[union-attr]
                above = decorators[: decorators.index(site.site)]
                if any(not self.functions.is_compile_or_known(site.site_scope, d) for d in above):
                    return True  # ``@register`` above ``@jax.jit``: registered for others
            if site.bound_name is None:
                continue
            binder = self.facts.resolve(site.site_scope, site.bound_name)
            if binder.kind is ScopeKind.MODULE:
                if not self.facts.reads_of(binder, site.bound_name):
                    return True
            elif binder.kind is ScopeKind.CLASS:
                if not self.facts.attribute_refs(site.bound_name):
                    return True
        return False


def _in_code_order(event: Event) -> tuple[Pos, Pos, str]:
    return (event.driver.start, event.at, event.kind.value)


def _objects_made_per_run(reach: Reach, driver: Scope) -> bool:
    """Every use of the object in ``driver`` calls one that a call there of the function making
    it returned (``train = make_train(config); train(x)``), and none hands it on: each run of
    ``driver`` makes and uses objects of its own, so two calls of ``driver`` never share one."""
    events = [e for e in reach.events if e.driver is driver]
    return bool(events) and all(made_in_its_run(e) for e in events)
