"""A function a method makes anew from the object's own methods is the same function each time;
one that closes over a value of its run is not."""

from __future__ import annotations

import ast

import pytest

from flake8_jax_closure.analysis.facts.queries import Facts
from flake8_jax_closure.rules.jc104_self_attribute.own_functions import (
    made_from_own_methods,
    no_other_value,
)

SOURCE = """import functools

import jax


def helper(x):
    return x


class Trainer:
    def _loss(self, x):
        return x

    def _update(self, x, fn):
        return fn(x)

    def train(self, x):
        {body}
        self.step_fn = {value}
"""


def _made(body: str, value: str) -> bool:
    source = SOURCE.format(body=body, value=value)
    facts = Facts(ast.parse(source), source)
    facts.ensure_scope(facts.module_scope)
    (cls,) = [s for s in facts.module_scope.children if s.name == "Trainer"]
    facts.ensure_scope(cls)
    train = next(s for s in cls.children if s.name == "train")
    facts.ensure_scope(train)
    statement = train.node.body[-1]  # type: ignore[attr-defined]
    assert isinstance(statement, ast.Assign)
    methods = frozenset({"_loss", "_update", "train"})
    return made_from_own_methods(facts, train, "self", statement.value, methods)


@pytest.mark.parametrize(
    ("body", "value", "expected"),
    [
        ("grad_fn = jax.grad(self._loss)", "lambda y: self._update(y, grad_fn)", True),
        ("pass", "functools.partial(self._update, fn=helper)", True),
        ("pass", "jax.vmap(self._loss)", True),
        ("pass", "lambda y: helper(y) + self.scale * len(y)", True),
        ("lr = self.lr", "lambda y: y - lr * y", False),  # a value of this run
        ("pass", "lambda y: y * x", False),  # the method's argument
        ("grad_fn = jax.grad(self.lr)", "lambda y: grad_fn(y)", False),  # not a method
        ("pass", "make_step(self._loss)", False),  # an unknown factory
        ("pass", "lambda y: (lambda z: z)(y)", False),
        ("fn = helper\n        fn = self._loss", "lambda y: fn(y)", False),  # bound twice
    ],
)
def test_made_from_own_methods(body: str, value: str, expected: bool) -> None:
    assert _made(body, value) is expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("class A:\n    def f(self):\n        self.fn = 1\n", True),
        ("class A(ABC):\n    fn: int\n", True),  # a bare annotation gives no value
        ("class A:\n    fn = None\n", False),  # a class default
        ("class B:\n    fn = 0\nclass A(B):\n    pass\n", False),
        ("class A(Base):\n    pass\n", False),  # a base class elsewhere may bind it
        ("class A(metaclass=Meta):\n    pass\n", False),
    ],
)
def test_no_other_value(source: str, expected: bool) -> None:
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "A")
    assert no_other_value(tree, cls, "fn") is expected
