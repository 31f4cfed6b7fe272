"""The guard's entry points: ``flake8-jax-closure guard`` (a script or ``-m MODULE``, run as
``python`` runs it), ``pytest --jax-guard[=MODE]`` and the IPython extension."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from fixture_support import FIXTURES

from flake8_jax_closure.cli import main

pytest.importorskip("jax")
pytestmark = pytest.mark.jax

STALE = """\
import jax
import jax.numpy as jnp

CONFIG = {"clip": 1.0}


@jax.jit
def post(x):
    return jnp.clip(x, -CONFIG["clip"], CONFIG["clip"])


if __name__ == "__main__":
    x = jnp.array([-4.0, 0.25, 4.0])
    for clip in (1.0, 1.0, 0.5, 0.25):
        CONFIG["clip"] = clip
        print(post(x).tolist())
"""


def guard(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    code = main(["guard", *argv], stdout=io.StringIO(), stderr=err)
    return code, err.getvalue()


@pytest.fixture
def stale_script(tmp_path: Path) -> Path:
    path = tmp_path / "clip.py"
    path.write_text(STALE)
    return path


def test_error_mode_stops_at_the_first_stale_call(
    stale_script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = guard(str(stale_script))
    assert code == 1
    assert capsys.readouterr().out == "[-1.0, 0.25, 1.0]\n[-1.0, 0.25, 1.0]\n"
    assert err.startswith(
        "StaleCaptureError: compiled function 'post' (" + str(stale_script) + ":7) reused a "
        'trace that read CONFIG["clip"] (an item, at ' + str(stale_script) + ":9), which has "
        "changed since that trace: float 1.0 -> float 0.5\n"
    )
    assert "Traceback" not in err


def test_warn_mode_warns_once_and_runs_on(
    stale_script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from flake8_jax_closure.guard import StaleCaptureWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, _ = guard("--mode", "warn", str(stale_script))
    assert code == 0
    assert capsys.readouterr().out.splitlines() == ["[-1.0, 0.25, 1.0]"] * 4  # JAX's results
    (warning,) = [w for w in caught if w.category is StaleCaptureWarning]
    assert (warning.filename, warning.lineno) == (str(stale_script), 16)  # the calling line
    assert 'reused a trace that read CONFIG["clip"] (an item, at ' in str(warning.message)


def test_retrace_mode_gives_the_eager_results(
    stale_script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = guard("--mode=retrace", str(stale_script))
    assert code == 0
    assert capsys.readouterr().out.splitlines() == [
        "[-1.0, 0.25, 1.0]",
        "[-1.0, 0.25, 1.0]",
        "[-0.5, 0.25, 0.5]",
        "[-0.25, 0.25, 0.25]",
    ]
    assert err == (
        f"flake8-jax-closure guard: traced 'post' ({stale_script}:7) again 2 times in 4 calls "
        '(CONFIG["clip"] changed 2 times)\n'
    )


def test_the_program_runs_as_python_runs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "show.py"
    script.write_text(
        "import sys\nprint(__name__, sys.argv, sys.path[0])\n"
        "import helper\nprint(helper.VALUE)\nsys.exit(3)\n"
    )
    (tmp_path / "helper.py").write_text("VALUE = 'sibling module'\n")
    saved = list(sys.argv), list(sys.path)
    code, err = guard(str(script), "--flag", "-m", "x")
    assert (code, err) == (3, "")
    assert capsys.readouterr().out == (
        f"__main__ {[str(script), '--flag', '-m', 'x']} {tmp_path}\nsibling module\n"
    )
    assert (sys.argv, sys.path) == saved
    sys.modules.pop("helper", None)


def test_a_module_runs_as_python_dash_m_runs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    package = tmp_path / "guardtestpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tool.py").write_text(
        "import sys\nprint(__name__, sys.argv[1:], sys.argv[0].endswith('tool.py'))\n"
    )
    monkeypatch.chdir(tmp_path)
    assert guard("-m", "guardtestpkg.tool", "a", "--b") == (0, "")
    assert guard("--mode", "warn", "-mguardtestpkg.tool") == (0, "")
    out = capsys.readouterr().out
    assert out == "__main__ ['a', '--b'] True\n__main__ [] True\n"
    for name in ("guardtestpkg", "guardtestpkg.tool"):
        sys.modules.pop(name, None)


def test_other_errors_print_the_program_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "broken.py"
    script.write_text("def fail():\n    raise ValueError('no')\n\n\nfail()\n")
    code, err = guard(str(script))
    assert code == 1
    assert err.startswith('Traceback (most recent call last):\n  File "' + str(script))
    assert err.endswith("ValueError: no\n")
    assert "runpy" not in err and "runner.py" not in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "no program to run"),
        (("--mode",), "--mode needs a value"),
        (("--mode", "loud", "x.py"), "unknown mode 'loud'"),
        (("--fast", "x.py"), "unknown option '--fast'"),
        (("-m",), "-m needs a module name"),
        (("missing.py",), "missing.py: no such file"),
    ],
)
def test_usage_errors_exit_2_with_one_line(argv: tuple[str, ...], message: str) -> None:
    code, err = guard(*argv)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_help_and_the_command_list() -> None:
    out = io.StringIO()
    assert main(["guard", "--help"], stdout=out, stderr=io.StringIO()) == 0
    assert out.getvalue().startswith("usage: flake8-jax-closure guard [--mode")
    with pytest.raises(SystemExit):
        main(["--help"], stdout=io.StringIO(), stderr=io.StringIO())


def test_a_missing_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, err = guard("-m", "no_such_module_here")
    assert (code, err) == (1, "flake8-jax-closure guard: No module named no_such_module_here\n")


@pytest.mark.slow
def test_the_console_script_on_the_seed() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "flake8_jax_closure", "guard", "fixtures/JC101/seed.py"],
        capture_output=True,
        text=True,
        cwd=FIXTURES.parent,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )
    assert completed.returncode == 1
    assert completed.stdout.split() == ["20.0", "20.0", "**********", "0.0"]
    assert completed.stderr.startswith(
        "StaleCaptureError: compiled function 'wrapper.<locals>.jitted_mult' "
        "(fixtures/JC101/seed.py:39) reused a trace that read weights (a closure variable, at "
        "fixtures/JC101/seed.py:41), which has changed since that trace: Array float32[2,5] "
        "[1.0, 1.0, 1.0, 1.0, ...] -> Array float32[2,5] [0.0, 0.0, 0.0, 0.0, ...]\n"
        "  JC101: make weights an argument of the compiled function"
    )


# -- pytest --jax-guard ------------------------------------------------------------------------

TESTS = """\
import jax
import jax.numpy as jnp

