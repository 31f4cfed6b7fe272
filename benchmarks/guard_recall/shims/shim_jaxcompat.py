"""Names that older tutorials use and current JAX has removed, each pointing at its successor
(``jax.tree_map``, ``jax.experimental.stax``, ``jax.ops.index_update``, ``from jax.config import
config``, ``jax.random.PRNGKeyArray``, ``jnp.DeviceArray``, ``jnp.clip(a_min=, a_max=)``); the
program's code stays as it is."""

from __future__ import annotations

import sys
import types

import jax
import jax.numpy as jnp
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


class _Index:
    """``jax.ops.index[...]``: the index itself."""

    def __getitem__(self, index: object) -> object:
        return index


if not hasattr(jax.ops, "index"):
    jax.ops.index = _Index()  # type: ignore[attr-defined]
    for _name, _method in (("index_update", "set"), ("index_add", "add"), ("index_mul", "multiply"),
                           ("index_min", "min"), ("index_max", "max")):  # fmt: skip
        setattr(jax.ops, _name, lambda x, idx, y, _m=_method: getattr(x.at[idx], _m)(y))

if "jax.config" not in sys.modules or not hasattr(sys.modules["jax.config"], "config"):
    _config_module = types.ModuleType("jax.config")
    _config_module.config = jax.config  # type: ignore[attr-defined]
    sys.modules["jax.config"] = _config_module

if not hasattr(jnp, "DeviceArray"):
    jnp.DeviceArray = jax.Array  # type: ignore[attr-defined]

_clip = jnp.clip


def _clip_with_old_names(a, a_min=None, a_max=None, *args, **kwargs):  # type: ignore[no-untyped-def]
    """``jnp.clip`` with the keywords ``a_min`` and ``a_max`` it had before ``min`` and ``max``."""
    if a_min is not None:
        kwargs["min"] = a_min
    if a_max is not None:
        kwargs["max"] = a_max
    return _clip(a, *args, **kwargs)


jnp.clip = _clip_with_old_names  # type: ignore[assignment]
