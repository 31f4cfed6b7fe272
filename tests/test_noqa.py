"""``# noqa`` means the same in ``check``, flake8 and the language server: a comment naming
codes hides only those codes, on its own line; a bare one hides everything there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import Settings

# One line with two findings of different rules: JC101 for 'k', JC102 for 'K'.
PROGRAM = """import jax

K = 1.0


def build():
    k = 1.0

    @jax.jit
    def f(x):
        return x * k * K{comment}

    def change():
        nonlocal k
        global K
        k = 2.0
        K = 2.0

    return f, change


if __name__ == "__main__":
    f, change = build()
    f(1.0)
    change()
    f(1.0)
"""

CASES = [
    ("", ["JC101", "JC102"]),
    ("  # noqa: JC101", ["JC102"]),
    ("  # noqa: JC102", ["JC101"]),
    ("  # noqa: E501,JC102", ["JC101"]),
    ("  # noqa:JC101,JC102", []),
    ("  # NOQA: JC101", ["JC102"]),
    ("  # noqa", []),
    ("  # noqa: jc101", ["JC101", "JC102"]),  # codes are case-sensitive, as in flake8
    ("  # noqa: JC1", []),  # flake8 matches codes by prefix: JC1 covers JC101 and JC102
    ("  # noqa: JC103", ["JC101", "JC102"]),
]


def _codes_from_check(source: str) -> list[str]:
    return [f.code for f in check_source(source, Settings())]


def _codes_from_flake8(paths: list[Path]) -> dict[Path, list[str]]:
    """One flake8 run over every file (a process per file would cost a second each)."""
    completed = subprocess.run(
        [sys.executable, "-m", "flake8", "--select=JC", "--jobs=1", *map(str, paths)],
        capture_output=True,
        text=True,
    )
    found: dict[Path, list[str]] = {path: [] for path in paths}
    for line in completed.stdout.splitlines():
        where, text = line.split(": ", 1)
        found[Path(where.split(":")[0])].append(text.split()[0])
    return {path: sorted(codes) for path, codes in found.items()}


def _codes_from_language_server(paths: list[Path]) -> dict[Path, list[str]]:
    pytest.importorskip("pygls")
    from lsp_session import diagnostics_of

    published = diagnostics_of({path.as_uri(): path.read_text() for path in paths})
    return {path: sorted(str(d.code) for d in published[path.as_uri()]) for path in paths}


def test_noqa_hides_only_the_codes_it_names_everywhere(tmp_path: Path) -> None:
    paths = []
    for index, (comment, _) in enumerate(CASES):
        path = tmp_path / f"case{index}.py"
        path.write_text(PROGRAM.format(comment=comment), encoding="utf-8")
        paths.append(path)
    served = _codes_from_language_server(paths)
    reported = _codes_from_flake8(paths)
    for (comment, expected), path in zip(CASES, paths, strict=True):
        source = path.read_text(encoding="utf-8")
        assert sorted(_codes_from_check(source)) == sorted(expected), comment
        assert reported[path] == sorted(expected), comment
        assert served[path] == sorted(expected), comment
