"""The classes of objects, where the code says: which class an object is made from, and whether
``<object>.name`` can mean a method of a given class."""

from __future__ import annotations

import ast

from ..facts.model import AttributeRef, Binding, BindingKind, Pos, Scope, ScopeKind
from ..facts.queries import Facts
from ..names import FUNCTIONAL_PACKAGES

# Libraries whose calls make objects of their own classes (progress bars, optimisers, run
# loggers, plots), never of a class the checked module defines: unlike ``copy.deepcopy(model)``
# or ``pickle.load(f)``, which hand back the objects they are given, or ``logging.getLogger()``
# and ``threading.current_thread()``, which can make objects of a class the module registers.
_SELF_CONTAINED_LIBRARIES = frozenset(
    {"tqdm", "optax", "wandb", "matplotlib", "csv", "argparse", "queue", "tensorboardX", "rich",
     "datetime"}
)  # fmt: skip

# Changes that store another object into the attribute (``self.rng = ...``, ``del self.rng``,
# ``self.rng += ...``), unlike a method called on what it holds (``self.rng.shuffle(order)``).
_REBINDING_CHANGES = ("attribute ", "augmented in place")


class ObjectClasses:
    """The classes of the objects names hold, as far as this module shows."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self._unseen_stores: bool | None = None

    def object_class(self, scope: Scope, name: str, at: Pos) -> Scope | None:
        """The class of the object ``name`` holds at ``at`` in ``scope``, where the code says:
        ``self`` of a method, or a variable assigned ``SomeClass(...)`` (the class bound to that
        name where the call runs). None when unknown."""
        facts = self.facts
        owner = facts.resolve(scope, name)
        parent = owner.parent
        if parent is not None and parent.kind is ScopeKind.CLASS and owner.params[:1] == (name,):
            return parent if owner.kind is ScopeKind.FUNCTION else None
        bindings = facts.bindings_of(owner, name)
        if scope.function() is owner.function():
            bindings = [b for b in bindings if b.at < at][-1:]
        classes = {id(c): c for c in (self._made_from(b) for b in bindings)}
        if len(classes) == 1 and None not in classes.values():
            return next(iter(classes.values()))
        return None

    def object_class_of_call(self, scope: Scope, call: ast.Call) -> Scope | None:
        """The class ``SomeClass(...)`` makes, where the code says."""
        if not isinstance(call.func, ast.Name):
            return None
        owner = self.facts.resolve(scope, call.func.id)
        bindings = self.facts.bindings_of(owner, call.func.id)
        if bindings and all(b.kind is BindingKind.CLASS for b in bindings):
            return self.facts.scope_of(bindings[-1].node)
        return None

    def _made_from(self, binding: Binding) -> Scope | None:
        value = binding.value
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
            return None
        facts = self.facts
        class_name = value.func.id
        class_owner = facts.resolve(binding.scope, class_name)
        candidates = facts.bindings_of(class_owner, class_name)
        if binding.scope.function() is class_owner.function():
            candidates = [b for b in candidates if b.at < binding.at] or candidates
        if candidates and candidates[-1].kind is BindingKind.CLASS:
            return facts.scope_of(candidates[-1].node)
        return None

    def may_reach(self, ref: AttributeRef, cls: Scope) -> bool:
        """Whether ``<base>.name`` can mean the method ``name`` of ``cls``: not when the base's
        class is known to be another class that defines ``name`` itself."""
        base = ref.base
        if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
            if ref.computed and self._holds_loaded_modules(base.attr):
                return self._hands_own_code(ref)
            return not self._holds_library_objects(base.attr, ref.attr)
        if not isinstance(base, ast.Name):
            return True
        known = self.object_class(ref.scope, base.id, ref.start)
        if known is None:
            return not (
                (self._module(ref.scope, base.id) and self._never_called(ref))
                or self._library_object(ref.scope, base.id, ref.attr)
                or (
                    ref.computed
                    and self._module_only_read(ref.scope, base.id)
                    and not self._hands_own_code(ref)
                )
            )
        return self.related(known, cls)

    def _module_only_read(self, scope: Scope, name: str) -> bool:
        """``name`` is bound only by imports of another module (not ``__main__``), which this
        file never stores into, nor decorates with (``@hooks.register``): nothing of this
        file's is kept there, so a member taken from it by a computed name is the module's
        own (``getattr(optim, config.schedule)``), never a method of a class here."""
        facts = self.facts
        owner = facts.resolve(scope, name)
        bindings = facts.bindings_of(owner, name)
        if not bindings or facts.mutations_of(owner, name):
            return False
        for binding in bindings:
            if binding.kind is not BindingKind.IMPORT or binding.imported is None:
                return False
            if binding.imported.split(".")[0] == "__main__":
                return False
        if any(
            _rooted_at(decorator, name)
            for _, function in facts.decorated
            for decorator in function.decorator_list
        ):
            return False
        # ``hooks.register(experiment.reset)``: handed something of the file's to keep.
        for read in facts.reads_of(owner, name):
            node: ast.AST = read.node
            parent = facts.parent(node)
            while isinstance(parent, ast.Attribute) and parent.value is node:
                node, parent = parent, facts.parent(parent)
            if isinstance(parent, ast.Call) and parent.func is node:
                arguments = [*parent.args, *(k.value for k in parent.keywords)]
                if any(self._own_code_in(read.scope, a, 2) for a in arguments):
                    return False
        return True

    def _holds_loaded_modules(self, attribute: str) -> bool:
        """Every store of ``.attribute`` is ``importlib.import_module(name)`` of a name that is
        not the running module's (``"nfnets." + config.model``, not ``__name__``), and nothing
        is stored into what it holds: like a module imported by name, it holds nothing of
        this file's."""
        changes = self.facts.attribute_changes(attribute)
        if not changes:
            return False
        for change in changes:
            value = change.value
            if change.path != (f".{attribute}",) or not isinstance(value, ast.Call):
                return False
            if self.facts.qualified_name(change.scope, value.func) != "importlib.import_module":
                return False
            for node in ast.walk(value):
                if isinstance(node, ast.Name) and node.id == "__name__":
                    return False
                if isinstance(node, ast.Constant) and node.value == "__main__":
                    return False
        return True

    def _hands_own_code(self, ref: AttributeRef) -> bool:
        """Whether what the reference gives may meet code of this file: it is called (at once,
        or through the name it is kept in) with ``self``, a method (``self.bump``), a function,
        class or object of the file, a parameter or a lambda, or what such a call makes is
        called so in turn. The member itself handed on or kept elsewhere may be called so
        there; what a call of it given plain values makes is the other module's own."""
        facts = self.facts
        pending: list[tuple[ast.AST, bool]] = [(ref.node, False)]
        seen = 0
        while pending:
            node, made = pending.pop()
            seen += 1
            if seen > 16:
                return True
            parent = facts.parent(node)
            if isinstance(parent, ast.Call) and parent.func is node:
                arguments = [*parent.args, *(k.value for k in parent.keywords)]
                if any(self._own_code_in(ref.scope, a, 2) for a in arguments):
                    return True
                pending.append((parent, True))  # what the call makes
            elif (
                isinstance(parent, ast.Assign)
                and parent.value is node
                and len(parent.targets) == 1
                and isinstance(parent.targets[0], ast.Name)
            ):
                target = parent.targets[0].id
                owner = facts.resolve(ref.scope, target)
                pending.extend((read.node, made) for read in facts.reads_of(owner, target))
            elif not made and not isinstance(parent, ast.Expr):
                return True  # the member itself, handed on or kept
        return False

    def _own_code_in(self, scope: Scope, expression: ast.expr, depth: int) -> bool:
        """``self``, a method, a function, class or object of the file, a parameter or a
        lambda in ``expression``, through the names it reads ``depth`` bindings deep."""
        facts = self.facts
        own = self._self_name(scope)
        for node in ast.walk(expression):
            if isinstance(node, ast.Lambda):
                return True
            if isinstance(node, ast.Attribute) and node.attr in facts.methods_by_name:
                return True
            if not isinstance(node, ast.Name):
                continue
            parent = facts.parent(node)
            if node.id == own:
                if not (isinstance(parent, ast.Attribute) and parent.value is node):
                    return True  # ``self`` itself, not ``self.config``
                continue
            owner = facts.resolve(scope, node.id)
            for binding in facts.bindings_of(owner, node.id):
                if binding.kind in (BindingKind.DEF, BindingKind.CLASS, BindingKind.PARAM):
                    return True
                if binding.kind is BindingKind.IMPORT:
                    continue
                value = binding.value
                if value is None or depth == 0:
                    return True  # unpacked, a loop's target...: may hold anything
                if self._own_code_in(binding.scope, value, depth - 1):
                    return True
        return False

    def _self_name(self, scope: Scope) -> str | None:
        function = scope.function()
        params = function.params
        parent = function.parent
        if params and parent is not None and parent.kind is ScopeKind.CLASS:
            return params[0]
        return None

    def _never_called(self, ref: AttributeRef) -> bool:
        """What the reference gives is never called: not at once, and not through the name or
        attribute it is stored in (``mapped = getattr(tu, name); mapped(self.bump, w)`` may
        call the method handed to it). ``self.dtype = getattr(jnp, name)`` only holds a
        value."""
        facts = self.facts
        if ref.called:
            return False
        statement = facts.parent(ref.node)
        if not isinstance(statement, ast.Assign) or statement.value is not ref.node:
            return not isinstance(statement, ast.Call)  # handed to a call: it may call it
        for target in statement.targets:
            if isinstance(target, ast.Name):
                owner = facts.resolve(ref.scope, target.id)
                if any(read.called for read in facts.reads_of(owner, target.id)):
                    return False
            elif isinstance(target, ast.Attribute):
                if any(other.called for other in facts.attribute_refs(target.attr)):
                    return False
            else:
                return False
        return True

    def _module(self, scope: Scope, name: str) -> bool:
        """``name`` is bound only by ``import x`` or ``import x.y as name`` of a package of
        functions (``jax.numpy``, ``numpy``: see ``FUNCTIONAL_PACKAGES``), and the module
        stores nothing into it (no ``jnp.hook = trainer.decay``, no ``setattr``): its members
        (``getattr(jnp, dtype_name)``, ``np.sum``) are its own functions and values, never a
        method of a class here. Not one of the project's modules, nor ``__main__``, whose
        globals may hold bound methods (``on_epoch_end = trainer.decay``)."""
        facts = self.facts
        owner = facts.resolve(scope, name)
        bindings = facts.bindings_of(owner, name)
        return (
            bool(bindings)
            and all(
                b.kind is BindingKind.IMPORT
                and isinstance(b.node, ast.Import)
                and b.imported is not None
                and b.imported.split(".")[0] in FUNCTIONAL_PACKAGES
                for b in bindings
            )
            and not facts.mutations_of(owner, name)
        )

    def _library_object(self, scope: Scope, name: str, method: str) -> bool:
        """``name`` holds only objects a library makes for itself (``t`` of ``with
        tqdm.trange(n) as t``, ``optimizer = optax.adam(lr)``, ``mcmc = MCMC(kernel)``):
        ``t.update()`` is the library's method, never one of the module's classes'."""
        facts = self.facts
        owner = facts.resolve(scope, name)
        bindings = facts.bindings_of(owner, name)
        if not bindings:
            return False
        for binding in bindings:
            value = binding.value if binding.kind is BindingKind.ASSIGN else None
            if binding.kind is BindingKind.WITH:
                value = _context_of(binding)
            if not (
                isinstance(value, ast.Call)
                and _made_by_library(facts, binding.scope, value, method)
            ):
                return False
        return True

    def _holds_library_objects(self, attribute: str, method: str) -> bool:
        """Every store into ``<object>.attribute`` in the module is an object a library makes
        (``self.rng = np.random.RandomState(0)``, ``self.mcmc = MCMC(kernel, ...)``,
        ``self.tx = optax.adam(lr)``), none of them handed ``self`` or something named
        ``method`` it could forward to: ``self.rng.shuffle(order)`` is then the library's
        ``shuffle``, never a method of a class here; ``None`` stored first as a placeholder has
        no methods at all. Not where the module may store into the
        attribute unseen (``setattr(obj, name, v)``, ``obj.__dict__``)."""
        facts = self.facts
        stores = [
            m
            for m in facts.attribute_changes(attribute)
            if m.path == (f".{attribute}",) and m.description.startswith(_REBINDING_CHANGES)
        ]
        if not stores or self._stores_unseen():
            return False
        return all(
            (isinstance(m.value, ast.Constant) and m.value.value is None)  # a placeholder
            or (isinstance(m.value, ast.Call) and _made_by_library(facts, m.scope, m.value, method))
            for m in stores
        )

    def _stores_unseen(self) -> bool:
        if self._unseen_stores is None:
            self._unseen_stores = any(
                (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "setattr"
                    and not (len(node.args) > 1 and isinstance(node.args[1], ast.Constant))
                )
                or (isinstance(node, ast.Attribute) and node.attr == "__dict__")
                for node in ast.walk(self.facts.tree)
            )
        return self._unseen_stores

    def related(self, first: Scope, second: Scope) -> bool:
        """Whether one class derives from the other (as far as this module shows)."""
        return second in self._ancestors(first) or first in self._ancestors(second)

    def _ancestors(self, cls: Scope) -> list[Scope]:
        found, pending = [cls], [cls]
        while pending:
            current = pending.pop()
            node = current.node
            parent = current.parent
            if not isinstance(node, ast.ClassDef) or parent is None:
                continue
            for base in node.bases:
                if not isinstance(base, ast.Name):
                    continue
                owner = self.facts.resolve(parent, base.id)
                for binding in self.facts.bindings_of(owner, base.id):
                    if binding.kind is BindingKind.CLASS:
                        scope = self.facts.scope_of(binding.node)
                        if scope not in found:
                            found.append(scope)
                            pending.append(scope)
        return found


