"""A record replaced with the fields it already holds is the same value: a compiled call
traced before that rebinding computes what it would after. And code after a ``return`` is no
read of a trace."""

from __future__ import annotations

import ast

import pytest

from flake8_jax_closure.analysis.facts.queries import Facts
from flake8_jax_closure.analysis.repeated_setting import sets_what_it_holds
from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import Settings

PRELUDE = """import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

FAST = False


class Config(NamedTuple):
    snapshots: bool = True
    scale: float = 1.0


config = Config()
"""

COMPILED = """

@jax.jit
def simulate(x):
    return x * config.scale if config.snapshots else x


"""


def _reported(before: str, after: str) -> bool:
    source = f"{PRELUDE}{before}{COMPILED}print(simulate(jnp.ones(2)))\n{after}"
    source += "print(simulate(jnp.ones(2)))\n"
    return bool(check_source(source, Settings()))


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            "config = config._replace(snapshots=False)\n",
            "config = config._replace(snapshots=False)\n",
        ),
        (
            "config = config._replace(snapshots=FAST, scale=2.0)\n",
            "config = config._replace(snapshots=FAST)\n",
        ),
        # Set by two replaces, the second keeping what the first set.
        (
            "config = config._replace(scale=-1.0)\nconfig = config._replace(snapshots=False)\n",
            "config = config._replace(scale=-1.0, snapshots=False)\n",
        ),
        # Another replace in a branch between sets the same value, or other fields.
        (
            "config = config._replace(scale=2.0)\nif FAST:\n"
            "    config = config._replace(scale=2.0)\n",
            "config = config._replace(scale=2.0)\n",
        ),
    ],
)
def test_replacing_a_field_with_what_it_holds_changes_nothing(before: str, after: str) -> None:
    assert not _reported(before, after)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # No earlier replace, or one of another value.
        ("", "config = config._replace(snapshots=False)\n"),
        ("config = config._replace(scale=2.0)\n", "config = config._replace(scale=3.0)\n"),
        # The earlier one may not run: in a branch, or a loop of no pass.
        (
            "if FAST:\n    config = config._replace(scale=2.0)\n",
            "config = config._replace(scale=2.0)\n",
        ),
        (
            "for _ in []:\n    config = config._replace(scale=2.0)\n",
            "config = config._replace(scale=2.0)\n",
        ),
        # Bound otherwise between, or set otherwise by a branch between.
        (
            "config = config._replace(scale=2.0)\nconfig = Config(scale=2.0)\n",
            "config = config._replace(scale=2.0)\n",
        ),
        (
            "config = config._replace(scale=2.0)\nif FAST:\n"
            "    config = config._replace(scale=3.0)\n",
            "config = config._replace(scale=2.0)\n",
        ),
        # A value not fixed: a name bound twice, or a call.
        (
            "rate = 2.0\nrate = 3.0\nconfig = config._replace(scale=rate)\n",
            "config = config._replace(scale=rate)\n",
        ),
        (
            "config = config._replace(scale=float(2))\n",
            "config = config._replace(scale=float(2))\n",
        ),
        # A dataclass, which code may change through another name between the two.
        (
            "config = dataclasses.replace(config, scale=2.0)\n",
            "config = dataclasses.replace(config, scale=2.0)\n",
        ),
        # Changed in place, or replaced from another record.
        (
            "config = config._replace(scale=2.0)\nconfig.scale = 3.0\n",
            "config = config._replace(scale=2.0)\n",
        ),
        (
            "other = Config()\nconfig = config._replace(scale=2.0)\n",
            "config = other._replace(scale=2.0)\n",
        ),
    ],
)
def test_a_replace_that_may_set_a_new_value_counts(before: str, after: str) -> None:
    assert _reported(before, after)


def test_a_field_set_otherwise_later_in_the_loop_counts() -> None:
    loop = (
        "for step in range(3):\n"
        "    print(simulate(jnp.ones(2)))\n"
        "    config = config._replace(scale=2.0)\n"
        "    config = config._replace(scale=3.0)\n"
    )
    source = f"{PRELUDE}config = config._replace(scale=2.0){COMPILED}{loop}"
    assert check_source(source, Settings())


def test_a_read_after_a_return_is_no_read() -> None:
    source = (
        "import jax\n\nscale = 1.0\n\n\n@jax.jit\ndef f(x):\n"
        "    return x\n    return x * scale\n\n\n"
        "for step in range(3):\n    f(1.0)\n    scale = 2.0\n"
    )
    assert not check_source(source, Settings())
    reachable = source.replace("    return x\n", "    if x.ndim:\n        return x\n")
    assert check_source(reachable, Settings())


def test_a_name_bound_again_in_each_pass_is_no_fixed_value() -> None:
    """``rate`` is bound once in the text, but again in every pass: the replace after that
    binding may set another value than the one before it."""
    source = (
        "config = Config()\n"
        "for step in range(3):\n"
        "    config = config._replace(scale=rate)\n"
        "    rate = step * 2.0\n"
        "    config = config._replace(scale=rate)\n"
    )
    facts = Facts(ast.parse(source), source)
    bindings = facts.bindings_of(facts.module_scope, "config")
    last = max(bindings, key=lambda b: b.at)
    assert not sets_what_it_holds(facts, last, bindings)
    fixed = source.replace("    rate = step * 2.0\n", "").replace(
        "config = C", "rate = 2.0\nconfig = C"
    )
    facts = Facts(ast.parse(fixed), fixed)
    bindings = facts.bindings_of(facts.module_scope, "config")
    assert sets_what_it_holds(facts, max(bindings, key=lambda b: b.at), bindings)
