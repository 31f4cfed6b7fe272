"""Every fixture's findings, compared exactly with its snapshot, its inline marks and its header."""

from __future__ import annotations

import re

import pytest
from fixture_support import (
    COMBINED,
    FIXTURES,
    RULE_CODES,
    Fixture,
    FixtureHeaderError,
    fixtures,
    parse_header,
    render,
)

from flake8_jax_closure.engine import check_source
from flake8_jax_closure.rules import HAZARDS
from flake8_jax_closure.settings import Settings

FIXTURES_FOUND = fixtures()


@pytest.mark.parametrize("fixture", FIXTURES_FOUND, ids=lambda f: f.name)
def test_findings_match_snapshot(fixture: Fixture, request: pytest.FixtureRequest) -> None:
    actual = render(check_source(fixture.source, fixture.settings()))
    if request.config.getoption("--update-snapshots"):
        fixture.findings_path.write_text(actual, encoding="utf-8")
    assert fixture.findings_path.exists(), f"no snapshot for {fixture.name}"
    assert actual == fixture.findings_path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "fixture", [f for f in FIXTURES_FOUND if not f.is_verbatim], ids=lambda f: f.name
)
def test_inline_marks_match_findings(fixture: Fixture) -> None:
    found = [(f.line, f.code) for f in check_source(fixture.source, fixture.settings())]
    assert found == fixture.marked()


@pytest.mark.parametrize("fixture", FIXTURES_FOUND, ids=lambda f: f.name)
def test_findings_are_what_the_header_expects(fixture: Fixture) -> None:
    found = check_source(fixture.source, fixture.settings())
    assert bool(found) == fixture.expects_findings
    if fixture.expects_findings and fixture.path.parent.name == COMBINED:
        # A combined fixture is about rules working together: each rule it names has findings.
        # A rule's API hazards count as that rule's (JC202 is JC102's).
        assert {HAZARDS.get(f.code, f.code) for f in found} == set(fixture.rules)


def test_fixtures_expecting_none_are_clean_under_every_rule() -> None:
    """One rule runs per fixture, but a clean program stays clean with all of them selected."""
    clean = [f for f in FIXTURES_FOUND if not f.expects_findings]
    assert clean, "fixtures that expect no finding exist"
    for fixture in clean:
        assert check_source(fixture.source, fixture.settings(select=("JC",))) == [], fixture.name


def test_seed_reports_the_users_bug() -> None:
    """The user's report, kept verbatim under a two-line header: their line 39 is line 41."""
    (seed,) = [f for f in FIXTURES_FOUND if f.is_verbatim]
    assert seed.name == "JC101/seed"
    (finding,) = check_source(seed.source, seed.settings())
    assert (finding.code, finding.line, finding.name, finding.function) == (
        "JC101",
        41,
        "weights",
        "jitted_mult",
    )
    assert "rebound at line 45 in 'update_locally_created'" in finding.message


def test_every_rule_has_a_folder_with_positive_and_negative_fixtures() -> None:
    folders = sorted(path.name for path in FIXTURES.iterdir() if path.is_dir())
    assert folders == sorted([*RULE_CODES, COMBINED])
    assert not list(FIXTURES.glob("*.py")), "fixtures live in a folder per rule"
    for code in RULE_CODES:
        own = [f for f in FIXTURES_FOUND if f.rules == (code,)]
        assert any(f.expects_findings for f in own), code
        assert any(not f.expects_findings for f in own), code


@pytest.mark.parametrize(
    ("source", "folder", "message"),
    [
        ('"""No header."""\n', "JC101", "must start with '# expect: findings'"),
        ("# expect: some\n", "JC101", "not 'some'"),
        ("# expect: none\n# expect: none\n", "JC101", "m.py:2: 'expect' given twice"),
        ("# expect: none\n# fixture-options: -x\n", "JC101", "m.py:2: unknown key"),
        ("# expect: none\n# rules: JC101, JC102\n", "JC101", "'rules' belongs in combined/"),
        ("# expect: none\n", COMBINED, "names its rules"),
        ("# expect: none\n# rules: JC101, JC999\n", COMBINED, "two or more of JC101"),
        ("# expect: none\n# options: --select=JC1\n", "JC101", "unknown option '--select=JC1'"),
        ("# expect: none\n", "JC999", "JC999/ is neither a rule nor combined/"),
    ],
)
def test_a_malformed_header_is_named(source: str, folder: str, message: str) -> None:
    with pytest.raises(FixtureHeaderError, match=re.escape(message)) as raised:
        parse_header(source, folder, "m.py")
    assert str(raised.value).startswith("m.py")


def test_a_header_selects_rules_and_adds_compile_functions() -> None:
    header = parse_header(
        "# expect: findings\n# rules: JC101, JC102\n"
        "# options: --jax-compile-functions=a.jit,b.jit\n"
        '"""Docstring: not a header line."""\n',
        COMBINED,
        "m.py",
    )
    assert header.rules == ("JC101", "JC102") and header.expects_findings
    assert header.compile_functions == ("a.jit", "b.jit") and not header.verbatim
    settings = Fixture(FIXTURES / COMBINED / "m.py", header).settings(unsafe_fixes=True)
    assert settings.select == ("JC101", "JC102", "JC201", "JC202") and settings.unsafe_fixes
    assert {"a.jit", "b.jit"} <= settings.compile_functions - Settings().compile_functions
