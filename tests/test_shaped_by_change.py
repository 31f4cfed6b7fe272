"""Arguments whose shape the changed name sets: a compiled call given an array sized by the
name since its last change reuses a trace only with the value that trace read."""

from __future__ import annotations

import pytest

from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import Settings

PRELUDE = """import jax
import jax.numpy as jnp
from jax import random

key = random.PRNGKey(0)
n = 3


@jax.jit
def total(x):
    return jnp.sum(x) * n


"""


def _reported(statements: str) -> bool:
    return bool(check_source(PRELUDE + statements, Settings()))


@pytest.mark.parametrize(
    "make",
    [
        "jnp.ones(n)",
        "jnp.zeros((2, n))",
        "jnp.full((n + 1,), 0.5)",
        "jnp.empty((3 * n, 2))",
        "random.normal(key, (n,))",
        "random.multivariate_normal(key, jnp.zeros(2), jnp.eye(2), (n,)).T",
        "random.uniform(key, shape=(n, 2))",
    ],
)
def test_an_argument_sized_by_the_name_at_every_call_is_no_reuse(make: str) -> None:
    statements = f"x = {make}\ntotal(x)\nn = 4\nx = {make}\ntotal(x)\n"
    assert not _reported(statements)


@pytest.mark.parametrize(
    "statements",
    [
        # A size that two values share: ``n // 2`` is 1 for both 3 and 2.
        "x = jnp.ones(n // 2)\ntotal(x)\nn = 2\nx = jnp.ones(n // 2)\ntotal(x)\n",
        # Not made by a maker of shapes: ``jnp.array`` of a list whose values hold ``n``.
        "x = jnp.array([n])\ntotal(x)\nn = 4\nx = jnp.array([n])\ntotal(x)\n",
        # Made in a branch: the call may get the array made before the change.
        "x = jnp.ones(n)\ntotal(x)\nn = 4\nif key is not None:\n    x = jnp.ones(n)\ntotal(x)\n",
        # Made before the change: the shape still tells the old value.
        "x = jnp.ones(n)\ntotal(x)\nn = 4\ntotal(x)\n",
    ],
)
def test_an_argument_that_does_not_tell_the_value_leaves_the_reuse(statements: str) -> None:
    assert _reported(statements)
