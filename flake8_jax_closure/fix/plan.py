"""What the autofix changes, decided on the analysis's facts: which values to lift into
keyword-only parameters of each compiled function, which must be static, and whether the fix is
safe, unsafe, or not possible (with the reason).

    @jax.jit                                   @jax.jit
    def step(x):                               def _step_compiled(x, *, weights):
        return weights.dot(x)        ->            return weights.dot(x)

                                               def step(x):
                                                   return _step_compiled(x, weights=weights)

The compiled object is still made once, where it was; the wrapper keeps the original name,
signature and docstring and passes the current values on every call. JAX compiles once per
shape and dtype (and per value of a static argument), so freshness costs nothing at run time.
The plan names every place to change by position; ``rewrite`` applies it with libcst.

The planner orchestrates; each concern has a module of its own: ``sites`` (where the compiled
object is made), ``uses`` (the function's name and its calls of itself), ``signature``
(defaults, and positions under ``jax.pmap``), ``lifts`` (which values, traced or static, and
why a fix is unsafe), ``splits`` (passing the values through helpers), ``self_attributes``
(compiled code that holds ``self``), and ``model`` (the plan's data).

A compiled function that calls another one (``@jax.jit def inner``) while tracing bakes in what
the callee reads: the two are fixed together or not at all (``_settle``), so that one ``fix`` is
final. All plans are made in ``prepare``; ``plan`` hands them out.
"""

from __future__ import annotations

import ast
import re
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..analysis.captures import StaleCapture
from ..analysis.compiled import CompiledFunction, Form
from ..analysis.facts.model import Scope, ScopeKind
from ..analysis.facts.queries import Facts
from ..analysis.receiver import method_self_name
from ..positions import SourceLines
from ..rules.jc104_self_attribute.fix import plan_bound_method
from .helpers import Chain
from .layout import Layout
from .lifts import Lifter
from .model import FunctionFix, Lift, NoFix
from .names import Names
from .signature import check_defaults, plan_mapped
from .sites import SiteChecker
from .splits import SplitPlanner
from .uses import UsePlanner
from .values import ValueJudge


