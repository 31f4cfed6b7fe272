"""Every fixture's findings, compared exactly with its snapshot and its inline marks."""

from __future__ import annotations

import pytest
from fixture_support import Fixture, fixtures, render

from flake8_jax_closure.engine import check_source

FIXTURES = fixtures()


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_findings_match_snapshot(fixture: Fixture, request: pytest.FixtureRequest) -> None:
    actual = render(check_source(fixture.source, fixture.settings()))
    if request.config.getoption("--update-snapshots"):
        fixture.findings_path.write_text(actual, encoding="utf-8")
    assert fixture.findings_path.exists(), f"no snapshot for {fixture.name}"
    assert actual == fixture.findings_path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "fixture", [f for f in FIXTURES if not f.is_verbatim], ids=lambda f: f.name
)
def test_inline_marks_match_findings(fixture: Fixture) -> None:
    found = [(f.line, f.code) for f in check_source(fixture.source, fixture.settings())]
    assert found == fixture.marked()


def test_negative_fixtures_are_clean() -> None:
    negatives = [f for f in FIXTURES if "negative" in f.name or f.name.startswith("seed_solution1")]
    assert negatives, "negative fixtures exist"
    for fixture in negatives:
        assert check_source(fixture.source, fixture.settings()) == [], fixture.name


def test_seed_reports_the_users_bug_on_line_39() -> None:
    seed = next(f for f in FIXTURES if f.name == "seed")
    (finding,) = check_source(seed.source, seed.settings())
    assert (finding.code, finding.line, finding.name, finding.function) == (
        "JC101",
        39,
        "weights",
        "jitted_mult",
    )
    assert "rebound at line 43 in 'update_locally_created'" in finding.message


def test_every_rule_has_positive_and_negative_fixtures() -> None:
    from flake8_jax_closure.rules import RULES

    names = [f.name for f in FIXTURES]
    for rule in RULES:
        assert any(n.startswith(rule.code) and "negative" not in n for n in names), rule.code
        assert any(n.startswith(rule.code) and "negative" in n for n in names), rule.code
