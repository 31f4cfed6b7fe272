"""Classes whose instances are plain records of the arguments they are made from.

``Weights(1.0, 10.0)`` for a ``NamedTuple``, ``MLP(features=(64, 1))`` for a Flax linen module,
``Config(lr=0.1)`` for a dataclass: the object holds what it was given and nothing else, so
making it again from the same inputs gives an equal object, whose fields (and, for a linen
module, whose ``apply``) a compiled function reads the same way. A class with its own
``__init__``, ``__post_init__`` or ``__new__`` may do anything there (draw random weights, read a
file), so it is not one; nor is one with a field whose default each instance makes anew
(``field(default_factory=...)``).
"""

from __future__ import annotations

import ast

from .facts.model import BindingKind, Scope
from .facts.queries import Facts

# Bases whose subclasses are generated dataclasses or named tuples.
_RECORD_BASES = frozenset(
    {
        "typing.NamedTuple",
        "typing_extensions.NamedTuple",
        "flax.linen.Module",
        "flax.linen.module.Module",
        "flax.struct.PyTreeNode",
        "equinox.Module",
    }
)
_RECORD_DECORATORS = frozenset(
    {"dataclasses.dataclass", "flax.struct.dataclass", "chex.dataclass", "attr.s", "attrs.define"}
)
# Calls that make a named-tuple class: ``Weight = namedtuple("Weight", ["c", "d"])``.
_RECORD_FACTORIES = frozenset({"collections.namedtuple", "typing.NamedTuple"})
_OWN_CONSTRUCTION = frozenset({"__init__", "__post_init__", "__new__"})
# Records built on records of the same module: a few levels are plenty.
_DEPTH = 3


def makes_record(facts: Facts, scope: Scope, call: ast.Call) -> bool:
    """``call`` makes an instance of a record class of this module, or of a library's record
    factory, bound once: its value depends on the call's arguments alone."""
    return isinstance(call.func, ast.Name) and _record_name(facts, scope, call.func.id, 0)


def _record_name(facts: Facts, scope: Scope, name: str, depth: int) -> bool:
    owner = facts.resolve(scope, name)
    bindings = facts.bindings_of(owner, name)
    if len(bindings) != 1:
        return False  # rebound: another class, perhaps (a notebook cell defining it again)
    binding = bindings[0]
    if binding.kind is BindingKind.CLASS and isinstance(binding.node, ast.ClassDef):
        return _record_class(facts, owner, binding.node, depth)
    if binding.kind is BindingKind.ASSIGN and isinstance(binding.value, ast.Call):
        return facts.qualified_name(owner, binding.value.func) in _RECORD_FACTORIES
    return False


def _record_class(facts: Facts, scope: Scope, node: ast.ClassDef, depth: int) -> bool:
    if any(
        isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
        and statement.name in _OWN_CONSTRUCTION
        for statement in node.body
    ):
        return False
    if any(_made_per_instance(statement) for statement in node.body):
        return False
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if facts.qualified_name(scope, target) in _RECORD_DECORATORS:
            return _plain_bases(facts, scope, node, depth)
    return bool(node.bases) and all(
        facts.qualified_name(scope, base) in _RECORD_BASES
        or (
            isinstance(base, ast.Name)
            and depth < _DEPTH
            and _record_name(facts, scope, base.id, depth + 1)
        )
        for base in node.bases
    )


def _made_per_instance(statement: ast.stmt) -> bool:
    """``key: Array = field(default_factory=new_key)``: a field whose default each instance
    makes anew, which need not be equal from one instance to the next."""
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
        return False
    return any(
        isinstance(node, ast.keyword) and node.arg == "default_factory"
        for node in ast.walk(statement.value)
    )


def _plain_bases(facts: Facts, scope: Scope, node: ast.ClassDef, depth: int) -> bool:
    """A dataclass's bases add no construction of their own: none, or records themselves."""
    return all(
        isinstance(base, ast.Name)
        and depth < _DEPTH
        and _record_name(facts, scope, base.id, depth + 1)
        for base in node.bases
    )
