"""The autofix: lift captured values into keyword-only parameters of the compiled function.

For each compiled function with stale captures, the planner decides what to lift (a name, or a
constant path such as ``CONFIG["clip"]``), which lifted values must be static, and whether the fix
is safe, unsafe, or not possible (with the reason). The transformer then rewrites the code:

    @jax.jit                                   @jax.jit
    def step(x):                               def _step_compiled(x, *, weights):
        return weights.dot(x)        ->            return weights.dot(x)

                                               def step(x):
                                                   return _step_compiled(x, weights=weights)

The compiled object is still made once, where it was; the wrapper keeps the original name,
signature and docstring and passes the current values on every call. JAX compiles once per
shape and dtype (and per value of a static argument), so freshness costs nothing at run time.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from .compiled import CompiledFunction, Form, FunctionNode
from .diagnostics import Applicability, Edit
from .model import StaleCapture, method_self_name
from .names import PASSTHROUGH_TRANSFORMS
from .scopes import BindingKind, Read, Scope, ScopeKind, ScopeModel

# Transforms that map keyword arguments over their leading axis: a lifted value would be batched.
_MAPS_KEYWORDS = frozenset({"jax.vmap", "equinox.filter_vmap", "jax.pmap", "equinox.filter_pmap"})
# Transforms without ``static_argnames``; equinox treats every non-array argument as static.
_STATIC_BY_ITSELF = frozenset({"equinox.filter_jit"})
# Attributes of a compiled object that a plain wrapper does not have.
_COMPILED_ATTRIBUTES = frozenset(
    {"lower", "trace", "eval_shape", "clear_cache", "_cache_size", "__wrapped__", "_fun"}
)
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
    nodes: list[cst.BaseExpression]  # reads in the compiled function replaced by the parameter
    static: bool = False


@dataclass
class FunctionFix:
    sites: list[CompiledFunction]
    lifts: list[Lift]
    compiled_name: str
    unsafe_reasons: list[str] = field(default_factory=list)
    # ``g = jax.jit(f)`` statements replaced by the compiled object and the wrapper.
    statements: list[tuple[cst.SimpleStatementLine, CompiledFunction]] = field(default_factory=list)
    # ``jax.jit(f)(x)`` calls that pass the lifted values along.
    inline_calls: list[cst.Call] = field(default_factory=list)
    # Captured names that cannot be lifted, with the reason.
    declined: dict[str, str] = field(default_factory=dict)
    # For a compiled method: the name of ``self``, through which the wrapper calls it.
    method_self: str | None = None

    @property
    def function(self) -> FunctionNode:
        return self.sites[0].function

    @property
    def applicability(self) -> Applicability:
        return Applicability.UNSAFE if self.unsafe_reasons else Applicability.SAFE

    @property
    def description(self) -> str:
        names = ", ".join(f"'{lift.value_code}'" for lift in self.lifts)
        text = f"pass {names} to the compiled function on every call"
        if self.unsafe_reasons:
            text += f" (unsafe: {'; '.join(self.unsafe_reasons)})"
        return text


class FixPlanner:
    def __init__(self, model: ScopeModel, all_sites: Sequence[CompiledFunction]) -> None:
        self.model = model
        self.all_sites = all_sites
        self._taken: dict[int, set[str]] = {}

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
        sites = [s for s in self.all_sites if s.function is first.function] or [first]
        fix = FunctionFix(sites, [], self._fresh_name(f"_{first.name}_compiled", first.site_scope))
        if first.site_scope.kind is ScopeKind.CLASS:
            fix.method_self = method_self_name(first.scope)
        self._check_sites(fix)
        for capture in captures:
            try:
                if capture.read_through:
                    raise NoFix(
                        f"'{capture.name}.{capture.attribute}' is read through "
                        f"'{capture.name}.{capture.read_through}'; pass it explicitly, register "
                        "the class as a pytree, or move the compiled function out of the class"
                    )
                self._check_capture(capture, sites)
            except NoFix as reason:
                fix.declined[capture.name] = str(reason)
                continue
            fix.lifts.extend(self._lifts(capture, fix))
        if not fix.lifts:
            raise NoFix("; ".join(fix.declined.values()))
        return fix

    # -- what can be fixed ---------------------------------------------------------------------

    def _check_sites(self, fix: FunctionFix) -> None:
        function = fix.function
        for site in fix.sites:
            self._locate(fix, site)
            if site.form is Form.PASSED:
                raise NoFix(
                    f"the compiled object is passed on directly; bind it to a name first "
                    f"(line {self.model.position(site.site).start.line})"
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
                keywords = {a.keyword.value for a in site.transform_call.args if a.keyword}
                if "in_shardings" in keywords:
                    fix.unsafe_reasons.append(
                        "pjit with in_shardings needs a sharding for each lifted value"
                    )
        if isinstance(function, cst.FunctionDef):
            if function.asynchronous is not None:
                raise NoFix("async functions cannot be compiled")
            if any(site.form is not Form.DECORATOR for site in fix.sites):
                self._check_only_compiled(fix)
        bound = {(site.bound_name, site.site_scope) for site in fix.sites if site.bound_name}
        for name, scope in sorted(bound, key=lambda item: item[0]):
            if self._uses_compiled_attributes(name, scope):
                fix.unsafe_reasons.append(
                    f"'{name}' is used through attributes of the compiled object "
                    "(.lower, .trace, ...)"
                )

    def _locate(self, fix: FunctionFix, site: CompiledFunction) -> None:
        if site.form is Form.ASSIGNED:
            assignment = self.model.parent(site.site)
            statement = self.model.parent(assignment) if assignment is not None else None
            if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
                raise NoFix("the compiled object is made in a compound statement line")
            fix.statements.append((statement, site))
        elif site.form is Form.INLINE:
            outer = self.model.parent(site.site)
            assert isinstance(outer, cst.Call)
            fix.inline_calls.append(outer)

    def _check_only_compiled(self, fix: FunctionFix) -> None:
        """A function compiled by call may not be used plainly elsewhere: it gains parameters."""
        function = fix.function
        assert isinstance(function, cst.FunctionDef)
        name = function.name.value
        definition_scope = self.model.scope_of(function).parent
        assert definition_scope is not None
        compile_arguments = {
            id(a.value) for s in fix.sites if isinstance(s.site, cst.Call) for a in s.site.args
        }
        # After ``f = jax.jit(f)``, the name means the compiled object.
        rebound_at = [s.created_at for s in fix.sites if s.bound_name == name]
        for read in self.model.reads_of(definition_scope, name):
            if id(read.node) in compile_arguments or self._is_wrapped_argument(read, fix):
                continue
            if any(read.start > position for position in rebound_at):
                continue
            raise NoFix(
                f"'{name}' is also used without compilation (line {read.line}); it would "
                "need the lifted values too"
            )

    def _is_wrapped_argument(self, read: Read, fix: FunctionFix) -> bool:
        """``jax.jit(jax.grad(f))``: ``f`` reaches the compile call through a transform."""
        node: cst.CSTNode | None = read.node
        while node is not None:
            parent = self.model.parent(node)
            if isinstance(parent, cst.Arg):
                parent = self.model.parent(parent)
            if not isinstance(parent, cst.Call):
                return False
            if any(parent is site.site for site in fix.sites):
                return True
            callee = self.model.qualified_name(read.scope, parent.func)
            if callee not in PASSTHROUGH_TRANSFORMS:
                return False
            node = parent
        return False

    def _wrapped_transforms(self, site: CompiledFunction) -> Iterable[str | None]:
        if site.form is Form.DECORATOR:
            assert isinstance(site.function, cst.FunctionDef)
            decorators = list(site.function.decorators)
            below = decorators[decorators.index(site.site) + 1 :]  # type: ignore[arg-type]
            for decorator in below:
                yield self._transform_name(site, decorator.decorator)
        elif isinstance(site.site, cst.Call) and site.site.args:
            argument = site.site.args[0].value
            while isinstance(argument, cst.Call):
                yield self._transform_name(site, argument.func)
                argument = argument.args[0].value if argument.args else argument

    def _transform_name(self, site: CompiledFunction, expr: cst.BaseExpression) -> str | None:
        if isinstance(expr, cst.Call):
            expr = expr.func
        return self.model.qualified_name(site.site_scope, expr)

    def _uses_compiled_attributes(self, name: str, scope: Scope) -> bool:
        for read in self.model.reads_of(self.model.resolve(scope, name), name):
            parent = self.model.parent(read.node)
            if isinstance(parent, cst.Attribute) and parent.attr.value in _COMPILED_ATTRIBUTES:
                return True
        return False

    def _check_capture(self, capture: StaleCapture, sites: Sequence[CompiledFunction]) -> None:
        bindings = self.model.bindings_of(capture.owner, capture.name)
        if any(
            b.kind in (BindingKind.IMPORT, BindingKind.DEF, BindingKind.CLASS) for b in bindings
        ):
            raise NoFix(f"'{capture.name}' names a module, function or class, not a value")
        scope = self.model.scope_of(capture.compiled.function)
        for inner in _scopes_within(scope):
            if capture.name in inner.declared_global | inner.declared_nonlocal:
                raise NoFix(f"the compiled function rebinds '{capture.name}' itself")
        for site in sites:
            if capture.static_self:
                break  # the wrapper method reads its own 'self'
            if self.model.resolve(site.site_scope, capture.name) is not capture.owner:
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
            value_code = self.model.module.code_for_node(nodes[0]) if nodes else capture.name
            parameter = (
                self._fresh_name(_identifier(capture.name, path), capture.compiled.scope)
                if path
                else capture.name
            )
            lift = Lift(capture.name, path, parameter, value_code, nodes)
            lift.static = any(self._needs_concrete(r) for r in matching) or self._is_string(
                capture, path
            )
            self._judge(capture, lift, fix)
            lifts.append(lift)
        return lifts

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
        if lift.static:
            values = self._assigned_values(capture, lift.path)
            if not values or not all(_is_hashable_literal(v) for v in values):
                fix.unsafe_reasons.append(
                    f"'{lift.value_code}' must be static and may be unhashable"
                )

    def _assigned_values(
        self, capture: StaleCapture, path: tuple[str, ...]
    ) -> list[cst.BaseExpression | None]:
        values: list[cst.BaseExpression | None] = []
        if not path:
            values.extend(b.value for b in self.model.bindings_of(capture.owner, capture.name))
        for mutation in self.model.mutations_of(capture.owner, capture.name):
            if mutation.path == path and isinstance(mutation.node, (cst.Assign, cst.AugAssign)):
                values.append(mutation.node.value)
            elif mutation.path[: len(path)] == path:
                values.append(None)
        return values

    def _is_string(self, capture: StaleCapture, path: tuple[str, ...]) -> bool:
        """Strings cannot be traced: a lifted string is always static."""
        values = self._assigned_values(capture, path)
        return bool(values) and all(
            isinstance(v, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
            for v in values
        )

    def _needs_concrete(self, read: Read) -> bool:
        """Whether a read is used where JAX needs a Python value (``if``, ``range``, a shape)."""
        node: cst.CSTNode = read.path_node or read.node
        while True:
            parent = self.model.parent(node)
            if parent is None or isinstance(parent, (cst.BaseStatement, cst.BaseSmallStatement)):
                return isinstance(parent, (cst.If, cst.While, cst.Assert))
            if isinstance(parent, cst.IfExp) and parent.test is node:
                return True
            if isinstance(parent, (cst.Slice, cst.FormattedStringExpression)):
                return True
            if isinstance(parent, cst.Arg):
                if parent.keyword is not None and parent.keyword.value in _CONCRETE_KEYWORDS:
                    return True
                call = self.model.parent(parent)
                if isinstance(call, cst.Call) and _callee_name(call) in _CONCRETE_CALLEES:
                    return True
            if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.IndentedBlock)):
                return False
            node = parent

    def _fresh_name(self, wanted: str, scope: Scope) -> str:
        """A name that no code in ``scope`` (or nested in it) binds or reads yet."""
        taken = self._taken.get(id(scope))
        if taken is None:
            inner = {id(s) for s in _scopes_within(scope)}
            taken = {r.name for r in self.model.reads if id(r.scope) in inner}
            taken |= {b.name for b in self.model.bindings if id(b.scope) in inner}
            self._taken[id(scope)] = taken
        name, number = wanted, 1
        while name in taken:
            number += 1
            name = f"{wanted}_{number}"
        taken.add(name)
        return name


def _scopes_within(scope: Scope) -> Iterable[Scope]:
    pending = [scope]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(current.children)


def _prefix_node(read: Read, depth: int) -> cst.BaseExpression:
    node = read.path_node
    assert node is not None
    for _ in range(len(read.path) - depth):
        assert isinstance(node, (cst.Attribute, cst.Subscript))
        node = node.value
    return node


def _identifier(name: str, path: tuple[str, ...]) -> str:
    parts = [re.sub(r"\W+", "_", element).strip("_") for element in path]
    return "_".join([name, *[p for p in parts if p]])


def _callee_name(call: cst.Call) -> str | None:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    if isinstance(func, cst.Name):
        return func.value
    return None


def _is_hashable_literal(value: cst.BaseExpression | None) -> bool:
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(value, cst.Name):
        return value.value in ("True", "False", "None")
    if isinstance(value, cst.UnaryOperation):
        return _is_hashable_literal(value.expression)
    if isinstance(value, cst.Tuple):
        return all(_is_hashable_literal(e.value) for e in value.elements)
    return False


# -- the rewrite ---------------------------------------------------------------------------------


class LiftTransformer(cst.CSTTransformer):
    """Applies function fixes to the module they were planned on."""

    def __init__(self, module: cst.Module, fixes: Iterable[FunctionFix]) -> None:
        super().__init__()
        self.module = module
        self.functions: dict[cst.CSTNode, FunctionFix] = {}
        self.decorators: dict[cst.CSTNode, tuple[FunctionFix, CompiledFunction]] = {}
        self.compile_calls: dict[cst.CSTNode, tuple[FunctionFix, CompiledFunction]] = {}
        self.assignments: dict[cst.CSTNode, tuple[FunctionFix, CompiledFunction]] = {}
        self.inline_calls: dict[cst.CSTNode, FunctionFix] = {}
        self.replacements: dict[cst.CSTNode, str] = {}
        self.wrappers: set[int] = set()
        for fix in fixes:
            self.functions[fix.function] = fix
            for lift in fix.lifts:
                for node in lift.nodes:
                    self.replacements[node] = lift.parameter
            for site in fix.sites:
                if site.form is Form.DECORATOR:
                    self.decorators[site.site] = (fix, site)
                elif site.transform_call is not None:
                    self.compile_calls[site.transform_call] = (fix, site)
                if isinstance(site.site, cst.Call):
                    self.compile_calls.setdefault(site.site, (fix, site))
            for statement, site in fix.statements:
                self.assignments[statement] = (fix, site)
            for call in fix.inline_calls:
                self.inline_calls[call] = fix

    # -- reads inside the compiled function ----------------------------------------------------

    def _replace(self, original: cst.CSTNode, updated: cst.BaseExpression) -> cst.BaseExpression:
        parameter = self.replacements.get(original)
        if parameter is None:
            return updated
        return cst.Name(
            parameter, lpar=getattr(updated, "lpar", ()), rpar=getattr(updated, "rpar", ())
        )

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        return self._replace(original_node, updated_node)

    def leave_Subscript(
        self, original_node: cst.Subscript, updated_node: cst.Subscript
    ) -> cst.BaseExpression:
        return self._replace(original_node, updated_node)

    # -- the compiled function -----------------------------------------------------------------

    def leave_Lambda(
        self, original_node: cst.Lambda, updated_node: cst.Lambda
    ) -> cst.BaseExpression:
        fix = self.functions.get(original_node)
        if fix is None:
            return updated_node
        return updated_node.with_changes(params=_with_keyword_only(updated_node.params, fix.lifts))

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        fix = self.functions.get(original_node)
        if fix is None:
            return updated_node
        updated_node = updated_node.with_changes(
            params=_with_keyword_only(updated_node.params, fix.lifts)
        )
        decorated = [site for site in fix.sites if site.form is Form.DECORATOR]
        if not decorated:
            return updated_node
        site = decorated[0]
        compiled_def = updated_node.with_changes(name=cst.Name(fix.compiled_name))
        wrapper = self._wrapper(
            fix, site, original_node.name.value, original_node.params, original_node.returns,
            _docstring(original_node),
        )  # fmt: skip
        return cst.FlattenSentinel([compiled_def, wrapper])

    def leave_Decorator(
        self, original_node: cst.Decorator, updated_node: cst.Decorator
    ) -> cst.Decorator:
        entry = self.decorators.get(original_node)
        if entry is None:
            return updated_node
        fix, site = entry
        static = _static_names(fix, site)
        if not static:
            return updated_node
        expr = updated_node.decorator
        if isinstance(expr, cst.Call):
            return updated_node.with_changes(decorator=_add_static_argnames(expr, static))
        call = cst.Call(func=expr, args=[_static_arg(static)])
        return updated_node.with_changes(decorator=call)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        entry = self.compile_calls.get(original_node)
        if entry is not None:
            static = _static_names(*entry)
            if static:
                updated_node = _add_static_argnames(updated_node, static)
        fix = self.inline_calls.get(original_node)
        if fix is not None:
            updated_node = updated_node.with_changes(
                args=[*updated_node.args, *_lifted_arguments(fix)]
            )
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        entry = self.assignments.get(original_node)
        if entry is None:
            return updated_node
        fix, site = entry
        assign = updated_node.body[0]
        assert isinstance(assign, (cst.Assign, cst.AnnAssign))
        target = cst.Name(fix.compiled_name)
        if isinstance(assign, cst.Assign):
            renamed: cst.BaseSmallStatement = assign.with_changes(
                targets=[cst.AssignTarget(target)]
            )
        else:
            renamed = assign.with_changes(target=target)
        function = fix.function
        params = function.params
        returns = function.returns if isinstance(function, cst.FunctionDef) else None
        docstring = _docstring(function) if isinstance(function, cst.FunctionDef) else None
        assert site.bound_name is not None
        wrapper = self._wrapper(fix, site, site.bound_name, params, returns, docstring)
        return cst.FlattenSentinel([updated_node.with_changes(body=[renamed]), wrapper])

    def _wrapper(
        self,
        fix: FunctionFix,
        site: CompiledFunction,
        name: str,
        params: cst.Parameters,
        returns: cst.Annotation | None,
        docstring: str | None,
    ) -> cst.BaseStatement:
        code = self.module.code_for_node
        signature = code(params)
        annotation = f" -> {code(returns.annotation)}" if returns is not None else ""
        forwarded = _forwarded(params)
        target = fix.compiled_name
        if fix.method_self is not None:
            # A method: the wrapper calls the compiled method through its own ``self``.
            forwarded, target = forwarded[1:], f"{fix.method_self}.{fix.compiled_name}"
        arguments = ", ".join(
            [*forwarded, *(f"{lift.parameter}={lift.value_code}" for lift in fix.lifts)]
        )
        indent = self.module.default_indent
        body = f"{indent}{docstring}\n" if docstring else ""
        source = (
            f"def {name}({signature}){annotation}:\n{body}{indent}return {target}({arguments})\n"
        )
        wrapper = cst.parse_statement(source, config=self.module.config_for_parsing)
        wrapper = wrapper.with_changes(leading_lines=_blank_lines(site.site_scope))
        self.wrappers.add(id(wrapper))
        return wrapper

    # -- blank lines after an inserted wrapper --------------------------------------------------

    def _space_after_wrappers(
        self, body: Sequence[cst.BaseStatement], blank_lines: int
    ) -> list[cst.BaseStatement]:
        """Give the statement after an inserted wrapper the blank lines a definition wants."""
        spaced = list(body)
        for index in range(1, len(spaced)):
            statement = spaced[index]
            if id(spaced[index - 1]) not in self.wrappers:
                continue
            leading = list(getattr(statement, "leading_lines", ()))
            missing = blank_lines - sum(1 for _ in _takewhile_blank(leading))
            if missing > 0:
                blank = [cst.EmptyLine(indent=False)] * missing
                spaced[index] = statement.with_changes(leading_lines=[*blank, *leading])
        return spaced

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._space_after_wrappers(updated_node.body, 1))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._space_after_wrappers(updated_node.body, 2))


def _takewhile_blank(lines: Sequence[cst.EmptyLine]) -> Iterable[cst.EmptyLine]:
    for line in lines:
        if line.comment is not None:
            return
        yield line


def _blank_lines(scope: Scope) -> list[cst.EmptyLine]:
    return [cst.EmptyLine(indent=False)] * (2 if scope.kind is ScopeKind.MODULE else 1)


def _with_keyword_only(params: cst.Parameters, lifts: Sequence[Lift]) -> cst.Parameters:
    existing = {
        p.name.value for p in (*params.params, *params.kwonly_params, *params.posonly_params)
    }
    added = [
        cst.Param(cst.Name(lift.parameter)) for lift in lifts if lift.parameter not in existing
    ]
    if not added:
        return params
    star_arg = params.star_arg
    if not isinstance(star_arg, (cst.Param, cst.ParamStar)):
        star_arg = cst.ParamStar()
    return params.with_changes(star_arg=star_arg, kwonly_params=[*params.kwonly_params, *added])


def _forwarded(params: cst.Parameters) -> list[str]:
    forwarded = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        forwarded.append(f"*{params.star_arg.name.value}")
    forwarded.extend(f"{p.name.value}={p.name.value}" for p in params.kwonly_params)
    if params.star_kwarg is not None:
        forwarded.append(f"**{params.star_kwarg.name.value}")
    return forwarded


def _lifted_arguments(fix: FunctionFix) -> list[cst.Arg]:
    return [
        cst.Arg(
            keyword=cst.Name(lift.parameter),
            value=cst.parse_expression(lift.value_code),
            equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""),
                whitespace_after=cst.SimpleWhitespace(""),
            ),
        )
        for lift in fix.lifts
    ]


def _static_names(fix: FunctionFix, site: CompiledFunction) -> list[str]:
    if site.transform in _STATIC_BY_ITSELF:
        return []
    return [lift.parameter for lift in fix.lifts if lift.static]


def _static_arg(names: Sequence[str]) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name("static_argnames"),
        value=cst.parse_expression(_string_tuple(names)),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


def _string_tuple(names: Sequence[str]) -> str:
    quoted = ", ".join(f'"{name}"' for name in names)
    return f"({quoted},)" if len(names) == 1 else f"({quoted})"


def _add_static_argnames(call: cst.Call, names: Sequence[str]) -> cst.Call:
    args = list(call.args)
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == "static_argnames":
            value = arg.value
            if isinstance(value, cst.SimpleString):
                merged = f"({value.value}, " + ", ".join(f'"{n}"' for n in names) + ")"
            elif isinstance(value, (cst.Tuple, cst.List)) and value.elements:
                inner = ", ".join(cst.Module([]).code_for_node(e.value) for e in value.elements)
                merged = f"({inner}, " + ", ".join(f'"{n}"' for n in names) + ")"
            else:
                merged = (
                    f"(*{cst.Module([]).code_for_node(value)}, "
                    + ", ".join(f'"{n}"' for n in names)
                    + ")"
                )
            args[index] = arg.with_changes(value=cst.parse_expression(merged))
            return call.with_changes(args=args)
    return call.with_changes(args=[*args, _static_arg(names)])


def _docstring(function: FunctionNode) -> str | None:
    if not isinstance(function, cst.FunctionDef) or not isinstance(
        function.body, cst.IndentedBlock
    ):
        return None
    body = function.body.body
    if body and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1:
        statement = body[0].body[0]
        if isinstance(statement, cst.Expr) and isinstance(
            statement.value, (cst.SimpleString, cst.ConcatenatedString)
        ):
            return cst.Module([]).code_for_node(statement.value)
    return None


def apply_fixes(module: cst.Module, fixes: Iterable[FunctionFix]) -> str:
    return module.visit(LiftTransformer(module, fixes)).code


def text_edits(before: str, after: str) -> tuple[Edit, ...]:
    """Line-granular edits that turn ``before`` into ``after``."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    edits = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            edits.append(Edit(i1 + 1, 0, i2 + 1, 0, "".join(new[j1:j2])))
    return tuple(edits)
