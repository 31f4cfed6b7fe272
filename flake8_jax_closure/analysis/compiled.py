"""Which functions are compiled: decorators and calls of a compile transform, resolved through
imports and aliases, and the function each one compiles."""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterator
from dataclasses import dataclass, field

from .facts.model import BindingKind, Pos, Scope, ScopeKind
from .facts.queries import Facts
from .names import PARTIAL, PASSTHROUGH_TRANSFORMS, last_component
from .receiver import method_self_name

# Decorators that make a function return what its first call with equal arguments returned.
MEMOISING = frozenset({"functools.lru_cache", "functools.cache"})

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


class Form(enum.Enum):
    DECORATOR = "decorator"  # @jax.jit def f(...)
    ASSIGNED = "assigned"  # g = jax.jit(f)
    INLINE = "inline"  # jax.jit(f)(x)
    PASSED = "passed"  # return jax.jit(f), Model(step=jax.jit(f)), ...


@dataclass(eq=False)
class CompiledFunction:
    function: FunctionNode = field(repr=False)
    scope: Scope = field(repr=False)  # the compiled function's own scope
    transform: str  # qualified name of the compile transform, as the user knows it
    form: Form
    # The decorator, or the call of the transform that makes the compiled object.
    site: ast.expr = field(repr=False)
    # The scope where the compiled object is created and bound, and from when it exists.
    site_scope: Scope = field(repr=False)
    created_at: Pos
    created_loops: tuple[ast.AST, ...] = field(repr=False)
    bound_name: str | None
    # The compile call itself, with its options (static_argnums, ...), where there is one.
    transform_call: ast.Call | None = field(repr=False)
    # The project's own decorator that compiles the function (``@compiled`` of a ``def
    # compiled(fn)`` calling ``jax.jit(fn)``): the fix cannot change how it calls.
    made_by: str | None = None

    @property
    def name(self) -> str:
        if isinstance(self.function, ast.Lambda):
            return self.bound_name or "<lambda>"
        return self.function.name


