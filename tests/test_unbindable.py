"""Which calls of a compiled function cannot bind their arguments (and so raise before JAX
traces anything), as ``analysis.unbindable`` judges them."""

from __future__ import annotations

import ast
import textwrap

import pytest

from flake8_jax_closure.analysis.compiled import CompiledFunctionFinder
from flake8_jax_closure.analysis.facts.queries import Facts
from flake8_jax_closure.analysis.unbindable import cannot_bind
from flake8_jax_closure.settings import Settings


def _judge(definition: str, call: str, method: bool = False) -> bool:
    source = "import jax\nfrom functools import partial\n" + textwrap.dedent(definition)
    tree = ast.parse(source)
    (site,) = CompiledFunctionFinder(Facts(tree, source), Settings().compile_functions).find()
    expression = ast.parse(call, mode="eval").body
    assert isinstance(expression, ast.Call)
    return cannot_bind(site, expression, method)


PLAIN = "@jax.jit\ndef step(w, batch, lr=0.1):\n    return w\n"


@pytest.mark.parametrize(
    ("call", "raises"),
    [
        ("step(w, b)", False),
        ("step(w, batch=b, lr=0.5)", False),
        ("step(w)", True),  # missing 'batch'
        ("step(w, b, 0.1, 3)", True),  # too many positional arguments
        ("step(w, b, momentum=0.9)", True),  # unexpected keyword
        ("step(w, b, batch=b)", True),  # multiple values for 'batch'
        ("step(*args)", False),  # the code does not show what it unpacks
        ("step(w, **options)", False),
    ],
)
def test_a_plain_function(call: str, raises: bool) -> None:
    assert _judge(PLAIN, call) is raises


def test_a_function_taking_any_keyword_or_position() -> None:
    definition = "@jax.jit\ndef step(w, *rest, **options):\n    return w\n"
    assert not _judge(definition, "step(w, 1, 2, lr=0.1)")
    assert _judge(definition, "step()")


def test_keyword_only_parameters() -> None:
    definition = "@jax.jit\ndef step(w, *, lr, decay=0.9):\n    return w\n"
    assert not _judge(definition, "step(w, lr=0.1)")
    assert _judge(definition, "step(w)")
    assert _judge(definition, "step(w, 0.1)")


def test_a_method_binds_self() -> None:
    definition = """
    class Model:
        @partial(jax.jit, static_argnums=0)
        def apply(self, x):
            return x
    """
    assert not _judge(definition, "model.apply(x)", method=True)
    assert _judge(definition, "model.apply(x, y)", method=True)


def test_a_signature_another_decorator_may_change_is_not_judged() -> None:
    definition = "@jax.jit\n@register\ndef step(w):\n    return w\n"
    assert not _judge(definition, "step(w, 1, 2)")
    assert not _judge("fast = jax.jit(partial(step, 1))\ndef step(a, w):\n    return w\n", "fast()")


def test_positional_only_parameters() -> None:
    definition = "@jax.jit\ndef step(w, /, batch, **rest):\n    return w\n"
    assert not _judge(definition, "step(w, b, w=1)")  # 'w' by keyword goes into **rest
    assert _judge(definition, "step(batch=b)")  # 'w' is missing
