"""The classes whose instances can change in place, with their methods and construction phase.

Flax or Equinox modules cannot change in place (they are handed to compiled code as arguments).
Frozen dataclasses and NamedTuples cannot be given new attribute values, but what an attribute
holds (a list, a NumPy array) can still change in place. Construction
is what runs before anything can call compiled code: constructors, and the set-up hooks a
framework calls (``setUp``, ``setUpClass``, flax's ``setup``, pytest fixtures, private helpers
reached only from those) when the module never calls them itself.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ...analysis.callgraph.functions import CONSTRUCTORS
from ...analysis.callgraph.graph import CallGraph
from ...analysis.facts.model import BindingKind, Scope, ScopeKind
from ...analysis.facts.queries import Facts

CONSTRUCTION = frozenset(
    {
        "__init__", "__new__", "__post_init__", "__attrs_post_init__", "__setstate__",
        "setup", "setUp", "setUpClass", "asyncSetUp", "setup_method", "setup_class",
    }
)  # fmt: skip
# Bases whose instances are immutable or are passed to compiled code as arguments.
IMMUTABLE_BASES = frozenset(
    {
        "flax.linen.Module",
        "flax.linen.module.Module",
        "flax.nnx.Module",
        "flax.struct.PyTreeNode",
        "equinox.Module",
    }
)
FROZEN_DECORATORS = frozenset({"flax.struct.dataclass"})
# Bases whose attributes cannot be set again, while what they hold can change.
FROZEN_BASES = frozenset({"typing.NamedTuple"})
DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass", "chex.dataclass"})


@dataclass
class ClassFacts:
    scope: Scope
    methods: dict[str, Scope] = field(default_factory=dict)
    construction: set[str] = field(default_factory=set)
    # A NamedTuple or frozen dataclass: only changes inside what an attribute holds count.
    frozen: bool = False


class MutableClasses:
    """Facts of the module's classes, built once per class when first asked."""

    def __init__(self, facts: Facts, graph: CallGraph) -> None:
        self.facts = facts
        self.graph = graph
        self._classes: dict[int, ClassFacts | None] = {}

    def class_facts(self, scope: Scope) -> ClassFacts | None:
        """Methods and construction phase of a class whose instances (or what they hold) can
        change in place."""
        if id(scope) not in self._classes:
            kind = self._kind(scope)
            facts = None if kind is None else self._build(scope)
            if facts is not None:
                facts.frozen = kind == "frozen"
            self._classes[id(scope)] = facts
        return self._classes[id(scope)]

    def _kind(self, scope: Scope) -> str | None:
        """ "mutable", "frozen" (attributes fixed, their contents not), or None (immutable)."""
        node = scope.node
        assert isinstance(node, ast.ClassDef)
        parent = scope.parent
        assert parent is not None
        kind = "mutable"
        for base in node.bases:
            name = self.facts.qualified_name(parent, base)
            if name in IMMUTABLE_BASES:
                return None
            if name in FROZEN_BASES:
                kind = "frozen"
        for decorator in node.decorator_list:
            callee = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = self.facts.qualified_name(parent, callee)
            if name in FROZEN_DECORATORS:
                return None
            if name in DATACLASS_DECORATORS and isinstance(decorator, ast.Call):
                for keyword in decorator.keywords:
                    value = keyword.value
                    if keyword.arg == "frozen" and isinstance(value, ast.Constant) and value.value:
                        kind = "frozen"
        return kind

    def may_be_instance(self, function: Scope, param: str, cls: ClassFacts) -> bool:
        """Whether the parameter may hold an instance of the class: not when its annotation
        names another class of the module, unrelated to this one."""
        arguments = getattr(function.node, "args", None)
        if arguments is None or function.parent is None:
            return True
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        annotation = next((a.annotation for a in every if a.arg == param), None)
        if not isinstance(annotation, ast.Name):
            return True
        owner = self.facts.resolve(function.parent, annotation.id)
        classes = [
            self.facts.scope_of(b.node)
            for b in self.facts.bindings_of(owner, annotation.id)
            if b.kind is BindingKind.CLASS
        ]
        return not classes or any(
            c is cls.scope or self.graph.related(c, cls.scope) for c in classes
        )

    def _called(self, name: str) -> bool:
        return any(ref.called for ref in self.facts.attribute_refs(name))

    def _build(self, scope: Scope) -> ClassFacts:
        facts = ClassFacts(scope)
        for child in scope.children:
            if child.kind is ScopeKind.FUNCTION:
                facts.methods[child.name] = child
        # Constructors, and set-up hooks a framework calls before any test or use
        # (``setUp``, flax's ``setup``, fixtures); one the module calls itself is timed there.
        facts.construction = {
            name for name, method in facts.methods.items()
            if name in CONSTRUCTORS
            or ((name in CONSTRUCTION or is_fixture(method)) and not self._called(name))
        }  # fmt: skip
        # Private helpers called only from construction are construction too.
        changed = True
        while changed:
            changed = False
            for name in facts.methods:
                if name in facts.construction or not name.startswith("_") or name.endswith("__"):
                    continue
                refs = self.facts.attribute_refs(name)
                callers = {enclosing_method(ref.scope, scope) for ref in refs}
                if (
                    refs
                    and all(ref.called for ref in refs)
                    and callers
                    and all(
                        caller is not None and caller.name in facts.construction
                        for caller in callers
                    )
                ):
                    facts.construction.add(name)
                    changed = True
        return facts


def is_fixture(method: Scope) -> bool:
    for decorator in getattr(method.node, "decorator_list", []):
        expr = decorator.func if isinstance(decorator, ast.Call) else decorator
        word = expr.attr if isinstance(expr, ast.Attribute) else getattr(expr, "id", "")
        if word == "fixture":
            return True
    return False


def enclosing_method(scope: Scope, class_scope: Scope | None) -> Scope | None:
    """The method (of ``class_scope``, or of any class) whose body holds ``scope``."""
    current: Scope | None = scope
    while current is not None and current.parent is not None:
        parent = current.parent
        if current.kind is ScopeKind.FUNCTION and parent.kind is ScopeKind.CLASS:
            if class_scope is None or parent is class_scope:
                return current
        current = parent
    return None
