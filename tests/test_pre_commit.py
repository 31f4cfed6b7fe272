"""The hooks in .pre-commit-hooks.yaml: their command lines, run in this process, and (slow)
the real pre-commit against this checkout."""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fixture_support import FIXTURES, ROOT

from flake8_jax_closure.cli import main

if shutil.which("git") is None:
    pytest.skip("git is not installed", allow_module_level=True)
pytest.importorskip("pre_commit")


def _environment(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PRE_COMMIT_HOME": str(home),
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }


def _try_repo(hook: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), hook, "--all-files"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def yaml_hooks() -> list[dict[str, Any]]:
    import yaml  # a dependency of pre-commit

    hooks: list[dict[str, Any]] = yaml.safe_load(
        (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    )
    return hooks


def _hooks() -> dict[str, list[str]]:
    return {hook["id"]: shlex.split(hook["entry"]) + hook.get("args", []) for hook in yaml_hooks()}


def test_hook_entries_check_then_fix_then_pass(tmp_path: Path) -> None:
    """The hooks' command lines, as pre-commit runs them on the files it names (quick: in this
    process; the real pre-commit runs below, among the slow tests)."""
    hooks = _hooks()
    assert sorted(hooks) == ["flake8-jax-closure", "flake8-jax-closure-fix"]
    seed = tmp_path / "seed.py"
    shutil.copy(FIXTURES / "JC101" / "seed.py", seed)
    (tmp_path / "vendored.py").write_text(seed.read_text())
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flake8-jax-closure]\nextend-exclude = ["vendored.py"]\n'
    )

    def hook(name: str) -> tuple[int, str]:
        program, *argv = hooks[name]
        assert program == "flake8-jax-closure"
        out, err = io.StringIO(), io.StringIO()
        code = main([*argv, str(seed), str(tmp_path / "vendored.py")], stdout=out, stderr=err)
        return code, out.getvalue() + err.getvalue()

    code, output = hook("flake8-jax-closure")
    assert code == 1 and f"{seed}:41:16: JC101 [*] 'jitted_mult'" in output
    assert "vendored.py" not in output  # --force-exclude: exclude holds for named files
    assert hook("flake8-jax-closure-fix")[0] == 1  # changed a file: pre-commit must fail
    assert seed.read_text() == (FIXTURES / "JC101" / "seed.fixed.py").read_text()
    assert hook("flake8-jax-closure") == (0, "All checks passed!\n")


def test_hooks_run_on_notebooks_too(tmp_path: Path) -> None:
    hooks = yaml_hooks()
    assert {hook["id"]: hook["types_or"] for hook in hooks} == {
        "flake8-jax-closure": ["python", "jupyter"],
        "flake8-jax-closure-fix": ["python", "jupyter"],
    }
    notebook = tmp_path / "train.ipynb"
    shutil.copy(FIXTURES / "JC102" / "notebook_global.ipynb", notebook)
    for name, expected in (("flake8-jax-closure", 1), ("flake8-jax-closure-fix", 1)):
        _, *argv = _hooks()[name]
        out, err = io.StringIO(), io.StringIO()
        assert main([*argv, str(notebook)], stdout=out, stderr=err) == expected
    fixed = FIXTURES / "JC102" / "notebook_global.fixed.ipynb"
    assert notebook.read_bytes() == fixed.read_bytes()


@pytest.mark.slow
def test_check_fails_fix_rewrites_then_check_passes(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = _environment(tmp_path / "pre-commit-home")
    seed = project / "seed.py"
    shutil.copy(FIXTURES / "JC101" / "seed.py", seed)
    notebook = project / "train.ipynb"
    shutil.copy(FIXTURES / "JC102" / "notebook_global.ipynb", notebook)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=env)
    subprocess.run(["git", "add", "seed.py", "train.ipynb"], cwd=project, check=True, env=env)

    check = _try_repo("flake8-jax-closure", project, env)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "seed.py:41:16: JC101 [*] 'jitted_mult'" in check.stdout
    assert "train.ipynb:cell 3:3:16: JC102 [*] 'scaled'" in check.stdout

    fix = _try_repo("flake8-jax-closure-fix", project, env)
    assert fix.returncode == 1, fix.stdout + fix.stderr
    assert "files were modified by this hook" in fix.stdout
    assert seed.read_text() == (FIXTURES / "JC101" / "seed.fixed.py").read_text()
    fixed = FIXTURES / "JC102" / "notebook_global.fixed.ipynb"
    assert notebook.read_bytes() == fixed.read_bytes()

    subprocess.run(["git", "add", "seed.py", "train.ipynb"], cwd=project, check=True, env=env)
    again = _try_repo("flake8-jax-closure", project, env)
    assert again.returncode == 0, again.stdout + again.stderr


@pytest.mark.slow
def test_hooks_honour_exclude_for_the_files_pre_commit_names(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "vendored").mkdir(parents=True)
    env = _environment(tmp_path / "pre-commit-home")
    shutil.copy(FIXTURES / "JC101" / "seed.py", project / "vendored" / "seed.py")
    (project / "pyproject.toml").write_text(
        '[tool.flake8-jax-closure]\nextend-exclude = ["vendored"]\n'
    )
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=env)
    subprocess.run(["git", "add", "."], cwd=project, check=True, env=env)
    check = _try_repo("flake8-jax-closure", project, env)
    assert check.returncode == 0, check.stdout + check.stderr
