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
