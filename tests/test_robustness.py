"""Fuzzed and hostile inputs: the linter never crashes, the fixer never corrupts a file."""

from __future__ import annotations

import ast
import difflib
import io
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_support import FIXTURES, fixtures

from flake8_jax_closure.cli import main
from flake8_jax_closure.engine import SourceSyntaxError, check_source, fix_source
from flake8_jax_closure.settings import Settings

# Mutated programs are compiled to check they are valid; their own oddities warn.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

# Unsafe fixes too; the checks below also visit every statement first (``lazy=False``).
EVERYTHING = Settings(unsafe_fixes=True)
SEED = (FIXTURES / "JC101" / "seed.py").read_text(encoding="utf-8")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), stdout=out, stderr=err), out.getvalue(), err.getvalue()


def assert_sound(source: str) -> None:
    """No exception, no JC900; the fix parses, is final, and touches only compiled code."""
    try:
        findings = check_source(source, EVERYTHING, lazy=False)
    except SourceSyntaxError:
        return  # compile() accepted it but libcst did not: reported, never touched
    assert not [f for f in findings if f.code == "JC900"], findings
    fixed = fix_source(source, EVERYTHING, lazy=False).source
    compile(fixed, "<fixed>", "exec", dont_inherit=True)
    assert fix_source(fixed, EVERYTHING, lazy=False).source == fixed
    if fixed != source:
        _assert_edits_stay_in_compiled_code(source, fixed, findings)


