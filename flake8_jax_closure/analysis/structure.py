"""Changes that set a structure split off from a value: ``graphdef, state = nnx.split(model)``.

A Flax NNX graph definition or a pytree's ``treedef`` describes the shape of a value, not its
numbers. Splitting the same model again gives an equal structure; splitting a model of another
structure gives state of another structure as well, and compiled code that takes that state as
an argument traces again when it sees it. So rebinding the structure alone makes nothing stale
(the NNX idiom re-splits on every step and merges inside the compiled function).
"""

from __future__ import annotations

import ast

from .facts.model import Binding, Mutation
from .facts.queries import Facts

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
    if isinstance(change, Binding):
        return isinstance(element, ast.Name) and element.id == change.name
    return (
        isinstance(element, ast.Attribute)
        and isinstance(element.value, ast.Name)
        and element.value.id == change.name
        and change.path == (f".{element.attr}",)
    )
