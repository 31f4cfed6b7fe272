"""A module's analysis is freed by reference counting the moment it is done: nothing is left
for the cyclic collector, which would walk every tree and fact of a run once more."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from fixture_support import fixtures

from flake8_jax_closure.engine import check_source, fix_source


@pytest.fixture
def saved_garbage() -> Iterator[list[object]]:
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield gc.garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


def test_the_analysis_leaves_no_cycles(saved_garbage: list[object]) -> None:
    left: dict[str, int] = {}
    for fixture in fixtures():
        settings = fixture.settings(unsafe_fixes=True)
        check_source(fixture.source, settings, with_edits=False)
        check_source(fixture.source, settings)
        fix_source(fixture.source, settings)
        if gc.collect():
            left[fixture.name] = len(saved_garbage)
            saved_garbage.clear()
    assert left == {}
