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
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..analysis.captures import StaleCapture, method_self_name
from ..analysis.compiled import CompiledFunction, Form
from ..analysis.names import PARTIAL, PASSTHROUGH_TRANSFORMS
from ..analysis.scopes import BindingKind, Facts, Read, Scope, ScopeKind
from ..diagnostics import Applicability
from ..positions import SourceLines, Span
from .helpers import CannotThread, Chain, HelperCall, HelperFinder
from .mapped import CannotMap, in_axes, partial_spelling, static_argnums
from .values import Kind, ValueJudge, decide

# Transforms that map keyword arguments over their leading axis: a lifted value would be batched.
_MAPS_KEYWORDS = frozenset({"jax.vmap", "equinox.filter_vmap", "jax.pmap", "equinox.filter_pmap"})
# Of those, the compile transforms whose fix passes the values positionally (see ``mapped``).
POSITIONAL_TRANSFORMS = frozenset({"jax.pmap"})
# Statements a compiled object passed on directly can be bound before.
_SIMPLE_STATEMENTS = (ast.Return, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)
# Transforms without ``static_argnames``; equinox treats every non-array argument as static.
STATIC_BY_ITSELF = frozenset({"equinox.filter_jit"})
# Attributes of a compiled object that a plain wrapper does not have.
_COMPILED_ATTRIBUTES = frozenset(
    {"lower", "trace", "eval_shape", "clear_cache", "_cache_size", "__wrapped__", "_fun"}
)
# Of those, the ones called with the compiled function's arguments; called without any, they
# are other objects' methods (``str.lower()``, an array's ``trace()``).
_CALLED_WITH_ARGUMENTS = frozenset({"lower", "trace", "eval_shape"})
# Callables whose arguments must be concrete Python values under tracing.
_CONCRETE_CALLEES = frozenset(
    {
        "range", "int", "float", "bool", "str", "zeros", "ones", "empty", "full", "arange",
        "eye", "linspace", "reshape", "broadcast_to", "tile", "repeat", "split", "PRNGKey",
        "key", "identity", "tri", "fori_loop",
    }
)  # fmt: skip
_CONCRETE_KEYWORDS = frozenset({"shape", "axis", "num", "dtype", "length", "num_segments"})


class NoFix(Exception):
    """The function cannot be fixed safely by lifting; the message says why."""


@dataclass
class Lift:
    name: str
    path: tuple[str, ...]
    parameter: str
    value_code: str  # what the wrapper passes, read where the compiled object was made
    nodes: list[Span]  # reads in the compiled function replaced by the parameter
    static: bool = False
    # The declared annotation of the value (``SCALE: float = 2.0``), kept on the parameter.
    annotation: str | None = None


@dataclass
class SitePlan:
    """One place where the compiled object is made."""

    form: Form
    transform: str
    bound_name: str | None
    # A decorator (its index in the function's decorators), or the compile call.
    decorator_index: int | None = None
    compile_call: Span | None = None
    # The call carrying options (``jax.jit(f, static_argnums=...)``, ``partial(jax.jit, ...)``).
    options_call: Span | None = None
    # ``g = jax.jit(f)``: the statement's first line; ``jax.jit(f)(x)``: the outer call.
    statement_line: int | None = None
    inline_call: Span | None = None
    # ``jax.jit(partial(f, 1.0, b=2))``: how many leading positional parameters and which
    # keywords the partial binds; the wrapper takes only the rest.
    partial_positional: int = 0
    partial_keywords: tuple[str, ...] = ()
    # Options the fix sets on the options call (``in_axes`` of ``jax.pmap``), and for a bare
    # ``@jax.pmap``, the spelling of ``functools.partial`` that gives it options.
    options: list[tuple[str, str]] = field(default_factory=list)
    partial_name: str | None = None
    # This site's own compiled object and wrapper, where they are not the function's (a bound
    # method compiled for one object, a compiled object passed on directly).
    compiled_name: str | None = None
    wrapper_name: str | None = None
    module_level: bool | None = None
    # ``jax.jit(obj.method)``: the receiver, through which the wrapper reads the values, and the
    # method's attribute in the compile call, renamed to the method's raw name.
    receiver: str | None = None
    method_attribute: Span | None = None
    # Passed on directly (``return jax.jit(f)``): the first line of the statement before which
    # the compiled object and its wrapper are bound, and the compile call is the wrapper's name.
    passed_statement: int | None = None


@dataclass
class Split:
    """A def split in two (see ``helpers``): ``impl_name`` takes the values as keyword-only
    parameters, and the def's own name becomes a plain wrapper that passes them as they are when
    it runs."""

    function: Span  # the def, from its ``def`` keyword
    impl_name: str
    parameters: list[tuple[str, str]]  # (parameter, what the plain wrapper passes)
    method_self: str | None = None
    module_level: bool = False
    indent: str = "    "
    # Attribute and subscript reads in the def replaced by a parameter.
    replaced: list[tuple[Span, str]] = field(default_factory=list)
    name: str = ""  # the def's own name, kept by its plain wrapper


@dataclass
class Redirect:
    """A call of a split def: to its ``_impl``, passing the values on by keyword."""

    call: Span
    callee: str
    keywords: list[tuple[str, str]]


