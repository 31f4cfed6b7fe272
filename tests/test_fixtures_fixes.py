"""Every fixture's fixed output, compared byte for byte; fixing is final and idempotent."""

from __future__ import annotations

import pytest
from fixture_support import Fixture, fixtures

from flake8_jax_closure.diagnostics import Applicability
from flake8_jax_closure.engine import check_source, fix_source

FIXABLE = [f for f in fixtures() if any(x.fix for x in check_source(f.source, f.settings()))]


def test_there_are_fixable_fixtures() -> None:
    assert len(FIXABLE) >= 5


@pytest.mark.parametrize("fixture", FIXABLE, ids=lambda f: f.name)
def test_fixed_output_matches_snapshot(fixture: Fixture, request: pytest.FixtureRequest) -> None:
    fixed = fix_source(fixture.source, fixture.settings(unsafe_fixes=True)).source
    if request.config.getoption("--update-snapshots"):
        fixture.fixed_path.write_text(fixed, encoding="utf-8")
    assert fixture.fixed_path.exists(), f"no fixed snapshot for {fixture.name}"
    assert fixed == fixture.fixed_path.read_text(encoding="utf-8")


@pytest.mark.parametrize("fixture", FIXABLE, ids=lambda f: f.name)
def test_fixed_output_keeps_only_findings_without_fix(fixture: Fixture) -> None:
    settings = fixture.settings(unsafe_fixes=True)
    before = check_source(fixture.source, settings)
    fixed = fix_source(fixture.source, settings).source
    after = check_source(fixed, settings)
    unfixable = sorted((f.code, f.name) for f in before if f.fix is None)
    assert sorted((f.code, f.name) for f in after) == unfixable
    assert all(f.fix is None for f in after)


@pytest.mark.parametrize("fixture", FIXABLE, ids=lambda f: f.name)
def test_fixing_twice_changes_nothing(fixture: Fixture) -> None:
    settings = fixture.settings(unsafe_fixes=True)
    once = fix_source(fixture.source, settings).source
    assert fix_source(once, settings).source == once


@pytest.mark.parametrize("fixture", FIXABLE, ids=lambda f: f.name)
def test_safe_fix_leaves_unsafe_findings(fixture: Fixture) -> None:
    findings = check_source(fixture.source, fixture.settings())
    result = fix_source(fixture.source, fixture.settings(unsafe_fixes=False))
    unsafe = [f for f in findings if f.fix and f.fix.applicability is Applicability.UNSAFE]
    assert {(f.line, f.name) for f in unsafe} <= {(f.line, f.name) for f in result.remaining}
    assert all(f.fix.applicability is Applicability.SAFE for f in result.fixed if f.fix)


def test_fixtures_expecting_none_are_left_byte_for_byte() -> None:
    for fixture in fixtures():
        if not fixture.expects_findings:
            result = fix_source(fixture.source, fixture.settings(unsafe_fixes=True))
            assert result.source == fixture.source, fixture.name


@pytest.mark.slow
def test_fixed_output_does_not_depend_on_hash_seed() -> None:
    """Regression: lifts of equally long paths were ordered by set iteration (hash seed)."""
    import os
    import subprocess
    import sys

    from fixture_support import FIXTURES

    source = (FIXTURES / "JC103" / "runnable_config.py").read_text(encoding="utf-8")
    outputs = {
        subprocess.run(
            [sys.executable, "-m", "flake8_jax_closure", "fix", "-"],
            input=source,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in range(1, 7)
    }
    assert outputs == {
        (FIXTURES / "JC103" / "runnable_config.fixed.py").read_text(encoding="utf-8")
    }


@pytest.mark.parametrize("fixture", FIXABLE, ids=lambda f: f.name)
def test_fixed_output_keeps_crlf_line_endings(fixture: Fixture) -> None:
    """A file with Windows line endings is fixed to the same text with Windows line endings:
    no line the fix writes, nested or not, ends with a bare ``\\n``."""
    settings = fixture.settings(unsafe_fixes=True)
    expected = fix_source(fixture.source, settings).source.replace("\n", "\r\n")
    assert fix_source(fixture.source.replace("\n", "\r\n"), settings).source == expected
