"""The ecosystem check: notebooks handed to the linter as they are, findings in them named by
cell, its project list and its report."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from ecosystem import (  # noqa: E402
    Found,
    Project,
    check_project,
    count_code,
    prepare,
    read_projects,
    report,
)


def _notebook(*cells: tuple[str, str]) -> bytes:
    return json.dumps(
        {"cells": [{"cell_type": kind, "source": source} for kind, source in cells]}
    ).encode()


def test_findings_in_notebooks_are_named_by_cell(tmp_path: Path) -> None:
    shutil.copy(ROOT / "fixtures" / "JC102" / "notebook_global.ipynb", tmp_path / "nb.ipynb")
    (tmp_path / "other.ipynb").write_bytes(_notebook(("code", "x = 1")))  # no nbformat: E902
    tool = [sys.executable, "-m", "flake8_jax_closure"]
    (found,) = check_project(tool, Project("o/n", "c"), tmp_path)
    assert (found.path, found.line, found.code, found.name) == (
        "nb.ipynb:cell 3",
        3,
        "JC102",
        "SCALE",
    )


def test_a_folder_named_like_a_module_is_not_counted_as_a_file(tmp_path: Path) -> None:
    (tmp_path / "matmul.py").mkdir()
    (tmp_path / "matmul.py" / "inner.py").write_text("import jax\nx = 1\n")
    (tmp_path / "runs.ipynb").mkdir()
    assert count_code(tmp_path) == (1, 2)


def test_projects_marked_held_out_are_read_as_such(tmp_path: Path) -> None:
    listing = tmp_path / "projects.txt"
    listing.write_text(
        "# comment\na/one 1111  # built on\n\nb/two 2222 held-out  # astronomy\n"
        "c/three 3333 held-out-2\n",
        encoding="utf-8",
    )
    assert read_projects(listing) == [
        Project("a/one", "1111"),
        Project("b/two", "2222", "held-out"),
        Project("c/three", "3333", "held-out-2"),
    ]
    assert [p.held_out for p in read_projects(listing)] == [False, True, True]


def test_a_malformed_project_line_is_refused_with_its_line_number(tmp_path: Path) -> None:
    listing = tmp_path / "projects.txt"
    listing.write_text("a/one 1111\nb/two 2222 new\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"projects.txt:2: expected"):
        read_projects(listing)


def test_the_report_gives_precision_on_held_out_projects_apart() -> None:
    projects = [Project("a/built", "1"), Project("b/new", "2", "held-out")]
    found = [
        Found("a/built", "x.py", 1, "JC101", "v", "m"),
        Found("a/built", "x.py", 2, "JC101", "w", "m"),
        Found("b/new", "y.py", 3, "JC104", "self.k", "m"),
        Found("b/new", "y.py", 4, "JC104", "self.j", "m"),
        Found("b/new", "y.py", 5, "JC101", "u", "m"),
    ]
    verdicts = ["real", "real", "real", "false", None]
    judgements = {
        f.key: {"project": f.project, "verdict": verdict}
        for f, verdict in zip(found, verdicts, strict=True)
        if verdict is not None
    }
    sizes = {"a/built": (1, 10), "b/new": (1, 20)}
    text = report(projects, sizes, found, judgements, baseline=None)
    default = text.split("Default findings (JC1):")[1]
    assert "Precision on all projects: 75% (3 real, 1 false alarms)" in default
    assert "Precision on held-out projects: 50% (1 real, 1 false alarms)" in default
    assert "Precision on projects the rules were built on: 100% (2 real, 0 false alarms)" in default
    assert "API hazards (JC2)" not in text  # none were reported
    assert "| b/new (held-out) | 1 | 20 | 3 | 1 | 1 | 1 |" in text
    assert "| a/built | 1 | 10 | 2 | 2 | 0 | 0 |" in text
    assert "- b/new y.py:5 JC101 m" in text


def test_the_report_measures_default_findings_and_api_hazards_apart() -> None:
    projects = [Project("a/lib", "1", "held-out-2")]
    found = [
        Found("a/lib", "x.py", 1, "JC101", "v", "m"),
        Found("a/lib", "x.py", 2, "JC204", "self.k", "m"),
        Found("a/lib", "x.py", 3, "JC204", "self.j", "m"),
    ]
    judgements = {
        found[0].key: {"verdict": "real"},
        found[1].key: {"verdict": "real"},
        found[2].key: {"verdict": "false"},
    }
    text = report(projects, {"a/lib": (1, 5)}, found, judgements, baseline=None)
    default, hazards = text.split("Default findings (JC1):")[1].split("API hazards (JC2):")
    assert "Precision on held-out-2 projects: 100% (1 real, 0 false alarms)" in default
    assert "Precision on held-out-2 projects: 50% (1 real, 1 false alarms)" in hazards


def test_a_real_finding_reported_under_the_other_tier_is_still_found() -> None:
    projects = [Project("a/lib", "1")]
    found = [Found("a/lib", "x.py", 4, "JC202", "lr", "m")]
    judgements = {
        ("a/lib", "x.py", 4, "JC102", "lr"): {  # judged when it was a default finding
            "project": "a/lib", "path": "x.py", "line": "4", "code": "JC102", "name": "lr",
            "verdict": "real",
        },
        ("a/lib", "y.py", 9, "JC101", "n"): {
            "project": "a/lib", "path": "y.py", "line": "9", "code": "JC101", "name": "n",
            "verdict": "real",
        },
    }  # fmt: skip
    text = report(projects, {"a/lib": (2, 5)}, found, judgements, baseline=None)
    assert "Real findings judged so far: 2; still found 1 (1 of them under the other" in text
    assert "Real findings no longer found:\n- a/lib y.py:9 JC101 n" in text
    assert "x.py:4" not in text.split("no longer found:")[1]


def test_hazards_are_asked_for_only_when_wanted(tmp_path: Path) -> None:
    (tmp_path / "lib.py").write_text(
        "import jax\n\nLR = 0.1\n\n\n@jax.jit\ndef step(x):\n    return x * LR\n\n\n"
        "def set_lr(value):\n    global LR\n    LR = value\n",
        encoding="utf-8",
    )
    tool = [sys.executable, "-m", "flake8_jax_closure"]
    project = Project("o/n", "c")
    assert check_project(tool, project, tmp_path) == []
    (hazard,) = check_project(tool, project, tmp_path, hazards=True)
    assert (hazard.code, hazard.name) == ("JC202", "LR")


def _git(*args: str, cwd: Path) -> str:
    completed = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return completed.stdout.strip()


def test_prepare_exports_from_a_mirror_holding_a_work_tree(tmp_path: Path) -> None:
    work = tmp_path / "mirrors" / "o+n" / "repo"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg" / "a.py").write_text("x = 1\n", encoding="utf-8")
    (work / "nb.ipynb").write_bytes(_notebook(("code", "y = 2")))
    (work / "notes.md").write_text("text\n", encoding="utf-8")
    _git("init", "-q", cwd=work)
    _git("add", ".", cwd=work)
    _git("commit", "-q", "-m", "c", cwd=work)
    commit = _git("rev-parse", "HEAD", cwd=work)
    dest = tmp_path / "checkouts"
    prepare([Project("o/n", commit)], dest, tmp_path / "mirrors")
    exported = sorted(
        p.relative_to(dest).as_posix()
        for p in dest.rglob("*")
        if p.is_file() and ".git" not in p.parts
    )
    assert exported == ["o+n/nb.ipynb", "o+n/pkg/a.py"]
    assert (dest / "o+n" / "nb.ipynb").read_bytes() == (work / "nb.ipynb").read_bytes()
    # A work tree of its own, as a clone is: the linter finds the project's root there.
    assert _git("rev-parse", "--show-toplevel", cwd=dest / "o+n") == str((dest / "o+n").resolve())


def test_prepare_refuses_a_missing_commit_and_leaves_no_half_export(tmp_path: Path) -> None:
    work = tmp_path / "mirrors" / "o+n" / "repo"
    work.mkdir(parents=True)
    (work / "a.py").write_text("x = 1\n", encoding="utf-8")
    _git("init", "-q", cwd=work)
    _git("add", ".", cwd=work)
    _git("commit", "-q", "-m", "c", cwd=work)
    dest = tmp_path / "checkouts"
    with pytest.raises(SystemExit, match="o/n: cannot export 0123abcd"):
        prepare([Project("o/n", "0123abcd")], dest, tmp_path / "mirrors")
    with pytest.raises(SystemExit, match="p/q: no mirror at"):
        prepare([Project("p/q", "0123abcd")], dest, tmp_path / "mirrors")
    assert not dest.exists() or not any(dest.iterdir())
