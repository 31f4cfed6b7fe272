"""Statements after a jump in their block never run; nothing outside a block that ends the
program runs after it."""

from __future__ import annotations

import ast

import pytest

from flake8_jax_closure.analysis.reachable import after_a_jump, breaks_out, cut_off

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


EXITING = """import os
import sys

if dev:
    step(x)
    sys.exit(0)
elif other:
    step(x)
    raise SystemExit(1)
elif third:
    step(x)
    raise RuntimeError("not the end of the program: a caller may catch it")
else:
    step(x)
    os._exit(0)
step(x)
"""


@pytest.mark.parametrize(
    ("earlier", "later", "cut"),
    [
        (5, 6, False),  # in the block, before its exit
        (5, 16, True),  # after the block: never reached from inside it
        (8, 16, True),
        (11, 16, False),  # an exception other than SystemExit
        (14, 16, True),
        (16, 5, False),  # from outside into the block
    ],
)
def test_nothing_outside_a_block_that_ends_the_program_follows_it(
    earlier: int, later: int, cut: bool
) -> None:
    assert cut_off(ast.parse(EXITING), earlier, later) is cut


@pytest.mark.parametrize(
    ("body", "line", "ends"),
    [
        ("    x = 1\n    break\n", 2, True),  # the loop's own body ends the loop
        ("    if i:\n        x = 1\n        break\n", 3, True),
        ("    if i:\n        x = 1\n        break\n    y = 2\n", 5, False),  # after the block
        ("    if i:\n        continue\n    x = 1\n    break\n", 4, False),  # may leave first
        ("    for j in i:\n        x = 1\n        break\n", 3, False),  # the inner loop's
        ("    try:\n        x = 1\n        break\n    except E:\n        pass\n", 3, False),
    ],
)
def test_a_block_that_breaks_ends_the_loop(body: str, line: int, ends: bool) -> None:
    loop = ast.parse("for i in items:\n" + body).body[0]
    assert breaks_out(loop, line) is ends
