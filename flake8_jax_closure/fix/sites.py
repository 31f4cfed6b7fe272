"""Where the compiled object is made, and whether the fix can change it there: each compile
site's decorator or call, the statement it binds or hands the object on in, what a ``partial``
binds, and the transforms and uses of the compiled object that a plain wrapper would break."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from ..analysis.compiled import CompiledFunction, Form
from ..analysis.facts.model import Scope, ScopeKind
from ..analysis.facts.queries import Facts
from ..analysis.names import PARTIAL, PASSTHROUGH_TRANSFORMS
from ..positions import SourceLines
from ..rules.jc104_self_attribute.fix import locate_bound_method
from .layout import Layout
from .model import POSITIONAL_TRANSFORMS, FunctionFix, NoFix, SitePlan
from .names import Names
from .uses import UsePlanner

# Transforms that map keyword arguments over their leading axis: a lifted value would be batched.
_MAPS_KEYWORDS = frozenset({"jax.vmap", "equinox.filter_vmap", "jax.pmap", "equinox.filter_pmap"})
# Transforms that cannot pass keyword arguments at all: Flax NNX's transforms other than ``jit``
# raise a TypeError for the keyword-only parameters a lifted value would become.
_REFUSES_KEYWORDS = frozenset(
    {"flax.nnx.vmap", "flax.nnx.pmap", "flax.nnx.grad", "flax.nnx.value_and_grad",
     "flax.nnx.remat", "flax.nnx.scan", "flax.nnx.shard_map"}
)  # fmt: skip
# Statements a compiled object passed on directly can be bound before.
_SIMPLE_STATEMENTS = (ast.Return, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)
# Attributes of a compiled object that a plain wrapper does not have.
_COMPILED_ATTRIBUTES = frozenset(
    {"lower", "trace", "eval_shape", "clear_cache", "_cache_size", "__wrapped__", "_fun"}
)
# Of those, the ones called with the compiled function's arguments; called without any, they
# are other objects' methods (``str.lower()``, an array's ``trace()``).
_CALLED_WITH_ARGUMENTS = frozenset({"lower", "trace", "eval_shape"})


class SiteChecker:
    """Locates each compile site for the plan and refuses the ones the fix cannot change."""

    def __init__(
        self,
        facts: Facts,
        source: SourceLines,
        all_sites: Sequence[CompiledFunction],
        names: Names,
        layout: Layout,
        uses: UsePlanner,
    ) -> None:
        self.facts = facts
        self.source = source
        self.all_sites = all_sites
        self.names = names
        self.layout = layout
        self.uses = uses
        self._compiled_api_use: str | None = None
        self._compiled_api_searched = False

    def _compiles_a_factory_result(self, site: CompiledFunction) -> bool:
        """``jax.jit(make_update("sgd"))``: the compile call's argument calls a function of the
        program, not a transform of JAX's."""
        call = site.site
        first = call.args[0] if isinstance(call, ast.Call) and call.args else None
        if site.form is Form.DECORATOR or not isinstance(first, ast.Call):
            return False
        name = self.facts.qualified_name(site.site_scope, first.func)
        return name not in PASSTHROUGH_TRANSFORMS

    def check(self, fix: FunctionFix, sites: list[CompiledFunction]) -> None:
        """Each site located in ``fix.sites``; raises NoFix for a site the fix cannot change,
        and notes what makes the fix unsafe."""
        function = sites[0].function
        for site in sites:
            if site.made_by is not None:
                raise NoFix(
                    f"the function is compiled by the project's decorator '{site.made_by}', "
                    "whose wrapper may not pass the value on to the compiled function"
                )
            fix.sites.append(self._locate(fix, site))
            if site.site_scope.kind is ScopeKind.CLASS and fix.method_self is None:
                raise NoFix("a compiled static or class method has no 'self' to pass values")
            if _compiles_an_attribute(site):
                raise NoFix(
                    "the static method is compiled through an attribute "
                    "(jax.jit(self.method)), which the fix cannot point at the renamed function"
                )
            if self._compiles_a_factory_result(site):
                raise NoFix(
                    "the function is compiled as what a memoised factory returns "
                    "(jax.jit(make_update(...))), which the fix cannot point at the wrapper"
                )
            if site.transform in POSITIONAL_TRANSFORMS:
                fix.positional = True
            elif site.transform in _MAPS_KEYWORDS:
                raise NoFix(
                    f"{site.transform} maps keyword arguments over their leading axis; pass the "
                    "value as a positional argument with in_axes=None instead"
                )
            elif site.transform in _REFUSES_KEYWORDS:
                raise NoFix(
                    f"{site.transform} takes no keyword arguments; pass the value as a "
                    "positional argument with in_axes=None instead"
                )
            for transform in self._wrapped_transforms(site):
                if transform in _MAPS_KEYWORDS:
                    raise NoFix(
                        f"{transform} under {site.transform} would map the lifted values over "
                        "their leading axis"
                    )
                if transform in _REFUSES_KEYWORDS:
                    raise NoFix(
                        f"{transform} under {site.transform} takes no keyword arguments for the "
                        "lifted values"
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
                self.uses.check_only_compiled(fix, function, sites)
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
            fix.statements.add(self.layout.statement_span(site.site))
        if site.transform_call is not None:
            plan.options_call = source.span(site.transform_call)
        if isinstance(site.site, ast.Call) and site.site.args:
            self._partial(plan, site)
        if fix.plain_wrapper and fix.method_self is not None and site.form is not Form.DECORATOR:
            locate_bound_method(fix, site, plan, self.facts, self.source, self.names)
        if site.form is Form.ASSIGNED:
            statement = self.facts.parent(site.site)
            assert statement is not None
            if not self.layout.alone_on_its_lines(statement):
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

    def _locate_passed(self, fix: FunctionFix, site: CompiledFunction, plan: SitePlan) -> None:
        """``return jax.jit(f)``, ``Model(step=jax.jit(f))``: the compiled object and a wrapper
        are bound first, before the statement, which then hands on the wrapper."""
        line = site.site.lineno
        if site.site_scope.kind not in (ScopeKind.FUNCTION, ScopeKind.MODULE):
            raise NoFix(
                f"the compiled object is passed on directly inside a {site.site_scope.kind.value} "
                f"(line {line}); bind it to a name first"
            )
        statement = self.layout.enclosing_statement(site.site)
        if not isinstance(statement, _SIMPLE_STATEMENTS) or not self.layout.alone_on_its_lines(
            statement
        ):
            raise NoFix(
                f"the compiled object is passed on directly in a compound statement (line "
                f"{line}); bind it to a name first"
            )
        plan.passed_statement = statement.lineno
        fix.statements.add(self.layout.statement_span(statement))
        plan.module_level = statement.col_offset == 0

    def name_passed_sites(self, fix: FunctionFix, sites: list[CompiledFunction]) -> None:
        """Names for the wrappers of compiled objects passed on directly, once the function's
        own names are known."""
        for site, plan in zip(sites, fix.sites, strict=True):
            if plan.passed_statement is None:
                continue
            statement = self.layout.enclosing_statement(site.site)
            assert isinstance(statement, ast.stmt)
            name = self._passed_name(fix, site, statement)
            plan.wrapper_name = name
            wanted = f"_{name.strip('_')}_compiled"
            plan.compiled_name = self.names.fresh(wanted, site.site_scope)

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
                if self.names.claim(wanted, scope):
                    # The def takes its raw name; the wrapper takes its name in its scope.
                    return wanted
        return self.names.free(wanted, scope)

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


def _compiles_an_attribute(site: CompiledFunction) -> bool:
    """``jax.jit(self._update)`` of a ``@staticmethod``: the function compiled is reached
    through an attribute (a bound method's fix is JC104's)."""
    call, function = site.site, site.function
    if site.form is Form.DECORATOR or not isinstance(call, ast.Call):
        return False
    first = call.args[0] if call.args else None
    return (
        isinstance(first, ast.Attribute)
        and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(
            isinstance(decorator, ast.Name) and decorator.id == "staticmethod"
            for decorator in function.decorator_list
        )
    )
