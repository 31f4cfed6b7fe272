"""Names that older tutorials use and current JAX has removed, each pointing at its successor;
the program's code stays as it is."""

from __future__ import annotations

import sys

import jax
import jax.tree_util as tree_util

for _name in ("tree_leaves", "tree_flatten", "tree_unflatten", "tree_structure", "tree_map"):
    if not hasattr(jax, _name):
        setattr(jax, _name, getattr(tree_util, _name))
if not hasattr(jax, "tree_multimap"):
    jax.tree_multimap = tree_util.tree_map  # type: ignore[attr-defined]

for _name in ("PRNGKeyArray", "KeyArray"):
    if not hasattr(jax.random, _name):
        setattr(jax.random, _name, jax.Array)

try:
    import jax.experimental
    from jax.example_libraries import optimizers, stax

    jax.experimental.stax = stax  # type: ignore[attr-defined]
    jax.experimental.optimizers = optimizers  # type: ignore[attr-defined]
    sys.modules["jax.experimental.stax"] = stax
    sys.modules["jax.experimental.optimizers"] = optimizers
except ImportError:
    pass
