"""A module-level table that only gains entries, each stored where the ``if`` around it found
the key missing, and read entry by entry: filling it changes no entry a trace read."""

from __future__ import annotations

import pytest

from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import Settings

SOURCE = """import jax
import jax.numpy as jnp

{table}


def nodes(n):
{fill}
    return _NODES[n]


@jax.jit
def total(x):
    return jnp.sum(nodes(8)) * x


for n in (4, 8, 16):
    total(jnp.ones(2))
    nodes(n)
{after}"""

GUARDED = "    if n not in _NODES:\n        _NODES[n] = jnp.arange(n)"


def _reported(table: str = "_NODES = {}", fill: str = GUARDED, after: str = "") -> bool:
    source = SOURCE.format(table=table, fill=fill, after=after)
    return bool(check_source(source, Settings()))


@pytest.mark.parametrize(
    ("table", "fill"),
    [
        ("_NODES = {}", GUARDED),
        ("_NODES = dict()", GUARDED),
        (
            "_NODES = {}",
            "    if n not in _NODES:\n        values = jnp.arange(n)\n        _NODES[n] = values",
        ),
    ],
)
def test_a_table_that_only_gains_entries_changes_nothing(table: str, fill: str) -> None:
    assert not _reported(table, fill)


@pytest.mark.parametrize(
    ("table", "fill", "after"),
    [
        # Stored without looking, or under another test.
        ("_NODES = {}", "    _NODES[n] = jnp.arange(n)", ""),
        ("_NODES = {}", "    if n > 4:\n        _NODES[n] = jnp.arange(n)", ""),
        ("_NODES = {}", "    if n not in _NODES:\n        _NODES[n + 1] = jnp.arange(n)", ""),
        # Entries taken out, so a store may put another value under a key read before.
        ("_NODES = {}", GUARDED, "del _NODES[8]\n"),
        ("_NODES = {}", GUARDED, "_NODES.clear()\n"),
        ("_NODES = {}", GUARDED, "_NODES = {}\n"),
        # Read otherwise than entry by entry.
        ("_NODES = {}", GUARDED, "print(len(_NODES))\n"),
    ],
)
def test_a_table_that_may_change_an_entry_counts(table: str, fill: str, after: str) -> None:
    assert _reported(table, fill, after)