@dataclass(eq=False)
class FunctionFix:
    """The fix of one compiled function, shared by its findings (one object, compared by
    identity)."""

    name: str  # the compiled function's name, kept by the wrapper
    is_lambda: bool
    function: Span  # the def (from ``def``) or the lambda
    lifts: list[Lift]
    compiled_name: str
    sites: list[SitePlan]
    module_level: bool  # blank lines around the wrapper: two at module level, one inside
    unsafe_reasons: list[str] = field(default_factory=list)
    # Captured values that cannot be lifted, with the reason: (name, attribute) -> reason.
    declined: dict[tuple[str, str | None], str] = field(default_factory=dict)
    # For a compiled method: the name of ``self``, through which the wrapper calls it.
    method_self: str | None = None
    # The statements the fix rewrites, as full-line spans (first line, last line).
    statements: set[tuple[int, int]] = field(default_factory=set)
    # One level of indentation as the function writes it (for the wrapper's body).
    indent: str = "    "
    # Compiled by call (``g = jax.jit(f)``): the def's new name, so that plain calls of the old
    # name cannot reach the function that now needs the lifted values; and the reads of the old
    # name that the compile calls make.
    raw_name: str | None = None
    renamed_reads: list[Span] = field(default_factory=list)
    # Calls of the function by itself, redirected to this name with the lifted values passed on.
    recursive_calls: list[tuple[Span, str]] = field(default_factory=list)
    # ``@register`` above ``@jax.jit``: how many decorators stay on the public wrapper.
    wrapper_decorators: int = 0
    # Why each lifted value is traced or static (the fix's reason when it is safe).
    explanations: list[str] = field(default_factory=list)
    # Lifted values are passed positionally: ``jax.pmap`` maps keyword arguments.
    positional: bool = False
    # The raw function keeps a plain wrapper under its old name (with ``method_self``, a method
    # of the class), for the uses that are not compiled: they read the values when they run.
    plain_wrapper: bool = False
    # Whether the function's ``def`` is at module level (blank lines around its plain wrapper).
    def_module_level: bool = False
    # Helpers the values are passed through (see ``helpers``), and the calls redirected to them.
    splits: list[Split] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)

    @property
    def applicability(self) -> Applicability:
        return Applicability.UNSAFE if self.unsafe_reasons else Applicability.SAFE

    @property
    def introduced_names(self) -> tuple[str, ...]:
        """The names the fix writes into the module: the compiled function's new name, the def's
        new name when compiled by call, a site's own compiled object and wrapper, and the
        ``_impl`` of each helper the values are passed through."""
        names = [
            self.compiled_name,
            self.raw_name,
            *(name for site in self.sites for name in (site.compiled_name, site.wrapper_name)),
            *(split.impl_name for split in self.splits),
        ]
        return tuple(dict.fromkeys(name for name in names if name))

    @property
    def description(self) -> str:
        names = ", ".join(f"'{lift.value_code}'" for lift in self.lifts)
        text = f"pass {names} to the compiled function on every call"
        if self.splits:
            helpers = ", ".join(f"'{split.name}()'" for split in self.splits)
            text += f", and on to {helpers}"
        if self.unsafe_reasons:
            return f"{text} (unsafe: {'; '.join(dict.fromkeys(self.unsafe_reasons))})"
        return f"{text} ({'; '.join(dict.fromkeys(self.explanations))})"