def _made_by_library(facts: Facts, scope: Scope, call: ast.Call, method: str) -> bool:
    """``call`` makes an object of a library's own class: a call into one of the
    ``_SELF_CONTAINED_LIBRARIES``, or a class (a capitalised name) of one of the
    ``FUNCTIONAL_PACKAGES`` (``numpyro.infer.MCMC``, ``np.random.RandomState``), handed neither
    ``self`` nor anything named ``method`` (``SimpleNamespace(run=self.run)`` would forward)."""
    made_by = facts.qualified_name(scope, call.func)
    if made_by is None:
        return False
    parts = made_by.split(".")
    if parts[0] not in _SELF_CONTAINED_LIBRARIES and not (
        parts[0] in FUNCTIONAL_PACKAGES and len(parts) > 1 and parts[-1][:1].isupper()
    ):
        return False
    handed = [*call.args, *(k.value for k in call.keywords)]
    if any(isinstance(value, ast.Name) and value.id == "self" for value in handed):
        return False  # a wrapper of the object itself may forward to its methods
    return not any(k.arg == method for k in call.keywords) and not any(
        (isinstance(node, ast.Name) and node.id == method)
        or (isinstance(node, ast.Attribute) and node.attr == method)
        for value in handed
        for node in ast.walk(value)
    )


def _context_of(binding: Binding) -> ast.expr | None:
    """What ``with <expr> as name`` binds ``name`` to: ``<expr>``."""
    for node in ast.walk(binding.scope.node):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is binding.node:
                    return item.context_expr
    return None


def _rooted_at(expression: ast.expr, name: str) -> bool:
    """``name.x``, ``name.x.y`` or ``name.x(...)``."""
    node = expression.func if isinstance(expression, ast.Call) else expression
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == name