SCALE = 1.0


@jax.jit
def scaled(x):
    return x * SCALE


def test_stale():
    global SCALE
    scaled(jnp.ones(()))
    SCALE = 2.0
    assert float(scaled(jnp.ones(()))) == 2.0


def test_unaffected():
    assert float(scaled(jnp.ones(3))[0]) == 2.0
"""


def _pytest(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder), *options],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )


@pytest.mark.slow
def test_pytest_guard_fails_the_stale_test_with_the_message(tmp_path: Path) -> None:
    (tmp_path / "test_model.py").write_text(TESTS)
    misread = subprocess.run(
        [sys.executable, "-m", "pytest", "--jax-guard", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert misread.returncode == 4
    assert "is not a mode (error, warn, retrace): write --jax-guard=MODE" in misread.stderr
    completed = _pytest(tmp_path, "--jax-guard")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert "1 failed, 1 passed" in completed.stdout
    assert (
        "compiled function 'scaled' (test_model.py:7) reused a trace that read SCALE "
        "(a global, at test_model.py:9), which has changed since that trace: float 1.0 -> "
        "float 2.0" in completed.stdout
    )
    assert "guarded.py" not in completed.stdout  # the message alone, no guard frames


@pytest.mark.slow
def test_pytest_guard_off_warn_and_retrace(tmp_path: Path) -> None:
    (tmp_path / "test_model.py").write_text(TESTS)
    assert "1 failed, 1 passed" in _pytest(tmp_path).stdout  # off: JAX's stale result
    warned = _pytest(tmp_path, "--jax-guard=warn")
    assert "1 failed, 1 passed" in warned.stdout
    assert "StaleCaptureWarning: compiled function 'scaled'" in warned.stdout
    retraced = _pytest(tmp_path, "--jax-guard=retrace")
    assert retraced.returncode == 0, retraced.stdout
    assert "traced 'scaled' (test_model.py:7) again 1 times in 3 calls" in retraced.stdout


# -- IPython ------------------------------------------------------------------------------------


class FakeShell:
    def __init__(self) -> None:
        self.handlers: list[tuple[Any, Any]] = []
        self.magics: dict[str, Any] = {}

    def set_custom_exc(self, kinds: Any, handler: Any) -> None:
        self.handlers.append((kinds, handler))

    def register_magic_function(self, function: Any, kind: str, name: str) -> None:
        self.magics[name] = function


def test_ipython_extension_installs_and_switches_modes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from flake8_jax_closure import guard as guard_package
    from flake8_jax_closure.runtime.guard.state import SETTINGS

    shell = FakeShell()
    guard_package.load_ipython_extension(shell)
    try:
        assert guard_package.installed() and SETTINGS.mode == "error"
        (kinds, handler), *_ = shell.handlers
        assert kinds == (guard_package.StaleCaptureError,)
        shell.magics["jax_guard"]("retrace")
        assert SETTINGS.mode == "retrace"
        shell.magics["jax_guard"]("loud")
        handler(None, guard_package.StaleCaptureError, ValueError("message"), None)
    finally:
        guard_package.unload_ipython_extension(shell)
    assert not guard_package.installed()
    assert capsys.readouterr().out == (
        "guard on, mode retrace\nunknown mode 'loud': use one of error, warn, retrace or off\n"
        "StaleCaptureError: message\n"
    )


def test_ipython_cells_are_guarded(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.run_line_magic("load_ext", "flake8_jax_closure.guard")
        shell.run_cell("import jax, jax.numpy as jnp\nscale = 1.0")
        shell.run_cell("@jax.jit\ndef f(x):\n    return x * scale")
        shell.run_cell("f(jnp.ones(2))")
        shell.run_cell("scale = 2.0")
        capsys.readouterr()
        result = shell.run_cell("f(jnp.ones(2))")
        out = capsys.readouterr().out
    finally:
        shell.run_line_magic("unload_ext", "flake8_jax_closure.guard")
        InteractiveShell.clear_instance()
    assert type(result.error_in_exec).__name__ == "StaleCaptureError"
    assert out.startswith("StaleCaptureError: compiled function 'f' (")
    assert "reused a trace that read scale (a global, at " in out
    assert "Traceback" not in out


# -- verify -------------------------------------------------------------------------------------

UNSEEN = """\
import jax
import jax.numpy as jnp

