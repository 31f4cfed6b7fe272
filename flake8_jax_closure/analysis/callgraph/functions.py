"""Where a function runs or escapes, as seen from the code that names it.

A function's events in its callers are found by name: ``f(...)`` runs it, any other use of ``f``
hands it on; a method's by attribute name (``obj.step(...)``); a module-level function or a
method that nothing in the module names is called from outside, after the module ran
(``outside``), and so is one with a decorator that hands it to code this module cannot see.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..facts.model import Pos, Scope, ScopeKind
from ..facts.queries import Facts
from ..names import FUNCTION_TRANSFORMS
from ..unbindable import arguments_cannot_bind, star_imported
from .classes import ObjectClasses
from .events import END, Event, EventKind, event_at, level
from .holders import HolderEvents, single_name

# Dunder methods Python calls by itself: nothing in the module needs to name them.
_IMPLICIT = frozenset(
    {"__call__", "__getitem__", "__setitem__", "__iter__", "__next__", "__enter__", "__exit__",
     "__len__", "__contains__", "__add__", "__mul__", "__matmul__", "__repr__", "__str__",
     "__hash__", "__eq__", "__getattr__", "__get__", "__set__", "__del__"}
)  # fmt: skip
# Decorators that keep the function to themselves (they may wrap it, but hand it to nobody).
_HARMLESS_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "property", "wraps", "cache", "lru_cache",
     "cached_property", "abstractmethod", "overload", "partial"}
)  # fmt: skip
CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__"})


@dataclass
class Uses:
    """Where a function runs or escapes, as seen from the code that names it."""

    events: list[Event] = field(default_factory=list)
    outside: bool = False


class FunctionUses:
    """The uses of each function of the module, found once."""

    def __init__(self, facts: Facts, holders: HolderEvents, classes: ObjectClasses) -> None:
        self.facts = facts
        self.holders = holders
        self.classes = classes
        self._uses: dict[int, Uses] = {}

    def uses_of_function(self, function: Scope) -> Uses:
        cached = self._uses.get(id(function))
        if cached is None:
            cached = self._function_uses(function)
            self._uses[id(function)] = cached
        return cached

    def _function_uses(self, function: Scope) -> Uses:
        facts = self.facts
        node = function.node
        parent = function.parent
        assert parent is not None
        if function.kind is ScopeKind.LAMBDA:
            holder = facts.parent(node)
            if isinstance(holder, ast.Assign) and single_name(holder) is not None:
                return self._named_uses(function, single_name(holder) or "", parent.function())
            return Uses(list(self.holders.value_use(parent, node, function.loops, set())))
        if function.kind is not ScopeKind.FUNCTION:
            return Uses()
        decorators = getattr(node, "decorator_list", [])
        if parent.kind is ScopeKind.CLASS:
            uses = self._method_uses(function, parent, decorators)
        else:
            uses = self._named_uses(function, function.name, parent)
        if any(not self.is_compile_or_known(parent, d) for d in decorators):
            # ``@app.route``, ``@register``, ``@pytest.mark...``: code this module cannot see
            # calls it whenever it likes.
            uses.outside = True
        return uses

    def _raises_on_binding(self, function: Scope, name: ast.AST) -> bool:
        """``run(num_steps=3)`` of an undecorated ``def run(steps)``, called by its name: Python
        binds the arguments before the body runs and raises ``TypeError``."""
        call = self.facts.parent(name)
        node = function.node
        return (
            isinstance(call, ast.Call)
            and call.func is name
            and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not node.decorator_list
            and not star_imported(self.facts.tree)
            and arguments_cannot_bind(node.args, call)
        )

    def is_compile_or_known(self, scope: Scope, decorator: ast.expr) -> bool:
        """Decorators that do not hand the function to unknown code."""
        expr = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = self.facts.qualified_name(scope, expr)
        if name is not None and (
            name in FUNCTION_TRANSFORMS or name.split(".")[0] in ("jax", "equinox")
        ):
            return True
        if isinstance(expr, ast.Call):
            return self.is_compile_or_known(scope, expr)
        word = expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")
        return word in _HARMLESS_DECORATORS

    def _named_uses(self, function: Scope, name: str, binder: Scope) -> Uses:
        facts = self.facts
        uses = Uses()
        # In the code that defines it, only between the definition and the next one
        # (a notebook defining ``opt_step`` again in a later cell).
        until = self.holders.next_binding(binder, name, function.start, function.loops)
        refs = [
            r
            for r in facts.reads_of(binder, name)
            if not r.scope.is_within(function)
            and (r.scope.function() is not binder.function() or function.start < r.start < until)
        ]
        replaced = self._replaced_at(binder, name, until)
        if replaced is not None:
            refs = [r for r in refs if not _defined_after(r.scope, binder, replaced)]
        for read in refs:
            if self._raises_on_binding(function, read.node):
                continue  # ``TypeError`` before the body runs: the call runs nothing
            uses.events.extend(self.holders.read_events(read, set()))
        if not refs and binder.kind is ScopeKind.MODULE and not self._in_script(function):
            uses.outside = True
        return uses

    def _replaced_at(self, binder: Scope, name: str, at: Pos) -> Pos | None:
        """Where module code binds ``name`` to another object for good: a statement of the
        module's own body, under no ``if``, loop or ``try`` (``model = OneDUnet(...)`` in a
        later notebook cell, after ``def model``), whose value is made there and does not
        name the old one (not ``model = wrap(model)`` nor an alias that may hold it)."""
        if binder.kind is not ScopeKind.MODULE or at == END:
            return None
        for binding in self.facts.bindings_of(binder, name):
            if binding.at != at:
                continue
            value = binding.value
            if (
                isinstance(value, (ast.Call, ast.Constant))
                and not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(value))
                and isinstance(binding.node, (ast.Assign, ast.AnnAssign))
                and _module_statement(self.facts.tree, binding.node)
            ):
                return at
        return None

    def _method_uses(self, function: Scope, cls: Scope, decorators: list[ast.expr]) -> Uses:
        facts = self.facts
        uses = Uses()
        name = function.name
        is_property = any(
            (d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")) in
            ("property", "cached_property", "setter")
            for d in decorators
        )  # fmt: skip
        if name in CONSTRUCTORS:
            binder = cls.parent
            assert binder is not None
            for read in facts.reads_of(binder.function(), cls.name):
                if read.called:
                    uses.events.append(event_at(read.scope, read.node, read.loops, EventKind.RUN))
            return uses
        refs = [
            r
            for r in facts.attribute_refs(name)
            if not r.scope.is_within(function) and self.classes.may_reach(r, cls)
        ]
        for ref in refs:
            if ref.called or is_property:
                uses.events.append(event_at(ref.scope, ref.node, ref.loops, EventKind.RUN))
            else:
                uses.events.extend(self.holders.ref_use(ref))
        if name == "__call__":
            uses.events.extend(self.instance_calls(cls))
        # A ``getattr`` with a computed name that only looks at what it takes does not name
        # the method: outside code calling it by its name is still the only caller the module
        # shows (``str(getattr(self.config, field))`` in ``__str__``). One whose result is
        # called (``getattr(self, "make_" + kind)()``) is a call the module shows.
        stores = []
        if any(_is_setter(d, name) for d in decorators):
            # ``sampler.temperature = t`` runs the property's setter.
            stores = [
                m
                for m in facts.attribute_changes(name)
                if m.path == (f".{name}",) and not m.scope.is_within(function)
            ]
            for m in stores:
                # Where the store happens: after the value is computed (``s.t = f(x)``).
                driver, at, loops = level(m.scope, m.end, m.loops)
                uses.events.append(Event(driver, at, loops, EventKind.RUN, node=m.node))
        named = [r for r in refs if not r.computed or r.called]
        unnamed = not named and not stores and not self._in_script(function)
        if unnamed or name in _IMPLICIT or (name.startswith("__") and name.endswith("__")):
            uses.outside = True
        return uses

    def instance_calls(self, cls: Scope) -> list[Event]:
        """``filt(x)`` where ``filt = Filter(...)``: each call of a name holding an object the
        class makes runs its ``__call__``."""
        facts = self.facts
        binder = cls.parent
        assert binder is not None
        events = []
        for made in facts.reads_of(binder.function(), cls.name):
            call = facts.parent(made.node)
            statement = facts.parent(call) if isinstance(call, ast.Call) else None
            holder = single_name(statement) if statement is not None else None
            if holder is None or not made.called:
                continue
            owner = facts.resolve(made.scope, holder)
            for use in facts.reads_of(owner, holder):
                if use.called and self.classes.object_class(use.scope, holder, use.start) is cls:
                    events.append(event_at(use.scope, use.node, use.loops, EventKind.RUN))
        return events

    def _in_script(self, scope: Scope) -> bool:
        """Defined in the module's ``if __name__ == "__main__":`` block: no importer sees it."""
        return self.facts.in_script(scope.start[0])


def _defined_after(scope: Scope, binder: Scope, at: Pos) -> bool:
    """Whether ``scope`` lies in a function or class that ``binder``'s code defines after
    ``at``: it runs only after that point, and a read of one of ``binder``'s names there sees
    what that name holds by then."""
    while scope.parent is not None and scope.parent is not binder:
        scope = scope.parent
    return scope.parent is binder and scope.kind is not ScopeKind.MODULE and scope.start > at


def _module_statement(tree: ast.Module, statement: ast.stmt) -> bool:
    """A statement that runs whenever the module's code reaches it: in the module's body, or
    in a ``with`` block there."""
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        current = pending.pop()
        if current is statement:
            return True
        if isinstance(current, (ast.With, ast.AsyncWith)):
            pending.extend(current.body)
    return False


def _is_setter(decorator: ast.expr, name: str) -> bool:
    """``@name.setter``."""
    return (
        isinstance(decorator, ast.Attribute)
        and decorator.attr == "setter"
        and isinstance(decorator.value, ast.Name)
        and decorator.value.id == name
    )
