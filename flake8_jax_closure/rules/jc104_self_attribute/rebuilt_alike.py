"""An attribute built again, each time alike, from settings the object never changes.

``self.optimizer = optax.adam(self.learning_rate)`` in a ``fit`` run again, or ``self.model =
MLP(self.hidden)`` in a ``reset``, stores a new object each time, but one equal to the last:
made by a function that computes its result from its arguments alone, from arguments that are
constants or attributes only the constructor sets. A compiled method that kept the old object
computes what the new one would, so storing it again changes nothing a trace read.

Only what shows it plainly counts. Every store of the attribute in the class's methods is
one expression once the constructor's parameters are read as the attributes it stores them in
(``self.hidden = hidden; self.model = MLP(hidden)`` stores ``MLP(self.hidden)``). The callees
are pure: ``optax``'s optimisers and schedules, ``flax.linen``'s modules, ``jax.random``,
``jax.nn`` and ``jax.numpy`` (a key made from a constant gives the same numbers), and the
module's own subclasses of ``flax.linen.Module``, whose constructors only set fields. The
settings read are constants and attributes every store of which is in the constructor. Nothing
else may give the attribute a value first (a class default, a base class elsewhere): the
caller asks ``own_functions.no_other_value``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ...analysis.facts.model import Mutation, Scope
from ...analysis.facts.queries import Facts

# Packages whose functions and classes make their result from their arguments alone.
_PURE_PACKAGES = ("optax.", "flax.linen.", "jax.random.", "jax.nn.", "jax.numpy.")
_MODULE_BASE = "flax.linen.Module"
_DEPTH = 4

Changes = list[tuple[Mutation, "Scope | None"]]


def rebuilt_alike(
    facts: Facts,
    attribute: str,
    construction: set[str],
    changes_of: Callable[[str], Changes],
) -> bool:
    """Whether every store of ``self.<attribute>`` (``changes_of(attribute)``) builds one
    equal value from constants and attributes only the constructor (a method named in
    ``construction``) stores."""
    changes = changes_of(attribute)
    if not changes:
        return False
    shapes: list[str] = []
    read: set[str] = set()
    for mutation, method in changes:
        if method is None or mutation.path != (f".{attribute}",) or mutation.value is None:
            return False
        statement = mutation.node
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            return False
        settings = _constructor_settings(method, mutation.name, construction)
        if settings is None:
            return False
        shape = _Canonical(facts, method, mutation.name, settings, read).text(mutation.value)
        if shape is None:
            return False
        shapes.append(shape)
    if len(set(shapes)) != 1 or attribute in read:
        return False
    return all(_set_in_construction(changes_of(name), construction) for name in read)


def _set_in_construction(changes: Changes, construction: set[str]) -> bool:
    """Every change of the attribute is a plain store by the constructor."""
    return all(
        method is not None and method.name in construction and isinstance(m.node, ast.Assign)
        for m, method in changes
    )


def _constructor_settings(
    method: Scope, self_name: str, construction: set[str]
) -> dict[str, str] | None:
    """In a constructor, its parameters stored as they are (``self.hidden = hidden``), each
    with its attribute; other methods read attributes as attributes (an empty map). None when
    a parameter stored so is bound again in the constructor."""
    if method.name not in construction:
        return {}
    node = method.node
    stored: dict[str, str] = {}
    for statement in getattr(node, "body", []):
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.value, ast.Name)
            and statement.value.id in method.params
        ):
            target = statement.targets[0]
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == self_name
            ):
                stored.setdefault(statement.value.id, target.attr)
    rebound = {
        n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))
    }
    return {p: a for p, a in stored.items() if p not in rebound}


class _Canonical:
    """A value as text, with constructor parameters read as their attributes; the attributes
    of ``self`` it reads are added to ``read``."""

    def __init__(
        self, facts: Facts, scope: Scope, self_name: str, settings: dict[str, str], read: set[str]
    ) -> None:
        self.facts, self.scope, self.self_name = facts, scope, self_name
        self.settings, self.read = settings, read

    def text(self, value: ast.expr, depth: int = _DEPTH) -> str | None:
        """None when the value may differ from one store to the next."""
        if depth < 0:
            return None
        if isinstance(value, ast.Constant):
            return repr(value.value)
        if isinstance(value, ast.UnaryOp) and isinstance(value.operand, ast.Constant):
            return ast.unparse(value)
        if isinstance(value, ast.Name) and value.id in self.settings:
            return self._setting(self.settings[value.id])
        if (
            isinstance(value, ast.Attribute)
            and isinstance(value.value, ast.Name)
            and value.value.id == self.self_name
        ):
            return self._setting(value.attr)
        if isinstance(value, (ast.Tuple, ast.List)):
            parts = [self.text(e, depth - 1) for e in value.elts]
            return None if None in parts else f"({','.join(p or '' for p in parts)})"
        if isinstance(value, ast.Call):
            return self._call(value, depth)
        return None

    def _setting(self, attribute: str) -> str:
        self.read.add(attribute)
        return f"self.{attribute}"

    def _call(self, call: ast.Call, depth: int) -> str | None:
        if any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if any(k.arg is None for k in call.keywords):
            return None
        callee = _pure_callee(self.facts, self.scope, call.func)
        if callee is None:
            return None
        parts = [self.text(a, depth - 1) for a in call.args]
        parts += [
            None if (text := self.text(k.value, depth - 1)) is None else f"{k.arg}={text}"
            for k in call.keywords
        ]
        return None if None in parts else f"{callee}({','.join(p or '' for p in parts)})"


def _pure_callee(facts: Facts, scope: Scope, function: ast.expr) -> str | None:
    """The qualified name of a pure package's callable, or the name of one of the module's
    own ``flax.linen.Module`` classes."""
    name = facts.qualified_name(scope, function)
    if name is not None:
        return name if name.startswith(_PURE_PACKAGES) else None
    if not isinstance(function, ast.Name):
        return None
    owner = facts.resolve(scope, function.id)
    bindings = facts.bindings_of(owner, function.id)
    if len(bindings) != 1 or not isinstance(bindings[0].node, ast.ClassDef):
        return None
    cls = bindings[0].node
    if any(facts.qualified_name(owner, base) == _MODULE_BASE for base in cls.bases):
        return function.id
    return None
