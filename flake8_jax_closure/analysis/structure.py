"""Changes that set a structure split off from a value: ``graphdef, state = nnx.split(model)``.

A Flax NNX graph definition or a pytree's ``treedef`` describes the shape of a value, not its
numbers. Splitting the same model again gives an equal structure; splitting a model of another
structure gives state of another structure as well, and compiled code that takes that state as
an argument traces again when it sees it. So rebinding the structure alone makes nothing stale
(the NNX idiom re-splits on every step and merges inside the compiled function).

Except after a change of the model's settings: ``model.eval()``, ``model.train()``,
``model.set_attributes(...)`` or an attribute assigned below the model
(``model.norm.use_running_average = True``) change the graph definition while the state keeps
its structure, so compiled code reading the structure from a global reuses the trace made with
the old one. A split after such a change, in the same code, is a change.
"""

from __future__ import annotations

import ast

from .facts.model import Binding, Mutation
from .facts.queries import Facts

# Methods of an NNX module that change its settings, kept in the graph definition.
SETTING_METHODS = frozenset({"eval", "train", "set_attributes"})
# The function, and which element of the tuple it returns is the structure.
STRUCTURE_SPLITS = {
    "flax.nnx.split": 0,
    "flax.nnx.graph.split": 0,
    "jax.tree_util.tree_flatten": 1,
    "jax.tree.flatten": 1,
}


def sets_split_structure(facts: Facts, change: Binding | Mutation) -> bool:
    """Whether the change assigns the structure element of one of those splits."""
    statement = change.node
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return False
    target, value = statement.targets[0], statement.value
    if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(value, ast.Call):
        return False
    position = STRUCTURE_SPLITS.get(facts.qualified_name(change.scope, value.func) or "")
    if position is None or position >= len(target.elts):
        return False
    element = target.elts[position]
    if value.args and _settings_changed_before(facts, change, value.args[0]):
        return False
    if isinstance(change, Binding):
        return isinstance(element, ast.Name) and element.id == change.name
    return (
        isinstance(element, ast.Attribute)
        and isinstance(element.value, ast.Name)
        and element.value.id == change.name
        and change.path == (f".{element.attr}",)
    )


def _settings_changed_before(facts: Facts, change: Binding | Mutation, split: ast.expr) -> bool:
    """Whether the code splitting ``split`` (a name) changed its settings before, in the same
    function: a call of one of ``SETTING_METHODS`` on it, or an attribute assigned below it."""
    if not isinstance(split, ast.Name):
        return False
    scope = change.scope
    owner = facts.resolve(scope, split.id)
    before = change.start
    for mutation in facts.mutations_of(owner, split.id):
        if mutation.scope is scope and mutation.start < before and mutation.path[:1] != ():
            if mutation.path[0].startswith("."):
                return True
    for method in SETTING_METHODS:
        for ref in facts.attribute_refs(method):
            base = ref.base
            if (
                ref.called
                and ref.scope is scope
                and ref.start < before
                and isinstance(base, ast.Name)
                and base.id == split.id
            ):
                return True
    return False