class FixPlanner:
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
        self._taken: set[tuple[int, str]] = set()
        self._compiled_api_use: str | None = None
        self._compiled_api_searched = False
        self.helpers = HelperFinder(facts, set(self._sites_of))
        # Shared by every plan that passes values through a helper: its ``_impl`` name, its
        # parameter for each value, and the variables it passes (one set for all plans).
        self._impl_names: dict[int, str] = {}
        self._chains: dict[int, Chain | str] = {}  # id(capture) -> its chain, or why none
        self._through: dict[int, list[tuple[StaleCapture, Chain]]] = {}  # id(helper def) -> ...
        self._parameters: dict[int, list[HelperParameter]] = {}
        self._splits: dict[int, Split] = {}

    def prepare(self, captures: Iterable[StaleCapture]) -> None:
        """Find the helpers of every capture first: a helper takes the same parameters whichever
        compiled function's fix splits it, so that all of them can be applied together."""
        for capture in captures:
            try:
                self._chain(capture)
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
            function=self._function_span(function),
            lifts=[],
            compiled_name="",
            sites=[],
            module_level=self._enclosing_statement(first.site).col_offset == 0,  # type: ignore[attr-defined]
            indent=self._indent_unit(function),
            def_module_level=not isinstance(function, ast.Lambda) and function.col_offset == 0,
        )
        fix.statements.add(self._statement_span(function))
        if bound:
            self._plan_bound_method(fix, first)
        elif first.site_scope.kind is ScopeKind.CLASS:
            fix.method_self = method_self_name(first.scope)
        self._check_sites(fix, sites)
        self._plan_names(fix, sites)
        self._name_passed_sites(fix, sites)
        if any(p.compiled_name is None and p.form is not Form.INLINE for p in fix.sites):
            fix.compiled_name = self._fresh_name(f"_{_word(first.name)}_compiled", first.site_scope)
        self._plan_captures(fix, captures, sites)
        if not fix.lifts:
            raise NoFix("; ".join(dict.fromkeys(fix.declined.values())))
        self._plan_recursion(fix, sites)
        if fix.positional:
            for site, plan in zip(sites, fix.sites, strict=True):
                self._plan_mapped(fix, site, plan)
        return fix

    def _function_span(self, function: ast.AST) -> Span:
        return self.source.span(function)

    def _plan_bound_method(self, fix: FunctionFix, first: CompiledFunction) -> None:
        """``jax.jit(obj.method)``: the method is split in two, ``_<method>_impl`` taking the
        values and the method itself passing them (for every other use of it), and each compile
        call compiles the ``_impl`` of its object behind a wrapper of its own."""
        method = first.function
        if not isinstance(method, ast.FunctionDef):
            raise NoFix("async functions cannot be compiled")
        if method.decorator_list:
            raise NoFix(
                f"the method '{method.name}' is decorated; the values cannot be passed through "
                "its decorators"
            )
        cls = self.facts.scope_of(method).parent
        assert cls is not None
        fix.method_self = method_self_name(first.scope)
        fix.raw_name = self._fresh_name(f"_{method.name.strip('_')}_impl", cls)
        fix.plain_wrapper = True
        fix.def_module_level = False

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
                self._check_capture(capture, sites)
                chain = self._chain(capture)
                lifts = self._lifts(capture, fix, chain)
            except NoFix as reason:
                fix.declined[key] = str(reason)
                del fix.unsafe_reasons[reasons:], fix.explanations[explanations:]
                continue
            planned.append(
                _Planned(capture, chain, lifts, [*fix.unsafe_reasons[reasons:], *chain.unsafe],
                         fix.explanations[explanations:])
            )  # fmt: skip
        del fix.unsafe_reasons[function_level:], fix.explanations[:]
        self._check_defaults(fix, sites)
        if self.prefer_safe:
            planned = self._safe_part(fix, planned)
        try:
            self._plan_threading(fix, [(p.capture, p.chain, p.lifts) for p in planned])
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

    def _chain(self, capture: StaleCapture) -> Chain:
        known = self._chains.get(id(capture))
        if known is None:
            try:
                known = self.helpers.chain(
                    capture.compiled.scope, capture.owner, capture.name, capture.attribute
                )
            except CannotThread as reason:
                known = str(reason)
            self._chains[id(capture)] = known
            if isinstance(known, Chain):
                for helper in known.helpers:
                    self._through.setdefault(id(helper.node), []).append((capture, known))
        if isinstance(known, str):
            raise NoFix(known)
        if capture.read_through and not known.helpers:
            # Reached in a way the fix does not follow.
            shown = f"{capture.name}.{capture.attribute}" if capture.attribute else capture.name
            raise NoFix(
                f"'{shown}' is read inside '{capture.read_through}'; pass it to "
                f"'{capture.read_through.rstrip('()')}' as an argument"
            )
        return known

    def _plan_threading(
        self, fix: FunctionFix, threaded: list[tuple[StaleCapture, Chain, list[Lift]]]
    ) -> None:
        """Split each helper on the values' way, and redirect every call of it to its
        ``_impl``, passing each of its parameters: this fix's own, or the value read where the
        helper would have read it."""
        lifted = {_variable(capture): lifts for capture, _, lifts in threaded}
        for capture, chain, _ in threaded:
            for helper in chain.helpers:
                split = self._split(helper)
                if all(split is not known for known in fix.splits):
                    fix.splits.append(split)
                    fix.statements.add(self._statement_span(helper.node))
            for call in chain.calls:
                span = self.source.span(call.call)
                if any(redirect.call == span for redirect in fix.redirects):
                    continue
                keywords = [
                    (parameter.name, self._passed(call, parameter, capture, lifted))
                    for parameter in self._parameters_of(call.helper)
                ]
                impl = self._impl_names[id(call.helper.node)]
                fix.redirects.append(Redirect(span, impl, keywords))

    def _passed(
        self,
        call: HelperCall,
        parameter: HelperParameter,
        capture: StaleCapture,
        lifted: dict[Variable, list[Lift]],
    ) -> str:
        """What a call of a split helper passes for one of its parameters."""
        if call.caller is capture.compiled.scope:
            own = [(lift.path, lift.parameter) for lift in lifted.get(parameter.variable, [])]
        else:
            own = [
                (p.path, p.name)
                for p in self._parameters_of(call.caller)
                if p.variable == parameter.variable
            ]
        for path, name in own:
            if parameter.path[: len(path)] == path:
                return name + "".join(parameter.path[len(path) :])
        # Not lifted here: read where the helper would have read it, as it is then.
        owner, name, attribute = parameter.owner, parameter.root, parameter.variable[2]
        if attribute is not None:
            func = call.call.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                return func.value.id + "".join(parameter.path)
        elif self.facts.resolve(call.scope, name) is owner:
            return name + "".join(parameter.path)
        raise NoFix(
            f"'{call.helper.name}' also reads '{parameter.value}', which cannot be read where it "
            "is called"
        )

    def _parameters_of(self, helper: Scope) -> list[HelperParameter]:
        """The parameters a split helper takes: one for each path of each value some compiled
        function reads through it (or through the helpers it calls)."""
        key = id(helper.node)
        known = self._parameters.get(key)
        if known is not None:
            return known
        reads: dict[Variable, list[Read]] = {}
        first: dict[Variable, StaleCapture] = {}
        for capture, chain in self._through.get(key, []):
            variable = _variable(capture)
            first.setdefault(variable, capture)
            found = reads.setdefault(variable, [])
            for below in chain.below(helper):
                found.extend(r for r in chain.reads.get(id(below), ()) if r not in found)
        parameters = []
        for variable, variable_reads in reads.items():
            capture = first[variable]
            root = capture.name if capture.attribute is None else method_self_name(helper)
            assert root is not None
            for path in _minimal_paths(variable_reads):
                matching = [r for r in variable_reads if r.path[: len(path)] == path]
                if not path:
                    # The parameter takes the variable's name, so the body reads it unchanged.
                    name = value = root
                else:
                    name = self._fresh_name(_identifier(root, path), helper)
                    value = self._text_of(root, path, matching)
                parameters.append(
                    HelperParameter(variable, path, name, value, capture.owner, capture.name)
                )
        self._parameters[key] = parameters
        return parameters

    def _split(self, helper: Scope) -> Split:
        key = id(helper.node)
        known = self._splits.get(key)
        if known is not None:
            return known
        node = helper.node
        assert helper.parent is not None
        if key not in self._impl_names:
            wanted = f"_{helper.name.strip('_')}_impl"
            self._impl_names[key] = self._fresh_name(wanted, helper.parent)
        parameters = self._parameters_of(helper)
        replaced: list[tuple[Span, str]] = []
        for capture, chain in self._through.get(key, []):
            for read in chain.reads.get(id(helper), ()):
                for parameter in parameters:
                    if parameter.variable != _variable(capture) or not parameter.path:
                        continue
                    if read.path[: len(parameter.path)] == parameter.path:
                        span = self.source.span(_prefix_node(read, len(parameter.path)))
                        if (span, parameter.name) not in replaced:
                            replaced.append((span, parameter.name))
        split = Split(
            self._function_span(node),
            self._impl_names[key],
            [(p.name, p.value) for p in parameters],
            method_self=method_self_name(helper),
            module_level=node.col_offset == 0,  # type: ignore[attr-defined]
            indent=self._indent_unit(node),
            replaced=replaced,
            name=helper.name,
        )
        self._splits[key] = split
        return split

    def _text_of(self, root: str, path: tuple[str, ...], reads: list[Read]) -> str:
        """The path as the source writes it, read from ``root``."""
        for read in reads:
            text = self.source.segment(_prefix_node(read, len(path)))
            if text.startswith(read.name):
                return root + text[len(read.name) :]
        return root + "".join(path)

    # -- what can be fixed ---------------------------------------------------------------------

    def _check_sites(self, fix: FunctionFix, sites: list[CompiledFunction]) -> None:
        function = sites[0].function
        for site in sites:
            fix.sites.append(self._locate(fix, site))
            if site.site_scope.kind is ScopeKind.CLASS and fix.method_self is None:
                raise NoFix("a compiled static or class method has no 'self' to pass values")
            if site.transform in POSITIONAL_TRANSFORMS:
                fix.positional = True
            elif site.transform in _MAPS_KEYWORDS:
                raise NoFix(
                    f"{site.transform} maps keyword arguments over their leading axis; pass the "
                    "value as a positional argument with in_axes=None instead"
                )
            for transform in self._wrapped_transforms(site):
                if transform in _MAPS_KEYWORDS:
                    raise NoFix(
                        f"{transform} under {site.transform} would map the lifted values over "
                        "their leading axis"
                    )
            if site.transform == "jax.experimental.pjit.pjit" and site.transform_call is not None:
                if any(k.arg == "in_shardings" for k in site.transform_call.keywords):
                    fix.unsafe_reasons.append(
                        "pjit with in_shardings needs a sharding for each lifted value"
                    )
        if isinstance(function, ast.AsyncFunctionDef):
            raise NoFix("async functions cannot be compiled")
        if fix.positional and any(site.transform not in POSITIONAL_TRANSFORMS for site in sites):
            raise NoFix(
                "the function is compiled by jax.pmap and by another transform, which take the "
                "values in different ways"
            )
        forms = {site.form is Form.DECORATOR for site in sites}
        if len(forms) == 2:
            # The compile call would get the public wrapper, which reads the values while
            # tracing: stale again.
            raise NoFix("the function is compiled by its decorator and again by a call")
        if isinstance(function, ast.FunctionDef) and fix.raw_name is None:
            if any(site.form is not Form.DECORATOR for site in sites):
                self._check_only_compiled(fix, function, sites)
        bound = {(site.bound_name, id(site.site_scope)): site.site_scope for site in sites
                 if site.bound_name}  # fmt: skip
        for (name, _), scope in sorted(bound.items(), key=lambda item: item[0][0] or ""):
            assert name is not None
            if self._uses_compiled_attributes(name, scope):
                fix.unsafe_reasons.append(
                    f"'{name}' is used through attributes of the compiled object "
                    "(.lower, .trace, ...)"
                )
                break
        else:
            use = self._module_compiled_api_use()
            if use is not None:
                fix.unsafe_reasons.append(
                    f"the module calls {use}, perhaps on a compiled object reached through "
                    "another name; the wrapper lacks the compiled object's attributes"
                )

    def _locate(self, fix: FunctionFix, site: CompiledFunction) -> SitePlan:
        source = self.source
        plan = SitePlan(site.form, site.transform, site.bound_name)
        function = site.function
        if site.form is Form.DECORATOR:
            assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
            plan.decorator_index = function.decorator_list.index(site.site)
        else:
            plan.compile_call = source.span(site.site)
            fix.statements.add(self._statement_span(site.site))
        if site.transform_call is not None:
            plan.options_call = source.span(site.transform_call)
        if isinstance(site.site, ast.Call) and site.site.args:
            self._partial(plan, site)
        if fix.plain_wrapper and fix.method_self is not None and site.form is not Form.DECORATOR:
            self._locate_bound_method(fix, site, plan)
        if site.form is Form.ASSIGNED:
            statement = self.facts.parent(site.site)
            assert statement is not None
            if not self._alone_on_its_lines(statement):
                raise NoFix("the compiled object is made in a compound statement line")
            plan.statement_line = statement.lineno  # type: ignore[attr-defined]
            plan.module_level = statement.col_offset == 0  # type: ignore[attr-defined]
        elif site.form is Form.INLINE:
            outer = self.facts.parent(site.site)
            assert isinstance(outer, ast.Call)
            plan.inline_call = source.span(outer)
        elif site.form is Form.PASSED:
            self._locate_passed(fix, site, plan)
        return plan

    def _check_defaults(self, fix: FunctionFix, sites: list[CompiledFunction]) -> None:
        """A wrapper passes every parameter on, defaults included, so JAX traces a default the
        compiled function never got as an argument: fine for numbers used as numbers, arrays and
        None; not for a function, a string, or a number JAX needs as a Python value."""
        if all(plan.form is Form.INLINE for plan in fix.sites):
            return  # the call passes only the values
        if any(site.transform in STATIC_BY_ITSELF for site in sites):
            return  # equinox makes every argument that is not an array static
        function = sites[0].function
        arguments = function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        defaulted = list(zip(positional[len(positional) - len(arguments.defaults) :],
                             arguments.defaults, strict=True))  # fmt: skip
        defaulted += [
            (argument, default)
            for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
            if default is not None
        ]
        if not defaulted:
            return
        static = _static_parameters(sites, [argument.arg for argument in positional])
        scope = self.facts.scope_of(function)
        assert scope.parent is not None
        for argument, default in defaulted:
            name = argument.arg
            kind = self.judge.kind(default, scope.parent, 0)
            if name in static or kind is Kind.NONE:
                continue
            reads = self.facts.reads_of(scope, name)
            decision = decide(
                name,
                {kind},
                self.judge.uses(r.node for r in reads if isinstance(r.node, ast.expr)),
                any(self._needs_concrete(r) for r in reads),
            )
            if decision.static or decision.unsafe is not None:
                fix.unsafe_reasons.append(
                    f"the wrapper passes the default of '{name}' "
                    f"({self.source.segment(default)}) as an argument, and JAX traces it; the "
                    "compiled function may need it as a Python value"
                )

    def _plan_mapped(self, fix: FunctionFix, site: CompiledFunction, plan: SitePlan) -> None:
        """``jax.pmap``: the values are passed positionally, after the function's own
        parameters (see ``mapped``)."""
        function = site.function
        arguments = function.args
        if arguments.vararg is not None:
            raise NoFix(
                f"'{fix.name}' takes *{arguments.vararg.arg}; values passed positionally to "
                "jax.pmap cannot follow it"
            )
        if arguments.defaults:
            raise NoFix(
                f"'{fix.name}' has parameters with defaults; its wrapper would pass them to "
                "jax.pmap, which maps them over their leading axis"
            )
        if plan.partial_positional or plan.partial_keywords:
            raise NoFix("a partial under jax.pmap: the positions of the values cannot be known")
        if fix.recursive_calls:
            raise NoFix(f"'{fix.name}' calls itself under jax.pmap")
        positional = len(arguments.posonlyargs) + len(arguments.args)
        if plan.receiver is not None:
            positional -= 1  # ``self`` is bound in ``obj.method``
        options_call = site.transform_call
        static = [positional + i for i, lift in enumerate(fix.lifts) if lift.static]
        try:
            plan.options.append(("in_axes", in_axes(options_call, self.source, positional,
                                                    len(fix.lifts))))  # fmt: skip
            if static:
                added = static_argnums(options_call, self.source, static)
                plan.options.append(("static_broadcasted_argnums", added))
        except CannotMap as reason:
            raise NoFix(str(reason)) from None
        if site.form is Form.DECORATOR and options_call is None:
            plan.partial_name = partial_spelling(self.facts)
            if plan.partial_name is None:
                raise NoFix(
                    "a bare '@jax.pmap' takes options only through functools.partial, which "
                    "the module does not import"
                )
        if site.form is Form.INLINE:
            outer = self.facts.parent(site.site)
            assert isinstance(outer, ast.Call)
            given = [a for a in outer.args if not isinstance(a, ast.Starred)]
            if outer.keywords or len(given) != len(outer.args) or len(given) != positional:
                raise NoFix(
                    "the compiled object is called with keyword or unpacked arguments; the "
                    "values cannot be passed after them"
                )

    def _locate_bound_method(
        self, fix: FunctionFix, site: CompiledFunction, plan: SitePlan
    ) -> None:
        """``jax.jit(obj.method)``: the object, through which this site's wrapper reads the
        values, and its own compiled object (another object's is another)."""
        assert isinstance(site.site, ast.Call)
        target = site.site.args[0]
        assert isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
        receiver = target.value.id
        plan.receiver = receiver
        plan.method_attribute = self.source.span(target)
        if site.bound_name is not None:
            wanted = f"_{site.bound_name.strip('_')}_compiled"
            plan.compiled_name = self._fresh_name(wanted, site.site_scope)
        if site.form is Form.INLINE:
            return
        owner = self.facts.resolve(site.site_scope, receiver)
        if len(self.facts.bindings_of(owner, receiver)) > 1:
            fix.unsafe_reasons.append(
                f"'{receiver}' is bound more than once; the wrapper reads the values through the "
                f"object '{receiver}' names when it is called, not the one compiled"
            )

    def _locate_passed(self, fix: FunctionFix, site: CompiledFunction, plan: SitePlan) -> None:
        """``return jax.jit(f)``, ``Model(step=jax.jit(f))``: the compiled object and a wrapper
        are bound first, before the statement, which then hands on the wrapper."""
        line = site.site.lineno
        if site.site_scope.kind not in (ScopeKind.FUNCTION, ScopeKind.MODULE):
            raise NoFix(
                f"the compiled object is passed on directly inside a {site.site_scope.kind.value} "
                f"(line {line}); bind it to a name first"
            )
        statement = self._enclosing_statement(site.site)
        if not isinstance(statement, _SIMPLE_STATEMENTS) or not self._alone_on_its_lines(statement):
            raise NoFix(
                f"the compiled object is passed on directly in a compound statement (line "
                f"{line}); bind it to a name first"
            )
        plan.passed_statement = statement.lineno
        fix.statements.add(self._statement_span(statement))
        plan.module_level = statement.col_offset == 0

    def _name_passed_sites(self, fix: FunctionFix, sites: list[CompiledFunction]) -> None:
        """Names for the wrappers of compiled objects passed on directly, once the function's
        own names are known."""
        for site, plan in zip(sites, fix.sites, strict=True):
            if plan.passed_statement is None:
                continue
            statement = self._enclosing_statement(site.site)
            assert isinstance(statement, ast.stmt)
            name = self._passed_name(fix, site, statement)
            plan.wrapper_name = name
            wanted = f"_{name.strip('_')}_compiled"
            plan.compiled_name = self._fresh_name(wanted, site.site_scope)

    def _passed_name(self, fix: FunctionFix, site: CompiledFunction, statement: ast.stmt) -> str:
        """The wrapper's name: the function's, or what the statement calls the object."""
        function = site.function
        scope = site.site_scope
        if isinstance(function, ast.Lambda):
            wanted = _context_name(self.facts, site.site, statement) or "compiled"
        else:
            wanted = function.name
            definition_scope = self.facts.scope_of(function).parent
            renamed = fix.raw_name is not None and not fix.plain_wrapper
            if renamed and definition_scope is scope and fix.method_self is None:
                if (id(scope), wanted) not in self._taken:
                    # The def takes its raw name; the wrapper takes its name in its scope.
                    self._taken.add((id(scope), wanted))
                    return wanted
        return self._free_name(wanted, scope)

    def _free_name(self, wanted: str, scope: Scope) -> str:
        """A name no variable of ``scope`` (or nested in it) uses yet; attributes do not count."""
        used = _variable_names(scope.node)
        number, name = 1, wanted
        while name in used or (id(scope), name) in self._taken:
            number += 1
            name = f"{wanted}_{number}"
        self._taken.add((id(scope), name))
        return name

    def _enclosing_statement(self, node: ast.AST) -> ast.AST:
        current: ast.AST | None = node
        while current is not None and not isinstance(current, ast.stmt):
            current = self.facts.parent(current)
        return current if current is not None else node

    def _partial(self, plan: SitePlan, site: CompiledFunction) -> None:
        """What ``partial`` binds between the compile call and the function."""
        assert isinstance(site.site, ast.Call)
        argument = site.site.args[0]
        while isinstance(argument, ast.Call):
            if self.facts.qualified_name(site.site_scope, argument.func) == PARTIAL:
                if any(isinstance(a, ast.Starred) for a in argument.args) or any(
                    k.arg is None for k in argument.keywords
                ):
                    raise NoFix(
                        "the partial binds unpacked arguments; the signature left open cannot "
                        "be known"
                    )
                plan.partial_positional += max(0, len(argument.args) - 1)
                plan.partial_keywords += tuple(k.arg for k in argument.keywords if k.arg)
            argument = argument.args[0] if argument.args else argument.func

    def _plan_names(self, fix: FunctionFix, sites: list[CompiledFunction]) -> None:
        """Decorators for the wrapper; for a function compiled by call, the def's new name."""
        if fix.raw_name is not None:
            return  # a bound method: named with its split
        function = sites[0].function
        decorated = [site for site in sites if site.form is Form.DECORATOR]
        if decorated:
            assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
            # Decorators above the compile transform wrap the public function (a registry keyed
            # by ``__name__``, a logger); the transform and those below it make the compiled one.
            fix.wrapper_decorators = function.decorator_list.index(decorated[0].site)
            return
        if not isinstance(function, ast.FunctionDef):
            return
        definition_scope = self.facts.scope_of(function).parent
        assert definition_scope is not None
        fix.raw_name = self._fresh_name(f"_{function.name}_impl", definition_scope)
        compile_arguments = {
            id(a) for s in sites if isinstance(s.site, ast.Call) for a in s.site.args
        }
        for read in self.facts.reads_of(definition_scope, function.name):
            if id(read.node) in compile_arguments or self._is_wrapped_argument(read, sites):
                fix.renamed_reads.append(self.source.span(read.node))

    def _plan_recursion(self, fix: FunctionFix, sites: list[CompiledFunction]) -> None:
        """Calls of the function by itself must pass the lifted values on: through the public
        wrapper they would read the variables while tracing, and bake them in again."""
        function = sites[0].function
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        name = function.name
        if fix.method_self is not None:
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Attribute)
                    and node.attr == name
                    and isinstance(node.value, ast.Name)
                    and node.value.id == fix.method_self
                ):
                    raise NoFix(
                        f"'{name}' calls itself through '{fix.method_self}' (line {node.lineno}); "
                        "pass the values through that call by hand"
                    )
            return
        facts = self.facts
        scope = facts.scope_of(function)
        assert scope.parent is not None
        inside = {id(inner) for inner in _scopes_within(scope)}
        # The name means the compiled object when a site binds it (``@jax.jit``,
        # ``f = jax.jit(f)``): call the compiled function. Otherwise it is the raw function.
        compiled = any(site.bound_name == name for site in sites)
        target = fix.compiled_name if compiled else fix.raw_name or name
        for read in facts.reads_of(scope.parent, name):
            if id(read.scope) not in inside:
                continue
            parent = facts.parent(read.node)
            if not isinstance(parent, ast.Call) or parent.func is not read.node:
                raise NoFix(
                    f"'{name}' refers to itself without calling itself (line {read.line}); the "
                    "lifted values cannot be passed on"
                )
            fix.recursive_calls.append((self.source.span(parent), target))
            fix.statements.add(self._statement_span(function))

    def _statement_span(self, node: ast.AST) -> tuple[int, int]:
        """The full lines of the statement holding ``node`` (with a def's decorators)."""
        current: ast.AST | None = node
        while current is not None and not isinstance(current, ast.stmt):
            current = self.facts.parent(current)
        statement = current if current is not None else node
        return _first_line(statement), statement.end_lineno or statement.lineno  # type: ignore[attr-defined]

    def _indent_unit(self, function: ast.AST) -> str:
        """The indentation one level deeper than the function's ``def`` line, as written."""
        body = getattr(function, "body", None)
        if isinstance(body, list) and body:
            outer = self.source.line(function.lineno)  # type: ignore[attr-defined]
            inner = self.source.line(body[0].lineno)
            outer_indent = outer[: len(outer) - len(outer.lstrip())]
            inner_indent = inner[: len(inner) - len(inner.lstrip())]
            if inner_indent.startswith(outer_indent) and len(inner_indent) > len(outer_indent):
                return inner_indent[len(outer_indent) :]
        return "    "

    def _alone_on_its_lines(self, statement: ast.AST) -> bool:
        first, last = statement.lineno, statement.end_lineno or statement.lineno  # type: ignore[attr-defined]
        before = self.source.line(first)[: self.source.character(first, statement.col_offset)]  # type: ignore[attr-defined]
        after = self.source.line(last)[self.source.character(last, statement.end_col_offset) :]  # type: ignore[attr-defined]
        return not before.strip() and (not after.strip() or after.strip().startswith("#"))

    def _check_only_compiled(
        self, fix: FunctionFix, function: ast.FunctionDef, sites: list[CompiledFunction]
    ) -> None:
        """A function compiled by call gains parameters: where it is also used plainly, a plain
        wrapper under its old name passes the values as they are when it runs (those uses are
        not compiled, so they were never stale)."""
        facts = self.facts
        name = function.name
        definition_scope = facts.scope_of(function).parent
        assert definition_scope is not None
        compile_arguments = {
            id(a) for s in sites if isinstance(s.site, ast.Call) for a in s.site.args
        }
        # After ``f = jax.jit(f)``, the name means the compiled object.
        rebound_at = [s.created_at for s in sites if s.bound_name == name]
        inside = {id(inner) for inner in _scopes_within(facts.scope_of(function))}
        for read in facts.reads_of(definition_scope, name):
            if id(read.node) in compile_arguments or self._is_wrapped_argument(read, sites):
                continue
            if id(read.scope) in inside:
                continue  # recursion: redirected with the lifted values (``_plan_recursion``)
            if any(read.start > position for position in rebound_at):
                continue
            if function.decorator_list:
                raise NoFix(
                    f"'{name}' is decorated and also used without compilation (line "
                    f"{read.line}); its plain uses would need the lifted values too"
                )
            fix.plain_wrapper = True
            return

    def _is_wrapped_argument(self, read: Read, sites: list[CompiledFunction]) -> bool:
        """``jax.jit(jax.grad(f))``: ``f`` reaches the compile call through a transform."""
        node: ast.AST | None = read.node
        while node is not None:
            parent = self.facts.parent(node)
            if not isinstance(parent, ast.Call):
                return False
            if any(parent is site.site for site in sites):
                return True
            callee = self.facts.qualified_name(read.scope, parent.func)
            if callee not in PASSTHROUGH_TRANSFORMS:
                return False
            node = parent
        return False

    def _wrapped_transforms(self, site: CompiledFunction) -> Iterable[str | None]:
        if site.form is Form.DECORATOR:
            function = site.function
            assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
            decorators = function.decorator_list
            for decorator in decorators[decorators.index(site.site) + 1 :]:
                yield self._transform_name(site, decorator)
        elif isinstance(site.site, ast.Call) and site.site.args:
            argument = site.site.args[0]
            while isinstance(argument, ast.Call):
                yield self._transform_name(site, argument.func)
                argument = argument.args[0] if argument.args else argument.func

    def _transform_name(self, site: CompiledFunction, expr: ast.expr) -> str | None:
        if isinstance(expr, ast.Call):
            expr = expr.func
        return self.facts.qualified_name(site.site_scope, expr)

    def _uses_compiled_attributes(self, name: str, scope: Scope) -> bool:
        facts = self.facts
        for read in facts.reads_of(facts.resolve(scope, name), name):
            parent = facts.parent(read.node)
            if isinstance(parent, ast.Attribute) and parent.attr in _COMPILED_ATTRIBUTES:
                return True
        return False

    def _module_compiled_api_use(self) -> str | None:
        """The first call in the module of a compiled object's own API (``fn.lower(x)``,
        ``fast.clear_cache()``) on something that is neither a module (``jnp.trace``) nor the
        name of a compiled object (judged on its own): the value may be a compiled object
        handed on or aliased, which the analysis does not follow. Looked for once per module."""
        if not self._compiled_api_searched:
            self._compiled_api_searched = True
            facts = self.facts
            compiled_names = {
                (site.bound_name, id(facts.resolve(site.site_scope, site.bound_name)))
                for site in self.all_sites
                if site.bound_name
            }
            uses = []
            for attribute in sorted(_COMPILED_ATTRIBUTES):
                for ref in facts.attribute_refs(attribute):
                    call = facts.parent(ref.node)
                    if not ref.called or not isinstance(call, ast.Call) or ref.base is None:
                        continue
                    if attribute in _CALLED_WITH_ARGUMENTS and not (call.args or call.keywords):
                        continue
                    if isinstance(ref.base, (ast.Constant, ast.JoinedStr)):
                        continue
                    if facts.qualified_name(ref.scope, ref.base) is not None:
                        continue  # an imported module's function
                    base = ref.base
                    if isinstance(base, ast.Name) and (
                        (base.id, id(facts.resolve(ref.scope, base.id))) in compiled_names
                    ):
                        continue
                    uses.append((ref.line, attribute))
            if uses:
                line, attribute = min(uses)
                self._compiled_api_use = f"'.{attribute}()' (line {line})"
        return self._compiled_api_use

    def _check_capture(self, capture: StaleCapture, sites: Sequence[CompiledFunction]) -> None:
        facts = self.facts
        if capture.attribute is not None:
            compiled = capture.compiled.scope
            for mutation in facts.attribute_changes(capture.attribute):
                if mutation.scope.is_within(compiled) and mutation.name == capture.name:
                    raise NoFix(
                        f"'{capture.compiled.name}' changes '{capture.name}.{capture.attribute}' "
                        "itself; a value passed in would not see that change"
                    )
        bindings = facts.bindings_of(capture.owner, capture.name)
        # An imported module's attribute changed in place (``config.LR = 0.5``) is a value,
        # lifted like a class attribute; a module rebound is not.
        through_paths = capture.mutation is not None and all(r.path for r in capture.reads)
        if capture.attribute is None and any(
            b.kind is BindingKind.DEF or (b.kind is BindingKind.IMPORT and not through_paths)
            for b in bindings
        ):
            raise NoFix(f"'{capture.name}' names a module, function or class, not a value")
        if any(b.kind is BindingKind.CLASS for b in bindings) and not all(
            read.path for read in capture.reads
        ):
            raise NoFix(f"'{capture.name}' names a module, function or class, not a value")
        scope = facts.scope_of(capture.compiled.function)
        for inner in _scopes_within(scope):
            if capture.name in inner.declared_global | inner.declared_nonlocal:
                raise NoFix(f"the compiled function rebinds '{capture.name}' itself")
        for site in sites:
            if capture.static_self or capture.bound_method:
                break  # the wrapper reads its own 'self', or the object compiled for
            if facts.resolve(site.site_scope, capture.name) is not capture.owner:
                raise NoFix(
                    f"'{capture.name}' means something else where the compiled object is made"
                )

    # -- what to lift --------------------------------------------------------------------------

    def _lifts(self, capture: StaleCapture, fix: FunctionFix, chain: Chain) -> list[Lift]:
        reads = [read for read in capture.reads if _direct(capture, read)]
        inner = [read for own in chain.reads.values() for read in own]
        everything = [*reads, *inner]
        if not everything:
            raise NoFix(f"'{capture.name}' is not read where the fix can pass it")
        lifts = []
        for path in _minimal_paths(everything):
            matching = [r for r in reads if r.path[: len(path)] == path]
            matching_inner = [r for r in inner if r.path[: len(path)] == path]
            nodes = [_prefix_node(r, len(path)) for r in matching] if path else []
            inner_nodes = [_prefix_node(r, len(path)) for r in matching_inner] if path else []
            if nodes:
                value_code = self.source.segment(nodes[0])
            elif path:
                value_code = self._text_of(capture.name, path, matching_inner)
            else:
                value_code = capture.name
            parameter = (
                self._fresh_name(_identifier(capture.name, path), capture.compiled.scope)
                if path
                else capture.name
            )
            lift = Lift(
                capture.name, path, parameter, value_code, [self.source.span(n) for n in nodes]
            )
            self._judge(capture, lift, fix)
            uses = [*nodes, *inner_nodes]
            if not path:
                uses = [
                    r.node for r in (*matching, *matching_inner) if isinstance(r.node, ast.expr)
                ]
            decision = decide(
                value_code,
                self._value_kinds(capture, path),
                self.judge.uses(uses),
                any(self._needs_concrete(r, chain) for r in (*matching, *matching_inner)),
            )
            lift.static = decision.static
            if any(site.transform in STATIC_BY_ITSELF for site in fix.sites):
                # equinox decides per call: arrays are traced, everything else static.
                fix.explanations.append(f"'{value_code}' is passed as equinox decides")
            else:
                fix.explanations.append(decision.explanation)
                if decision.unsafe is not None:
                    fix.unsafe_reasons.append(decision.unsafe)
            if not path:
                lift.annotation = self._annotation(capture)
            lifts.append(lift)
        return lifts

    def _value_kinds(self, capture: StaleCapture, path: tuple[str, ...]) -> set[Kind]:
        """The kinds of every value the lifted expression is given."""
        facts, judge = self.facts, self.judge
        kinds: set[Kind] = set()
        if capture.attribute is None:
            kinds.update(
                judge.binding_kind_at(b, path)
                for b in facts.bindings_of(capture.owner, capture.name)
            )
        if capture.attribute is not None:
            changes = list(facts.attribute_changes(capture.attribute))
        else:
            changes = facts.mutations_of(capture.owner, capture.name)
        for mutation in changes:
            if mutation.path == path and mutation.value is not None:
                kinds.add(judge.kind(mutation.value, mutation.scope, 0))
        return kinds

    def _annotation(self, capture: StaleCapture) -> str | None:
        """The one annotation the variable is declared with, if any."""
        annotations = {
            self.source.segment(b.node.annotation)
            for b in self.facts.bindings_of(capture.owner, capture.name)
            if isinstance(b.node, ast.AnnAssign)
        }
        return annotations.pop() if len(annotations) == 1 else None

    def _judge(self, capture: StaleCapture, lift: Lift, fix: FunctionFix) -> None:
        mutation = capture.mutation
        if not lift.path and capture.rebinding is None:
            fix.unsafe_reasons.append(
                f"the whole object '{capture.name}' becomes an argument; it must hold only arrays "
                "and numbers"
            )
        elif (
            mutation is not None
            and capture.rebinding is None
            and mutation.path[: len(lift.path)] == lift.path
            and (len(mutation.path) > len(lift.path) or mutation.description.endswith("called"))
        ):
            # Changed inside, not replaced: the lifted value is a container.
            fix.unsafe_reasons.append(
                f"'{lift.value_code}' is changed in place, so it is a container; as an argument "
                "it must hold only arrays and numbers"
            )

    def _needs_concrete(self, read: Read, chain: Chain | None = None) -> bool:
        """Whether a read is used where JAX needs a Python value (``if``, ``range``, a shape):
        there, through a local name it is assigned to, or returned from a helper whose call is
        used so (``if get_flag():``)."""
        return self._concrete_use(read.path_node or read.node, read.scope, chain, 0)

    def _concrete_use(self, node: ast.AST, scope: Scope, chain: Chain | None, depth: int) -> bool:
        facts = self.facts
        while True:
            parent = facts.parent(node)
            if parent is None:
                return False
            if isinstance(parent, ast.stmt):
                if isinstance(parent, (ast.If, ast.While, ast.Assert)):
                    return True
                return depth < 3 and self._concrete_after(parent, scope, chain, depth)
            if isinstance(parent, ast.IfExp) and parent.test is node:
                return True
            if isinstance(parent, (ast.Slice, ast.FormattedValue)):
                return True
            if isinstance(parent, ast.keyword) and parent.arg in _CONCRETE_KEYWORDS:
                return True
            if isinstance(parent, ast.Call) and node is not parent.func:
                if _callee_name(parent) in _CONCRETE_CALLEES:
                    return True
            if isinstance(parent, ast.Lambda):
                return False
            node = parent

    def _concrete_after(
        self, statement: ast.stmt, scope: Scope, chain: Chain | None, depth: int
    ) -> bool:
        """Whether what a statement passes on (the value it assigns to a name, or returns from
        a helper) is used where JAX needs a Python value."""
        facts = self.facts
        if isinstance(statement, ast.Return) and chain is not None:
            function = scope.function()
            return any(
                self._concrete_use(call.call, call.scope, chain, depth + 1)
                for call in chain.calls
                if call.helper is function
            )
        target = None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
        elif isinstance(statement, ast.AnnAssign):
            target = statement.target
        if not isinstance(target, ast.Name):
            return False
        end = (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)
        owner = facts.resolve(scope, target.id)
        return any(
            self._concrete_use(read.node, read.scope, chain, depth + 1)
            for read in facts.reads_of(owner, target.id)
            if read.start >= end
        )

    def _fresh_name(self, wanted: str, scope: Scope) -> str:
        """A name that no code in ``scope`` (or nested in it) uses yet."""
        node = scope.node
        first = getattr(node, "lineno", 1)
        last = getattr(node, "end_lineno", None) or len(self.source.lines)
        number, name = 1, wanted
        while True:
            lines = self.facts.lines_of([name])[name]
            used = any(first <= line <= last for line in lines)
            if not used and (id(scope), name) not in self._taken:
                self._taken.add((id(scope), name))
                return name
            number += 1
            name = f"{wanted}_{number}"


