"""What a ruff user types works the way ruff does it: ``check --fix``, ``--unsafe-fixes``,
``--diff``, ``--show-fixes``, ``--select ALL``, ``--output-format``, ``--per-file-ignores``,
file-level ``# ruff: noqa`` and ``# flake8: noqa``, ``--no-cache``, ``--statistics``, ``rule``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from fixture_support import FIXTURES

from flake8_jax_closure.cli import main
from flake8_jax_closure.engine import check_source, fix_source
from flake8_jax_closure.settings import Settings

SEED = (FIXTURES / "JC101" / "seed.py").read_text(encoding="utf-8")
SEED_FIXED = (FIXTURES / "JC101" / "seed.fixed.py").read_text(encoding="utf-8")
# One safe finding (JC102, 'SCALE') and one with an unsafe fix only (JC103, the whole 'CONFIG').
MIXED = """import jax

SCALE = 1.0
CONFIG = {"clip": 1.0}


@jax.jit
def scaled(x):
    return x * SCALE


@jax.jit
def clipped(x):
    return x * len(CONFIG)


def set_scale(value):
    global SCALE
    SCALE = value
    CONFIG.update(clip=value)


for value in (1.0, 2.0):
    scaled(1.0)
    clipped(1.0)
    set_scale(value)
"""


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def seed(tmp_path: Path) -> Path:
    path = tmp_path / "seed.py"
    path.write_text(SEED, encoding="utf-8")
    return path


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.py"
    path.write_text(MIXED, encoding="utf-8")
    return path


def test_mixed_has_one_safe_and_one_unsafe_fix() -> None:
    fixes = [f.fix.applicability.value for f in check_source(MIXED, Settings()) if f.fix]
    assert sorted(fixes) == ["safe", "unsafe"]


def test_check_fix_applies_safe_fixes_and_reports_what_is_left(mixed: Path) -> None:
    code, out, err = run("check", "--fix", str(mixed))
    assert code == 1
    assert mixed.read_text() == fix_source(MIXED, Settings()).source != MIXED
    assert out.count("JC103") == 1 and "JC102" not in out
    assert "fixed 1 finding, 1 remaining" in err


def test_check_fix_unsafe_fixes_applies_both(mixed: Path) -> None:
    code, out, _ = run("check", "--fix", "--unsafe-fixes", str(mixed))
    assert code == 0 and out == ""
    assert mixed.read_text() == fix_source(MIXED, Settings(unsafe_fixes=True)).source


def test_check_unsafe_fixes_marks_them_fixable(mixed: Path) -> None:
    _, out, _ = run("check", str(mixed))
    assert out.count("[*]") == 1
    assert out.endswith("(1 fixable with `flake8-jax-closure fix`, 1 with `--unsafe-fixes`).\n")
    _, out, _ = run("check", "--unsafe-fixes", str(mixed))
    assert out.count("[*]") == 2
    assert out.endswith("(2 fixable with `flake8-jax-closure fix --unsafe-fixes`).\n")
    assert mixed.read_text() == MIXED


def test_check_diff_prints_the_diff_and_writes_nothing(seed: Path) -> None:
    code, out, _ = run("check", "--diff", str(seed))
    assert code == 1 and out == run("diff", str(seed))[1] and out.startswith("--- ")
    assert seed.read_text() == SEED


def test_show_fixes_lists_what_was_fixed(seed: Path) -> None:
    code, out, err = run("fix", "--show-fixes", str(seed))
    assert code == 0
    assert f"Fixed 1 finding:\n- {seed}:\n    1 × JC101\n" in out + err
    seed.write_text(SEED)
    code, out, err = run("check", "--fix", "--show-fixes", str(seed))
    assert f"Fixed 1 finding:\n- {seed}:\n    1 × JC101\n" in out + err


def test_select_all_selects_every_rule(mixed: Path) -> None:
    assert run("check", "--select", "ALL", str(mixed))[1] == run("check", str(mixed))[1]
    assert "JC102" not in run("check", "--select", "ALL", "--ignore", "JC102", str(mixed))[1]
    config = mixed.parent / "pyproject.toml"
    config.write_text('[tool.flake8-jax-closure]\nselect = ["ALL"]\nignore = ["JC103"]\n')
    _, out, _ = run("check", str(mixed))
    assert "JC102" in out and "JC103" not in out


def test_output_format_is_format(seed: Path) -> None:
    assert run("check", "--output-format", "json", str(seed)) == run(
        "check", "--format", "json", str(seed)
    )
    _, concise, _ = run("check", "--output-format", "concise", str(seed))
    assert concise == run("check", str(seed))[1]
    _, full, _ = run("check", "--output-format", "full", str(seed))
    assert full == run("check", "--show-source", str(seed))[1]


def test_per_file_ignores_on_the_command_line(mixed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(mixed.parent)
    (mixed.parent / "tests").mkdir()
    inner = mixed.parent / "tests" / "mixed.py"
    inner.write_text(MIXED)
    _, out, _ = run("check", "--per-file-ignores", "tests/*:JC102,JC103", ".")
    assert "tests/mixed.py" not in out and out.count("./mixed.py") == 2
    # flake8's spelling: codes after a pattern until the next pattern; names match anywhere.
    _, out, _ = run("check", "--per-file-ignores", "mixed.py:JC102 tests/*:JC103", ".")
    assert out.count("JC102") == 0 and out.count("JC103") == 1
    # The flag replaces the configuration's table; --extend-per-file-ignores adds to it.
    (mixed.parent / "pyproject.toml").write_text(
        '[tool.flake8-jax-closure.per-file-ignores]\n"mixed.py" = ["JC103"]\n'
    )
    assert run("check", ".")[1].count("JC103") == 0
    assert run("check", "--per-file-ignores", "tests/*:JC102", ".")[1].count("JC103") == 2
    _, out, _ = run("check", "--extend-per-file-ignores", "tests/*:JC102", ".")
    assert (out.count("JC102"), out.count("JC103")) == (1, 0)
    with pytest.raises(SystemExit):
        main(["check", "--per-file-ignores", "tests/*:JX1", "."])


@pytest.mark.parametrize(
    "comment, left",
    [
        ("# flake8: noqa\n", []),
        ("# ruff: noqa\n", []),
        ("# RUFF: NOQA\n", []),
        ("# ruff: noqa: JC102\n", ["JC103"]),
        ("# ruff: noqa: JC102, JC103\n", []),
        ("# flake8: noqa: JC102\n", ["JC103"]),
        ("x = 1  # ruff: noqa\n", ["JC102", "JC103"]),  # only a comment line of its own
        ("# flake8: noqa-not\n", ["JC102", "JC103"]),
    ],
)
def test_file_level_noqa(comment: str, left: list[str], mixed: Path) -> None:
    source = MIXED.replace("import jax\n", f"import jax\n{comment}", 1)
    mixed.write_text(source)
    _, out, _ = run("check", "--format", "json", str(mixed))
    assert sorted(entry["code"] for entry in json.loads(out)) == left
    # fix and diff see what check sees
    fixed = fix_source(source, Settings(unsafe_fixes=True))
    assert sorted(f.code for f in fixed.fixed) == left
    assert (fixed.source == source) == (left == [])


def test_no_cache_is_accepted_by_every_command(seed: Path) -> None:
    for command in ("check", "fix", "diff"):
        assert run(command, "--no-cache", "--diff" if command == "fix" else "-q", str(seed))[0] == 1


def test_statistics_prints_only_the_table(tmp_path: Path, mixed: Path) -> None:
    (tmp_path / "seed.py").write_text(SEED)
    code, out, _ = run("check", "--statistics", str(tmp_path))
    assert code == 1
    assert out == (
        "1\tJC101\t[*] closure-rebound\n1\tJC102\t[*] global-rebound\n"
        "1\tJC103\t[ ] mutated-in-place\n"
    )
    _, out, _ = run("check", "--statistics", "--format", "json", str(tmp_path))
    assert json.loads(out)[0] == {
        "code": "JC101",
        "name": "closure-rebound",
        "count": 1,
        "fixable": True,
    }


def test_rule_knows_every_code_in_the_table() -> None:
    code, out, _ = run("rule", "JC900")
    assert code == 0 and out.startswith("JC900: ") and "Fix safety" in out
    code, listing, _ = run("rule")
    assert [line.split()[0] for line in listing.splitlines()] == [
        "JC101",
        "JC102",
        "JC103",
        "JC104",
        "JC201",
        "JC202",
        "JC203",
        "JC204",
        "JC900",
    ]
    code, everything, _ = run("rule", "--all")
    assert code == 0
    for rule in ("JC101", "JC102", "JC103", "JC104", "JC900"):
        assert run("rule", rule)[1] in everything


@pytest.mark.parametrize("jobs", ["-1", "0", "two"])
def test_jobs_must_be_a_positive_number_or_auto(
    jobs: str, seed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["check", "--jobs", jobs, str(seed)])
    assert exit_.value.code == 2
    assert "--jobs/-j: a positive number of processes, or 'auto' for all cores" in (
        capsys.readouterr().err
    )
    assert run("check", "--jobs", "auto", "-q", str(seed))[0] == 1
