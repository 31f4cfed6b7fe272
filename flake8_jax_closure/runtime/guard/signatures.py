"""Which trace a call reuses: the key JAX caches a call's trace under, or an approximation.

A stale record matters only when the call reuses its trace. For ``jax.jit`` the guard computes
JAX's own cache signature of the call (exact); for the other transforms a coarse one that may
take two calls for one (never taken as exact, so every trace it matches stays a candidate).
"""

from __future__ import annotations

from typing import Any

EXACT, COARSE = "exact", "coarse"


def jit_signature(compiled: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The key JAX's ``jit`` caches the call's trace under: static arguments, the structure
    of the others, their shapes and dtypes (None when it cannot be computed)."""
    try:
        from jax._src import core, tree_util
        from jax._src.lib import jax_jit

        info = compiled._jit_info
        signature, dynamic = jax_jit.parse_arguments(
            args,
            tuple(kwargs.values()),
            tuple(kwargs),
            info.static_argnums,
            info.static_argnames,
            tree_util.tracing_registry,
        )
        avals = tuple(core.shaped_abstractify(value) for value in dynamic)  # type: ignore[no-untyped-call]
        return (EXACT, info, signature, avals)
    except Exception:  # noqa: BLE001 - private API: fall back on the coarse signature
        return None


def coarse_signature(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """For transforms that do not say how they key their traces (pmap, equinox): the
    structure of the arguments, shape, dtype and weak type of each array, every other leaf by
    value. Equal for two calls JAX may still tell apart (hence never taken as exact), and
    different for calls that differ only in spelling (then every trace is a candidate)."""
    try:
        import jax
        import numpy as np

        leaves, structure = jax.tree_util.tree_flatten((args, kwargs))
        parts: list[Any] = []
        for leaf in leaves:
            if isinstance(leaf, (jax.Array, np.ndarray, np.generic)):
                weak = bool(getattr(leaf, "weak_type", False))
                parts.append((np.shape(leaf), str(leaf.dtype), weak))
            else:
                parts.append(("static", leaf))
        signature = (COARSE, structure, tuple(parts))
        hash(signature)
        return signature
    except Exception:  # noqa: BLE001 - unhashable or opaque arguments: no signature
        return None


def same_signature(left: Any, right: Any) -> bool:
    try:
        return left is not None and bool(left == right)
    except Exception:  # noqa: BLE001 - static values that cannot be compared: not the same
        return False
