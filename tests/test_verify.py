"""``flake8-jax-closure verify``: each verdict, the report, errors, and the pytest plugin."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_support import FIXTURES

from flake8_jax_closure.cli import main

pytest.importorskip("jax")
pytestmark = pytest.mark.jax


def verify(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["verify", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def verdicts(path: Path, *options: str) -> list[str]:
    code, out, err = verify("--format", "json", *options, str(path))
    assert err == ""
    return [finding["verdict"] for finding in json.loads(out)["findings"]]


def test_seed_is_confirmed_with_stale_and_alternating_outputs() -> None:
    code, out, _ = verify(str(FIXTURES / "seed.py"))
    assert code == 0
    assert "seed.py:39:16: JC101 'jitted_mult' reads 'weights': confirmed" in out
    assert "original: compiled differs from eager in 2 of 5 calls" in out
    assert "compiled outputs [20.0, 20.0, 20.0, 20.0, 20.0]" in out
    assert (
        "fixed: compiled equals eager in all 5 calls; compiled outputs [20.0, 0.0, 20.0, 0.0, 20.0]"
        in out
    )
    assert out.startswith("verify ") and " on cpu: " in out.splitlines()[0]


def test_json_report_has_a_verdict_per_finding() -> None:
    code, out, _ = verify("--format", "json", str(FIXTURES / "JC102_runnable_learning_rate.py"))
    report = json.loads(out)
    assert code == 0 and report["success"] is True
    assert report["platform"] == "cpu"
    (finding,) = report["findings"]
    assert (finding["verdict"], finding["name"], finding["fixed_output_changed"]) == (
        "confirmed",
        "LR",
        True,
    )


@pytest.mark.parametrize(
    "fixture, options, expected",
    [
        ("verify_not_reproduced.py", (), ["not-reproduced"]),
        ("verify_not_exercised.py", (), ["not-exercised"]),
        ("verify_regression.py", ("--unsafe-fixes",), ["regression"]),
        ("verify_no_fix.py", (), ["no-fix"]),
        ("verify_regression.py", (), ["no-fix"]),
    ],
)
def test_each_verdict(fixture: str, options: tuple[str, ...], expected: list[str]) -> None:
    assert verdicts(FIXTURES / fixture, *options) == expected
    assert verify(*options, str(FIXTURES / fixture))[0] == 1


def test_regression_names_the_failure() -> None:
    _, out, _ = verify("--unsafe-fixes", str(FIXTURES / "verify_regression.py"))
    assert "fixed program error: TypeError: " in out and "(line 15)" in out
    assert "the compiled call raised in 1 of 1 calls" in out


def test_write_only_after_confirmation(tmp_path: Path) -> None:
    confirmed = tmp_path / "lr.py"
    shutil.copy(FIXTURES / "JC102_runnable_learning_rate.py", confirmed)
    assert verify("--write", str(confirmed))[0] == 0
    assert confirmed.read_text() == (FIXTURES / "JC102_runnable_learning_rate.fixed.py").read_text()
    unconfirmed = tmp_path / "once.py"
    shutil.copy(FIXTURES / "verify_not_reproduced.py", unconfirmed)
    assert verify("--write", str(unconfirmed))[0] == 1
    assert unconfirmed.read_text() == (FIXTURES / "verify_not_reproduced.py").read_text()


def test_entry_point_function(tmp_path: Path) -> None:
    program = tmp_path / "train.py"
    program.write_text(
        (FIXTURES / "JC102_runnable_learning_rate.py").read_text().split("if __name__")[0]
        + "\n\ndef run():\n    params = jnp.ones(2)\n    for _ in range(3):\n"
        "        params = step(params, jnp.ones(2))\n        decay()\n"
    )
    assert verdicts(program, "--entry", "train:run") == ["confirmed"]


def test_pytest_selection(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "JC102_runnable_learning_rate.py", tmp_path / "lr.py")
    (tmp_path / "test_lr.py").write_text(
        "import jax.numpy as jnp\nimport lr\n\n\ndef test_steps():\n"
        "    for _ in range(3):\n        lr.step(jnp.ones(2), jnp.ones(2))\n        lr.decay()\n"
    )
    args = [
        "--format",
        "json",
        str(tmp_path / "lr.py"),
        "--",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        str(tmp_path / "test_lr.py"),
    ]
    code, out, _ = verify(*args)
    assert [f["verdict"] for f in json.loads(out)["findings"]] == ["confirmed"]
    assert code == 0


def test_crash_hang_and_missing_dependency_are_verdicts_not_tracebacks(tmp_path: Path) -> None:
    source = (FIXTURES / "verify_not_exercised.py").read_text()
    crash = tmp_path / "crash.py"
    crash.write_text(
        source.replace('print("nothing compiled was called")', "raise RuntimeError('broken')")
    )
    code, out, err = verify(str(crash))
    assert code == 1 and "original program error: RuntimeError: broken (line 18)" in out
    assert "Traceback" not in out + err
    hang = tmp_path / "hang.py"
    hang.write_text(
        source.replace('print("nothing compiled was called")', "import time\n    time.sleep(60)")
    )
    code, out, _ = verify("--timeout", "5", str(hang))
    assert code == 1 and "original program timeout: the program ran past 5 s" in out
    missing = tmp_path / "missing.py"
    missing.write_text(source.replace("import jax\n", "import jax\nimport not_a_real_module_xyz\n"))
    code, out, _ = verify(str(missing))
    assert "the program needs 'not_a_real_module_xyz', which is not installed" in out


def test_require_accelerator_fails_on_cpu() -> None:
    code, _, err = verify("--platform", "cpu", "--require-accelerator", str(FIXTURES / "seed.py"))
    assert code == 2 and "an accelerator is required, but JAX runs on cpu" in err


def test_bad_runner_and_missing_file(tmp_path: Path) -> None:
    assert verify(str(FIXTURES / "seed.py"), "--", "nose")[0] == 2
    code, _, err = verify(str(tmp_path / "nope.py"))
    assert code == 2 and "no such file" in err


PLUGIN_TEST = """
import jax
import jax.numpy as jnp

SCALE = 1.0


@jax.jit
def scaled(x):
    return x * SCALE


def set_scale(value):
    global SCALE
    SCALE = value


def test_stale():
    scaled(jnp.ones(()))
    set_scale(2.0)
    scaled(jnp.ones(()))


def test_unaffected():
    assert float(jnp.ones(()) * 2) == 2.0
"""


def _pytest(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, str(folder)],
        capture_output=True,
        text=True,
        cwd=folder,
    )


def test_pytest_plugin_is_off_by_default_and_fails_stale_tests(tmp_path: Path) -> None:
    (tmp_path / "test_model.py").write_text(PLUGIN_TEST)
    assert _pytest(tmp_path).returncode == 0
    completed = _pytest(tmp_path, "--jax-stale-check")
    assert completed.returncode == 1
    assert "1 failed, 1 passed" in completed.stdout
    assert (
        "compiled 'scaled' (test_model.py:8) returned a result that differs from its eager "
        in completed.stdout
    )
    assert "it reads 'SCALE'" in completed.stdout


@pytest.mark.parametrize("fixture", ["JC104_runnable_faq.py", "JC104_runnable_closure.py"])
def test_jc104_fixes_are_confirmed(fixture: str) -> None:
    options = ("--unsafe-fixes",) if fixture == "JC104_runnable_faq.py" else ()
    assert verdicts(FIXTURES / fixture, *options) == ["confirmed"]
