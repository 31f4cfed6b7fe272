"""Cheap first pass: prove, with the standard library's ``ast``, that a file has nothing to report.

The full analysis (libcst, positions, scopes, timing) costs far more than parsing with ``ast``.
A finding needs three things, and this pass over-approximates each:

1. a compiled function: a decorator or call whose callee's last name is a compile transform or a
   name imported as one (``jit``, ``J`` after ``from jax import jit as J``, ...);
2. a name that function (or anything nested in it) reads without binding it itself;
3. a change to that name: a second binding in one scope (module code before the first compile
   site only initialises), a binding in a loop, a ``global``/``nonlocal`` declaration, or an
   in-place mutation rooted at that name.

If no compiled function reads a name that changes, the file is clean and libcst never sees it.
The walk visits statements, not every expression: expressions are searched only on lines that
name a compile transform, and the few changes that hide inside expressions (``d.pop(k)``,
``x := ...``) are found in the text. Whenever the pass is unsure it answers "analyse": it may
only remove work, never findings.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable

from .names import last_component
from .scopes import MUTATING_METHODS_RETURNING_NONE, MUTATING_METHODS_RETURNING_VALUE

_MUTATING = MUTATING_METHODS_RETURNING_NONE | MUTATING_METHODS_RETURNING_VALUE
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_SCOPES = (*_FUNCTIONS, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

# Changes inside expressions, found in the text: ``d.pop(k)``-like calls, assignment expressions.
_EXPRESSION_MUTATIONS = re.compile(
    r"\b([A-Za-z_]\w*)(?:\.\w+|\[[^\]\n]*\])*\.(?:pop|popitem|setdefault|popleft)\("
)
_WALRUS = re.compile(r"\b([A-Za-z_]\w*)\s*:=")


def _expression_changes(source: str) -> set[str]:
    """Roots of ``d.pop(k)``-like calls and targets of ``:=``, on the few lines that have them."""
    names: set[str] = set()
    if ".pop" in source or ".setdefault(" in source:
        for line in source.splitlines():
            if ".pop" in line or ".setdefault(" in line:
                names.update(_EXPRESSION_MUTATIONS.findall(line))
    if ":=" in source:
        names.update(_WALRUS.findall(source))
    return names


def needs_analysis(
    source: str, compile_functions: Iterable[str], tree: ast.Module | None = None
) -> bool:
    """False only when the file provably has no finding; True when it may have one.

    ``tree`` is the source's ``ast`` when the caller has it already (flake8 does).
    """
    try:
        tree = tree if isinstance(tree, ast.Module) else ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True  # the real parser reports it
    try:
        walk = _StatementWalk(tree, source, {last_component(n) for n in compile_functions})
        if not walk.compiled and not walk.held_methods:
            return False
        read = set().union(*(_free_names(function) for function in walk.compiled))
        anywhere, module_code = walk.changes()
        if read & anywhere:
            return True
        # Compiled code that holds ``self`` (JC104): an attribute it reads (directly, or through
        # a method or property) changes somewhere.
        held = [*walk.compiled, *walk.held_methods]
        attributes = set().union(*(_self_attributes(f, walk.method_selves) for f in held))
        if attributes & (walk.mutated_attributes | set(walk.methods)):
            return True
        # A change in module code counts only after module code used the compiled function.
        return bool(read & module_code) and walk.module_code_uses_compiled(tree)
    except RecursionError:
        return True


def _callee_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _mentions(node: ast.expr, names: set[str]) -> bool:
    """``jit``, ``jax.jit``, ``jit(...)``, ``partial(jax.jit, ...)``."""
    if _callee_name(node) in names:
        return True
    if isinstance(node, ast.Call):
        return any(_callee_name(argument) in names for argument in node.args[:1])
    return False


def _first_line(node: ast.AST) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    line: int = getattr(node, "lineno", 0)
    return min([d.lineno for d in decorators] or [line])


def _first_attribute(expr: ast.expr) -> list[str]:
    """``attr`` for ``obj.attr = ...`` or ``obj.attr[k] = ...``: the step right above the root."""
    step = None
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        step, expr = expr, expr.value
    return [step.attr] if isinstance(step, ast.Attribute) and isinstance(expr, ast.Name) else []


def _self_attributes(function: ast.AST, selves: set[str]) -> set[str]:
    """Attributes read on a method's ``self`` (any first-parameter name) inside ``function``."""
    return {
        node.attr
        for node in ast.walk(function)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in selves
    }


