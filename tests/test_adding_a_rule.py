"""The README's "Adding a rule" steps, followed on a copy of the package: a new rule module and one
line in the rules table are all the linter needs to detect, select, document and fix it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_support import ROOT

from flake8_jax_closure.rules import CODES

NEW_RULE = '''"""JC199: a compiled function reads an upper-case global that is rebound later.

What it does
    Finds compiled functions that read a global named like a constant (``SCALE``) that is
    rebound after the compiled function may have run.

Why is this bad
    A name in capitals promises a constant; compiled calls keep the first value.

Example
    SCALE = 1.0

    @jax.jit
    def f(x):
        return x * SCALE

Use instead
    Pass the value as an argument of the compiled function.

Fix safety
    As for JC102.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..analysis.captures import Owner, StaleCapture
from ..analysis.pipeline import ModuleFacts, value_captures
from ..diagnostics import Finding
from ._common import STALE, finding, subject

CODE = "JC199"
SUMMARY = "compiled function reads an upper-case global that is rebound after tracing"
OWNERS = frozenset({Owner.MODULE})
RUNTIME_ADVICE = "make {name} an argument of the compiled function"


def detect(module: ModuleFacts, owners: frozenset[Owner]) -> Iterator[StaleCapture]:
    return (c for c in value_captures(module, owners) if c.name.isupper())


def check(capture: StaleCapture) -> Finding | None:
    if not capture.is_global or capture.rebinding is None:
        return None
    return finding(capture, CODE, f"{subject(capture)} reads '{capture.name}'; {STALE}")
'''

PROGRAM = """import jax

SCALE = 1.0
rate = 0.5


@jax.jit
def f(x):
    return x * SCALE * rate


def set_values(scale, new_rate):
    global SCALE, rate
    SCALE = scale
    rate = new_rate


f(1.0)
set_values(2.0, 0.1)
f(1.0)
"""


@pytest.fixture(scope="module")
def with_new_rule(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package with the rule added as the README says: its module, and its line in
    the rules table."""
    root = tmp_path_factory.mktemp("added")
    package = root / "flake8_jax_closure"
    shutil.copytree(
        ROOT / "flake8_jax_closure", package, ignore=shutil.ignore_patterns("__pycache__")
    )
    (package / "rules" / "jc199_upper_case_global.py").write_text(NEW_RULE, encoding="utf-8")
    table = package / "rules" / "__init__.py"
    text = table.read_text(encoding="utf-8")
    assert text.count("    jc104_self_attribute,\n") == 2  # the import, and the table
    text = text.replace(
        "    jc104_self_attribute,\n", "    jc104_self_attribute,\n    jc199_upper_case_global,\n"
    )
    table.write_text(text, encoding="utf-8")
    (root / "program.py").write_text(PROGRAM, encoding="utf-8")
    return root


def _run(root: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [sys.executable, "-m", "flake8_jax_closure", *arguments],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_new_rule_reports_beside_the_others(with_new_rule: Path) -> None:
    out = _run(with_new_rule, "check", "--no-cache", "program.py").stdout
    codes = [line.split(": ", 1)[1].split()[0] for line in out.splitlines() if ": JC" in line]
    assert sorted(codes) == ["JC102", "JC102", "JC199"]


def test_the_new_rule_alone(with_new_rule: Path) -> None:
    out = _run(with_new_rule, "check", "--no-cache", "--select", "JC199", "program.py").stdout
    assert out.count(": JC199 ") == 1 and ": JC102 " not in out
    diff = _run(with_new_rule, "diff", "--select", "JC199", "program.py").stdout
    assert "SCALE=SCALE" in diff and "rate=rate" not in diff


def test_the_new_rule_is_documented(with_new_rule: Path) -> None:
    page = _run(with_new_rule, "rule", "JC199").stdout
    assert "a compiled function reads an upper-case global" in page
    assert "JC199" in _run(with_new_rule, "rule").stdout


def test_the_package_itself_is_left_as_it_was() -> None:
    assert "JC199" not in CODES
    assert not (ROOT / "flake8_jax_closure" / "rules" / "jc199_upper_case_global.py").exists()
