"""Configuration from pyproject.toml and setup.cfg/tox.ini; flags win; bad files stop clearly."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fixture_support import FIXTURES

from flake8_jax_closure.cli import main

STALE_CUSTOM = """import mylib

K = 1


@mylib.fast_jit
def f(x):
    return x * K


def g():
    global K
    K = 2


f(1)
g()
f(1)
"""


def run(cwd: Path, *argv: str, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_pyproject_settings_apply_and_flags_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "m.py").write_text(STALE_CUSTOM)
    assert run(tmp_path, "check", "m.py", monkeypatch=monkeypatch)[0] == 0
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flake8-jax-closure]\njax-compile-functions = ["mylib.fast_jit"]\nselect = ["JC1"]\n'
    )
    code, out, _ = run(tmp_path, "check", "m.py", monkeypatch=monkeypatch)
    assert code == 1 and "JC102 [*] 'f' (mylib.fast_jit)" in out
    assert run(tmp_path, "check", "--select", "JC101", "m.py", monkeypatch=monkeypatch)[0] == 0
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flake8-jax-closure]\njax-compile-functions = "mylib.fast_jit"\nignore = ["JC102"]\n'
    )
    assert run(tmp_path, "check", "m.py", monkeypatch=monkeypatch)[0] == 0
    assert run(tmp_path, "check", "--ignore", "JC9", "m.py", monkeypatch=monkeypatch)[0] == 1


def test_pyproject_found_from_a_subfolder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-jax-closure]\nexclude = ["skip_*"]\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "skip_me.py").write_text((FIXTURES / "JC101" / "seed.py").read_text())
    (tmp_path / "src" / "keep.py").write_text((FIXTURES / "JC101" / "seed.py").read_text())
    code, out, _ = run(tmp_path / "src", "check", "--jobs", "1", ".", monkeypatch=monkeypatch)
    assert code == 1 and "keep.py" in out and "skip_me.py" not in out


def test_unsafe_fixes_from_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = (FIXTURES / "JC103" / "verify_regression.py").read_text()
    (tmp_path / "m.py").write_text(source)
    assert run(tmp_path, "fix", "m.py", monkeypatch=monkeypatch)[0] == 1
    assert (tmp_path / "m.py").read_text() == source
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-jax-closure]\nunsafe-fixes = true\n")
    assert run(tmp_path, "fix", "m.py", monkeypatch=monkeypatch)[0] == 0
    assert (tmp_path / "m.py").read_text() != source


def test_setup_cfg_flake8_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "m.py").write_text(STALE_CUSTOM)
    for name in ("setup.cfg", "tox.ini"):
        (tmp_path / name).write_text("[flake8]\njax-compile-functions =\n    mylib.fast_jit\n")
        assert run(tmp_path, "check", "m.py", monkeypatch=monkeypatch)[0] == 1, name
        (tmp_path / name).unlink()


@pytest.mark.parametrize(
    "content, message",
    [
        ("[tool.flake8-jax-closure]\nselct = ['JC']\n", "unknown key 'selct'"),
        (
            "[tool.flake8-jax-closure]\nunsafe-fixes = 'yes'\n",
            "'unsafe-fixes' must be true or false",
        ),
        ("[tool.flake8-jax-closure]\nselect = [1]\n", "'select' must be a list of strings"),
        ("[tool.flake8-jax-closure\n", "invalid TOML"),
    ],
)
def test_bad_configuration_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, message: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(content)
    (tmp_path / "m.py").write_text("x = 1\n")
    code, out, err = run(tmp_path, "check", "m.py", monkeypatch=monkeypatch)
    assert (code, out) == (2, "")
    assert str(tmp_path / "pyproject.toml") in err and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "config, editor, expected",
    [
        ("select = []\n", {}, "nothing"),
        ('select = ["JC1"]\nignore = ["JC101"]\n', {}, "nothing"),
        ('exclude = ["m.py"]\n', {}, "excluded"),
        ("", {"select": ["JC102"]}, "nothing"),
        ("", {}, "safe only"),
        ("unsafe-fixes = true\n", {}, "unsafe too"),
        ("unsafe-fixes = true\n", {"unsafeFixes": False}, "safe only"),
        ("", {"unsafeFixes": True}, "unsafe too"),
    ],
)
def test_server_and_command_line_share_one_resolver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, editor: dict, expected: str
) -> None:
    """``select = []`` selects nothing, ``exclude`` applies, and an editor setting overrides the
    file's, alike in the command line and in the language server."""
    pytest.importorskip("pygls")
    from flake8_jax_closure.lsp import JaxClosureServer

    # The seed's fix is safe; verify_regression's is unsafe.
    (tmp_path / "m.py").write_text((FIXTURES / "JC101" / "seed.py").read_text())
    (tmp_path / "u.py").write_text((FIXTURES / "JC103" / "verify_regression.py").read_text())
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-jax-closure]\n" + config)
    server = JaxClosureServer()
    server.set_overrides(editor)
    monkeypatch.chdir(tmp_path)
    settings = server.settings_for((tmp_path / "m.py").as_uri())
    flags = ["--force-exclude"]  # as editors and pre-commit see files: named, yet excluded
    if "select" in editor:
        flags += ["--select", ",".join(editor["select"])]
    code, out, _ = run(tmp_path, "check", *flags, "m.py", monkeypatch=monkeypatch)
    if expected == "excluded":
        assert settings is None
        assert code == 0 and "JC101" not in out
        return
    assert settings is not None
    if expected == "nothing":
        assert not settings.is_selected("JC101")
        assert code == 0 and "JC101" not in out
        return
    assert settings.is_selected("JC101") and code == 1
    assert settings.unsafe_fixes == (expected == "unsafe too")
    if not editor:  # the command line has no flag to turn unsafe fixes off again
        _, shown, _ = run(tmp_path, "diff", "u.py", monkeypatch=monkeypatch)
        assert ("+++ " in shown) == (expected == "unsafe too")
