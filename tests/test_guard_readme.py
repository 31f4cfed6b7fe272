"""The README's guard section shows the guard's real output and the benchmark's real table."""

from __future__ import annotations

import io

import pytest
from fixture_support import ROOT

from flake8_jax_closure.cli import main

README = (ROOT / "README.md").read_text(encoding="utf-8")
START = "<!-- guard benchmark: written by benchmarks/guard_bench.py --write -->\n"
END = "<!-- end of guard benchmark -->\n"


def test_guard_table_is_the_benchmark_output() -> None:
    results = (ROOT / "benchmarks" / "guard_results.md").read_text(encoding="utf-8")
    assert README.split(START, 1)[1].split(END, 1)[0] == results
    assert "| compiled call reading 6 captured values |" in results


@pytest.mark.jax
def test_guard_example_is_the_real_output(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("jax")
    monkeypatch.chdir(ROOT)
    err = io.StringIO()
    code = main(["guard", "fixtures/JC103/runnable_config.py"], stdout=io.StringIO(), stderr=err)
    assert code == 1
    shown = capsys.readouterr().out + err.getvalue()
    command = "$ flake8-jax-closure guard fixtures/JC103/runnable_config.py\n"
    assert f"```\n{command}{shown}```\n" in README