def _loads(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stored_names(node: ast.AST) -> set[str]:
    return {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }


def _root(expr: ast.expr) -> str | None:
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


class _StatementWalk:
    def __init__(self, tree: ast.Module, source: str, compile_names: set[str]) -> None:
        self.names = compile_names | self._aliases(tree, compile_names)
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(self.names))) + r")\b")
        self.compile_lines = {
            number
            for number, line in enumerate(source.splitlines(), start=1)
            if pattern.search(line)
        }
        self.definitions: dict[str, list[ast.AST]] = {}
        self.compiled: list[ast.AST] = []
        # (name, scope id, line or 0 when it may run again or after any compile site)
        self.bindings: list[tuple[str, int, int]] = []
        self.mutations: list[tuple[str, int, int]] = []  # root name, scope id, line or 0
        # Names declared global or nonlocal, and names changed inside expressions.
        self.declared: set[str] = _expression_changes(source)
        # First parameters of methods, and whether a compiled method with static arguments or
        # a compiled bound method (``jax.jit(self.step)``) holds ``self``.
        self.method_selves: set[str] = set()
        self.methods: dict[str, ast.AST] = {}
        self.held_methods: list[ast.AST] = []  # methods compiled bound: ``jax.jit(self.m)``
        self.mutated_attributes: set[str] = set()
        self.imported: set[str] = set()
        # Functions around each definition and compile call: only they can own a captured local.
        self._enclosing: list[int] = []
        self.enclosing: dict[int, tuple[int, ...]] = {}
        calls: list[ast.Call] = []
        self._body(tree.body, 0, in_loop=False, module=True, calls=calls)
        # Module code before the first compile site runs before any trace: it only initialises.
        sites = [getattr(call, "lineno", 0) for call in calls]
        for function in self.compiled:
            decorators = getattr(function, "decorator_list", [])
            sites.append(min([d.lineno for d in decorators] or [getattr(function, "lineno", 0)]))
        self.threshold = min(sites, default=0)
        for call in calls:
            first = call.args[0] if call.args else None
            if (
                isinstance(first, ast.Attribute)
                and isinstance(first.value, ast.Name)
                and first.attr in self.methods  # jax.jit(jnp.sin) holds no object
            ):
                self.held_methods.append(self.methods[first.attr])
            for argument in [*call.args, *(k.value for k in call.keywords)]:
                for inner in ast.walk(argument):
                    if isinstance(inner, ast.Lambda):
                        self.compiled.append(inner)
                        self.enclosing[id(inner)] = self.enclosing.get(id(call), ())
                    elif isinstance(inner, ast.Name):
                        self.compiled.extend(self.definitions.get(inner.id, ()))
        # For each function holding compiled code, the line of its first compile site: its own
        # code before that line only initialises (as module code before the first site does).
        self.owner_threshold: dict[int, int] = {}
        starts: list[tuple[ast.AST, int]] = [(call, call.lineno) for call in calls]
        starts += [(f, _first_line(f)) for f in self.compiled if id(f) in self.enclosing]
        for node, line in starts:
            for owner in self.enclosing.get(id(node), ()):
                self.owner_threshold[owner] = min(self.owner_threshold.get(owner, line), line)
        self.closure_owners = set(self.owner_threshold)

    @staticmethod
    def _aliases(tree: ast.Module, names: set[str]) -> set[str]:
        aliases: set[str] = set()
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                aliases.update(
                    a.asname for a in node.names if a.asname and last_component(a.name) in names
                )
        return aliases

    def changes(self) -> tuple[set[str], set[str]]:
        """Names that change where it can matter at any time (in functions, loops, under
        ``global``), and names that change only in straight module code after a compile site."""
        counts: Counter[tuple[str, int]] = Counter()
        late: dict[tuple[str, int], bool] = {}  # key -> some late binding runs in a function/loop
        for name, scope, line in self.bindings:
            key = (name, scope)
            counts[key] += 1
            if self._late(line, scope):
                late[key] = late.get(key, False) or line == 0
        anywhere = set(self.declared)
        module_code: set[str] = set()
        for key, count in counts.items():
            # A local of a function that holds no compiled function is nobody's capture.
            if count > 1 and key in late and (key[1] == 0 or key[1] in self.closure_owners):
                (anywhere if late[key] or key[1] != 0 else module_code).add(key[0])
        for name, scope, line in self.mutations:
            if scope != 0 and (name, scope) in counts:
                # A local of that function: only a closure owner's local can be captured.
                if scope in self.closure_owners and self._late(line, scope):
                    anywhere.add(name)
            elif line == 0 or scope != 0:
                anywhere.add(name)  # in a loop, or on an outer variable from a function
            elif self._late(line, scope):
                module_code.add(name)
        return anywhere, module_code

    def module_code_uses_compiled(self, tree: ast.Module) -> bool:
        """Whether module code after the first compile site may call a compiled function, or a
        function or class that reaches one (the timing rule of the full analysis, coarsely)."""
        callers = {getattr(f, "name", "") for f in self.compiled} - {""}
        loads_by_definition: dict[str, set[str]] = {}
        statements: list[ast.stmt] = []
        pending = list(tree.body)
        while pending:
            node = pending.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                loads_by_definition[node.name] = _loads(node)
            elif isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.Try)):
                statements.append(node)
            else:
                statements.append(node)
                if node.lineno in self.compile_lines:
                    callers.update(_stored_names(node))
        changed = True
        while changed:
            changed = False
            for name, loads in loads_by_definition.items():
                if name not in callers and loads & callers:
                    callers.add(name)
                    changed = True
        for statement in statements:
            if statement.lineno < self.threshold and statement.end_lineno is not None:
                if statement.end_lineno < self.threshold:
                    continue
            if _loads(statement) & callers or statement.lineno in self.compile_lines:
                return True
        return False

    # -- statements ------------------------------------------------------------------------------

    def _late(self, line: int, scope: int) -> bool:
        threshold = self.threshold if scope == 0 else self.owner_threshold.get(scope, 0)
        return line == 0 or line >= threshold

    @staticmethod
    def _line(node: ast.AST, module: bool, in_loop: bool) -> int:
        """The line that decides whether it runs before every trace; 0 when it may run again."""
        return 0 if in_loop else getattr(node, "lineno", 0)

    def _bind(self, name: str, scope: int, node: ast.AST, module: bool, in_loop: bool) -> None:
        entry = (name, scope, self._line(node, module, in_loop))
        self.bindings.append(entry)
        if in_loop:
            self.bindings.append(entry)  # runs again: a rebinding of itself

    def _target(
        self, target: ast.AST, scope: int, node: ast.AST, module: bool, in_loop: bool
    ) -> None:
        if isinstance(target, ast.Name):
            self._bind(target.id, scope, node, module, in_loop)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element, scope, node, module, in_loop)
        elif isinstance(target, ast.Starred):
            self._target(target.value, scope, node, module, in_loop)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            root = _root(target.value)
            if root is not None:
                self.mutations.append((root, scope, self._line(node, module, in_loop)))
                self.mutated_attributes.update(_first_attribute(target))

    def _search(
        self, parts: Iterable[ast.AST | None], first: int, last: int, calls: list[ast.Call]
    ) -> None:
        if not any(line in self.compile_lines for line in range(first, last + 1)):
            return
        for part in parts:
            if part is None:
                continue
            for inner in ast.walk(part):
                if isinstance(inner, ast.Call) and (
                    _mentions(inner.func, self.names) or _mentions(inner, self.names)
                ):
                    calls.append(inner)
                    self.enclosing[id(inner)] = tuple(self._enclosing)

    def _body(
        self, body: list[ast.stmt], scope: int, in_loop: bool, module: bool, calls: list[ast.Call]
    ) -> None:
        for node in body:
            self._statement(node, scope, in_loop, module, calls)

    def _statement(
        self, node: ast.stmt, scope: int, in_loop: bool, module: bool, calls: list[ast.Call]
    ) -> None:
        line, end = node.lineno, node.end_lineno or node.lineno
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if any(_callee_name(d) == "overload" for d in node.decorator_list):
                return  # typing stubs: the real definition follows before any use
            self._bind(node.name, scope, node, module, in_loop)
            header_end = node.body[0].lineno - 1 if node.body else end
            self._search(node.decorator_list, line, header_end, calls)
            if isinstance(node, ast.ClassDef):
                for method in node.body:
                    if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        arguments = [*method.args.posonlyargs, *method.args.args]
                        if arguments:
                            self.method_selves.add(arguments[0].arg)
                        self.methods[method.name] = method
                self._body(node.body, id(node), False, False, calls)
                return
            self.definitions.setdefault(node.name, []).append(node)
            self.enclosing[id(node)] = tuple(self._enclosing)
            if any(_mentions(d, self.names) for d in node.decorator_list):
                self.compiled.append(node)
            self._search([*node.args.defaults, *node.args.kw_defaults], line, header_end, calls)
            signature = node.args
            for parameter in (*signature.posonlyargs, *signature.args, *signature.kwonlyargs):
                self._bind(parameter.arg, id(node), node, False, False)
            self._enclosing.append(id(node))
            self._body(node.body, id(node), False, False, calls)
            self._enclosing.pop()
            return
        if isinstance(node, (ast.For, ast.AsyncFor)):
            self._search([node.iter], line, node.body[0].lineno, calls)
            self._target(node.target, scope, node, module, True)
            self._body(node.body, scope, True, module, calls)
            self._body(node.orelse, scope, in_loop, module, calls)
        elif isinstance(node, ast.While):
            self._search([node.test], line, node.body[0].lineno, calls)
            self._body(node.body, scope, True, module, calls)
            self._body(node.orelse, scope, in_loop, module, calls)
        elif isinstance(node, ast.If):
            self._search([node.test], line, node.body[0].lineno, calls)
            self._body(node.body, scope, in_loop, module, calls)
            self._body(node.orelse, scope, in_loop, module, calls)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            self._search(
                [item.context_expr for item in node.items], line, node.body[0].lineno, calls
            )
            for item in node.items:
                if item.optional_vars is not None:
                    self._target(item.optional_vars, scope, node, module, in_loop)
            self._body(node.body, scope, in_loop, module, calls)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            self._body(node.body, scope, in_loop, module, calls)  # type: ignore[attr-defined]
            for handler in node.handlers:  # type: ignore[attr-defined]
                if handler.name:
                    self._bind(handler.name, scope, handler, module, in_loop)
                self._body(handler.body, scope, in_loop, module, calls)
            self._body(node.orelse, scope, in_loop, module, calls)  # type: ignore[attr-defined]
            self._body(node.finalbody, scope, in_loop, module, calls)  # type: ignore[attr-defined]
        elif isinstance(node, ast.Match):
            self._search([node.subject], line, end, calls)
            for case in node.cases:
                for inner in ast.walk(case.pattern):
                    name = getattr(inner, "name", None) or getattr(inner, "rest", None)
                    if isinstance(name, str):
                        self._bind(name, scope, node, module, in_loop)
                self._body(case.body, scope, in_loop, module, calls)
        else:
            self._simple(node, scope, in_loop, module, calls, line, end)

    def _simple(
        self,
        node: ast.stmt,
        scope: int,
        in_loop: bool,
        module: bool,
        calls: list[ast.Call],
        line: int,
        end: int,
    ) -> None:
        self._search([node], line, end, calls)
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._target(target, scope, node, module, in_loop)
        elif isinstance(node, ast.AugAssign):
            self._target(node.target, scope, node, module, in_loop)
            self._target(node.target, scope, node, module, in_loop)  # reads, then rebinds
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._target(node.target, scope, node, module, in_loop)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                self._target(target, scope, node, module, in_loop)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                self._bind(name, scope, node, module, in_loop)
                self.imported.add(name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            self.declared.update(node.names)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute) and func.attr in _MUTATING:
                root = _root(func.value)
                if root is not None:
                    self.mutations.append((root, scope, self._line(node, module, in_loop)))
                    self.mutated_attributes.update(_first_attribute(func.value))


def _scope_body(scope: ast.AST) -> list[ast.AST]:
    body = getattr(scope, "body", None)
    if isinstance(body, list):
        return list(body)
    if isinstance(scope, ast.Lambda):
        return [scope.body]
    return list(ast.iter_child_nodes(scope))  # comprehensions


def _free_names(scope: ast.AST) -> set[str]:
    """Names read in ``scope`` or nested scopes and not bound in ``scope`` itself (a superset)."""
    loads: set[str] = set()
    bound: set[str] = set()
    declared: set[str] = set()
    children: list[ast.AST] = []
    if isinstance(scope, _FUNCTIONS):
        arguments = scope.args
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            bound.add(argument.arg)
        for extra in (arguments.vararg, arguments.kwarg):
            if extra is not None:
                bound.add(extra.arg)
    pending = _scope_body(scope)
    while pending:
        node = pending.pop()
        if isinstance(node, _SCOPES):
            children.append(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
                pending.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        pending.extend(ast.iter_child_nodes(node))
    local = bound - declared
    free = loads - local
    for child in children:
        inner = _free_names(child)
        # Class bodies do not hide names from the functions inside them: keep what they read.
        free |= inner if isinstance(scope, ast.ClassDef) else inner - local
    return free
