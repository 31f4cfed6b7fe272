"""Loops whose iterable, as written, holds at most one item run no second pass: no pass after
a change in them reuses a trace made in an earlier one."""

from __future__ import annotations

import pytest

from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import Settings

PRELUDE = """import jax
import jax.numpy as jnp

scale = 1.0


@jax.jit
def total(x):
    return jnp.sum(x) * scale


"""


def _reported(loop_head: str, before: str = "") -> bool:
    body = "    total(jnp.ones(2))\n    scale = 2.0\n"
    return bool(check_source(f"{PRELUDE}{before}{loop_head}\n{body}", Settings()))


@pytest.mark.parametrize(
    ("before", "loop_head"),
    [
        ("", "for width in [3]:"),
        ("", "for width in ():"),
        ("", "for width in {0.5}:"),
        ("", "for i in range(1):"),
        ("", "for i in range(4, 5):"),
        ("widths = [3]\n", "for i, width in enumerate(widths):"),
        ("widths = [3]\nsizes = [0] * len(widths)\n", "for width in widths:"),
        ("", "for a, b in zip([1], [1, 2, 3]):"),
        ("", "for width in sorted((3,), reverse=True):"),
    ],
)
def test_a_loop_of_one_pass_shows_no_next_pass(before: str, loop_head: str) -> None:
    assert not _reported(loop_head, before)


@pytest.mark.parametrize(
    ("before", "loop_head"),
    [
        ("", "for width in [3, 4]:"),
        ("", "for i in range(2):"),
        ("", "for width in [*sizes]:"),
        # Grown in place, rebound, or bound in a loop: more items may come.
        ("widths = [3]\nwidths.append(4)\n", "for width in widths:"),
        ("widths = [3]\nwidths = widths + [4]\n", "for width in widths:"),
        ("widths = [3]\nmore = widths\nmore.append(4)\n", "for width in widths:"),
        ("widths = [3]\nprint(widths)\n", "for width in widths:"),
        # A ``range`` the module defines itself is not the builtin.
        ("def range(n):\n    return [0, 1]\n\n\n", "for i in range(1):"),
        ("", "for width in sorted((3,), key=abs) * 2:"),
    ],
)
def test_a_loop_that_may_run_again_keeps_its_next_pass(before: str, loop_head: str) -> None:
    assert _reported(loop_head, before)
