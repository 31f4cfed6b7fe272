"""The README's figures and examples are the tool's real output."""

from __future__ import annotations

import io
import re
from collections import Counter

from fixture_support import FIXTURES, ROOT

from flake8_jax_closure.cli import main

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_fix_share_table_matches_the_snapshots() -> None:
    counts: Counter[str] = Counter()
    for path in FIXTURES.glob("*/*.findings"):
        for line in path.read_text(encoding="utf-8").splitlines():
            match = re.match(r"    (fix \((safe|unsafe)\)|no fix)", line)
            if match:
                counts[match.group(2) or "none"] += 1
    total = sum(counts.values())
    for kind in ("safe", "unsafe", "none"):
        share = round(100 * counts[kind] / total)
        assert f"| {kind} | {counts[kind]} | {share}% |" in README


def test_seed_diff_in_readme_is_the_real_diff(monkeypatch: object) -> None:
    monkeypatch.chdir(ROOT)  # type: ignore[attr-defined]
    out = io.StringIO()
    main(["diff", "fixtures/JC101/seed.py"], stdout=out, stderr=io.StringIO())
    assert out.getvalue() in README.replace("```diff\n", "")


def test_readme_opens_with_the_two_commands() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", README, re.S)
    assert "flake8-jax-closure check fixtures/JC101/seed.py" in blocks[0]
    assert "pip install '.[test]'" in blocks[1] and "pytest" in blocks[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install --quiet '.[test]'" in ci and "python -m pytest -q" in ci


def test_speed_section_is_the_benchmark_output() -> None:
    """The README's speed tables are written by benchmarks/run.py --write, never by hand."""
    results = (ROOT / "benchmarks" / "results.md").read_text(encoding="utf-8")
    start = "<!-- benchmark results: written by benchmarks/run.py --write -->\n"
    end = "<!-- end of benchmark results -->\n"
    section = README.split(start, 1)[1].split(end, 1)[0]
    assert section == results
    assert "| goal | measured | target | met |" in results


def test_seed_check_in_readme_is_the_real_output(monkeypatch: object) -> None:
    monkeypatch.chdir(ROOT)  # type: ignore[attr-defined]
    out = io.StringIO()
    main(["check", "--no-cache", "fixtures/JC101/seed.py"], stdout=out, stderr=io.StringIO())
    assert f"$ flake8-jax-closure check fixtures/JC101/seed.py\n{out.getvalue()}```" in README


def test_notebook_check_and_diff_in_readme_are_the_real_output(monkeypatch: object) -> None:
    monkeypatch.chdir(ROOT)  # type: ignore[attr-defined]
    path = "fixtures/JC102/notebook_global.ipynb"
    check, diff = io.StringIO(), io.StringIO()
    main(["check", "--no-cache", path], stdout=check, stderr=io.StringIO())
    main(["diff", path], stdout=diff, stderr=io.StringIO())
    shown = f"$ flake8-jax-closure check {path}\n{check.getvalue()}"
    shown += f"$ flake8-jax-closure diff {path}\n{diff.getvalue()}$ flake8-jax-closure fix {path}"
    assert shown in README
