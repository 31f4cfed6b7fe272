"""``flake8-jax-closure verify``: each verdict, the report, errors, and the pytest plugin."""

from __future__ import annotations

import importlib.util
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_support import FIXTURES

from flake8_jax_closure.cli import main

if importlib.util.find_spec("jax") is None:  # found, not imported: collection stays quick
    pytest.skip("jax is not installed", allow_module_level=True)
pytestmark = pytest.mark.jax


def verify(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["verify", *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
def test_readme_shows_the_real_report_on_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    root = FIXTURES.parent
    monkeypatch.chdir(root)
    code, out, _ = verify("fixtures/JC101/seed.py")
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert code == 0
    assert f"$ flake8-jax-closure verify fixtures/JC101/seed.py\n{out}```" in readme


def verdicts(path: Path, *options: str) -> list[str]:
    code, out, err = verify("--format", "json", *options, str(path))
    assert err == ""
    return [finding["verdict"] for finding in json.loads(out)["findings"]]


def test_seed_is_confirmed_with_stale_and_alternating_outputs() -> None:
    code, out, _ = verify(str(FIXTURES / "JC101" / "seed.py"))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"verify {FIXTURES / 'JC101' / 'seed.py'} on cpu"
    assert lines[1:] == [
        f"{FIXTURES / 'JC101' / 'seed.py'}:41:16: JC101 'jitted_mult' reads 'weights': confirmed",
        "  original: compiled differs from eager in 2 of 5 calls (first at call 2, largest "
        "difference 5)",
        # What was compared: each distinct output, its dtype, shape and leading values.
        "    compiled outputs, 1 distinct in 5 calls: float32[2,2] [5.0, 5.0, 5.0, 5.0] "
        "(calls 1-5)",
        "  fixed: compiled equals eager in all 5 calls",
        "    compiled outputs, 2 distinct in 5 calls: float32[2,2] [5.0, 5.0, 5.0, 5.0] "
        "(calls 1, 3, 5); float32[2,2] [0.0, 0.0, 0.0, 0.0] (calls 2, 4)",
        "  fixed compiled output changed between calls",
    ]


@pytest.mark.slow
def test_unchanged_fixed_output_is_reported_as_unchanged(tmp_path: Path) -> None:
    """Outputs are compared whole: equal sums of different arrays are different outputs."""
    program = tmp_path / "same_sum.py"
    program.write_text(
        "import jax\nimport jax.numpy as jnp\n\nflip = False\n\n\n@jax.jit\n"
        "def f(x):\n    return x[::-1] if flip else x\n\n\ndef toggle():\n"
        "    global flip\n    flip = not flip\n\n\nif __name__ == '__main__':\n"
        "    for _ in range(2):\n        f(jnp.arange(3.0))\n        toggle()\n"
    )
    report = json.loads(verify("--format", "json", str(program))[1])
    (finding,) = report["findings"]
    assert finding["verdict"] == "confirmed"
    assert finding["fixed_output_changed"] is True  # [0, 1, 2] then [2, 1, 0]: equal sums
    assert len(set(finding["fixed"]["output_digests"])) == 2


@pytest.mark.slow
@pytest.mark.parametrize(
    "fixture",
    ["verify_stacked_transforms.py", "fix_call_forms.py", "fix_recursion.py"],
)
def test_forms_the_instrumentation_must_follow(fixture: str) -> None:
    """jit over checkpoint, named_call and grad; ``f = jax.jit(f)`` (the fix renames the
    function); a recursive compiled function with a static depth (nested calls run inside the
    outer one, which is compared)."""
    code, out, err = verify("--format", "json", str(FIXTURES / "JC102" / fixture))
    report = json.loads(out)
    assert report["original_run"]["status"] == "ok", report["original_run"]
    assert [f["verdict"] for f in report["findings"]] == ["confirmed"] * len(report["findings"])
    assert report["findings"] and code == 0 and err == ""


@pytest.mark.slow
def test_json_report_has_a_verdict_per_finding() -> None:
    code, out, _ = verify("--format", "json", str(FIXTURES / "JC102" / "runnable_learning_rate.py"))
    report = json.loads(out)
    assert code == 0 and report["success"] is True
    assert report["platform"] == "cpu"
    (finding,) = report["findings"]
    assert (finding["verdict"], finding["name"], finding["fixed_output_changed"]) == (
        "confirmed",
        "LR",
        True,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "fixture, options, expected",
    [
        ("JC102/verify_not_reproduced.py", (), ["not-reproduced"]),
        ("JC102/verify_not_exercised.py", (), ["not-exercised"]),
        ("JC103/verify_regression.py", ("--unsafe-fixes",), ["regression"]),
        ("JC101/verify_no_fix.py", (), ["no-fix"]),
        ("JC103/verify_regression.py", (), ["no-fix"]),
    ],
)
def test_each_verdict(fixture: str, options: tuple[str, ...], expected: list[str]) -> None:
    assert verdicts(FIXTURES / fixture, *options) == expected
    assert verify(*options, str(FIXTURES / fixture))[0] == 1


@pytest.mark.slow
def test_regression_names_the_failure() -> None:
    _, out, _ = verify("--unsafe-fixes", str(FIXTURES / "JC103" / "verify_regression.py"))
    assert "fixed program error: TypeError: " in out and "(line 16)" in out
    assert "the compiled call raised in 1 of 1 calls" in out


@pytest.mark.slow
def test_write_only_after_confirmation(tmp_path: Path) -> None:
    confirmed = tmp_path / "lr.py"
    shutil.copy(FIXTURES / "JC102" / "runnable_learning_rate.py", confirmed)
    assert verify("--write", str(confirmed))[0] == 0
    assert (
        confirmed.read_text()
        == (FIXTURES / "JC102" / "runnable_learning_rate.fixed.py").read_text()
    )
    unconfirmed = tmp_path / "once.py"
    shutil.copy(FIXTURES / "JC102" / "verify_not_reproduced.py", unconfirmed)
    assert verify("--write", str(unconfirmed))[0] == 1
    assert unconfirmed.read_text() == (FIXTURES / "JC102" / "verify_not_reproduced.py").read_text()


def _without_main(tmp_path: Path) -> Path:
    program = tmp_path / "train.py"
    program.write_text(
        (FIXTURES / "JC102" / "runnable_learning_rate.py").read_text().split("if __name__")[0]
        + "\n\ndef run():\n    params = jnp.ones(2)\n    for _ in range(3):\n"
        "        params = step(params, jnp.ones(2))\n        decay()\n"
    )
    return program


@pytest.mark.slow
def test_entry_point_function(tmp_path: Path) -> None:
    program = _without_main(tmp_path)
    assert verdicts(program, "--entry", "train:run") == ["confirmed"]
    # A function of the verified file, by its name alone.
    assert verdicts(program, "--entry", "run") == ["confirmed"]
    code, _, err = verify("--entry", "nothing_here", str(program))
    assert code == 1 and err == ""


@pytest.mark.slow
def test_a_file_without_main_gets_a_hint(tmp_path: Path) -> None:
    code, out, _ = verify(str(_without_main(tmp_path)))
    assert code == 1
    assert "not-exercised" in out and "  original: never called" in out
    assert (
        "hint: nothing called a compiled function: the file has no "
        "'if __name__ == \"__main__\":' block; name a function that does with --entry FUNCTION "
        "(or --entry module:function), or run tests with -- pytest ARGS" in out
    )


@pytest.mark.slow
def test_method_compiled_as_bound_method_is_seen_called(tmp_path: Path) -> None:
    program = tmp_path / "trainer.py"
    program.write_text(
        "import jax\nimport jax.numpy as jnp\n\n\nclass Trainer:\n    def __init__(self):\n"
        "        self.lr = 0.1\n        self.step = jax.jit(self._step)\n\n"
        "    def _step(self, x):\n        return x * self.lr\n\n    def decay(self):\n"
        "        self.lr = self.lr / 2\n\n\nif __name__ == '__main__':\n    t = Trainer()\n"
        "    t.step(jnp.ones(3))\n    t.decay()\n    t.step(jnp.ones(3))\n"
    )
    code, out, _ = verify(str(program))
    assert "trainer.py:11:20: JC104 '_step' reads 'self.lr': confirmed" in out
    assert "  original: compiled differs from eager in 1 of 2 calls" in out
    assert "  fixed: compiled equals eager in all 2 calls" in out
    assert code == 0


@pytest.mark.slow
def test_pytest_selection(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "JC102" / "runnable_learning_rate.py", tmp_path / "lr.py")
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


@pytest.mark.slow
def test_pytest_paths_are_relative_to_where_verify_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tests").mkdir()
    shutil.copy(FIXTURES / "JC102" / "runnable_learning_rate.py", tmp_path / "lr.py")
    (tmp_path / "tests" / "test_lr.py").write_text(
        "import jax.numpy as jnp\nimport lr\n\n\ndef test_steps():\n"
        "    for _ in range(3):\n        lr.step(jnp.ones(2), jnp.ones(2))\n        lr.decay()\n"
    )
    monkeypatch.chdir(tmp_path)
    code, out, _ = verify("--format", "json", "lr.py", "--", "pytest", "-q", "tests/test_lr.py")
    assert [f["verdict"] for f in json.loads(out)["findings"]] == ["confirmed"]
    assert code == 0
    assert not (tmp_path / ".pytest_cache").exists()  # verify writes nothing into the project


@pytest.mark.slow
def test_crash_hang_and_missing_dependency_are_verdicts_not_tracebacks(tmp_path: Path) -> None:
    source = (FIXTURES / "JC102" / "verify_not_exercised.py").read_text()
    crash = tmp_path / "crash.py"
    crash.write_text(
        source.replace('print("nothing compiled was called")', "raise RuntimeError('broken')")
    )
    code, out, err = verify(str(crash))
    assert code == 1 and "original program error: RuntimeError: broken (line 19)" in out
    assert "Traceback" not in out + err
    hang = tmp_path / "hang.py"
    hang.write_text(
        source.replace('print("nothing compiled was called")', "import time\n    time.sleep(60)")
    )
    code, out, err = verify("--timeout", "5", str(hang))
    assert (code, out) == (2, "")
    assert err == (
        "flake8-jax-closure verify: the original program ran past 5 s and was stopped; raise "
        "--timeout, or verify a shorter run with --entry\n"
    )
    missing = tmp_path / "missing.py"
    missing.write_text(source.replace("import jax\n", "import jax\nimport not_a_real_module_xyz\n"))
    code, out, _ = verify(str(missing))
    assert "the program needs 'not_a_real_module_xyz', which is not installed" in out


@pytest.mark.slow
def test_a_platform_jax_cannot_use_is_one_line_and_exit_2() -> None:
    code, out, err = verify("--platform", "gpu", str(FIXTURES / "JC101" / "seed.py"))
    assert code == 2 and out == ""
    assert err.startswith("flake8-jax-closure verify: JAX cannot run on platform 'gpu': ")
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.slow
def test_require_accelerator_fails_on_cpu() -> None:
    code, _, err = verify(
        "--platform", "cpu", "--require-accelerator", str(FIXTURES / "JC101" / "seed.py")
    )
    assert code == 2 and "an accelerator is required, but JAX runs on cpu" in err


def test_bad_runner_and_missing_file(tmp_path: Path) -> None:
    assert verify(str(FIXTURES / "JC101" / "seed.py"), "--", "nose")[0] == 2
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


@pytest.mark.slow
def test_pytest_plugin_is_off_by_default(tmp_path: Path) -> None:
    (tmp_path / "test_model.py").write_text(PLUGIN_TEST)
    assert _pytest(tmp_path).returncode == 0


def test_pytest_plugin_fails_stale_tests(tmp_path: Path) -> None:
    (tmp_path / "test_model.py").write_text(PLUGIN_TEST)
    completed = _pytest(tmp_path, "--jax-stale-check")
    assert completed.returncode == 1
    assert "1 failed, 1 passed" in completed.stdout
    assert (
        "compiled 'scaled' (test_model.py:8) returned a result that differs from its eager "
        in completed.stdout
    )
    assert "it reads 'SCALE'" in completed.stdout


@pytest.mark.slow
@pytest.mark.parametrize("fixture", ["JC104/runnable_faq.py", "JC104/runnable_closure.py"])
def test_jc104_fixes_are_confirmed(fixture: str) -> None:
    options = ("--unsafe-fixes",) if fixture == "JC104/runnable_faq.py" else ()
    assert verdicts(FIXTURES / fixture, *options) == ["confirmed"]


def test_gpu_platform_means_cuda_for_jax() -> None:
    from flake8_jax_closure.runtime.verify.programs import jax_platforms

    assert [jax_platforms(p) for p in ("gpu", "cpu", "rocm", "tpu")] == [
        "cuda",
        "cpu",
        "rocm",
        "tpu",
    ]
