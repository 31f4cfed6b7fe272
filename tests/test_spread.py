"""A large module's fixes rewritten in several processes give exactly what one process gives."""

from __future__ import annotations

import sys

import pytest
from fixture_support import ROOT, fixtures

from flake8_jax_closure.engine import _analyse_selected, fix_source
from flake8_jax_closure.fix import spread
from flake8_jax_closure.fix.rewrite import rewrite
from flake8_jax_closure.settings import Settings

sys.path.insert(0, str(ROOT / "benchmarks"))
from run import generated_module  # noqa: E402

EVERYTHING = Settings(unsafe_fixes=True)


def _plans(source: str, settings: Settings = EVERYTHING) -> list:
    analysis = _analyse_selected(source, settings, True, None)
    if analysis is None:
        return []
    return list({id(plan): plan for plan in analysis.plans.values()}.values())


def _same(source: str, plans: list, processes: int) -> None:
    alone, shared = rewrite(source, plans), spread.rewrite_all(source, plans, processes)
    assert shared.text == alone.text
    assert shared.failed == alone.failed
    assert shared.edits == alone.edits


@pytest.mark.skipif(not spread._can_fork(), reason="processes are forked on Linux only")
def test_a_large_module_in_two_and_three_processes() -> None:
    source = generated_module(1800)
    plans = _plans(source)
    assert len(plans) >= spread.PARALLEL_FROM
    for processes in (2, 3):
        _same(source, plans, processes)
    fixed = fix_source(source, EVERYTHING, processes=2)
    assert fixed.source == fix_source(source, EVERYTHING).source != source


@pytest.mark.skipif(not spread._can_fork(), reason="processes are forked on Linux only")
def test_fixes_sharing_statements_stay_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every fixture, its fixes shared out between processes even where they are few."""
    monkeypatch.setattr(spread, "PARALLEL_FROM", 2)
    shared = 0
    for fixture in fixtures():
        plans = _plans(fixture.source, fixture.settings(unsafe_fixes=True))
        if len(plans) >= 2:
            _same(fixture.source, plans, 2)
            shared += 1
    assert shared > 10


def test_groups_of_overlapping_statements() -> None:
    class Plan:
        def __init__(self, *statements: tuple[int, int]) -> None:
            self.statements = set(statements)

    a, b, c, d = Plan((1, 10)), Plan((5, 6), (40, 41)), Plan((20, 25)), Plan((41, 50))
    chunks = spread._chunks([a, b, c, d], 2)  # type: ignore[list-item]
    assert [set(map(id, chunk)) for chunk in chunks] == [{id(a), id(b), id(d)}, {id(c)}]
