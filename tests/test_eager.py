"""Calls under ``jax.disable_jit()`` run eagerly; calls in functions defined there do not."""

from __future__ import annotations

import ast

import pytest

from flake8_jax_closure.analysis.eager import runs_eagerly
from flake8_jax_closure.analysis.facts.queries import Facts

SOURCE = """import jax
from jax import disable_jit as no_jit
import contextlib

with jax.disable_jit():
    under_jax()

    def later():
        in_def()

with no_jit():
    under_alias()
with jax.disable_jit(False):
    turned_back_on()
with contextlib.nullcontext():
    other_context()
outside()
"""


@pytest.mark.parametrize(
    ("callee", "eager"),
    [
        ("under_jax", True),
        ("in_def", False),
        ("under_alias", True),
        ("turned_back_on", False),
        ("other_context", False),
        ("outside", False),
    ],
)
def test_a_call_under_disable_jit_runs_eagerly(callee: str, eager: bool) -> None:
    facts = Facts(ast.parse(SOURCE), SOURCE)
    call = next(
        n
        for n in ast.walk(facts.tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == callee
    )
    assert runs_eagerly(facts, facts.module_scope, call) is eager