def _static_parameters(sites: Sequence[CompiledFunction], positional: list[str]) -> set[str]:
    """The parameters every compile site declares static (``static_argnames``, or
    ``static_argnums`` by position), as written out."""
    found: set[str] | None = None
    for site in sites:
        names: set[str] = set()
        call = site.transform_call
        for keyword in call.keywords if call is not None else ():
            value = keyword.value
            elements = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
            constants = [e.value for e in elements if isinstance(e, ast.Constant)]
            if keyword.arg == "static_argnames":
                names.update(c for c in constants if isinstance(c, str))
            elif keyword.arg == "static_argnums":
                names.update(
                    positional[c] for c in constants
                    if type(c) is int and -len(positional) <= c < len(positional)
                )  # fmt: skip
        found = names if found is None else found & names
    return found or set()


def _direct(capture: StaleCapture, read: Read) -> bool:
    """A read of the value in the compiled function itself (not a call of a helper that reads
    it, which the analysis records at the call)."""
    if capture.attribute is not None:
        return read.path[:1] == (f".{capture.attribute}",) and read.path_node is not None
    return isinstance(read.node, ast.Name) and read.node.id == capture.name


def _context_name(facts: Facts, call: ast.expr, statement: ast.stmt) -> str | None:
    """``apply`` for ``self.apply = jax.jit(...)`` and ``Model(apply=jax.jit(...))``."""
    parent = facts.parent(call)
    if isinstance(parent, ast.keyword) and parent.arg is not None:
        return parent.arg
    if isinstance(statement, ast.Assign) and statement.value is call:
        target = statement.targets[0]
        if isinstance(target, ast.Attribute):
            return target.attr
        if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
            key = target.slice.value
            if isinstance(key, str) and key.isidentifier():
                return key
    return None


