"""What a function of another module does with a function it is given: only calling it runs it
then and keeps nothing; anything else may keep it for a later call."""

from __future__ import annotations

import ast

import pytest

from flake8_jax_closure.analysis.callgraph.called_parameter import only_calls, receiving_parameter


def _def(source: str) -> ast.FunctionDef:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("return fn(x)", True),
        ("out = [0]\n    for c in x:\n        out.append(fn(fn(c)))\n    return out", True),
        ("return fn", False),
        ("return fn(x), fn", False),
        ("KEPT.append(fn)\n    return fn(x)", False),
        ("return lambda: fn(x)", False),
        ("def inner():\n        return fn(x)\n    return inner()", False),
        ("yield fn(x)", False),
        ("fn = other\n    return fn(x)", False),
        ("return helper(fn, x)", False),
        ("return print(x)", False),
        ("return [fn(c) for c in x]", True),
        ("return (fn(c) for c in x)", False),
        ("return sum(fn(c) for c in x)", False),
    ],
)
def test_only_calls(body: str, expected: bool) -> None:
    assert only_calls(_def(f"def render(fn, x):\n    {body}\n"), "fn") is expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("render(f, 1)", "fn"),
        ("render(1, f)", "x"),
        ("render(x=1, fn=f)", "fn"),
        ("render(*a, f)", None),
        ("render(1, 2, f)", None),
        ("render(1, key=f)", None),
        ("render(1, k=f)", "k"),
    ],
)
def test_receiving_parameter(call: str, expected: str | None) -> None:
    definition = _def("def render(fn, x, *, k=None):\n    pass\n")
    expression = ast.parse(call, mode="eval").body
    assert isinstance(expression, ast.Call)
    argument = next(
        node for node in ast.walk(expression) if isinstance(node, ast.Name) and node.id == "f"
    )
    assert receiving_parameter(definition, expression, argument) == expected
