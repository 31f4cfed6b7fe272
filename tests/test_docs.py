"""The rule pages the language server links to are the rules' own documentation, and exist."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_support import ROOT

from flake8_jax_closure.lsp import rule_url
from flake8_jax_closure.rules import CODES, rule_markdown

DOCS = ROOT / "docs" / "rules"


@pytest.mark.parametrize("code", CODES)
def test_rule_page_is_generated_from_the_rule(code: str, request: pytest.FixtureRequest) -> None:
    page = DOCS / f"{code}.md"
    expected = rule_markdown(code)
    assert expected is not None
    if request.config.getoption("--update-snapshots"):
        page.write_text(expected, encoding="utf-8")
    assert page.read_text(encoding="utf-8") == expected
    for section in ("What it does", "Why is this bad", "Example", "Use instead", "Fix safety"):
        assert f"\n## {section}\n" in expected
    assert rule_url(code) == page.resolve().as_uri()


def test_no_link_where_the_pages_are_not_at_hand(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An installation without the checkout's pages: no link to a page that is not there."""
    from flake8_jax_closure import lsp
    from flake8_jax_closure.diagnostics import Finding
    from flake8_jax_closure.positions import SourceLines

    monkeypatch.setattr(lsp, "_RULE_PAGES", tmp_path)
    assert lsp.rule_url("JC101") is None
    finding = Finding("JC101", "message", 1, 0, 1, 1)
    diagnostic = lsp._diagnostic(finding, "file:///m.py", SourceLines("x = 1\n"))
    assert diagnostic.code_description is None
    assert "`flake8-jax-closure rule JC101`" in lsp._hover_text(finding)
