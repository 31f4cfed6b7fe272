"""Module-level statements of a notebook's cells not run that always raise ``NameError``, and
the code after them that never runs. A name counts as defined when anything binds it anywhere,
when it is a builtin or one of IPython's, and always in a module that may bind names unseen."""

from __future__ import annotations

import ast
import json

import pytest

from flake8_jax_closure.analysis.reachable import never_runs
from flake8_jax_closure.analysis.unbound import note_lines_not_run, raises_name_error
from flake8_jax_closure.engine import check_source
from flake8_jax_closure.files import decode
from flake8_jax_closure.notebook.magics import mask_cell
from flake8_jax_closure.notebook.reader import read_notebook
from flake8_jax_closure.settings import Settings

EVERY_LINE = ((1, 10_000),)


def _parsed(source: str, not_run: tuple[tuple[int, int], ...] = EVERY_LINE) -> ast.Module:
    tree = ast.parse(source)
    note_lines_not_run(tree, not_run)
    return tree


def _raising(source: str) -> list[int]:
    """The lines of the module-level statements that always raise ``NameError``, the whole
    module being cells not run."""
    tree = _parsed(source)
    return [s.lineno for s in tree.body if raises_name_error(tree, s) is not None]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("x = undefined_thing + 1\n", [1]),
        ("for batch in load_batches(8):\n    pass\n", [1]),
        ("if flag:\n    pass\n", [1]),
        ("print(len([1]), range(3), display, get_ipython, _i3, _5, __file__)\n", []),
        ("f = lambda: undefined_thing\n", []),  # a lambda's body runs when it is called
        ("xs = [undefined_thing for _ in range(3)]\n", []),
        ("y = 1 and undefined_thing\n", []),  # a short circuit may skip it
        ("y = 1 if True else undefined_thing\n", []),
        ("y = 1 < 2 < undefined_thing\n", []),  # a chained comparison may stop early
        ("def f():\n    global later\n    later = 1\nprint(later)\n", []),
        ("def f(later):\n    return later\nprint(later)\n", []),  # bound somewhere: left alone
        ("try:\n    pass\nexcept ImportError as later:\n    pass\nprint(later)\n", []),
        ("from m import *\nprint(undefined_thing)\n", []),  # may bind anything
        ("globals()['a'] = 1\nprint(a)\n", []),
        ("import sys\nsys.modules[__name__].a = 1\nprint(a)\n", []),
        ("import builtins\nbuiltins.a = 1\nprint(a)\n", []),
        ("setattr(module, 'a', 1)\nprint(a)\n", []),
        ("class A:\n    def f(self):\n        setattr(self, 'a', 1)\nprint(a)\n", [4]),
        ("def f():\n    return undefined_thing\n", []),  # only module-level statements
    ],
)
def test_statements_that_always_raise_name_error(source: str, expected: list[int]) -> None:
    assert _raising(source) == expected


def test_nothing_after_the_raising_statement_runs() -> None:
    source = (
        "for epoch in range(3):\n"  # 1
        "    for x, y in data_iter(8):\n"  # 2
        "        step(x)\n"  # 3
        "    report(epoch)\n"  # 4
        "done()\n"  # 5: runs when range(3) is empty, as far as the analysis knows
        "def step(x):\n    return x\n"
    )
    assert [line for line in range(1, 6) if never_runs(_parsed(source), line)] == [3, 4]


def test_code_of_a_function_is_not_looked_at() -> None:
    assert not never_runs(_parsed("def f():\n    g(undefined_thing)\n    h()\n"), 3)


def test_only_the_cells_not_run_are_looked_at() -> None:
    source = "x = undefined_thing\ny = other_undefined_thing\nz = 1\n"
    assert not never_runs(_parsed(source, ()), 3)  # a script: IPython may give it names
    assert not never_runs(_parsed(source, ((3, 3),)), 3)
    assert never_runs(_parsed(source, ((2, 2),)), 3)


def _cell(count: object, outputs: list[dict[str, object]]) -> dict[str, object]:
    return {
        "cell_type": "code",
        "execution_count": count,
        "metadata": {},
        "outputs": outputs,
        "source": "x = 1\n",
    }


@pytest.mark.parametrize(
    ("cell", "ran"),
    [
        (_cell(3, []), True),
        (_cell(None, [{"output_type": "stream", "name": "stdout", "text": "1"}]), True),
        (_cell(None, []), False),
        (_cell(0, []), False),  # some tools save 0 for a cell that did not run
        (_cell(4, [{"output_type": "error", "ename": "NameError", "evalue": "x"}]), False),
        (_cell(4, [{"output_type": "error", "ename": "ValueError", "evalue": "x"}]), True),
    ],
)
def test_a_cell_ran_when_its_count_or_outputs_show_it(cell: dict[str, object], ran: bool) -> None:
    document = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(document)
    notebook = read_notebook(decode(text.encode(), "nb.ipynb"))
    assert notebook.lines_not_run == (() if ran else ((1, 1),))


def test_a_magic_that_binds_names_unseen_stands_as_globals() -> None:
    lines = ["%run helpers.py\n", "  %store -r batches\n", "%pylab inline\n", "%matplotlib\n"]
    masked_lines, masked = mask_cell(lines)
    assert masked_lines == ["globals()\n", "  globals()\n", "globals()\n", "pass\n"]
    assert masked == {0, 1, 2, 3}


RUN_AFTER_A_RUN_MAGIC = """import jax
import jax.numpy as jnp

scale = 2.0


@jax.jit
def step(x):
    return x * scale


print(step(jnp.ones(3)))
scale = 3.0
{magic}
for batch in load_batches(8):
    print(step(batch))
"""


@pytest.mark.parametrize(("magic", "found"), [("pass", 0), ("globals()", 1)])
def test_a_name_that_a_run_magic_may_bind_is_not_taken_for_an_error(magic: str, found: int) -> None:
    """``%run helpers.py`` (masked as ``globals()``) may define ``load_batches``: the loop may
    run, and its compiled calls keep the first ``scale``."""
    findings = check_source(
        RUN_AFTER_A_RUN_MAGIC.format(magic=magic), Settings(), lines_not_run=EVERY_LINE
    )
    assert [f.code for f in findings] == ["JC102"] * found