class CompiledFunctionFinder:
    """Finds compiled functions in one module's facts."""

    def __init__(self, facts: Facts, compile_functions: frozenset[str]) -> None:
        self.facts = facts
        self.compile_functions = compile_functions
        self._names: set[str] | None = None

    def compile_transform(
        self, scope: Scope, expr: ast.expr, depth: int = 0
    ) -> tuple[str, ast.Call | None] | None:
        """The compile transform ``expr`` applies when used as a decorator, with its options call.

        Accepts ``jax.jit``, ``jax.jit(static_argnums=0)`` (no function given yet) and
        ``partial(jax.jit, static_argnums=0)``, and a name that holds one of them for good
        (``jit = jax.jit``, ``fast_jit = partial(jax.jit, static_argnums=1)``).
        """
        name = self.facts.qualified_name(scope, expr)
        if name in self.compile_functions:
            return name, None
        if isinstance(expr, ast.Name) and depth < 4:
            kept = self._kept_transform(scope, expr)
            return None if kept is None else self.compile_transform(kept[0], kept[1], depth + 1)
        if not isinstance(expr, ast.Call):
            return None
        callee = self.facts.qualified_name(scope, expr.func)
        if callee in self.compile_functions and not positional(expr):
            return callee, expr
        if callee == PARTIAL and expr.args and not isinstance(expr.args[0], ast.Starred):
            inner = self.facts.qualified_name(scope, expr.args[0])
            if inner in self.compile_functions:
                return inner, expr
        return None

    def _kept_transform(self, scope: Scope, name: ast.Name) -> tuple[Scope, ast.expr] | None:
        """What a name bound once, by a plain assignment, holds (``jit = jax.jit``): the
        value and the scope it is written in. A name bound again (``jit = lambda f: f`` to
        debug) or in several ways may hold anything at the decorator."""
        owner = self.facts.resolve(scope, name.id)
        bindings = self.facts.bindings_of(owner, name.id)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.ASSIGN:
            return None
        value = bindings[0].value
        if value is None or not isinstance(value, (ast.Name, ast.Attribute, ast.Call)):
            return None
        if self.facts.mutations_of(owner, name.id):
            return None
        return owner, value

    def function_behind(self, scope: Scope, expr: ast.expr, depth: int = 0) -> FunctionNode | None:
        """The function a compile call compiles: a lambda, a def named once, or either through
        transforms that do not cache (``jax.grad(f)``)."""
        if depth > 8:
            return None
        if isinstance(expr, ast.Lambda):
            return expr
        if isinstance(expr, ast.Name):
            owner = self.facts.resolve(scope, expr.id)
            bindings = self.facts.bindings_of(owner, expr.id)
            if scope is owner:
                # Straight-line code (a notebook redefining ``loss``): the binding in force here.
                at = (expr.lineno, expr.col_offset)
                before = [b for b in bindings if b.at < at]
                bindings = before[-1:] if before else bindings
            defs = [b.node for b in bindings if b.kind is BindingKind.DEF]
            only = defs[0] if len(defs) == 1 else None
            return only if isinstance(only, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        if isinstance(expr, ast.Call):
            callee = self.facts.qualified_name(scope, expr.func)
            arguments = positional(expr)
            if callee in PASSTHROUGH_TRANSFORMS and arguments:
                return self.function_behind(scope, arguments[0], depth + 1)
            return self.memoised_result(scope, expr)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            return self._static_method(scope, expr.value.id, expr.attr)
        return None

    def memoised_result(self, scope: Scope, call: ast.Call) -> FunctionNode | None:
        """``make_update("sgd")`` of a factory under ``functools.lru_cache`` or
        ``functools.cache``, given only constants, whose body ends by returning a function it
        defines once (``return sgd_update``): that function, the same object on every such
        call."""
        if not isinstance(call.func, ast.Name) or call.keywords:
            return None
        if not all(isinstance(argument, ast.Constant) for argument in call.args):
            return None
        owner = self.facts.resolve(scope, call.func.id)
        bindings = self.facts.bindings_of(owner, call.func.id)
        factory = bindings[0].node if len(bindings) == 1 else None
        if not isinstance(factory, ast.FunctionDef) or not any(
            self.facts.qualified_name(owner, d.func if isinstance(d, ast.Call) else d) in MEMOISING
            for d in factory.decorator_list
        ):
            return None
        last = factory.body[-1]
        if not isinstance(last, ast.Return) or not isinstance(last.value, ast.Name):
            return None
        name = last.value.id
        made = [
            statement
            for statement in ast.walk(factory)
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            and statement is not factory
        ]
        defs = [d for d in made if isinstance(d, ast.FunctionDef) and d.name == name]
        stored = [
            node
            for node in ast.walk(factory)
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
        ]
        if len(defs) != 1 or stored or defs[0] not in factory.body:
            return None
        return defs[0]

    def _static_method(self, scope: Scope, owner: str, name: str) -> FunctionNode | None:
        """``self._update`` in a method, or ``Trainer._update``, where the class defines
        ``_update`` once, as a ``@staticmethod``: the plain function, the same object on every
        access (a plain method would be a new bound method each time, found as one)."""
        cls: ast.ClassDef | None = None
        method = scope
        while method.kind is ScopeKind.LAMBDA and method.parent is not None:
            method = method.parent
        if method.parent is not None and method.parent.kind is ScopeKind.CLASS:
            if method_self_name(method) == owner or (
                method.params[:1] == (owner,) and _is_classmethod(method.node)
            ):
                cls = method.parent.node  # type: ignore[assignment]
        if cls is None:
            bindings = self.facts.bindings_of(self.facts.resolve(scope, owner), owner)
            if len(bindings) == 1 and bindings[0].kind is BindingKind.CLASS:
                node = bindings[0].node
                cls = node if isinstance(node, ast.ClassDef) else None
        if cls is None:
            return None
        found = [
            statement
            for statement in cls.body
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign))
            and _defines(statement, name)
        ]
        if len(found) != 1 or not isinstance(found[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if any(
            any(_defines(statement, name) for statement in subclass.body)
            for subclass in _subclasses(self.facts.tree, cls)
        ):
            return None  # a subclass defines it again: ``self._update`` may be that one
        function = found[0]
        static = any(
            isinstance(decorator, ast.Name) and decorator.id == "staticmethod"
            for decorator in function.decorator_list
        )
        return function if static and len(function.decorator_list) == 1 else None

    # -- the search ----------------------------------------------------------------------------

    def find(self) -> list[CompiledFunction]:
        """Every compile site; a function compiled in several places appears once per site."""
        names = self._spellings()
        return [*self._decorated(), *self._called(names)]

    def bound_methods(
        self,
    ) -> Iterator[tuple[Scope, ast.Call, ast.Attribute, str, tuple[ast.AST, ...]]]:
        """``jax.jit(self.step)``, ``jax.jit(model.step)``: (scope, call, ``self.step``,
        transform, the loops around the call) for every compile call of an attribute."""
        for scope, call, loops in self._candidate_calls(self._spellings()):
            callee = self.facts.qualified_name(scope, call.func)
            if callee is None and isinstance(call.func, ast.Name):
                kept = self.compile_transform(scope, call.func)  # ``jit(self.step)``
                callee = kept[0] if kept is not None and kept[1] is None else None
            arguments = positional(call)
            if callee in self.compile_functions and arguments:
                target = arguments[0]
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                    yield scope, call, target, callee, loops

    def _spellings(self) -> set[str]:
        """The words a compile transform is written with here: ``jit``, and ``J`` after
        ``from jax import jit as J``."""
        if self._names is not None:
            return self._names
        facts = self.facts
        wanted = {last_component(name) for name in self.compile_functions}
        names: set[str] = set()
        while wanted - names:
            new = wanted - names
            names |= new
            facts.ensure_names(new)
            for bindings in facts.bindings.values():
                for binding in bindings:
                    if (
                        binding.kind is BindingKind.IMPORT
                        and binding.imported is not None
                        and last_component(binding.imported) in names
                    ):
                        wanted.add(binding.name)
            for name in new:
                # ``jit = jax.jit``, ``fast_jit = partial(jax.jit, ...)``: the name it is kept in.
                for ref in [*facts.reads.get(name, ()), *facts.attributes.get(name, ())]:
                    kept_in = _name_keeping(facts, ref.node)
                    if kept_in is not None:
                        wanted.add(kept_in)
                    # ``def compiled(fn): ... jax.jit(fn)``: a decorator of the project's own.
                    call = facts.parent(ref.node)
                    scope = ref.scope
                    if (
                        isinstance(call, ast.Call)
                        and call.func is ref.node
                        and scope.kind is ScopeKind.FUNCTION
                        and len(scope.params) == 1
                        and len(call.args) == 1
                        and isinstance(call.args[0], ast.Name)
                        and call.args[0].id in scope.params
                    ):
                        wanted.add(scope.name)
        self._names = names
        return names

    def _decorated(self) -> Iterator[CompiledFunction]:
        for scope, function in self.facts.decorated:
            for decorator in function.decorator_list:
                transform = self.compile_transform(scope, decorator)
                made_by = None
                if transform is None:
                    made_by = self._compiling_decorator(scope, decorator)
                    if made_by is None:
                        continue
                    transform = made_by[0], None
                own_scope = self.facts.scope_of(function)
                yield CompiledFunction(
                    function=function,
                    scope=own_scope,
                    transform=transform[0],
                    form=Form.DECORATOR,
                    site=decorator,
                    site_scope=scope,
                    created_at=(function.end_lineno or 0, function.end_col_offset or 0),
                    created_loops=own_scope.loops,
                    bound_name=function.name,
                    transform_call=transform[1],
                    made_by=made_by[1] if made_by is not None else None,
                )
                break

    def _compiling_decorator(self, scope: Scope, decorator: ast.expr) -> tuple[str, str] | None:
        """The transform a decorator of the project's own applies, and the decorator's name:
        a ``def`` bound once that compiles the one function it is given, without options,
        and returns the compiled object or a wrapper calling it::

            def compiled(fn):
                jitted = jax.jit(fn)

                @functools.wraps(fn)
                def wrapper(*args):
                    return jitted(*args)

                return wrapper

        Each decorated function gets its own compiled object when it is defined."""
        if not isinstance(decorator, ast.Name):
            return None
        facts = self.facts
        bindings = facts.bindings_of(facts.resolve(scope, decorator.id), decorator.id)
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.DEF:
            return None
        node = bindings[0].node
        if not isinstance(node, ast.FunctionDef) or node.decorator_list:
            return None
        arguments = node.args
        if len(arguments.args) != 1 or arguments.posonlyargs or arguments.kwonlyargs:
            return None
        if arguments.vararg or arguments.kwarg:
            return None
        given = arguments.args[0].arg
        inner = facts.scope_of(node)
        compiled: dict[str, str] = {}  # the names holding the compiled function
        wrappers: dict[str, str] = {}  # nested defs calling one, by name: the transform
        *body, last = node.body
        for statement in body:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                continue  # the docstring
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                transform = self._compiling_call(inner, statement.value, given)
                if isinstance(target, ast.Name) and transform is not None:
                    compiled[target.id] = transform
                    continue
                if isinstance(target, ast.Attribute):
                    continue  # ``wrapper.jitted = jitted``
                return None
            if isinstance(statement, ast.FunctionDef):
                called = {
                    n.func.id
                    for n in ast.walk(statement)
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                }
                transforms = {compiled[name] for name in called & compiled.keys()}
                if len(transforms) == 1:
                    wrappers[statement.name] = transforms.pop()
                continue
            return None
        if not isinstance(last, ast.Return) or last.value is None:
            return None
        returned = last.value
        if isinstance(returned, ast.Name):
            transform = compiled.get(returned.id) or wrappers.get(returned.id)
        else:
            transform = self._compiling_call(inner, returned, given)
        if transform is None or len(facts.bindings_of(inner, given)) != 1:
            return None  # the parameter bound again: another function compiled
        return transform, node.name

    def _compiling_call(self, scope: Scope, value: ast.expr | None, given: str) -> str | None:
        """The transform of ``jax.jit(fn)``, given only the parameter ``fn``."""
        if not isinstance(value, ast.Call) or value.keywords or len(value.args) != 1:
            return None
        argument = value.args[0]
        if not (isinstance(argument, ast.Name) and argument.id == given):
            return None
        transform = self._transform_of_call(scope, value)
        if transform is None or transform[1] is not value:
            return None  # ``partial(jax.jit, static_argnums=1)(fn)``: options
        return transform[0]

    def _candidate_calls(
        self, names: set[str]
    ) -> Iterator[tuple[Scope, ast.Call, tuple[ast.AST, ...]]]:
        """Calls that may apply a compile transform: ``jit(f)``, ``jit(...)(f)``,
        ``partial(jit, ...)(f)``, found from the words that name the transform."""
        facts = self.facts
        seen: set[int] = set()
        for name in names:
            refs = [*facts.reads.get(name, ()), *facts.attributes.get(name, ())]
            for ref in refs:
                parent = facts.parent(ref.node)
                if not isinstance(parent, ast.Call):
                    continue
                if parent.func is ref.node:
                    outer = facts.parent(parent)
                    call = parent
                    if (
                        isinstance(outer, ast.Call)
                        and outer.func is parent
                        and not positional(parent)
                    ):
                        call = outer
                elif parent.args and parent.args[0] is ref.node:
                    outer = facts.parent(parent)
                    if not (isinstance(outer, ast.Call) and outer.func is parent):
                        continue
                    call = outer
                else:
                    continue
                if id(call) not in seen:
                    seen.add(id(call))
                    yield ref.scope, call, ref.loops

    def _called(self, names: set[str]) -> Iterator[CompiledFunction]:
        for scope, call, loops in self._candidate_calls(names):
            transform = self._transform_of_call(scope, call)
            if transform is None:
                continue
            arguments = positional(call)
            target = arguments[0] if arguments else keyword(call, "fun")
            if target is None:
                continue
            function = self.function_behind(scope, target)
            if function is None:
                continue
            yield self.call_form(scope, call, function, transform, loops)

    def _transform_of_call(
        self, scope: Scope, call: ast.Call
    ) -> tuple[str, ast.Call | None] | None:
        callee = self.facts.qualified_name(scope, call.func)
        if callee in self.compile_functions:
            return callee, call
        if isinstance(call.func, ast.Call):
            # ``partial(jax.jit, static_argnums=0)(f)`` or ``jax.jit(static_argnums=0)(f)``.
            return self.compile_transform(scope, call.func)
        if isinstance(call.func, ast.Name):
            # ``jit(f)`` after ``jit = jax.jit``: the call is the compile call, with its options;
            # ``fast_jit(f)`` after ``fast_jit = partial(jax.jit, ...)``: the options are there.
            transform = self.compile_transform(scope, call.func)
            if transform is not None:
                return transform[0], transform[1] or call
        return None

    def call_form(
        self,
        scope: Scope,
        call: ast.Call,
        function: FunctionNode,
        transform: tuple[str, ast.Call | None],
        loops: tuple[ast.AST, ...],
    ) -> CompiledFunction:
        parent = self.facts.parent(call)
        form, bound_name = Form.PASSED, None
        created_at: Pos = (call.lineno, call.col_offset)
        if isinstance(parent, ast.Call) and parent.func is call:
            form = Form.INLINE
        elif isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is call:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                form, bound_name = Form.ASSIGNED, targets[0].id
                created_at = (parent.end_lineno or 0, parent.end_col_offset or 0)
        return CompiledFunction(
            function=function,
            scope=self.facts.scope_of(function),
            transform=transform[0],
            form=form,
            site=call,
            site_scope=scope,
            created_at=created_at,
            created_loops=loops,
            bound_name=bound_name,
            transform_call=transform[1],
        )


def _name_keeping(facts: Facts, node: ast.AST) -> str | None:
    """The name ``node`` is assigned to, as the whole value (``jit = jax.jit``) or as the
    function a call of ``partial`` is given (``fast_jit = partial(jax.jit, ...)``)."""
    parent = facts.parent(node)
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
        node, parent = parent, facts.parent(parent)
    if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1:
        target = parent.targets[0]
        if isinstance(target, ast.Name):
            return target.id
    return None


def positional(call: ast.Call) -> list[ast.expr]:
    return [arg for arg in call.args if not isinstance(arg, ast.Starred)]


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    for item in call.keywords:
        if item.arg == name:
            return item.value
    return None


def self_is_static(site: CompiledFunction, self_name: str) -> bool:
    """``partial(jax.jit, static_argnums=0)`` (or ``static_argnames="self"``): the first
    parameter is hashed into the cache key, never traced."""
    call = site.transform_call
    if call is None:
        return False
    for keyword in call.keywords:
        value = keyword.value
        elements = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
        constants = [e.value for e in elements if isinstance(e, ast.Constant)]
        if keyword.arg == "static_argnums" and any(
            c == 0 and not isinstance(c, bool) for c in constants
        ):
            return True
        if keyword.arg == "static_argnames" and self_name in constants:
            return True
    return False


def _defines(statement: ast.stmt, name: str) -> bool:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return statement.name == name
    return isinstance(statement, ast.Assign) and any(
        isinstance(target, ast.Name) and target.id == name for target in statement.targets
    )


def _is_classmethod(node: ast.AST) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(decorator, ast.Name) and decorator.id == "classmethod"
        for decorator in node.decorator_list
    )


def _subclasses(tree: ast.AST, cls: ast.ClassDef) -> list[ast.ClassDef]:
    """The classes of the module derived from ``cls``, by the names of their bases."""
    classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    derived, found = {cls.name}, []
    changed = True
    while changed:
        changed = False
        for other in classes:
            if other is cls or other in found:
                continue
            bases = {last_component(ast.unparse(base)) for base in other.bases}
            if bases & derived:
                derived.add(other.name)
                found.append(other)
                changed = True
    return found