def _assert_edits_stay_in_compiled_code(source: str, fixed: str, findings: list) -> None:
    from flake8_jax_closure.runtime.verify.analysis import compiled_spans

    spans = compiled_spans(source, EVERYTHING)
    compile_lines = {
        number
        for number, line in enumerate(source.splitlines(), start=1)
        if any(name in line for name in ("jit", "pmap", "pjit"))
    }
    old = source.splitlines()
    allowed = set(compile_lines)
    # A wrapper also lands after a compile statement (``g = jax.jit(f)``) and its blank lines.
    for line in compile_lines:
        while line < len(old) and not old[line].strip():
            line += 1
            allowed.add(line)
    ranges = [(span.first_line, span.end) for span in spans]
    # Fixes also split the helpers they pass values through ("and on to 'l2()'") and the
    # methods compiled as bound methods.
    named = set()
    for finding in findings:
        if finding.fix is not None:
            named.update(re.findall(r"'(\w+)\(\)'", finding.fix.title))
        if ", bound method)" in finding.message:
            named.add(finding.function)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in named:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            ranges.append((first, node.end_lineno or node.lineno))
    for first, end in ranges:
        # The wrapper lands after the function and the blank lines that follow it.
        while end < len(old) and not old[end].strip():
            end += 1
        allowed.update(range(first, end + 2))
    matcher = difflib.SequenceMatcher(a=old, b=fixed.splitlines(), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            assert set(range(i1 + 1, i2 + 1)) <= allowed, (tag, i1, i2)
        elif tag == "insert":
            assert i1 in allowed or i1 + 1 in allowed, (tag, i1)


def _mutations(source: str, rng: random.Random) -> str:
    lines = source.splitlines(keepends=True)
    for _ in range(rng.randint(1, 3)):
        if len(lines) < 3:
            break
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        choice = rng.randrange(4)
        if choice == 0:
            del lines[i]
        elif choice == 1:
            lines.insert(j, lines[i])
        elif choice == 2:
            lines[i], lines[j] = lines[j], lines[i]
        else:
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            name = rng.choice(["scale", "weights", "CONFIG", "k", "w", "SCALE", "x"])
            lines.insert(i, f"{indent}{name} = {name}\n")
    return "".join(lines)


@pytest.mark.slow
@pytest.mark.parametrize(
    "fixture", [f for f in fixtures() if f.expects_findings], ids=lambda f: f.name
)
def test_mutated_fixtures(fixture) -> None:
    rng = random.Random(fixture.name)
    tried = 0
    for _ in range(40):
        mutated = _mutations(fixture.source, rng)
        try:
            compile(mutated, "<mutated>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        tried += 1
        assert_sound(mutated)
        # The pre-pass may only remove work: the same findings with it on and off.
        on = [f.text for f in check_source(mutated, Settings(), with_edits=False)]
        off = [f.text for f in check_source(mutated, Settings(), with_edits=False, lazy=False)]
        assert on == off
    assert tried > 0


@pytest.mark.parametrize(
    "content, message",
    [
        (b"import jax\n@jax.jit\ndef f(:\n", "syntax error"),
        (b"import jax\nx = '\xff'\n", "cannot decode"),
        (b"# -*- coding: klingon -*-\nimport jax\n", "cannot decode"),
        (b"\x7fELF\x02\x01\x01\x00jit\x00\x00", "binary"),
    ],
    ids=["syntax", "non-utf8", "unknown-cookie", "binary"],
)
def test_bad_files_get_one_line_and_exit_2(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(content)
    for command in ("check", "fix"):
        code, out, err = run(command, str(path))
        assert code == 2 and message in err and "Traceback" not in err
        assert len([line for line in err.splitlines() if "bad.py" in line]) == 1
        assert path.read_bytes() == content


def test_bad_files_are_e902_entries_in_json_github_and_sarif(tmp_path: Path) -> None:
    """Like a syntax error's E999: a report that is only read by a machine shows them too."""
    import json

    (tmp_path / "binary.py").write_bytes(b"\x00\x01jit\x00")
    (tmp_path / "latin.py").write_bytes(b"import jax\nx = '\xff'\n")
    missing = tmp_path / "missing.py"
    paths = [str(tmp_path / "binary.py"), str(tmp_path / "latin.py"), str(missing)]
    expected = [
        (paths[2], "no such file or directory"),
        (paths[0], "binary content (NUL bytes), not Python source"),
        (paths[1], "cannot decode: 'utf-8' codec can't decode byte 0xff in position 16: "
         "invalid start byte"),
    ]  # fmt: skip
    for command in ("check", "fix"):
        code, out, err = run(command, "--format", "json", *paths)
        entries = json.loads(out if command == "check" else out or err.split("\n", 3)[-1])
        assert code == 2
        assert [(e["filename"], e["message"]) for e in entries] == expected
        assert {(e["code"], e["line"], e["column"], e["fix"]) for e in entries} == {
            ("E902", 1, 1, None)
        }
    github = run("check", "--format", "github", *paths)[1].splitlines()
    assert len(github) == 3 and all(line.startswith("::error file=") for line in github)
    results = json.loads(run("check", "--format", "sarif", *paths)[1])["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [("E902", "error")] * 3


def test_unreadable_paths_exit_2(tmp_path: Path) -> None:
    (tmp_path / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    (tmp_path / "folder.py").mkdir()
    code, _, err = run("check", str(tmp_path / "dangling.py"), str(tmp_path / "folder.py" / "x.py"))
    assert code == 2 and "cannot read" in err and "no such file" in err


@pytest.mark.parametrize("command", ["check", "fix", "diff"])
def test_a_symlink_loop_named_on_the_command_line_is_one_line(tmp_path: Path, command: str) -> None:
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    (tmp_path / "self.py").symlink_to(tmp_path / "self.py")
    code, out, err = run(command, str(tmp_path / "a.py"), str(tmp_path / "self.py"))
    assert code == 2 and "internal error" not in err and "Traceback" not in err
    assert err.splitlines()[:2] == [
        f"{tmp_path / 'a.py'}: cannot read: symbolic link loop",
        f"{tmp_path / 'self.py'}: cannot read: symbolic link loop",
    ]
    assert len(err.splitlines()) == (2 if command == "check" else 3)  # fix: its summary
    assert os.path.islink(tmp_path / "a.py") and os.path.islink(tmp_path / "self.py")


def test_symlink_loops_do_not_trap_the_walk(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "loop").symlink_to(tmp_path / "pkg", target_is_directory=True)
    (tmp_path / "pkg" / "seed.py").write_text(SEED)
    code, out, _ = run("check", "--jobs", "1", str(tmp_path))
    assert code == 1 and out.count("JC101") == 1


def test_empty_tabs_form_feeds_and_crlf(tmp_path: Path) -> None:
    cases = {
        "empty.py": "",
        "tabs.py": SEED.replace("    ", "\t"),
        "formfeed.py": "\x0c\n" + SEED.replace("\n\n\ndef wrapper", "\n\x0c\n\ndef wrapper"),
        "crlf.py": SEED.replace("\n", "\r\n"),
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_bytes(text.encode())
        code, _, err = run("fix", str(path))
        assert code == 0, (name, err)
        fixed = path.read_bytes().decode()
        compile(fixed, name, "exec")
        if text:
            assert "_jitted_mult_compiled" in fixed, name
            assert ("\r\n" in fixed) == (name == "crlf.py")
            assert check_source(fixed, Settings()) == []


def test_deeply_nested_code(tmp_path: Path) -> None:
    nested = "[" * 180 + "]" * 180
    source = (
        "import jax\n\n\n@jax.jit\ndef f(x):\n    return x * S\n\n\nS = 1\n\n\n"
        f"def g():\n    global S\n    S = {nested}\n\n\nf(1)\ng()\nf(1)\n"
    )
    findings = check_source(source, Settings())
    assert [f.code for f in findings] == ["JC102"]
    too_deep = "import jax\nx = " + "(" * 5000 + ")" * 5000 + "\n"
    path = tmp_path / "deep.py"
    path.write_text(too_deep)
    code, _, err = run("check", "--no-cache", str(path))
    assert code in (0, 2) and "Traceback" not in err


def test_a_100000_line_file(tmp_path: Path) -> None:
    body = "".join(f"value_{i} = {i}\n" for i in range(100_000 - 40))
    path = tmp_path / "big.py"
    path.write_text(SEED + body)
    code, out, _ = run("check", "--no-cache", str(path))
    assert code == 1 and out.count("JC101") == 1


def test_file_changed_while_being_fixed_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import flake8_jax_closure.engine as engine

    path = tmp_path / "seed.py"
    path.write_text(SEED)
    real = engine.fix_source

    def fix_while_someone_edits(source: str, settings: Settings, **kwargs):  # type: ignore[no-untyped-def]
        path.write_text(SEED + "# edited meanwhile\n")
        return real(source, settings, **kwargs)

    monkeypatch.setattr(engine, "fix_source", fix_while_someone_edits)
    code, _, err = run("fix", str(path))
    assert code == 2 and "changed while being fixed" in err
    assert path.read_text() == SEED + "# edited meanwhile\n"


def test_two_concurrent_fix_runs_never_corrupt(tmp_path: Path) -> None:
    for index in range(10):
        (tmp_path / f"m{index}.py").write_text(SEED)
    command = [sys.executable, "-m", "flake8_jax_closure", "fix", "--jobs", "2", str(tmp_path)]
    processes = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for process in processes:
        process.communicate()
        assert process.returncode in (0, 2)  # 2: the other run changed a file first
    expected = (FIXTURES / "JC101" / "seed.fixed.py").read_text()
    for index in range(10):
        assert (tmp_path / f"m{index}.py").read_text() == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"m{i}.py" for i in range(10))


def _installed_sources() -> list[Path]:
    import importlib.util

    roots = []
    for package in ("jax", "chex", "numpy", "flax", "optax", "equinox"):
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.origin:
            roots.append(Path(spec.origin).parent)
    return sorted(p for root in roots for p in root.rglob("*.py"))


def _sweep(paths: list[Path]) -> None:
    for path in paths:
        source = path.read_text(encoding="utf-8", errors="replace")
        try:
            findings = check_source(source, Settings(unsafe_fixes=True))
        except SourceSyntaxError:
            continue
        assert not [f for f in findings if f.code == "JC900"], path
        fixed = fix_source(source, Settings(unsafe_fixes=True)).source
        if fixed != source:
            compile(fixed, str(path), "exec", dont_inherit=True)
            assert fix_source(fixed, Settings(unsafe_fixes=True)).source == fixed, path


@pytest.mark.slow
def test_real_world_sample() -> None:
    paths = [p for p in _installed_sources() if b"jit" in p.read_bytes()]
    sample = random.Random(0).sample(paths, min(40, len(paths))) if paths else []
    _sweep(sample)


@pytest.mark.slow
def test_real_world_sweep() -> None:
    _sweep(_installed_sources())


@pytest.mark.slow
def test_lazy_and_eager_analysis_agree_on_installed_packages() -> None:
    """Lazy visiting only skips work, on every file of jax, flax, optax, equinox and chex."""
    compared = 0
    for path in _installed_sources():
        source = path.read_text(encoding="utf-8", errors="replace")
        try:
            lazy = check_source(source, Settings(), with_edits=False)
        except SourceSyntaxError:
            continue
        eager = check_source(source, Settings(), with_edits=False, lazy=False)
        assert lazy == eager, path
        compared += 1
    assert compared > 1000


@pytest.mark.slow
@pytest.mark.jax
def test_verify_runs_code_only_in_a_subprocess_in_a_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The verified program runs in another process, from a temporary copy that is gone
    afterwards; what it writes by relative path lands there, not in the user's folder."""
    pytest.importorskip("jax")
    import json
    import os

    report = tmp_path / "seen.jsonl"
    program = tmp_path / "writer.py"
    program.write_text(
        SEED.replace(
            "if __name__ == '__main__':",
            "if __name__ == '__main__':\n"
            "    import json, os\n"
            "    open('written_by_the_program.txt', 'w').write('x')\n"
            f"    with open({str(report)!r}, 'a') as log:\n"
            "        log.write(json.dumps([os.getpid(), os.getcwd(), __file__]) + '\\n')",
        )
    )
    monkeypatch.chdir(tmp_path)
    before = program.read_text()
    code, out, err = run("verify", str(program))
    assert code == 0, out + err
    runs = [json.loads(line) for line in report.read_text().splitlines()]
    assert len(runs) == 2  # the original and the fixed program
    for pid, cwd, file in runs:
        assert pid != os.getpid()
        assert Path(cwd) != tmp_path and not Path(cwd).exists()
        assert Path(file).parent == Path(cwd)
    assert not (tmp_path / "written_by_the_program.txt").exists()
    assert program.read_text() == before  # verify writes the fix only with --write