class FixPlanner:
    """Plans the fix of each compiled function of one module."""

    def __init__(
        self,
        facts: Facts,
        source: SourceLines,
        all_sites: Sequence[CompiledFunction],
        prefer_safe: bool = False,
    ) -> None:
        self.facts = facts
        self.source = source
        self.all_sites = all_sites
        self._sites_of: dict[int, list[CompiledFunction]] = {}
        for site in all_sites:
            self._sites_of.setdefault(id(site.function), []).append(site)
        self.judge = ValueJudge(facts)
        # Without ``--unsafe-fixes``: leave out values whose passing would make a safe fix
        # unsafe, where that is possible (``_safe_part``).
        self.prefer_safe = prefer_safe
        self.names = Names(facts, source)
        self.layout = Layout(facts, source)
        self.lifter = Lifter(facts, source, self.names, self.judge)
        self.use_planner = UsePlanner(facts, source, self.names, self.layout)
        self.site_checker = SiteChecker(
            facts, source, all_sites, self.names, self.layout, self.use_planner
        )
        decorated = {
            id(site.function)
            for site in all_sites
            if site.form is Form.DECORATOR and not isinstance(site.function, ast.Lambda)
        }
        self.split_planner = SplitPlanner(
            facts, source, self.names, self.layout, set(self._sites_of), decorated,
            {id(site.site): site.function for site in all_sites if site.form is Form.ASSIGNED},
            _weakly(self._nested_plan),
        )  # fmt: skip
        # Each compiled function's captures, and its plan (or why it has none), by id(function).
        self._captures: dict[int, list[StaleCapture]] = {}
        self._plans: dict[int, FunctionFix | NoFix] = {}
        self._planning: set[int] = set()

    def prepare(self, captures: Iterable[StaleCapture]) -> None:
        """Find the helpers of every capture first: a helper takes the same parameters whichever
        compiled function's fix splits it, so that all of them can be applied together. Then
        plan every compiled function, in order, each callee before the compiled functions that
        call it."""
        captures = list(captures)
        # A method compiled for one object (``jax.jit(self.step)``) is known only by its
        # captures: it is compiled too, not a helper to split for its callers.
        self.split_planner.helpers.compiled_functions.update(
            id(capture.compiled.function) for capture in captures
        )
        for capture in captures:
            self._captures.setdefault(id(capture.compiled.function), []).append(capture)
            try:
                self.split_planner.chain(capture)
            except NoFix:
                pass
        for key in self._captures:
            self._planned(key)
        self._settle()

    def plan(self, captures: Sequence[StaleCapture]) -> FunctionFix:
        """The fix for one compiled function and all its stale captures.

        Raises NoFix when the function cannot be fixed at all; a capture that cannot be lifted
        is left out, with its reason in ``declined``.
        """
        known = self._plans.get(id(captures[0].compiled.function))
        if isinstance(known, NoFix):
            raise NoFix(str(known))  # a new one: the kept one's traceback stays empty
        if known is not None:
            return known
        return self._plan(captures)

    def _planned(self, key: int) -> FunctionFix | NoFix:
        known = self._plans.get(key)
        if known is None:
            self._planning.add(key)
            try:
                known = self._plan(self._captures[key])
            except NoFix as reason:
                # Kept without its traceback, whose frames hold this planner in a cycle.
                known = NoFix(str(reason))
            finally:
                self._planning.discard(key)
            self._plans[key] = known
        return known

    def _nested_plan(self, compiled: Scope) -> FunctionFix:
        """The plan of a compiled function another one calls, when the caller's fix can call its
        compiled function: compiled by a decorator, passed the values by keyword."""
        key = id(compiled.node)
        shown = f"'{compiled.name}'"
        if key in self._planning:
            raise NoFix(f"{shown} calls back the compiled function that calls it")
        if key not in self._captures:
            raise NoFix(f"{shown} is compiled and reads it, and has no fix of its own here")
        inner = self._planned(key)
        if isinstance(inner, NoFix):
            raise NoFix(f"{shown} is compiled and reads it, and has no fix: {inner}")
        if inner.method_self is not None:
            raise NoFix(
                f"{shown} is a compiled method that reads it; the fix cannot pass the value on "
                f"through 'self.{compiled.name}()'"
            )
        if (
            len(inner.sites) != 1
            or inner.sites[0].form is not Form.DECORATOR
            or inner.positional
            or not inner.compiled_name
        ):
            raise NoFix(
                f"{shown} is compiled and reads it, in a form whose compiled function cannot be "
                "called with the values"
            )
        return inner

    def _settle(self) -> None:
        """Fix a compiled function and the compiled functions it calls together or not at all.

        A callee fixed alone leaves a plain wrapper that its compiled callers call while
        tracing: they would read the value through it, and a second ``fix`` would change them.
        So a callee whose callers cannot take a value it lifts gets no fix, nor do the fixes
        that carry it; and fixes that carry one another are unsafe together when one of them
        is, since the safe ones alone would leave the rest half done.
        """
        dropped: list[FunctionFix] = []
        changed = True
        while changed:
            changed = False
            for key, captures in self._captures.items():
                plan = self._plans.get(key)
                for capture in captures:
                    blocked = self._blocked_callee(capture, plan)
                    if blocked is None:
                        continue
                    inner_key, reason = blocked
                    inner = self._plans.get(inner_key)
                    if isinstance(inner, FunctionFix):
                        dropped.append(inner)
                        self._plans[inner_key] = NoFix(reason)
                        changed = True
            for key, plan in list(self._plans.items()):
                if isinstance(plan, FunctionFix):
                    lost = [i for i in plan.carried() if any(i is d for d in dropped)]
                    if lost:
                        dropped.append(plan)
                        self._plans[key] = NoFix(
                            f"it calls the compiled '{lost[0].name}', which cannot be fixed with it"
                        )
                        changed = True
        plans = [plan for plan in self._plans.values() if isinstance(plan, FunctionFix)]
        changed = True
        while changed:
            changed = False
            # Only the plans already unsafe are looked at: most are safe, and comparing each
            # plan with every other grows with the square of the module's compiled functions.
            marked = [p for p in plans if p.unsafe_reasons]
            for plan in plans:
                if plan.unsafe_reasons:
                    continue
                unsafe = [p for p in marked if _linked(plan, p)]
                if unsafe:
                    plan.unsafe_reasons.append(
                        f"it is fixed together with the compiled '{unsafe[0].name}', whose fix "
                        "is unsafe"
                    )
                    changed = True

    def _blocked_callee(
        self, capture: StaleCapture, plan: FunctionFix | NoFix | None
    ) -> tuple[int, str] | None:
        """A compiled callee that lifts the captured value where this function's fix does not
        pass it on: its id, and why it cannot be fixed."""
        for callee in self.split_planner.compiled_reached(capture):
            inner = self._plans.get(id(callee.node))
            if not isinstance(inner, FunctionFix):
                continue
            if not any(_lifts_value(lift, capture, callee) for lift in inner.lifts):
                continue
            passed = (
                isinstance(plan, FunctionFix)
                and (capture.name, capture.attribute) not in plan.declined
                and any(inner is known for known in plan.nested)
            )
            if not passed:
                caller = capture.compiled.name
                shown = f"{capture.name}.{capture.attribute}" if capture.attribute else capture.name
                return id(callee.node), (
                    f"the compiled '{caller}' calls it and reads '{shown}' through it, "
                    f"and cannot be passed it in the same fix; fixed alone, '{caller}' would "
                    "read it through the wrapper"
                )
        return None

    def _plan(self, captures: Sequence[StaleCapture]) -> FunctionFix:
        first = captures[0].compiled
        bound = any(capture.bound_method for capture in captures)
        if bound:
            # One probe per ``jax.jit(obj.method)``: each compiles the method for its object.
            sites = list({id(c.compiled): c.compiled for c in captures}.values())
        else:
            sites = self._sites_of.get(id(first.function)) or [first]
        function = first.function
        fix = FunctionFix(
            name=first.name,
            is_lambda=isinstance(function, ast.Lambda),
            function=self.source.span(function),
            lifts=[],
            compiled_name="",
            sites=[],
            module_level=self.layout.enclosing_statement(first.site).col_offset == 0,  # type: ignore[attr-defined]
            indent=self.layout.indent_unit(function),
            def_module_level=not isinstance(function, ast.Lambda) and function.col_offset == 0,
        )
        fix.statements.add(self.layout.statement_span(function))
        if bound:
            plan_bound_method(fix, first, self.facts, self.names)
        elif first.site_scope.kind is ScopeKind.CLASS:
            fix.method_self = method_self_name(first.scope)
            if fix.method_self not in (None, "self") and self._through_class(first):
                # ``@jax.jit def scaled(x)`` in a class used as a namespace, called as
                # ``Ops.scaled(x)``: nothing binds its first parameter, so a wrapper calling
                # ``x._scaled_compiled(...)`` would call a method of the argument.
                raise NoFix(
                    f"the compiled function's first parameter '{fix.method_self}' is not "
                    "'self', and it is called through its class: nothing binds it"
                )
        self.site_checker.check(fix, sites)
        self.use_planner.plan_names(fix, sites)
        self.site_checker.name_passed_sites(fix, sites)
        if any(p.compiled_name is None and p.form is not Form.INLINE for p in fix.sites):
            fix.compiled_name = self.names.fresh(f"_{_word(first.name)}_compiled", first.site_scope)
        self._plan_captures(fix, captures, sites)
        if not fix.lifts:
            raise NoFix("; ".join(dict.fromkeys(fix.declined.values())))
        self.use_planner.plan_recursion(fix, sites)
        if fix.positional:
            for site, plan in zip(sites, fix.sites, strict=True):
                plan_mapped(fix, site, plan, self.facts, self.source)
        return fix

    def _through_class(self, site: CompiledFunction) -> bool:
        """Whether the module reaches the compiled function through its class (``Ops.scaled``,
        ``cls.scaled`` in a classmethod), where no instance is bound to its first parameter."""
        cls = site.site_scope
        for ref in self.facts.attribute_refs(site.name):
            base = ref.base
            if not isinstance(base, ast.Name):
                continue
            if base.id == cls.name and self.facts.resolve(ref.scope, base.id) is cls.parent:
                return True
            method = ref.scope.function()
            decorators = getattr(method.node, "decorator_list", [])
            if method.params[:1] == (base.id,) and any(
                isinstance(d, ast.Name) and d.id == "classmethod" for d in decorators
            ):
                return True
        return False

    def _plan_captures(
        self, fix: FunctionFix, captures: Sequence[StaleCapture], sites: list[CompiledFunction]
    ) -> None:
        """The values to lift, and the helpers to pass them through."""
        planned: list[_Planned] = []
        seen: set[tuple[str, str | None]] = set()
        function_level = len(fix.unsafe_reasons)
        for capture in captures:
            key = (capture.name, capture.attribute)
            if key in seen:
                continue  # the same value, compiled for another object: lifted once
            seen.add(key)
            reasons, explanations = len(fix.unsafe_reasons), len(fix.explanations)
            try:
                self.lifter.check_capture(capture, sites)
                chain = self.split_planner.chain(capture)
                lifts = self.lifter.lifts(capture, fix, chain)
            except NoFix as reason:
                fix.declined[key] = str(reason)
                del fix.unsafe_reasons[reasons:], fix.explanations[explanations:]
                continue
            planned.append(
                _Planned(capture, chain, lifts, [*fix.unsafe_reasons[reasons:], *chain.unsafe],
                         fix.explanations[explanations:])
            )  # fmt: skip
        del fix.unsafe_reasons[function_level:], fix.explanations[:]
        check_defaults(fix, sites, self.facts, self.source, self.lifter)
        if self.prefer_safe:
            planned = self._safe_part(fix, planned)
        try:
            self.split_planner.plan(fix, [(p.capture, p.chain, p.lifts) for p in planned])
        except NoFix as reason:
            # Passing values through helpers failed: lift what the function reads itself.
            for item in planned:
                if item.chain.helpers:
                    key = (item.capture.name, item.capture.attribute)
                    fix.declined[key] = str(reason)
            planned = [item for item in planned if not item.chain.helpers]
            fix.splits, fix.redirects = [], []
        for item in planned:
            fix.lifts.extend(item.lifts)
            fix.unsafe_reasons.extend(item.unsafe)
            fix.explanations.extend(item.explanations)

    def _safe_part(self, fix: FunctionFix, planned: list[_Planned]) -> list[_Planned]:
        """Without ``--unsafe-fixes``: a value read only inside helpers whose passing would make
        an otherwise safe fix unsafe is left out (with the reason), so that the rest is fixed."""
        kept = [p for p in planned if not (p.unsafe and p.capture.read_through)]
        if len(kept) == len(planned) or not kept or fix.unsafe_reasons:
            return planned
        if any(p.unsafe for p in kept):
            return planned
        for item in planned:
            if all(item is not k for k in kept):
                key = (item.capture.name, item.capture.attribute)
                reasons = "; ".join(dict.fromkeys(item.unsafe))
                fix.declined[key] = (
                    f"passing it too would make the fix unsafe ({reasons}); --unsafe-fixes "
                    "passes it"
                )
        return kept