def _variable_names(node: ast.AST) -> set[str]:
    """Every name a variable, parameter, def, class or import uses in ``node``."""
    names: set[str] = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name):
            names.add(inner.id)
        elif isinstance(inner, ast.arg):
            names.add(inner.arg)
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(inner.name)
        elif isinstance(inner, ast.alias):
            names.add((inner.asname or inner.name).split(".")[0])
        elif isinstance(inner, (ast.Global, ast.Nonlocal)):
            names.update(inner.names)
    return names


Variable = tuple[int, str, str | None]


@dataclass
class _Planned:
    """One value to lift: its capture, the helpers it passes through, its lifts, and why each
    is traced or static (and unsafe)."""

    capture: StaleCapture
    chain: Chain
    lifts: list[Lift]
    unsafe: list[str]
    explanations: list[str]


@dataclass(frozen=True)
class HelperParameter:
    """A parameter of a split helper: one path of one value, and what its plain wrapper
    passes."""

    variable: Variable
    path: tuple[str, ...]
    name: str
    value: str
    owner: Scope
    root: str  # the variable's name (``self`` of some method, for an attribute)


def _variable(capture: StaleCapture) -> Variable:
    """What a capture reads: a variable of its owner, or an attribute of its class's objects,
    whichever method's ``self`` reads it."""
    if capture.attribute is not None:
        assert capture.owner.parent is not None
        return (id(capture.owner.parent), "", capture.attribute)
    return (id(capture.owner), capture.name, None)


