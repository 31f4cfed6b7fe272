"""Static arguments key a compiled function's traces: a call given static values that no call
before the change gave traces anew, and so does every pass of a loop whose calls give a static
argument the loop's own counter."""

from __future__ import annotations

import pytest

from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import Settings

PRELUDE = """import jax
import jax.numpy as jnp

scale = 1.0


def evaluate(x, order, mode="sum"):
    return jnp.sum(x**order) * scale


x = jnp.ones(3)
"""


def _reported(compile_options: str, statements: str) -> bool:
    source = f"{PRELUDE}compiled = jax.jit(evaluate, {compile_options})\n{statements}"
    return bool(check_source(source, Settings()))


@pytest.mark.parametrize(
    ("options", "statements"),
    [
        ("static_argnums=1", "compiled(x, 2)\nscale = 2.0\ncompiled(x, 3)\n"),
        ("static_argnums=(1,)", "compiled(x, 2)\nscale = 2.0\ncompiled(x, -2)\n"),
        ("static_argnames='order'", "compiled(x, order=2)\nscale = 2.0\ncompiled(x, order=3)\n"),
        # JAX compares static values with their types: 2 and 2.0 are two traces.
        ("static_argnums=1", "compiled(x, 2)\nscale = 2.0\ncompiled(x, 2.0)\n"),
        # A name the module binds once to a constant.
        ("static_argnums=1", "two = 2\ncompiled(x, two)\nscale = 2.0\ncompiled(x, 3)\n"),
        (
            "static_argnames=('order', 'mode')",
            "compiled(x, 2, 'sum')\nscale = 2.0\ncompiled(x, 2, 'mean')\n",
        ),
        # Each pass gives the loop's counter.
        (
            "static_argnums=1",
            "for step in range(3):\n    scale = step\n    compiled(x, step)\n",
        ),
        (
            "static_argnums=1",
            "for step, b in enumerate([1, 2]):\n    scale = b\n    compiled(x, step)\n",
        ),
        # Each pass gives a constant of the loop's own list, different in every entry.
        (
            "static_argnums=1",
            "for order in (1, 2, 3):\n    scale = 0.5 * order\n    compiled(x, order)\n",
        ),
        (
            "static_argnums=1",
            "for order, s in ((5, 0.1), (10, 0.2)):\n    scale = s\n    compiled(x, order)\n",
        ),
    ],
)
def test_new_static_values_after_the_change_trace_anew(options: str, statements: str) -> None:
    assert not _reported(options, statements)


@pytest.mark.parametrize(
    ("options", "statements"),
    [
        # A value a call before the change gave: that trace is reused.
        ("static_argnums=1", "compiled(x, 2)\nscale = 2.0\ncompiled(x, 3)\ncompiled(x, 2)\n"),
        # The same value, through a name bound to it.
        ("static_argnums=1", "two = 2\ncompiled(x, 2)\nscale = 2.0\ncompiled(x, two)\n"),
        # By position, then by keyword: JAX keys them apart, but it is left undecided.
        ("static_argnums=1", "compiled(x, 2)\nscale = 2.0\ncompiled(x, order=3)\n"),
        # Left to its default, then given: JAX keys them apart, but it is left undecided.
        (
            "static_argnames=('order', 'mode')",
            "compiled(x, 2)\nscale = 2.0\ncompiled(x, 2, 'mean')\n",
        ),
        # Both options given: each is taken as written, so ``mode`` given by position is traced.
        (
            "static_argnums=1, static_argnames='mode'",
            "compiled(x, 2, 'sum')\nscale = 2.0\ncompiled(x, 2, 'mean')\n",
        ),
        # A comprehension's own variable, not the module's name of that spelling.
        (
            "static_argnums=1",
            "order = 3\ncompiled(x, 2)\nscale = 2.0\n[compiled(x, order) for order in [2]]\n",
        ),
        # Not a constant: the value is not known.
        ("static_argnums=1", "k = int(x[0])\ncompiled(x, k)\nscale = 2.0\ncompiled(x, 3)\n"),
        # Not static: the values are traced, not keyed.
        ("", "compiled(x, 2)\nscale = 2.0\ncompiled(x, 3)\n"),
        # A loop whose counter is rebound in the body, or that is not a counter at all.
        (
            "static_argnums=1",
            "for step in range(3):\n    scale = step\n    step = 0\n    compiled(x, step)\n",
        ),
        (
            "static_argnums=1",
            "for step in [1, 1]:\n    scale = step\n    compiled(x, step)\n",
        ),
        # Equal entries of the loop's list (``2`` and ``2.0``), or one not written as a constant.
        (
            "static_argnums=1",
            "for order, s in ((2, 0.1), (2.0, 0.2)):\n    scale = s\n    compiled(x, order)\n",
        ),
        (
            "static_argnums=1",
            "for order, s in ((2, 0.1), (x, 0.2)):\n    scale = s\n    compiled(x, order)\n",
        ),
        # The counter is the column that does not change from entry to entry.
        (
            "static_argnums=1",
            "for s, order in ((0.1, 2), (0.2, 2)):\n    scale = s\n    compiled(x, order)\n",
        ),
        # A ``range`` the module defines itself may repeat its values.
        (
            "static_argnums=1",
            "def range(n):\n    return [2] * n\n\n\n"
            "for step in range(3):\n    scale = step\n    compiled(x, step)\n",
        ),
    ],
)
def test_static_values_a_call_before_gave_leave_the_reuse(options: str, statements: str) -> None:
    assert _reported(options, statements)
