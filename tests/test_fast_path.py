"""The cheap paths are taken, and only skip work: files that name no compile transform are not
parsed, statements no question needs are not visited, and checking never imports libcst."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_support import FIXTURES

import flake8_jax_closure.engine as engine
from flake8_jax_closure.analysis.names import COMPILE_FUNCTIONS
from flake8_jax_closure.analysis.pipeline import analyse
from flake8_jax_closure.engine import check_source
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
    lazy = analyse(ast.parse(source), source, COMPILE_FUNCTIONS, lazy=True)
    eager = analyse(ast.parse(source), source, COMPILE_FUNCTIONS, lazy=False)
    visited = sum(unit.visited for unit in lazy.facts.units)
    assert visited < len(lazy.facts.units) / 10
    assert all(unit.visited for unit in eager.facts.units)
    assert (
        [(c.name, c.compiled.name) for c in lazy.captures]
        == [(c.name, c.compiled.name) for c in eager.captures]
        == [("weights", "jitted_mult")]
    )


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