def _minimal_paths(reads: Iterable[Read]) -> list[tuple[str, ...]]:
    """The shortest paths covering every read: ``()`` when any read takes the whole value."""
    paths: list[tuple[str, ...]] = []
    for path in sorted({read.path for read in reads}, key=lambda p: (len(p), p)):
        if not any(path[: len(p)] == p for p in paths):
            paths.append(path)
    return paths


def _word(name: str) -> str:
    """A name usable in an identifier: ``lambda`` for ``<lambda>``."""
    return re.sub(r"\W+", "", name).strip("_") or "function"


def _first_line(function: ast.AST) -> int:
    decorators: list[ast.expr] = getattr(function, "decorator_list", [])
    line: int = function.lineno  # type: ignore[attr-defined]
    return min([d.lineno for d in decorators] + [line])


def _scopes_within(scope: Scope) -> Iterable[Scope]:
    pending = [scope]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(current.children)


def _prefix_node(read: Read, depth: int) -> ast.expr:
    node = read.path_node
    assert node is not None
    for _ in range(len(read.path) - depth):
        assert isinstance(node, (ast.Attribute, ast.Subscript))
        node = node.value
    return node


def _identifier(name: str, path: tuple[str, ...]) -> str:
    parts = [re.sub(r"\W+", "_", element).strip("_") for element in path]
    return "_".join([name, *[p for p in parts if p]])


def _callee_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None