WEIGHTS = [1.0, 2.0]


@jax.jit
def f(x):
    return x * WEIGHTS[0]


def adjust(table):
    values = table["weights"]
    values[0] = 3.0


if __name__ == "__main__":
    print(f(jnp.ones(2)).tolist())
    adjust({"weights": WEIGHTS})
    print(f(jnp.ones(2)).tolist())
"""


@pytest.mark.slow
def test_verify_names_a_stale_value_the_linter_does_not_see(tmp_path: Path) -> None:
    # A list changed in place through a local name, in a function given a dict holding it:
    # beyond the analysis.
    program = tmp_path / "unseen.py"
    program.write_text(UNSEEN)
    out = io.StringIO()
    assert main(["check", "--no-cache", str(program)], stdout=out, stderr=io.StringIO()) == 0
    code = main(["verify", str(program)], stdout=out, stderr=io.StringIO())
    assert code == 1
    assert out.getvalue().endswith(
        "no findings to verify\n"
        f"{program}:7: guard: compiled 'f' reused a trace that read WEIGHTS[0] (an item, at "
        f"{program}:9), which had changed: float 1.0 -> float 3.0 (JC103; no finding names it)\n"
    )
    # Where findings name the stale values (a lambda's by its variable), the guard adds nothing.
    named = io.StringIO()
    main(["verify", str(FIXTURES / "JC101" / "runnable_call_forms.py")], stdout=named)
    assert "confirmed" in named.getvalue() and "guard:" not in named.getvalue()
