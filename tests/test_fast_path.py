"""The cheap paths are taken, and only skip work: files that name no compile transform are not
parsed, statements no question needs are not visited, and checking never imports libcst."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from fixture_support import FIXTURES

import flake8_jax_closure.engine as engine
from flake8_jax_closure import rules
from flake8_jax_closure.analysis.captures import CaptureAnalysis
from flake8_jax_closure.analysis.names import COMPILE_FUNCTIONS
from flake8_jax_closure.analysis.pipeline import ModuleFacts
from flake8_jax_closure.engine import check_source
from flake8_jax_closure.rules import selected_findings
from flake8_jax_closure.settings import Settings

SEED = (FIXTURES / "JC101" / "seed.py").read_text(encoding="utf-8")


def test_files_without_a_compile_transform_are_never_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed: list[str] = []
    real_parse = engine.parse_tree

    def counting_parse(source: str) -> ast.Module:
        parsed.append(source)
        return real_parse(source)

    monkeypatch.setattr(engine, "parse_tree", counting_parse)
    plain = "import numpy as np\n\n\ndef f(x):\n    return np.sum(x)\n" * 50
    assert check_source(plain, Settings()) == []
    assert parsed == []
    assert check_source(SEED, Settings()) != []
    assert parsed == [SEED]


def test_lazy_analysis_visits_only_the_statements_it_needs() -> None:
    unrelated = "".join(
        f"\n\ndef helper_{n}(values):\n    total = 0\n    for v in values:\n"
        f"        total += v * {n}\n    return total\n"
        for n in range(200)
    )
    source = SEED + unrelated
    lazy = ModuleFacts(ast.parse(source), source, COMPILE_FUNCTIONS, lazy=True)
    eager = ModuleFacts(ast.parse(source), source, COMPILE_FUNCTIONS, lazy=False)
    lazy_found = selected_findings(lazy, lambda code: True)
    eager_found = selected_findings(eager, lambda code: True)
    visited = sum(unit.visited for unit in lazy.facts.units)
    assert visited < len(lazy.facts.units) / 10
    assert all(unit.visited for unit in eager.facts.units)
    assert (
        [(c.name, c.compiled.name) for c, _ in lazy_found]
        == [(c.name, c.compiled.name) for c, _ in eager_found]
        == [("weights", "jitted_mult")]
    )


def test_a_rule_left_out_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Selecting rules runs only their detections: JC104's is never asked for under
    ``--select JC101``, and no detection runs when no rule is selected."""
    asked: list[str] = []
    spies: dict[object, object] = {}

    def spy_on(detect, code):  # type: ignore[no-untyped-def]
        def spy(module: ModuleFacts, owners):  # type: ignore[no-untyped-def]
            asked.append(code)
            return detect(module, owners)

        return spies.setdefault(detect, spy)

    spied = tuple(replace(rule, detect=spy_on(rule.detect, rule.code)) for rule in rules.RULES)
    monkeypatch.setattr(rules, "RULES", spied)
    module = ModuleFacts(ast.parse(SEED), SEED, COMPILE_FUNCTIONS)
    assert [f.code for _, f in rules.selected_findings(module, lambda c: c == "JC101")] == ["JC101"]
    assert asked == ["JC101"]  # the detection JC101 shares with JC102 and JC103, once
    asked.clear()
    assert rules.selected_findings(module, lambda c: False) == []
    assert asked == []


@pytest.mark.parametrize(
    "command",
    [
        "from flake8_jax_closure.cli import main; main(['check', '--exit-zero', SEED])",
        "from flake8_jax_closure.cli import main; main(['check', '--jobs', '1', SEED])",
        "from flake8_jax_closure.flake8_plugin import JaxClosureChecker as C; "
        "list(C(None, open(SEED).readlines(), SEED).run())",
    ],
)
def test_checking_never_imports_libcst(command: str, tmp_path: Path) -> None:
    program = (
        "import sys\n"
        f"SEED = {str(FIXTURES / 'JC101' / 'seed.py')!r}\n"
        "try:\n"
        f"    {command}\n"
        "except SystemExit:\n"
        "    pass\n"
        "assert 'libcst' not in sys.modules, 'libcst was imported'\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env={**os.environ, "FLAKE8_JAX_CLOSURE_CACHE_DIR": str(tmp_path)},
    )
    assert completed.returncode == 0, completed.stderr
    if "check" in command:
        assert "JC101" in completed.stdout


def test_the_word_index_finds_what_word_lines_finds() -> None:
    """Past a few hundred names the analysis indexes every word at once; both ways agree."""
    from flake8_jax_closure.analysis.words import word_index, word_lines

    texts = [path.read_text(encoding="utf-8") for path in sorted(FIXTURES.glob("*/*.py"))]
    texts.append("λx = 1\nx_λ = x + 1\n1x = 2\nclass Ω: pass\n_ = x1 + x\n")
    for text in texts:
        index = word_index(text)
        for word in set(index) | {"x", "jax", "weights", "λx", "nope"}:
            assert index.get(word, []) == word_lines(text, word), word


def test_a_shared_detection_skips_what_no_selected_rule_reports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Under ``--select JC101`` (closure variables), the changes of globals are never timed."""
    timed: list[str] = []
    original = CaptureAnalysis._first_changes

    def spy(self, sites, owner, name, *rest, **options):  # type: ignore[no-untyped-def]
        timed.append(name)
        return original(self, sites, owner, name, *rest, **options)

    monkeypatch.setattr(CaptureAnalysis, "_first_changes", spy)
    source = (
        "import jax\n\nSCALE = 1.0\n\n\n@jax.jit\ndef f(x):\n    return x * SCALE\n\n\n"
        "def set_scale(v):\n    global SCALE\n    SCALE = v\n\n\nf(1.0)\nset_scale(2.0)\nf(1.0)\n"
    )
    module = ModuleFacts(ast.parse(source), source, COMPILE_FUNCTIONS)
    assert selected_findings(module, lambda code: code == "JC101") == []
    assert timed == []
    found = selected_findings(module, lambda code: code == "JC102")
    assert [f.code for _, f in found] == ["JC102"] and timed == ["SCALE"]