@dataclass
class _Planned:
    """One value to lift: its capture, the helpers it passes through, its lifts, and why each
    is traced or static (and unsafe)."""

    capture: StaleCapture
    chain: Chain
    lifts: list[Lift]
    unsafe: list[str]
    explanations: list[str]


def _word(name: str) -> str:
    """A name usable in an identifier: ``lambda`` for ``<lambda>``."""
    return re.sub(r"\W+", "", name).strip("_") or "function"


def _lifts_value(lift: Lift, capture: StaleCapture, callee: Scope) -> bool:
    """Whether the callee's lift passes the captured value: the variable, or
    ``self.<attribute>`` read through the callee's own ``self``, whatever its name there."""
    if capture.attribute is None:
        return lift.name == capture.name
    return lift.name == method_self_name(callee) and lift.path[:1] == (f".{capture.attribute}",)


def _linked(plan: FunctionFix, other: FunctionFix) -> bool:
    """Whether applying one of the two fixes applies the other."""
    return any(other is p for p in plan.carried()) or any(plan is p for p in other.carried())


def _weakly(method: Callable[[Scope], FunctionFix]) -> Callable[[Scope], FunctionFix]:
    """The planner's method for its split planner, which it owns: a bound method would hold
    the planner in a cycle, and with it every tree and fact of the module until the cyclic
    collector ran."""
    reference = weakref.WeakMethod(method)

    def call(compiled: Scope) -> FunctionFix:
        bound = reference()
        assert bound is not None, "the planner is gone"
        return bound(compiled)

    return call
