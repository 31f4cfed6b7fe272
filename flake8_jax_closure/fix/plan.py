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
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..analysis.captures import StaleCapture, method_self_name
from ..analysis.compiled import CompiledFunction, Form
from ..analysis.facts.model import ScopeKind
from ..analysis.facts.queries import Facts
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
        self.split_planner = SplitPlanner(
            facts, source, self.names, self.layout, set(self._sites_of)
        )

    def prepare(self, captures: Iterable[StaleCapture]) -> None:
        """Find the helpers of every capture first: a helper takes the same parameters whichever
        compiled function's fix splits it, so that all of them can be applied together."""
        for capture in captures:
            try:
                self.split_planner.chain(capture)
            except NoFix:
                pass

    def plan(self, captures: Sequence[StaleCapture]) -> FunctionFix:
        """The fix for one compiled function and all its stale captures.

        Raises NoFix when the function cannot be fixed at all; a capture that cannot be lifted
        is left out, with its reason in ``declined``.
        """
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
