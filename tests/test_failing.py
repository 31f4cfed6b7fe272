"""A compiled function whose trace makes a traced value concrete always raises; a loop that
calls one unconditionally never starts a second pass."""

from __future__ import annotations

import ast

import pytest

from flake8_jax_closure.analysis.pipeline import ModuleFacts

COMPILE_FUNCTIONS = ("jax.jit", "jax.pmap")

TEMPLATE = """import jax
from functools import partial

{decorator}
def compiled(x, n):
    y = x * 2
{body}

def step(x):
    return compiled(x, 3)

for i in range(3):
    step(i)
"""


@pytest.mark.parametrize(
    ("decorator", "body", "raises"),
    [
        ("@jax.jit", "    return float(y)", True),
        ("@jax.jit", "    return y.item()", True),
        ("@jax.jit", "    return int(x)", True),
        ("@jax.jit", "    return float(y.shape[0])", False),  # a shape is concrete
        ("@jax.jit", "    return int(len(x))", False),
        ("@partial(jax.jit, static_argnums=(1,))", "    return float(n)", False),
        ("@partial(jax.jit, static_argnames='n')", "    return float(n)", False),
        ("@jax.jit", "    if x is None:\n        return float(y)\n    return y", False),
        ("@jax.jit", "    return y\n    float(y)", False),  # after the return
        ("@jax.jit", "    f = lambda: float(y)\n    return y", False),  # may never run
    ],
)
def test_a_loop_calling_a_trace_that_cannot_finish_stops_in_its_first_pass(
    decorator: str, body: str, raises: bool
) -> None:
    source = TEMPLATE.format(decorator=decorator, body=body)
    module = ModuleFacts(ast.parse(source), source, COMPILE_FUNCTIONS)
    loop = next(n for n in module.facts.tree.body if isinstance(n, ast.For))
    assert module.graph.stops_in_first_pass(module.facts.module_scope, loop) is raises
