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
from .values import Kind, ValueJudge, decide

# Transforms that map keyword arguments over their leading axis: a lifted value would be batched.
_MAPS_KEYWORDS = frozenset({"jax.vmap", "equinox.filter_vmap", "jax.pmap", "equinox.filter_pmap"})
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


@dataclass
class FunctionFix:
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

    @property
    def applicability(self) -> Applicability:
        return Applicability.UNSAFE if self.unsafe_reasons else Applicability.SAFE

    @property
    def description(self) -> str:
        names = ", ".join(f"'{lift.value_code}'" for lift in self.lifts)
        text = f"pass {names} to the compiled function on every call"
        if self.unsafe_reasons:
            return f"{text} (unsafe: {'; '.join(dict.fromkeys(self.unsafe_reasons))})"
        return f"{text} ({'; '.join(dict.fromkeys(self.explanations))})"


class FixPlanner:
    def __init__(
        self, facts: Facts, source: SourceLines, all_sites: Sequence[CompiledFunction]
    ) -> None:
        self.facts = facts
        self.source = source
        self.all_sites = all_sites
        self._sites_of: dict[int, list[CompiledFunction]] = {}
        for site in all_sites:
            self._sites_of.setdefault(id(site.function), []).append(site)
        self.judge = ValueJudge(facts)
        self._taken: set[tuple[int, str]] = set()
        self._compiled_api_use: str | None = None
        self._compiled_api_searched = False

    def plan(self, captures: Sequence[StaleCapture]) -> FunctionFix:
        """The fix for one compiled function and all its stale captures.

        Raises NoFix when the function cannot be fixed at all; a capture that cannot be lifted
        is left out, with its reason in ``declined``.
        """
        first = captures[0].compiled
        if any(capture.bound_method for capture in captures):
            raise NoFix(
                "the bound method bakes in 'self'; register the class as a pytree, or move the "
                "compiled function out of the class"
            )
        sites = self._sites_of.get(id(first.function)) or [first]
        function = first.function
        fix = FunctionFix(
            name=first.name,
            is_lambda=isinstance(function, ast.Lambda),
            function=self._function_span(function),
            lifts=[],
            compiled_name=self._fresh_name(f"_{first.name}_compiled", first.site_scope),
            sites=[],
            module_level=first.site_scope.kind is ScopeKind.MODULE,
            indent=self._indent_unit(function),
        )
        fix.statements.add(self._statement_span(function))
        if first.site_scope.kind is ScopeKind.CLASS:
            fix.method_self = method_self_name(first.scope)
        self._check_sites(fix, sites)
        self._plan_names(fix, sites)
        for capture in captures:
            key = (capture.name, capture.attribute)
            try:
                self._check_capture(capture, sites)
            except NoFix as reason:
                fix.declined[key] = str(reason)
                continue
            fix.lifts.extend(self._lifts(capture, fix))
        if not fix.lifts:
            raise NoFix("; ".join(dict.fromkeys(fix.declined.values())))
        self._plan_recursion(fix, sites)
        return fix

    def _function_span(self, function: ast.AST) -> Span:
        return self.source.span(function)

    # -- what can be fixed ---------------------------------------------------------------------

    def _check_sites(self, fix: FunctionFix, sites: list[CompiledFunction]) -> None:
        function = sites[0].function
        for site in sites:
            fix.sites.append(self._locate(fix, site))
            if site.form is Form.PASSED:
                raise NoFix(
                    f"the compiled object is passed on directly; bind it to a name first "
                    f"(line {site.site.lineno})"
                )
            if site.site_scope.kind is ScopeKind.CLASS and fix.method_self is None:
                raise NoFix("a compiled static or class method has no 'self' to pass values")
            if site.transform in _MAPS_KEYWORDS:
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
        forms = {site.form is Form.DECORATOR for site in sites}
        if len(forms) == 2:
            # The compile call would get the public wrapper, which reads the values while
            # tracing: stale again.
            raise NoFix("the function is compiled by its decorator and again by a call")
        if isinstance(function, ast.FunctionDef):
            if any(site.form is not Form.DECORATOR for site in sites):
                self._check_only_compiled(function, sites)
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
        if site.form is Form.ASSIGNED:
            statement = self.facts.parent(site.site)
            assert statement is not None
            if not self._alone_on_its_lines(statement):
                raise NoFix("the compiled object is made in a compound statement line")
            plan.statement_line = statement.lineno  # type: ignore[attr-defined]
        elif site.form is Form.INLINE:
            outer = self.facts.parent(site.site)
            assert isinstance(outer, ast.Call)
            plan.inline_call = source.span(outer)
        return plan

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
        self, function: ast.FunctionDef, sites: list[CompiledFunction]
    ) -> None:
        """A function compiled by call may not be used plainly elsewhere: it gains parameters."""
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
            raise NoFix(
                f"'{name}' is also used without compilation (line {read.line}); it would "
                "need the lifted values too"
            )

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
        if capture.read_through:
            if capture.attribute is not None:
                raise NoFix(
                    f"'{capture.name}.{capture.attribute}' is read through "
                    f"'{capture.name}.{capture.read_through}'; pass it explicitly, register "
                    "the class as a pytree, or move the compiled function out of the class"
                )
            raise NoFix(
                f"'{capture.name}' is read inside '{capture.read_through}'; pass it to "
                f"'{capture.read_through[:-2]}' as an argument"
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
            if capture.static_self:
                break  # the wrapper method reads its own 'self'
            if facts.resolve(site.site_scope, capture.name) is not capture.owner:
                raise NoFix(
                    f"'{capture.name}' means something else where the compiled object is made"
                )

    # -- what to lift --------------------------------------------------------------------------

    def _lifts(self, capture: StaleCapture, fix: FunctionFix) -> list[Lift]:
        reads = list(capture.reads)
        if any(not read.path for read in reads):
            paths: list[tuple[str, ...]] = [()]
        else:
            paths = []
            for path in sorted({read.path for read in reads}, key=lambda p: (len(p), p)):
                if not any(path[: len(p)] == p for p in paths):
                    paths.append(path)
        lifts = []
        for path in paths:
            matching = [r for r in reads if r.path[: len(path)] == path]
            nodes = [_prefix_node(r, len(path)) for r in matching] if path else []
            value_code = self.source.segment(nodes[0]) if nodes else capture.name
            parameter = (
                self._fresh_name(_identifier(capture.name, path), capture.compiled.scope)
                if path
                else capture.name
            )
            lift = Lift(
                capture.name, path, parameter, value_code, [self.source.span(n) for n in nodes]
            )
            self._judge(capture, lift, fix)
            uses: list[ast.expr] = nodes if path else [r.node for r in matching]  # type: ignore[misc]
            decision = decide(
                value_code,
                self._value_kinds(capture, path),
                self.judge.uses(uses),
                any(self._needs_concrete(r) for r in matching),
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

    def _needs_concrete(self, read: Read) -> bool:
        """Whether a read is used where JAX needs a Python value (``if``, ``range``, a shape)."""
        facts = self.facts
        node: ast.AST = read.path_node or read.node
        while True:
            parent = facts.parent(node)
            if parent is None or isinstance(parent, ast.stmt):
                return isinstance(parent, (ast.If, ast.While, ast.Assert))
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
