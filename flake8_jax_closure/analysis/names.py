"""The qualified names the analysis knows: what compiles, what passes a function through, what
makes a mutable reference that compiled code reads live."""

from __future__ import annotations

import ast

# Transforms that trace once and cache the result: the ones that make captures stale.
COMPILE_FUNCTIONS: frozenset[str] = frozenset(
    {
        "jax.jit",
        "jax.pmap",
        "jax.experimental.pjit.pjit",
        "equinox.filter_jit",
        "equinox.filter_pmap",
        # Flax NNX and linen wrap ``jax.jit`` and ``jax.pmap``: a global read by the function
        # stays baked into the trace after a rebinding, as with JAX's own.
        "flax.nnx.jit",
        "flax.nnx.pmap",
        "flax.linen.jit",
    }
)

# Compile transforms whose every wrapper has a cache of its own: ``nnx.jit(f)`` made again on
# the same ``f`` traces afresh, where ``jax.jit(f)`` shares ``f``'s cache with earlier wrappers.
OWN_CACHE_TRANSFORMS: frozenset[str] = frozenset({"flax.nnx.jit", "flax.nnx.pmap"})

# Compile transforms that make every argument that is not an array static, hashed by value:
# ``filter_jit(f)(x, 2.0)`` and ``(x, 3.0)`` are two traces, where ``jax.jit`` shares one;
# ``(x, 2.0)`` and ``(x, 2)`` are one (compared by ``==``), where ``jax.jit`` makes two.
NON_ARRAYS_STATIC: frozenset[str] = frozenset({"equinox.filter_jit", "equinox.filter_pmap"})

# Transforms that wrap a function without caching a trace of their own; compiling the wrapper
# compiles (and caches) the wrapped function.
PASSTHROUGH_TRANSFORMS: frozenset[str] = frozenset(
    {
        "jax.grad",
        "jax.value_and_grad",
        "jax.vmap",
        "jax.checkpoint",
        "jax.remat",
        "jax.jacfwd",
        "jax.jacrev",
        "jax.hessian",
        "jax.named_call",
        "jax.ad_checkpoint.checkpoint",
        "equinox.filter_grad",
        "equinox.filter_value_and_grad",
        "equinox.filter_vmap",
        "equinox.filter_checkpoint",
        # NNX's versions of the above; ``shard_map`` alone reads a rebound global again at each
        # call, inside ``nnx.jit`` it is traced (and cached) with the compiled function.
        "flax.nnx.grad",
        "flax.nnx.value_and_grad",
        "flax.nnx.vmap",
        "flax.nnx.remat",
        "flax.nnx.scan",
        "flax.nnx.shard_map",
        "functools.partial",
        "functools.wraps",
    }
)

PARTIAL = "functools.partial"

# Calls whose result is made from the function they are given: calling the result calls it.
FUNCTION_TRANSFORMS: frozenset[str] = PASSTHROUGH_TRANSFORMS | COMPILE_FUNCTIONS | {PARTIAL}

# Mutable references: compiled code reads their current contents, so writing through them is fine.
REF_CONSTRUCTORS: frozenset[str] = frozenset(
    {"jax.new_ref", "jax.ref.new_ref", "jax.experimental.mutable_array"}
)


def last_component(qualified_name: str) -> str:
    return qualified_name.rsplit(".", 1)[-1]


def dotted_name(expr: ast.expr) -> str | None:
    """``a.b.c`` for that chain of attributes of a name; None for any other expression."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        inner = dotted_name(expr.value)
        return None if inner is None else f"{inner}.{expr.attr}"
    return None


def assigned_targets(node: ast.AST) -> list[ast.expr]:
    """What an assignment statement stores into (``a = b = v``, ``a += v``, ``a: int = v``);
    nothing for any other node."""
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    return []


def last_name(expr: ast.expr) -> str | None:
    """``c`` for ``a.b.c`` or ``c``; None for any other expression."""
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else None


# Packages whose members, and their members' members, are modules, functions and classes:
# ``flax.core.pop(variables, "params")`` is flax's function returning a copy, not
# ``dict.pop`` on a value the package holds.
FUNCTIONAL_PACKAGES = frozenset(
    {"jax", "flax", "numpy", "optax", "equinox", "haiku", "chex", "scipy", "math", "numpyro"}
)
