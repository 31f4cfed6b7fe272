"""Standard input: ``--stdin-filename`` alone means stdin (as in ruff), nothing is ever written to
a file, and ``fix -`` gives back exactly the bytes it read when it changes nothing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fixture_support import FIXTURES

from flake8_jax_closure.cli import main

SEED = (FIXTURES / "JC101" / "seed.py").read_text(encoding="utf-8")
SEED_FIXED = (FIXTURES / "JC101" / "seed.fixed.py").read_text(encoding="utf-8")
CLEAN = "import jax\n\nf = jax.jit(abs)\n# caf\u00e9\n"
STALE = """import jax

SCALE = 1.0


@jax.jit
def scaled(x):
    return x * SCALE


def set_scale(value):
    global SCALE
    SCALE = value


scaled(1.0)
set_scale(2.0)
scaled(1.0)
"""


def run_bytes(*argv: str, stdin: bytes) -> tuple[int, bytes, str]:
    """The command with real byte streams behind its text streams, as a terminal or an editor
    gives them."""
    raw_out = io.BytesIO()
    out = io.TextIOWrapper(raw_out, encoding="utf-8", newline="")
    err = io.StringIO()
    code = main(list(argv), stdin=io.TextIOWrapper(io.BytesIO(stdin)), stdout=out, stderr=err)
    out.flush()
    return code, raw_out.getvalue(), err.getvalue()


@pytest.fixture
def folder_with_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder holds a file with a finding that must never be fixed or reported."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "other.py").write_text(STALE, encoding="utf-8")
    return tmp_path / "other.py"


def test_fix_with_stdin_filename_alone_reads_stdin_and_writes_no_file(
    folder_with_stale_file: Path,
) -> None:
    code, out, err = run_bytes("fix", "--stdin-filename", "model.py", stdin=SEED.encode())
    assert (code, out.decode()) == (0, SEED_FIXED), err
    assert folder_with_stale_file.read_text(encoding="utf-8") == STALE
    assert sorted(p.name for p in folder_with_stale_file.parent.iterdir()) == ["other.py"]


def test_check_and_diff_with_stdin_filename_alone_read_stdin(folder_with_stale_file: Path) -> None:
    code, out, _ = run_bytes("check", "--stdin-filename", "model.py", stdin=SEED.encode())
    assert code == 1
    assert out.decode().startswith("model.py:41:16: JC101 ") and "other.py" not in out.decode()
    code, out, _ = run_bytes("diff", "--stdin-filename", "model.py", stdin=SEED.encode())
    assert code == 1
    assert out.decode().startswith("--- a/model.py\n+++ b/model.py\n")
    assert "other.py" not in out.decode()
    assert folder_with_stale_file.read_text(encoding="utf-8") == STALE


def test_paths_beside_stdin_filename_are_ignored_with_a_warning(
    folder_with_stale_file: Path,
) -> None:
    code, out, err = run_bytes(
        "fix", "other.py", "--stdin-filename", "model.py", stdin=SEED.encode()
    )
    assert (code, out.decode()) == (0, SEED_FIXED)
    assert "warning: ignoring other.py: --stdin-filename reads standard input" in err
    assert folder_with_stale_file.read_text(encoding="utf-8") == STALE


CASES = {
    "latin-1 cookie": "# -*- coding: latin-1 -*-\n".encode() + CLEAN.encode("latin-1"),
    "utf-8 bom": b"\xef\xbb\xbf" + CLEAN.encode(),
    "crlf": CLEAN.replace("\n", "\r\n").encode(),
    "cr": CLEAN.replace("\n", "\r").encode(),
    "mixed endings": b"import jax\r\n\nf = jax.jit(abs)\r\n",
    "no final newline": b"import jax\nf = jax.jit(abs)",
}


@pytest.mark.parametrize("raw", CASES.values(), ids=CASES.keys())
def test_fix_stdin_gives_back_the_same_bytes_when_nothing_is_fixed(raw: bytes) -> None:
    code, out, err = run_bytes("fix", "-", stdin=raw)
    assert (code, out) == (0, raw), err


@pytest.mark.parametrize(
    "prefix, newline, encoding",
    [(b"", "\r\n", "utf-8"), (b"\xef\xbb\xbf", "\n", "utf-8-sig"), (b"", "\n", "latin-1")],
    ids=["crlf", "bom", "latin-1 cookie"],
)
def test_fix_stdin_keeps_the_encoding_when_it_fixes(
    prefix: bytes, newline: str, encoding: str
) -> None:
    cookie = "# -*- coding: latin-1 -*-\n" if encoding == "latin-1" else ""
    text = cookie + STALE + "# caf\u00e9\n"
    raw = prefix + text.replace("\n", newline).encode(encoding.replace("-sig", ""))
    code, out, err = run_bytes("fix", "-", stdin=raw)
    assert code == 0, err
    assert out.startswith(prefix + cookie.encode())
    assert "caf\u00e9".encode(encoding.replace("-sig", "")) in out
    assert out.count(b"\r\n") == (out.count(b"\n") if newline == "\r\n" else 0)
    fixed = out[len(prefix) :].decode(encoding.replace("-sig", ""))
    assert "def _scaled_compiled(x, *, SCALE):" in fixed


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"import jax\nx = '\xff\xfe'\n", "cannot decode"),
        (b"\x00\x01jit\x00", "binary content"),
        (b"# -*- coding: no-such-codec -*-\nimport jax\n", "cannot decode"),
    ],
    ids=["undecodable", "binary", "unknown codec"],
)
def test_fix_stdin_echoes_input_it_cannot_read(raw: bytes, message: str) -> None:
    """An editor that ignores the exit status must not lose its buffer."""
    code, out, err = run_bytes("fix", "-", "--stdin-filename", "model.py", stdin=raw)
    assert (code, out) == (2, raw)
    assert err.startswith(f"model.py: {message}")


def test_fix_stdin_on_a_syntax_error_echoes_the_bytes() -> None:
    text = "# -*- coding: latin-1 -*-\nimport jax\n@jax.jit\ndef f(:\n# caf\u00e9\n"
    raw = text.encode("latin-1")
    code, out, err = run_bytes("fix", "-", stdin=raw)
    assert (code, out) == (2, raw)
    assert "syntax error" in err
