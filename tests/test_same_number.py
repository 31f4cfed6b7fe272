"""A name bound again to arithmetic on numbers written in the code binds the number it
computes: two spellings of one number (of one type) are no change."""

from __future__ import annotations

import pytest

from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import Settings

PRELUDE = """import jax

RATE = {first}


@jax.jit
def scaled(x):
    return x * RATE


scaled(1.0)
RATE = {second}
scaled(1.0)
"""


def _reported(first: str, second: str) -> bool:
    return bool(check_source(PRELUDE.format(first=first, second=second), Settings()))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("0.99", "1 - 1 / 100"),
        ("50", "5 * 10"),
        ("-2", "-(1 + 1)"),
        ("0.5", "+0.5"),
        ("3", "7 // 2"),
    ],
)
def test_one_number_written_two_ways_is_no_change(first: str, second: str) -> None:
    assert not _reported(first, second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("0.99", "1 - 1 / 99"),
        # An int and a float of one value: a trace may read them apart (``range(RATE)``).
        ("50", "50.0"),
        ("1", "True"),
        # Not arithmetic on numbers.
        ("0.5", "abs(-0.5) + x"),
        ("1", "1 / 0"),
    ],
)
def test_other_numbers_or_other_types_are_a_change(first: str, second: str) -> None:
    assert _reported(first, second)
