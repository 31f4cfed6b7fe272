"""The rule pages the language server links to are the rules' own documentation."""

from __future__ import annotations

import pytest
from fixture_support import ROOT

from flake8_jax_closure.lsp import rule_url
from flake8_jax_closure.rules import RULES, rule_markdown

DOCS = ROOT / "docs" / "rules"


@pytest.mark.parametrize("code", [rule.code for rule in RULES])
def test_rule_page_is_generated_from_the_rule(code: str, request: pytest.FixtureRequest) -> None:
    page = DOCS / f"{code}.md"
    expected = rule_markdown(code)
    assert expected is not None
    if request.config.getoption("--update-snapshots"):
        page.write_text(expected, encoding="utf-8")
    assert page.read_text(encoding="utf-8") == expected
    for section in ("What it does", "Why is this bad", "Example", "Use instead", "Fix safety"):
        assert f"\n## {section}\n" in expected
    assert rule_url(code).endswith(f"/docs/rules/{code}.md")
