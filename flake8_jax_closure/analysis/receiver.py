"""What a method call on an object reads of it: ``model.forward(x, params)`` on ``model =
Force(3)``, where ``Force.forward`` reads ``self.n``, reads ``model.n`` and nothing else of it.

A change of another attribute (``model.params = ...`` in the training loop, while the
compiled loss is given the parameters as an argument) then never reaches the trace. Followed
only where the code shows everything the method does with ``self``: its attributes, methods
of the same class called or read as properties, and functions the class's methods keep in an
attribute (``self.forward = partial(forward, nn=2)`` after ``def forward(...)`` in the
constructor), which read what their code reads of ``self``. ``self`` handed anywhere else,
or a method the class does not define itself (inherited, or looked up by name), may read
anything.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass

from .facts.model import BindingKind, Scope, ScopeKind, assignment
from .facts.queries import Facts
from .names import assigned_targets

_METHODS_FOLLOWED = 32  # past this many methods, the call is taken to read anything
# Calls that wrap a function into another that calls it (what they are given is read when
# they are made, not when the result is called).
_FUNCTION_WRAPPERS = frozenset(
    {
        "functools.partial", "jax.vmap", "jax.pmap", "jax.jit", "jax.checkpoint", "jax.remat",
        "jax.grad", "jax.value_and_grad", "jax.jacfwd", "jax.jacrev", "jax.hessian",
    }
)  # fmt: skip


@dataclass(frozen=True)
class _Body:
    """Code that runs when the object's method or kept function is called: ``scope``, in
    which ``self_name`` of ``owner`` (the method ``self`` belongs to) is the object."""

    scope: Scope
    owner: Scope
    self_name: str


def method_self_name(scope: Scope) -> str | None:
    """The name of ``self`` when ``scope`` is a plain method of a class (not static or class)."""
    node = scope.node
    if scope.parent is None or scope.parent.kind is not ScopeKind.CLASS:
        return None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod"):
            return None
    return scope.params[0] if node.args.posonlyargs or node.args.args else None


def called_method(facts: Facts, receiver: ast.AST) -> str | None:
    """``forward`` for ``receiver.forward(...)``, ``__call__`` for ``receiver(...)``."""
    parent = facts.parent(receiver)
    if isinstance(parent, ast.Call) and parent.func is receiver:
        return "__call__"
    if isinstance(parent, ast.Attribute) and parent.value is receiver:
        call = facts.parent(parent)
        if isinstance(call, ast.Call) and call.func is parent:
            return parent.attr
    return None


def paths_read_by(facts: Facts, cls: Scope, method: str) -> list[tuple[str, ...]] | None:
    """The attribute paths of ``self`` (``(".n",)``) that calling ``method`` of ``cls``
    reads, through the class's own methods and the functions they keep in attributes; None
    when it may read anything."""
    methods = _own_methods(cls)
    if hands_itself_on(facts, cls) or _open_class(facts, cls):
        # ``NETS.append(self)``, ``self.me = self``: read back by another route; ``Net.forward
        # = f`` after the class, or a static method storing into an object it is given.
        return None
    # A class with base classes may inherit what a name of ``self`` holds: a method, or a
    # property computed from any attribute. Only attributes its own methods store are data.
    stored = _stored_attributes(methods) if _may_supply(cls) else None
    class_level = _class_level_names(cls)
    paths: set[tuple[str, ...]] = set()
    pending, seen = [method], {method}
    while pending:
        name = pending.pop()
        code = _code_of(facts, methods, name)
        if code is None:
            return None
        paths.update(code.paths)
        for followed in code.follows:
            if followed not in seen:
                seen.add(followed)
                pending.append(followed)
        bodies, done = list(code.bodies), {id(body.scope) for body in code.bodies}
        while bodies:
            body = bodies.pop()
            for attribute, path, helper in _self_attributes(facts, body):
                if helper is not None:
                    if id(helper.scope) not in done:
                        done.add(id(helper.scope))
                        bodies.append(helper)
                elif attribute is None:
                    return None  # ``self`` itself handed on, or a local the code may share
                elif _dunder(attribute) and attribute not in methods:
                    return None  # ``self.__dict__``, ``self.__getattribute__``: anything
                elif attribute in class_level:
                    return None  # ``scale = property(...)`` in the class: may read anything
                elif attribute in methods or _keeps_function(facts, methods, attribute):
                    if attribute not in seen:
                        seen.add(attribute)
                        pending.append(attribute)
                elif not path and _built_for_the_object(facts, methods, attribute):
                    return None  # ``self.step = make_step(self)``, called: may read anything
                elif stored is not None and attribute not in stored:
                    return None  # inherited: a method or property that may read anything
                else:
                    # ``self.scale`` reads ``(".scale",)``; ``self.act(x)``, a function the
                    # object was given, reads the attribute.
                    paths.add(path or (f".{attribute}",))
        if len(seen) > _METHODS_FOLLOWED:
            return None
    # ``self.table = table; self.cfg = table``: a read of one may read what the other holds
    # (the whole of it: ``self.model_cfg = cfg["model"]`` holds a part of ``self.cfg``).
    aliases = _aliased_attributes(methods)
    for path in list(paths):
        for other in aliases.get(path[0], ()):
            paths.add((other,))
    return sorted(paths)


def plain_attribute(cls: Scope, name: str) -> bool:
    """Whether ``obj.name = value`` on an object of ``cls`` only stores the value: not a
    special name (``__dict__``, ``__class__``); the class has no base class, class decorator
    (but a dataclass's) or lookup hook, which may make it a property, and does not bind
    ``name`` (a property's setter runs instead)."""
    if _dunder(name) or _may_supply(cls):
        return False
    for statement in getattr(cls.node, "body", []):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if statement.name in (name, "__setattr__"):
                return False
        for node in (
            ast.walk(statement) if isinstance(statement, ast.Assign | ast.AnnAssign) else ()
        ):
            if isinstance(node, ast.Name) and node.id in (name, "__setattr__"):
                return False
    return True


def setter_stores(cls: Scope, name: str) -> list[str] | None:
    """The attributes ``obj.name = value`` stores on an object of ``cls`` when ``name`` is a
    property whose setter only stores into ``self`` (``self.params, self.opt_state =
    value``); None for anything else (no setter, or one that does more)."""
    if _dunder(name) or _may_supply(cls) or name in _class_level_names(cls):
        return None  # ``state = property(state.fget, other_setter)`` after the ``def``s
    setters = []
    for statement in getattr(cls.node, "body", []):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if statement.name == "__setattr__":
                return None
            if statement.name == name and any(
                isinstance(d, ast.Attribute) and d.attr == "setter"
                for d in statement.decorator_list
            ):
                setters.append(statement)
    if len(setters) != 1:
        return None
    setter = setters[0]
    arguments = setter.args.posonlyargs + setter.args.args
    if len(setter.decorator_list) != 1 or len(arguments) != 2:
        return None
    own = arguments[0].arg
    stored: list[str] = []
    for statement in setter.body:
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # a docstring
        if not isinstance(statement, ast.Assign):
            return None
        for node in ast.walk(statement.value):
            if isinstance(node, (ast.Call, ast.Lambda, ast.NamedExpr)) or (
                isinstance(node, ast.Name) and node.id == own
            ):
                return None  # a call may change anything; ``self`` read or handed on
        for target in statement.targets:
            elements = target.elts if isinstance(target, ast.Tuple) else [target]
            for element in elements:
                if not (
                    isinstance(element, ast.Attribute)
                    and isinstance(element.value, ast.Name)
                    and element.value.id == own
                ):
                    return None
                if not plain_attribute(cls, element.attr):
                    return None  # ``self.__dict__ = value``, another property's setter
                stored.append(element.attr)
    return stored


@dataclass(frozen=True)
class _Code:
    """What calling a method or kept function runs, and what making it read of ``self``."""

    bodies: tuple[_Body, ...]
    paths: tuple[tuple[str, ...], ...] = ()
    # Attributes of ``self`` whose code runs too (``self.step = jax.jit(self._step)``).
    follows: tuple[str, ...] = ()


def _code_of(facts: Facts, methods: dict[str, Scope], name: str) -> _Code | None:
    """The code calling ``name`` on the object runs: the method, or the functions the class's
    methods keep in that attribute; None when the code does not show it (a method sets
    attributes by name: ``setattr(self, "forward", f)``)."""
    scope = methods.get(name)
    if scope is not None:
        self_name = method_self_name(scope)
        if self_name is None or not _plainly_decorated(scope.node):
            return None  # a decorator's wrapper may read anything of ``self``
        return _Code((_Body(scope, scope, self_name),))
    if any(sets_by_name(method.node) for method in methods.values()):
        return None
    stores = list(_stores_of(methods, name))
    if not stores:
        return None
    bodies: list[_Body] = []
    paths: list[tuple[str, ...]] = [(f".{name}",)]  # the function object kept there
    follows: list[str] = []
    for method, self_name, value in stores:
        if value is None:
            return None  # ``self.f += ...``, ``self.f, self.g = ...``: not followed
        kept = _kept_code(facts, method, self_name, value)
        if kept is None:
            return None
        bodies.extend(kept.bodies)
        paths.extend(kept.paths)
        follows.extend(kept.follows)
    return _Code(tuple(bodies), tuple(paths), tuple(follows))


def _keeps_function(facts: Facts, methods: dict[str, Scope], name: str) -> bool:
    """Whether a method of the class stores into ``self.name`` a function it defines (a
    ``def`` or ``lambda``, maybe wrapped: ``partial(forward, nn=2)``), or one of the class's
    methods (``self.step = jax.jit(self._step)``)."""
    for method, self_name, value in _stores_of(methods, name):
        if value is not None:
            inner = _unwrapped(facts, method, value)
            if isinstance(inner, ast.Lambda) or _names_function(facts, method, self_name, inner):
                return True
    return False


def _built_for_the_object(facts: Facts, methods: dict[str, Scope], name: str) -> bool:
    """Whether a store into ``self.name`` may hold something made with the object (``self``
    or another local of the method in its value): called, it may read anything of it."""
    return any(
        value is None or _built_from(facts, method, self_name, value)
        for method, self_name, value in _stores_of(methods, name)
    )


def _names_function(facts: Facts, method: Scope, self_name: str, value: ast.expr) -> bool:
    if isinstance(value, ast.Name):
        return _nested_def(facts, method, value.id) is not None
    return (
        isinstance(value, ast.Attribute)
        and isinstance(value.value, ast.Name)
        and value.value.id == self_name
        and facts.resolve(method, self_name) is method
    )


def _stores_of(
    methods: dict[str, Scope], name: str
) -> Iterator[tuple[Scope, str, ast.expr | None]]:
    """Each store into ``self.name`` in the class's methods: the method, its ``self``, and
    the value (None for a store that is not ``self.name = value`` alone)."""
    for method in methods.values():
        self_name = method_self_name(method)
        if self_name is None:
            continue
        for attribute, value in _stores_on_self(method.node, self_name):
            if attribute == name:
                yield method, self_name, value


@functools.lru_cache(maxsize=1024)
def _stores_on_self(node: ast.AST, self_name: str) -> tuple[tuple[str, ast.expr | None], ...]:
    """Each store into an attribute of ``self_name`` in the function ``node``, in ``ast.walk``
    order: the attribute, and the value (None for a store that is not ``self.x = value``
    alone). Walked once a method: a class's every attribute asks about its stores."""
    found: list[tuple[str, ast.expr | None]] = []
    for node_ in ast.walk(node):
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node_, ast.Assign):
            targets, value = node_.targets, node_.value
        elif isinstance(node_, ast.AnnAssign):
            targets, value = [node_.target], node_.value
        elif isinstance(node_, ast.AugAssign):
            targets = [node_.target]
        for target in targets:
            for element in ast.walk(target):
                if (
                    isinstance(element, ast.Attribute)
                    and isinstance(element.value, ast.Name)
                    and element.value.id == self_name
                ):
                    plain = element is target and len(targets) == 1
                    found.append((element.attr, value if plain else None))
    return tuple(found)


def _unwrapped(facts: Facts, method: Scope, value: ast.expr) -> ast.expr:
    """The function ``partial(forward, nn=2)`` or ``jax.vmap(forward)`` wraps."""
    while (
        isinstance(value, ast.Call)
        and value.args
        and facts.qualified_name(method, value.func) in _FUNCTION_WRAPPERS
    ):
        value = value.args[0]
    return value


def _kept_code(facts: Facts, method: Scope, self_name: str, value: ast.expr) -> _Code | None:
    """What calling the function ``value`` (stored by ``method``) runs, as code of the class:
    a ``def`` or ``lambda`` of the method, or a method of the class, through wrappers whose
    other arguments read attributes of ``self`` at most; nothing for a function the method
    was given or a module function (the attribute itself is read); None when it may be made
    from the object some other way (``make_step(self)``)."""
    if not _built_from(facts, method, self_name, value):
        return _Code(())  # a parameter or a module function: the attribute's value
    paths: list[tuple[str, ...]] = []
    while (
        isinstance(value, ast.Call)
        and value.args
        and facts.qualified_name(method, value.func) in _FUNCTION_WRAPPERS
    ):
        for argument in _other_arguments(value):
            read = _attribute_paths(facts, method, self_name, argument)
            if read is None:
                return None  # ``partial(step, self)``: the object handed on
            paths.extend(read)
        value = value.args[0]
    if isinstance(value, ast.Lambda):
        if _names_a_local(facts, method, value.args):
            return None  # ``lambda x, s=self: ...``: a default made from the method's locals
        return _Code((_Body(facts.scope_of(value), method, self_name),), tuple(paths))
    if isinstance(value, ast.Name):
        nested = _nested_def(facts, method, value.id)
        if nested is None or _made_from_locals(facts, method, nested):
            return None
        return _Code((_Body(nested, method, self_name),), tuple(paths))
    if _names_function(facts, method, self_name, value):
        assert isinstance(value, ast.Attribute)
        # ``self.step = jax.jit(self._step)``: what that method (or kept function) reads.
        return _Code((), tuple(paths), (value.attr,))
    return None


def _attribute_paths(
    facts: Facts, method: Scope, self_name: str, value: ast.expr
) -> list[tuple[str, ...]] | None:
    """The attributes of ``self`` that ``value`` reads (``nn=self.G.nn``); None when it
    hands on ``self`` or another local of the method (a parameter the object may also hold),
    or makes a function."""
    paths: list[tuple[str, ...]] = []
    for node in ast.walk(value):
        if isinstance(node, ast.Lambda):
            return None
        if isinstance(node, ast.Name) and facts.resolve(method, node.id) is method:
            if node.id != self_name:
                return None
            parent = facts.parent(node)
            if not isinstance(parent, ast.Attribute) or parent.value is not node:
                return None
            paths.append((f".{parent.attr}",))
    return paths


def _built_from(facts: Facts, method: Scope, self_name: str, value: ast.expr) -> bool:
    """Whether ``value`` names ``self``, a ``lambda``, or a local of ``method`` other than
    its parameters (a nested ``def``, or what the method made)."""
    for node in ast.walk(value):
        if isinstance(node, ast.Lambda):
            return True
        if isinstance(node, ast.Name) and facts.resolve(method, node.id) is method:
            if node.id == self_name or node.id not in method.params:
                return True
    return False


def _made_from_locals(facts: Facts, method: Scope, nested: Scope) -> bool:
    """Whether the ``def`` of a function ``method`` keeps takes defaults or decorators from
    the method's locals (``def forward(x, s=self)``), evaluated where it is defined."""
    node = nested.node
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return True
    return _names_a_local(facts, method, node.args) or any(
        _names_a_local(facts, method, decorator) for decorator in node.decorator_list
    )


def _names_a_local(facts: Facts, method: Scope, node: ast.AST) -> bool:
    """Whether ``node`` (a ``def``'s or ``lambda``'s arguments with their defaults, or a
    decorator) names a local of ``method``, or gives a default other than a constant
    (``cfg=CONFIG``: an object the class may also hold); annotations aside, only defaults
    are values."""
    values: list[ast.AST] = [node]
    if isinstance(node, ast.arguments):
        values = [*node.defaults, *(d for d in node.kw_defaults if d is not None)]
        if not all(isinstance(value, ast.Constant) for value in values):
            return True
    return any(
        isinstance(name, ast.Name) and facts.resolve(method, name.id) is method
        for value in values
        for name in ast.walk(value)
    )


def _other_arguments(call: ast.Call) -> Iterator[ast.expr]:
    yield from call.args[1:]
    yield from (keyword.value for keyword in call.keywords)


def _nested_def(facts: Facts, method: Scope, name: str) -> Scope | None:
    """The function ``def name`` nested in ``method``, when it is the name's only binding."""
    if facts.resolve(method, name) is not method:
        return None
    bindings = facts.bindings_of(method, name)
    if len(bindings) != 1 or bindings[0].kind is not BindingKind.DEF:
        return None
    found = [c for c in method.children if c.kind is ScopeKind.FUNCTION and c.name == name]
    return found[0] if len(found) == 1 else None


def _self_attributes(
    facts: Facts, body: _Body
) -> Iterator[tuple[str | None, tuple[str, ...], _Body | None]]:
    """Each attribute of ``self`` that ``body`` takes, with the path it reads below the
    object (empty when it calls the attribute); a function of the method that a kept one
    calls, as a body to read too; ``None`` for ``self`` handed on whole, or, in a kept
    function, a read of another local of the method, which the object may also hold (a
    parameter the method stores, or one that is the same object as another)."""
    kept = body.scope is not body.owner
    for read in facts.reads_within(body.scope):
        owner = facts.resolve(read.scope, read.name)
        if owner is facts.module_scope and not _fixed_global(facts, read.name):
            yield None, (), None  # ``model.params`` through the global that holds the object
            continue
        if owner is not body.owner:
            continue
        if read.name != body.self_name:
            if kept:
                nested = _nested_def(facts, body.owner, read.name)
                if nested is not None and not _made_from_locals(facts, body.owner, nested):
                    yield None, (), _Body(nested, body.owner, body.self_name)
                else:
                    yield None, (), None  # a local the object may also hold (``self.t = t``)
            continue
        parent = facts.parent(read.node)
        if not isinstance(parent, ast.Attribute) or parent.value is not read.node:
            yield None, (), None
            continue
        yield parent.attr, read.path, None


# Builtins that reach any global or local by name.
_NAME_LOOKUPS = frozenset({"globals", "locals", "vars", "eval", "exec", "__import__"})
_DEPTH = 3  # module functions followed from one another


def _fixed_global(facts: Facts, name: str, depth: int = _DEPTH) -> bool:
    """A module-level name bound only to an import, a constant or an undecorated ``def``
    that reads only such names itself (or a builtin that looks nothing up by name): reading
    it never reaches an object of the class through a global (``model.params`` in a helper
    ``current_params()``)."""
    bindings = facts.bindings_of(facts.module_scope, name)
    if not bindings:
        return name not in _NAME_LOOKUPS
    for binding in bindings:
        if binding.kind is BindingKind.IMPORT:
            continue
        if binding.kind is BindingKind.ASSIGN and isinstance(binding.value, ast.Constant):
            continue
        if (
            binding.kind is BindingKind.DEF
            and depth > 0
            and _reads_fixed_globals(facts, binding.node, depth - 1)
        ):
            continue
        return False
    return True


def _reads_fixed_globals(facts: Facts, node: ast.AST | None, depth: int) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.decorator_list:
        return False
    scope = facts.scope_of(node)
    return all(
        facts.resolve(read.scope, read.name) is not facts.module_scope
        or _fixed_global(facts, read.name, depth)
        for read in facts.reads_within(scope)
    )


def _plainly_decorated(node: ast.AST) -> bool:
    """A method with no decorator but ``property``: calling it runs its own body."""
    return all(
        isinstance(d, ast.Name) and d.id == "property" for d in getattr(node, "decorator_list", [])
    )


def _open_class(facts: Facts, cls: Scope) -> bool:
    """Whether code outside the class's plain methods may change what its names hold:
    a store into the class object (``Net.forward = f``, ``setattr(Net, ...)``) anywhere in
    the module, or a static or class method storing into an attribute of what it is given."""
    for statement in getattr(cls.node, "body", []):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(
                isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                for d in statement.decorator_list
            ) and _stores_attributes(statement):
                return True
    return patched(facts, cls.name)


def patched(facts: Facts, class_name: str) -> bool:
    """Whether code stores into the class object ``class_name`` (``Net.forward = f``,
    ``setattr(Net, ...)``) anywhere in the module."""
    for node in ast.walk(facts.tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("setattr", "delattr")
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == class_name
        ):
            return True
        for target in targets:
            for element in ast.walk(target):
                if (
                    isinstance(element, ast.Attribute)
                    and isinstance(element.value, ast.Name)
                    and element.value.id == class_name
                ):
                    return True
    return False


def _stores_attributes(function: ast.AST) -> bool:
    for node in ast.walk(function):
        targets = assigned_targets(node)
        if any(isinstance(e, ast.Attribute) for t in targets for e in ast.walk(t)):
            return True
    return False


# Calls whose result holds what they are given (a container, a partial application).
_HOLDING_CALLS = frozenset({"list", "tuple", "dict", "set", "partial"})


def _shared_roots(value: ast.expr) -> Iterator[ast.expr]:
    """What a stored value may share with other objects: the name, or ``self.<attr>``, at the
    root of each reference in it (``cfg["model"]``, ``self.embed.w``), also inside container
    displays and the arguments of a class's constructor (a CamelCase name: ``Schedule(hp)``)
    or a container call; the result of any other call is taken as a new object."""
    if isinstance(value, (ast.Attribute, ast.Subscript)):
        inner = value.value
        while isinstance(inner, (ast.Attribute, ast.Subscript)):
            value, inner = inner, inner.value
        if isinstance(inner, ast.Name):
            # ``self.embed`` for ``self.embed.w``; ``cfg`` for ``cfg["model"]``.
            yield value if isinstance(value, ast.Attribute) else inner
        return
    if isinstance(value, ast.Name):
        yield value
    elif isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        for element in value.elts:
            yield from _shared_roots(element)
    elif isinstance(value, ast.Dict):
        for element in value.values:
            yield from _shared_roots(element)
    elif isinstance(value, ast.Starred):
        yield from _shared_roots(value.value)
    elif isinstance(value, ast.IfExp):
        yield from _shared_roots(value.body)
        yield from _shared_roots(value.orelse)
    elif isinstance(value, ast.BoolOp):
        for element in value.values:
            yield from _shared_roots(element)
    elif isinstance(value, ast.Call):
        func = value.func
        word = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if word in _HOLDING_CALLS or word[:1].isupper():
            for argument in (*value.args, *(k.value for k in value.keywords)):
                yield from _shared_roots(argument)


def attribute_aliases(cls: Scope, name: str) -> tuple[str, ...]:
    """The other attributes of ``cls`` that may hold the object ``name`` holds, or part of
    it (``_aliased_attributes``), as ``.other``."""
    return tuple(sorted(_aliased_attributes(_own_methods(cls)).get(f".{name}", ())))


def _aliased_attributes(methods: dict[str, Scope]) -> dict[str, set[str]]:
    """Attributes that may hold one object, or parts of one, keyed by ``.name``: stored from
    values naming the same local of a method (``self.cfg = cfg; self.model_cfg =
    cfg["model"]``), or one from the other (``self.layers = [Dense(), self.head]``,
    ``self.head_params = self.embed.params``)."""
    groups: dict[str, set[str]] = {}  # a source (a method's local, an attribute) -> stores
    for method in methods.values():
        self_name = method_self_name(method)
        if self_name is None:
            continue
        local = set(method.params) | {
            n.id for n in ast.walk(method.node) if isinstance(n, ast.Name)
            and isinstance(n.ctx, ast.Store)
        }  # fmt: skip
        for node in ast.walk(method.node):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target = node.targets[0]
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                continue
            if target.value.id != self_name:
                continue
            stored = f".{target.attr}"
            groups.setdefault(stored, set()).add(stored)
            for root in _shared_roots(node.value):
                if isinstance(root, ast.Attribute) and isinstance(root.value, ast.Name):
                    if root.value.id == self_name:
                        groups.setdefault(f".{root.attr}", set()).add(stored)
                        continue
                    root = root.value  # ``cfg.model``: what ``cfg`` holds
                if isinstance(root, ast.Name) and root.id != self_name and root.id in local:
                    groups.setdefault(f"{method.name}:{root.id}", set()).add(stored)
    aliases: dict[str, set[str]] = {}
    for source, members in groups.items():
        together = members | ({source} if source.startswith(".") else set())
        for member in together:
            aliases.setdefault(member, set()).update(together - {member})
    return aliases


def hands_itself_on(facts: Facts, cls: Scope) -> bool:
    """Whether a method of the class uses ``self`` other than to take an attribute of it or
    return it: handed to a call (``NETS.append(self)``, ``Net(2.0, self)``), stored
    (``self.me = self``), or bound to another name (``me = self``)."""
    for method in _own_methods(cls).values():
        self_name = method_self_name(method)
        if self_name is None:
            continue
        for read in facts.reads_within(method):
            if read.name != self_name or facts.resolve(read.scope, self_name) is not method:
                continue
            parent = facts.parent(read.node)
            if isinstance(parent, ast.Attribute) and parent.value is read.node:
                continue
            if isinstance(parent, ast.Call) and parent.func is read.node:
                continue  # ``self(x)``: a call of the object's own ``__call__``
            if isinstance(parent, ast.Return):
                continue
            return True
    return False


def sets_by_name(node: ast.AST) -> bool:
    """Whether code sets attributes by a computed name: ``setattr``, ``__setattr__``,
    ``vars(...)`` or ``__dict__``."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name):
            if inner.func.id in ("setattr", "vars"):
                return True
        if isinstance(inner, ast.Attribute) and inner.attr in ("__setattr__", "__dict__"):
            return True
    return False


def _own_methods(cls: Scope) -> dict[str, Scope]:
    return {
        child.name: child
        for child in cls.children
        if child.kind is ScopeKind.FUNCTION and child.parent is cls
    }


def has_bases(node: ast.AST) -> bool:
    """A class deriving from anything but ``object``."""
    bases = getattr(node, "bases", [])
    return any(not (isinstance(b, ast.Name) and b.id == "object") for b in bases)


# Class decorators that add no attribute lookups of their own (a dataclass's fields are data).
_PLAIN_DECORATORS = frozenset({"dataclass"})
# Methods that decide what reading or storing any name of the object does.
_LOOKUP_HOOKS = frozenset({"__getattr__", "__getattribute__", "__setattr__", "__delattr__"})


def _may_supply(cls: Scope) -> bool:
    """Whether something besides the class's own methods may decide what a name of ``self``
    holds: a base class, a class decorator that is not a dataclass's, or a lookup hook
    (``__getattr__``)."""
    node = cls.node
    if has_bases(node):
        return True
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        word = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if word not in _PLAIN_DECORATORS:
            return True
    return any(
        isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
        and statement.name in _LOOKUP_HOOKS
        for statement in getattr(node, "body", [])
    )


def _class_level_names(cls: Scope) -> set[str]:
    """Names the class body binds to anything but a constant (``scale = property(...)``, a
    descriptor): reading one through ``self`` may run code."""
    names: set[str] = set()
    for statement in getattr(cls.node, "body", []):
        parts = assignment(statement)
        if parts is None:
            continue
        targets, value = parts
        if isinstance(value, ast.Constant):
            continue
        for target in targets:
            names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _stored_attributes(methods: dict[str, Scope]) -> set[str]:
    """The attributes the class's own methods assign on ``self`` (``self.eps = eps``)."""
    stored: set[str] = set()
    for scope in methods.values():
        self_name = method_self_name(scope)
        if self_name is None:
            continue
        for node in ast.walk(scope.node):
            for target in assigned_targets(node):
                for element in ast.walk(target):
                    if (
                        isinstance(element, ast.Attribute)
                        and isinstance(element.value, ast.Name)
                        and element.value.id == self_name
                    ):
                        stored.add(element.attr)
    return stored
