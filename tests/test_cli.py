"""The command line, run in-process and as a real subprocess, on files in a temporary folder."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_support import FIXTURES

from flake8_jax_closure.cli import main

SEED = (FIXTURES / "JC101" / "seed.py").read_text(encoding="utf-8")
SEED_FIXED = (FIXTURES / "JC101" / "seed.fixed.py").read_text(encoding="utf-8")

STALE = """import jax

SCALE = 1.0


@jax.jit
def scaled(x):
    return x * SCALE{noqa}


def set_scale(value):
    global SCALE
    SCALE = value


scaled(1.0)
set_scale(2.0)
scaled(1.0)
"""


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "seed.py").write_text(SEED, encoding="utf-8")
    (tmp_path / "pkg" / "clean.py").write_text("import jax\n\nx = jax.jit(abs)\n", encoding="utf-8")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "ignored.py").write_text(SEED, encoding="utf-8")
    return tmp_path


def test_check_reports_findings_and_exits_1(project: Path) -> None:
    code, out, _ = run("check", "--jobs", "1", str(project))
    assert code == 1
    assert out == (
        f"{project / 'pkg' / 'seed.py'}:41:16: JC101 [*] 'jitted_mult' (jax.jit) reads closure "
        "variable 'weights', rebound at line 45 in 'update_locally_created'; compiled calls "
        "keep the value from the first trace: traced at line 60, changed at line 63 by "
        "'update_locally_created()', reused at line 60 (next pass of the loop at line 58)\n"
        "Found 1 finding (1 fixable with `flake8-jax-closure fix`).\n"
    )


def test_clean_check_says_so_and_quiet_prints_findings_only(project: Path) -> None:
    assert run("check", str(project / "pkg" / "clean.py")) == (0, "All checks passed!\n", "")
    code, out, _ = run("check", "--quiet", str(project / "pkg" / "seed.py"))
    assert code == 1 and out.count("\n") == 1 and out.startswith(str(project / "pkg"))


def test_text_output_says_why_a_finding_has_no_fix(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text((FIXTURES / "JC101" / "verify_no_fix.py").read_text(), encoding="utf-8")
    for command in ("check", "fix", "diff"):
        code, out, err = run(command, str(path))
        reason = "    no fix: the compiled object is made in a compound statement line"
        assert reason in out + err, command
    assert "Found 1 finding." in run("check", str(path))[1]


def test_show_source_prints_the_line_and_a_caret(project: Path) -> None:
    out = run("check", "--show-source", "--quiet", str(project / "pkg" / "seed.py"))[1]
    lines = out.splitlines()
    assert lines[1] == "            return weights.dot(input_var)"
    assert lines[2] == "    " + " " * 15 + "^" * 7


def test_output_file(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    code, out, _ = run("check", "--format", "json", "-o", str(target), str(project / "pkg"))
    assert (code, out) == (1, "")
    assert json.loads(target.read_text())[0]["code"] == "JC101"


def test_unknown_selectors_stop_with_a_message(project: Path) -> None:
    for flag in ("--select", "--ignore", "--extend-select", "--extend-ignore"):
        completed = subprocess.run(
            [sys.executable, "-m", "flake8_jax_closure", "check", flag, "JX999", str(project)],
            capture_output=True,
            text=True,
        )
        assert completed.returncode == 2, flag
        assert "unknown rule selector 'JX999'" in completed.stderr
    path = project / "pkg" / "seed.py"
    assert run("check", "--select", "JC", "--extend-ignore", "JC101", str(path))[0] == 0
    assert run("check", "--select", "JC9", "--extend-select", "JC101", str(path))[0] == 1


def test_rule_prints_its_documentation() -> None:
    code, out, _ = run("rule", "JC101")
    assert code == 0 and out.startswith("JC101: ") and "Why is this bad" in out
    assert "JC104" in run("rule")[1]
    assert run("rule", "JC999")[0] == 2


def test_syntax_error_uses_pythons_message_and_position(tmp_path: Path) -> None:
    path = tmp_path / "syn.py"
    path.write_text("import jax\n\nf = jax.jit(abs(\n", encoding="utf-8")
    code, out, err = run("check", str(path))
    assert code == 2
    assert err == f"{path}:3:16: syntax error: '(' was never closed\n"
    code, out, _ = run("check", "--format", "json", str(path))
    (entry,) = json.loads(out)
    assert (entry["code"], entry["line"], entry["column"]) == ("E999", 3, 16)
    assert entry["message"] == "SyntaxError: '(' was never closed"
    assert "::error file=" in run("check", "--format", "github", str(path))[1]


def test_no_python_files_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    code, out, err = run("check", str(tmp_path))
    assert code == 0 and "no Python files found" in err


def test_a_path_given_twice_is_checked_once(project: Path) -> None:
    path = str(project / "pkg" / "seed.py")
    assert run("check", "--quiet", path, path)[1].count("JC101") == 1


def test_check_clean_file_exits_0(project: Path) -> None:
    assert run("check", str(project / "pkg" / "clean.py"))[0] == 0


def test_missing_path_exits_2_with_one_line(tmp_path: Path) -> None:
    code, out, err = run("check", str(tmp_path / "missing.py"))
    assert (code, out) == (2, "")
    assert err.strip() == f"{tmp_path / 'missing.py'}: no such file or directory"


def test_syntax_error_is_reported_and_left_alone(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import jax\n@jax.jit\ndef f(:\n", encoding="utf-8")
    code, _, err = run("fix", str(broken))
    assert code == 2
    assert "syntax error" in err and "Traceback" not in err
    assert broken.read_text(encoding="utf-8") == "import jax\n@jax.jit\ndef f(:\n"


def test_stdin_with_filename() -> None:
    code, out, _ = run("check", "-", "--stdin-filename", "model.py", stdin=SEED)
    assert code == 1
    assert out.startswith("model.py:41:16: JC101 ")


def test_fix_stdin_prints_fixed_source_only() -> None:
    code, out, _ = run("fix", "-", stdin=SEED)
    assert out == SEED_FIXED
    assert code == 0


@pytest.mark.parametrize("on_disk", ["same", "unsaved edits", "absent"])
def test_fix_stdin_never_writes_the_named_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_disk: str
) -> None:
    """Editors format-on-save through ``fix - --stdin-filename``: the buffer goes to stdout and
    the file behind it (saved, with unsaved edits in the editor, or not yet created) is never
    touched."""
    monkeypatch.chdir(tmp_path)
    disk = {"same": SEED, "unsaved edits": SEED + "# saved earlier\n", "absent": None}[on_disk]
    if disk is not None:
        (tmp_path / "model.py").write_text(disk, encoding="utf-8")
    code, out, err = run("fix", "-", "--stdin-filename", "model.py", stdin=SEED)
    assert (code, out) == (0, SEED_FIXED), err
    if disk is None:
        assert not (tmp_path / "model.py").exists()
    else:
        assert (tmp_path / "model.py").read_text(encoding="utf-8") == disk
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if disk is None else ["model.py"])


def test_fix_stdin_without_findings_echoes_source() -> None:
    source = "import jax\n\nf = jax.jit(abs)\n"
    assert run("fix", "-", stdin=source)[1] == source


def test_noqa_and_select_ignore(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(STALE.format(noqa=""), encoding="utf-8")
    assert run("check", str(path))[0] == 1
    assert run("check", "--ignore", "JC102", str(path))[0] == 0
    assert run("check", "--select", "JC101", str(path))[0] == 0
    for comment in ("  # noqa", "  # noqa: JC102", "  # NOQA:JC1", "  # noqa: E501,JC102"):
        path.write_text(STALE.format(noqa=comment), encoding="utf-8")
        assert run("check", str(path))[0] == 0, comment
    # Another code (JC101 is not JC102), and codes as written (flake8 compares them as written).
    for comment in ("  # noqa: E501", "  # noqa: JC101", "  # NOQA: jc102"):
        path.write_text(STALE.format(noqa=comment), encoding="utf-8")
        assert run("check", str(path))[0] == 1, comment


def test_json_lists_finding_and_fix(project: Path) -> None:
    code, out, _ = run("check", "--format", "json", str(project / "pkg" / "seed.py"))
    (entry,) = json.loads(out)
    assert code == 1
    assert entry["code"] == "JC101"
    assert (entry["line"], entry["column"], entry["end_line"], entry["end_column"]) == (
        41,
        16,
        41,
        23,
    )
    assert (entry["function"], entry["name"]) == ("jitted_mult", "weights")
    assert entry["fix"]["applicability"] == "safe"
    assert entry["fix"]["edits"]


def test_json_with_no_findings_is_an_empty_list(project: Path) -> None:
    assert run("check", "--format", "json", str(project / "pkg" / "clean.py"))[1] == "[]\n"


def test_github_format_and_statistics(project: Path) -> None:
    code, out, _ = run("check", "--format", "github", "--exit-zero", str(project / "pkg"))
    assert code == 0
    (first,) = out.splitlines()
    assert first.startswith(f"::warning file={project / 'pkg' / 'seed.py'},line=41,col=16,")
    assert "title=JC101::JC101 'jitted_mult'" in first
    # The table alone, as ruff prints it.
    code, out, _ = run("check", "--statistics", "--exit-zero", str(project / "pkg"))
    assert (code, out) == (0, "1\tJC101\t[*] closure-rebound\n")


def test_fix_writes_atomically_and_keeps_mode(project: Path) -> None:
    path = project / "pkg" / "seed.py"
    os.chmod(path, 0o640)
    code, _, err = run("fix", str(path))
    assert code == 0
    assert path.read_text(encoding="utf-8") == SEED_FIXED
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert "fixed 1 finding, 0 remaining" in err
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".jc-")]
    assert run("fix", str(path))[1:] == ("", "fixed 0 findings, 0 remaining\n")


def test_fix_refuses_a_read_only_file(project: Path) -> None:
    path = project / "pkg" / "seed.py"
    os.chmod(path, 0o444)
    code, _, err = run("fix", str(path))
    assert code == 2
    assert f"{path}: cannot write: permission denied; left alone" in err
    assert "fixed 0 findings" in err
    assert path.read_text(encoding="utf-8") == SEED
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


def test_fix_writes_through_a_symbolic_link(project: Path) -> None:
    real = project / "pkg" / "seed.py"
    link = project / "link.py"
    link.symlink_to(real)
    assert run("fix", str(link))[0] == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text(encoding="utf-8") == SEED_FIXED


def test_fix_keeps_the_owner(project: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("changing a file's owner needs root")
    path = project / "pkg" / "seed.py"
    os.chown(path, 12345, 12346)
    assert run("fix", str(path))[0] == 0
    status = path.stat()
    assert (status.st_uid, status.st_gid) == (12345, 12346)
    assert path.read_text(encoding="utf-8") == SEED_FIXED


def test_fix_exit_non_zero_on_fix(project: Path) -> None:
    path = project / "pkg" / "seed.py"
    assert run("fix", "--exit-non-zero-on-fix", str(path))[0] == 1
    assert run("fix", "--exit-non-zero-on-fix", str(path))[0] == 0


def test_diff_prints_and_does_not_write(project: Path) -> None:
    path = project / "pkg" / "seed.py"
    for argv in (("diff", str(path)), ("fix", "--diff", str(path))):
        code, out, _ = run(*argv)
        assert code == 1
        assert "+    def _jitted_mult_compiled(input_var, *, weights):" in out
        assert path.read_text(encoding="utf-8") == SEED


def test_diff_with_nothing_to_show_exits_0(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text((FIXTURES / "JC101" / "verify_no_fix.py").read_text(), encoding="utf-8")
    code, out, _ = run("diff", str(path))
    assert (code, out) == (0, "")


def test_fix_exit_zero_and_format(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text((FIXTURES / "JC101" / "verify_no_fix.py").read_text(), encoding="utf-8")
    assert run("fix", str(path))[0] == 1
    assert run("fix", "--exit-zero", str(path))[0] == 0
    code, out, _ = run("fix", "--format", "json", str(path))
    assert json.loads(out)[0]["no_fix_reason"].startswith("the compiled object is made in a")


@pytest.mark.parametrize(
    "prefix, newline, encoding",
    [
        (b"", b"\r\n", "utf-8"),
        (b"\xef\xbb\xbf", b"\n", "utf-8"),
        (b"# -*- coding: latin-1 -*-\n", b"\n", "latin-1"),
    ],
    ids=["crlf", "bom", "latin-1-cookie"],
)
def test_fix_keeps_encoding_bom_and_newlines(
    tmp_path: Path, prefix: bytes, newline: bytes, encoding: str
) -> None:
    text = STALE.format(noqa="") + "# caf\u00e9\n"
    raw = prefix + text.replace("\n", newline.decode()).encode(encoding)
    path = tmp_path / "m.py"
    path.write_bytes(raw)
    assert run("fix", str(path))[0] == 0
    written = path.read_bytes()
    assert written.startswith(prefix)
    assert written.count(b"\r\n") == (written.count(b"\n") if newline == b"\r\n" else 0)
    assert "caf\u00e9".encode(encoding) in written
    assert b"def _scaled_compiled(x, *, SCALE):" in written


def test_undecodable_file_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(b"import jax\nx = '\xff\xfe'\n")
    code, _, err = run("check", str(path))
    assert code == 2 and "cannot decode" in err


def test_binary_file_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "bin.py"
    path.write_bytes(b"\x00\x01jit\x00")
    code, _, err = run("fix", str(path))
    assert code == 2 and "binary" in err
    assert path.read_bytes() == b"\x00\x01jit\x00"


def test_parallel_output_is_deterministic(tmp_path: Path) -> None:
    for index in range(6):
        (tmp_path / f"m{index}.py").write_text(SEED, encoding="utf-8")
    serial = run("check", "--jobs", "1", str(tmp_path))
    parallel = run("check", "--jobs", "2", str(tmp_path))
    assert serial == parallel
    assert serial[1].count("JC101") == 6


def test_check_and_fix_never_run_the_analysed_code(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    path = tmp_path / "evil.py"
    path.write_text(
        f"import jax\nopen({str(marker)!r}, 'w').close()\n" + STALE.format(noqa=""),
        encoding="utf-8",
    )
    run("check", str(path))
    run("fix", str(path))
    assert not marker.exists()


def test_console_script_and_module_entry_points(project: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "flake8_jax_closure", "check", str(project / "pkg" / "seed.py")],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 1
    assert ":41:16: JC101 " in completed.stdout


def test_interrupt_exits_130_at_once(tmp_path: Path) -> None:
    import signal
    import time

    big = "\n".join(
        SEED.replace("weights", f"w{i}").replace("def ", f"def f{i}_") for i in range(40)
    )
    for index in range(200):
        (tmp_path / f"m{index}.py").write_text(big.replace("create_weight", f"c{index}"))
    # A named pipe nobody writes to: the worker reading it waits for ever, so the run is still
    # going when the interrupt comes, however fast the machine.
    (tmp_path / "pipe").mkdir()
    waiting = tmp_path / "pipe" / "waits.py"
    os.mkfifo(waiting)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "flake8_jax_closure",
            "check",
            "--no-cache",
            "-j",
            "2",
            str(tmp_path),
            str(waiting),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        # A shell starts background jobs with Ctrl-C ignored, and the child would inherit that.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(3.0)  # past start-up, even on a busy machine: the workers are running
    assert process.poll() is None
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert time.monotonic() - started < 1.0
    assert "Traceback" not in err


def test_usage_error_exits_2() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "flake8_jax_closure", "check", "--format", "xml"],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 2
    assert "invalid choice" in completed.stderr and "Traceback" not in completed.stderr


def test_cache_answers_repeated_runs_and_follows_content(tmp_path: Path) -> None:
    path = tmp_path / "seed.py"
    path.write_text(SEED, encoding="utf-8")
    cold = run("check", "--jobs", "1", str(path))
    entries = list(Path(os.environ["FLAKE8_JAX_CLOSURE_CACHE_DIR"]).rglob("*.json"))
    assert len(entries) == 1
    assert run("check", "--jobs", "1", str(path)) == cold
    # The entry is what answers: doctor it and the next run says so.
    doctored = json.loads(entries[0].read_text())
    doctored["findings"][0]["message"] = "from the cache"
    entries[0].write_text(json.dumps(doctored))
    assert "JC101 [*] from the cache" in run("check", str(path))[1]
    assert "from the cache" not in run("check", "--no-cache", str(path))[1]
    # Another content or other options miss the entry.
    path.write_text(SEED + "\n", encoding="utf-8")
    assert "from the cache" not in run("check", str(path))[1]
    assert "from the cache" not in run("check", "--select", "JC1", str(tmp_path))[1]


def test_torn_cache_entry_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "seed.py"
    path.write_text(SEED, encoding="utf-8")
    cold = run("check", str(path))
    for entry in Path(os.environ["FLAKE8_JAX_CLOSURE_CACHE_DIR"]).rglob("*.json"):
        entry.write_text('[{"code": "JC1')
    assert run("check", str(path)) == cold


def test_concurrent_runs_share_the_cache_safely(tmp_path: Path) -> None:
    for index in range(8):
        (tmp_path / f"m{index}.py").write_text(
            SEED.replace("weights", f"weights{index}"), encoding="utf-8"
        )
    command = [sys.executable, "-m", "flake8_jax_closure", "check", "--jobs", "2", str(tmp_path)]
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = {process.communicate()[0] for process in processes}
    assert len(outputs) == 1 and next(iter(outputs)).count("JC101") == 8
    assert run("check", "--jobs", "1", str(tmp_path))[1] == next(iter(outputs))


def test_columns_count_characters_on_non_ascii_lines(tmp_path: Path) -> None:
    """``ast`` counts columns in UTF-8 bytes; findings count characters (the emoji is 4 bytes,
    1 character), and the edits of the fix apply at the right place."""
    source = SEED.replace(
        "        return weights.dot(input_var)\n\n    def update",
        '        return ("\U0001f600", weights.dot(input_var))[1]\n\n    def update',
        1,
    )
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    out = run("check", "--quiet", str(path))[1]
    assert f"{path}:41:22: JC101" in out
    (entry,) = json.loads(run("check", "--format", "json", str(path))[1])
    assert (entry["column"], entry["end_column"]) == (22, 29)
    assert run("fix", str(path))[0] == 0
    assert '("\U0001f600", weights.dot(input_var))[1]' in path.read_text(encoding="utf-8")
    assert "_jitted_mult_compiled(input_var, weights=weights)" in path.read_text(encoding="utf-8")


def test_a_named_folder_is_walked_whatever_the_folders_above_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``exclude`` applies below the folder named: an installed package under
    ``site-packages`` (a default exclusion) is checked when named, and a ``site-packages``
    folder met inside a walked project is still skipped."""
    package = tmp_path / "lib" / "site-packages" / "pkg"
    package.mkdir(parents=True)
    (package / "m.py").write_text(SEED)
    project = tmp_path / "project"
    (project / "site-packages").mkdir(parents=True)
    (project / "site-packages" / "vendored.py").write_text(SEED)
    (project / "own.py").write_text(SEED)
    monkeypatch.chdir(project)
    code, out, _ = run("check", "--no-cache", str(package))
    assert code == 1 and "m.py:41:16: JC101" in out
    code, out, _ = run("check", "--no-cache", ".")
    assert code == 1 and "own.py:41:16: JC101" in out and "vendored" not in out


def test_a_reader_closing_the_output_early_ends_the_run_quietly(tmp_path: Path) -> None:
    """``check . | head -1``: the pipe closes while findings are still being written; the run
    ends with no error line and no traceback. The output (about 240 bytes a file) must be
    well over what the pipe holds (64 KiB) plus what the reader takes in at once, or the run
    may write all of it before the reader closes."""
    for index in range(1200):
        (tmp_path / f"m{index}.py").write_text(STALE.format(noqa=""), encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "flake8_jax_closure", "check", "--no-cache", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().strip()
    process.stdout.close()  # the reader is done
    errors = process.stderr.read().decode()
    assert process.wait(timeout=120) == 2
    assert errors == ""
