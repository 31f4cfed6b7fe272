"""A compiled function that calls an object it is given runs that object's ``__call__``: the
globals it reads are baked into the trace, when the module shows which class the object is."""

from __future__ import annotations

import pytest

from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import Settings

PRELUDE = """import jax
import jax.numpy as jnp

TEMPERATURE = 2.0


class Policy:
    def __call__(self, x):
        return x / TEMPERATURE


class Other:
    def __call__(self, x):
        return x


@jax.jit
def act(policy, x):
    return policy(x)


"""


def _reported(statements: str) -> list[str]:
    return [f.code for f in check_source(PRELUDE + statements, Settings())]


@pytest.mark.parametrize(
    "statements",
    [
        # A global bound once to an object of the class.
        "policy = Policy()\nact(policy, 1.0)\nTEMPERATURE = 0.5\nact(policy, 1.0)\n",
        # A local of the function that drives the loop.
        "def main():\n    global TEMPERATURE\n    policy = Policy()\n"
        "    for t in (2.0, 1.0):\n        TEMPERATURE = t\n        act(policy, 1.0)\n\n\n"
        "main()\n",
    ],
)
def test_a_global_read_by_the_object_s_call_is_read_by_the_trace(statements: str) -> None:
    assert _reported(statements) == ["JC102"]


@pytest.mark.parametrize(
    "statements",
    [
        # Objects of two classes: the code does not say which method runs.
        "p = Policy()\nq = Other()\nact(p, 1.0)\nact(q, 1.0)\nTEMPERATURE = 0.5\nact(p, 1.0)\n",
        # Handed on: another caller may give anything.
        "policy = Policy()\nrun = act\nact(policy, 1.0)\nTEMPERATURE = 0.5\nact(policy, 1.0)\n",
        # A name bound twice.
        "policy = Policy()\npolicy = Policy()\nact(policy, 1.0)\nTEMPERATURE = 0.5\n"
        "act(policy, 1.0)\n",
        # The change comes before the first call.
        "policy = Policy()\nTEMPERATURE = 0.5\nact(policy, 1.0)\nact(policy, 1.0)\n",
    ],
)
def test_an_object_of_an_unknown_class_or_a_change_before_the_trace_is_no_finding(
    statements: str,
) -> None:
    assert _reported(statements) == []
