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


HELPERS = """def make_batch(batch, length):
    x = rng.normal(size=(batch, length)).astype("float32")
    mask = (np.arange(length)[None, :] < 2).astype("float32")
    return x * mask, mask


def scaled(length):
    return 2.0 * jnp.arange(length)


def filled(length):
    return jnp.full((4,), length)


def shrunk(length):
    length = 3
    return jnp.ones(length)


def batch_of_the_global():
    x = rng.normal(size=(2, n))
    return jnp.asarray(x, dtype=jnp.float32)


def batch_of_its_own():
    n = 3
    return jnp.ones(n)


"""


def _reported_with_helpers(statements: str) -> bool:
    source = PRELUDE.replace("import jax\n", "import jax\nimport numpy as np\n", 1)
    source += "rng = np.random.default_rng(0)\n\n\n" + HELPERS + statements
    return bool(check_source(source, Settings()))


@pytest.mark.parametrize(
    "make",
    [
        "x, mask = make_batch(8, n)",
        "mask, x = make_batch(8, length=n)",
        "x = scaled(n)",
        "x = np.arange(n)",
        "x = rng.normal(size=(2, n))",
        # The helper reads the global itself.
        "x = batch_of_the_global()",
    ],
)
def test_an_argument_a_helper_sizes_by_the_name_is_no_reuse(make: str) -> None:
    statements = f"{make}\ntotal(x)\nn = 4\n{make}\ntotal(x)\n"
    assert not _reported_with_helpers(statements)


@pytest.mark.parametrize(
    "make",
    [
        # The helper puts the name in the values, not the shape.
        "x = filled(n)",
        # The helper binds its parameter again before sizing with it.
        "x = shrunk(n)",
        # ``arange(0, n, 2)`` has one length for 3 and 4.
        "x = np.arange(0, n, 2)",
        # The name goes to the batch size of the mask the call is not given.
        "_, x = make_batch(n, 8)",
        # The helper's ``n`` is its own local.
        "x = batch_of_its_own()",
    ],
)
def test_an_argument_a_helper_does_not_size_by_the_name_leaves_the_reuse(make: str) -> None:
    statements = f"{make}\ntotal(x)\nn = 4\n{make}\ntotal(x)\n"
    assert _reported_with_helpers(statements)
