"""Statements after a jump in their block never run."""

from __future__ import annotations

import ast

import pytest

from flake8_jax_closure.analysis.reachable import after_a_jump

SOURCE = """for i in range(3):
    if i:
        break
        dead = 1
    alive = 2
    try:
        raise ValueError
        dead_too = 3
    except ValueError:
        handled = 4
        continue
        dead_in_handler = 5


def f():
    return 1
    dead_def = 6


while True:
    pass
else:
    in_else = 7
"""


@pytest.mark.parametrize(
    ("name", "dead"),
    [
        ("dead", True),
        ("alive", False),
        ("dead_too", True),
        ("handled", False),
        ("dead_in_handler", True),
        ("dead_def", True),
        ("in_else", False),
        ("i", False),
    ],
)
def test_a_statement_after_a_jump_in_its_block_is_dead(name: str, dead: bool) -> None:
    tree = ast.parse(SOURCE)
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name)
    assert after_a_jump(tree, node) is dead
