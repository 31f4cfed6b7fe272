"""The findings cache answers only for the code that computed its entries."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flake8_jax_closure.cache import FindingsCache, code_fingerprint
from flake8_jax_closure.diagnostics import Finding
from flake8_jax_closure.settings import RunOptions, Settings

STALE = (
    "import jax\n\nSCALE = 1.0\n\n\n@jax.jit\ndef step_{index}(x):\n    return x * SCALE\n\n\n"
    "def set_scale(value):\n    global SCALE\n    SCALE = value\n\n\n"
    "step_{index}(1.0)\nset_scale(2.0)\nstep_{index}(1.0)\n"
)


def test_the_fingerprint_follows_every_module(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    module = tmp_path / "rules" / "jc101.py"
    module.write_text("CODE = 'JC101'\n")
    (tmp_path / "notes.txt").write_text("not code\n")
    first = code_fingerprint(tmp_path)
    assert code_fingerprint(tmp_path) == first

    (tmp_path / "notes.txt").write_text("still not code\n")
    assert code_fingerprint(tmp_path) == first

    stat = module.stat()
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    touched = code_fingerprint(tmp_path)
    assert touched != first

    (tmp_path / "rules" / "jc105.py").write_text("CODE = 'JC105'\n")
    assert code_fingerprint(tmp_path) not in (first, touched)


def test_findings_of_other_code_are_not_served(tmp_path: Path) -> None:
    finding = Finding("JC101", "a message", 1, 0, 1, 1)
    old, new = FindingsCache(tmp_path, code=b"old"), FindingsCache(tmp_path, code=b"new")
    source, settings, run = b"import jax\n", Settings(), RunOptions()
    old.put(old.key(source, settings, run), [finding])
    assert old.get(old.key(source, settings, run)) == [finding]
    assert new.key(source, settings, run) != old.key(source, settings, run)
    assert new.get(new.key(source, settings, run)) is None


def test_a_run_answered_from_the_cache_starts_no_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flake8_jax_closure.cli import per_file

    for index in range(4):
        (tmp_path / f"m{index}.py").write_text(STALE.format(index=index), encoding="utf-8")
    (tmp_path / "changed.py").write_text("import jax\n", encoding="utf-8")
    cache = tmp_path / "cache"
    files = [(str(path), Settings()) for path in sorted(tmp_path.glob("*.py"))]
    first = per_file.run_all(per_file.check_file, files, RunOptions(), 2, cache=cache)
    assert sum(len(result.findings) for result in first) == 4

    def no_workers(*args: object, **kwargs: object) -> None:
        raise AssertionError("workers started")

    monkeypatch.setattr(per_file, "ProcessPoolExecutor", no_workers)
    again = per_file.run_all(per_file.check_file, files, RunOptions(), 2, cache=cache)
    assert [(r.path, r.findings) for r in again] == [(r.path, r.findings) for r in first]

    # One file changed: answered in this process too (fewer than three files left to check).
    (tmp_path / "changed.py").write_text(STALE.format(index=9), encoding="utf-8")
    changed = per_file.run_all(per_file.check_file, files, RunOptions(), 2, cache=cache)
    assert [len(r.findings) for r in changed] == [1, 1, 1, 1, 1]
