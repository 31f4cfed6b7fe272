"""Finding, reading and writing source files without losing a byte of the user's work.

Sources keep their encoding (cookie or BOM) and newline style; writes go to a temporary file in
the same folder and replace the original atomically, keeping its mode, and only when the file
still holds what was read.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

SKIPPED_DIRECTORIES = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", ".venv", "venv", "env", ".env", ".tox", ".nox",
        "__pycache__", "build", "dist", "node_modules", ".mypy_cache", ".pytest_cache",
        ".ruff_cache", ".eggs", "site-packages", "__pypackages__",
    }
)  # fmt: skip


class SourceError(Exception):
    """A path that cannot be read as Python source; the message is one line for the user."""


@dataclass(frozen=True)
class Source:
    path: str
    text: str
    raw: bytes
    encoding: str  # as tokenize names it; 'utf-8-sig' when the file starts with a BOM

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)


def decode(raw: bytes, path: str) -> Source:
    if b"\0" in raw:
        raise SourceError(f"{path}: binary content (NUL bytes), not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        text = raw.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as error:
        raise SourceError(f"{path}: cannot decode: {error}") from error
    return Source(path, text, raw, encoding)


def read_source(path: str) -> Source:
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise SourceError(f"{path}: cannot read: {error.strerror or error}") from error
    return decode(raw, path)


def write_source(source: Source, new_text: str) -> None:
    """Replace the file's content atomically; refuse if it changed since it was read."""
    data = source.encode(new_text)
    try:
        with open(source.path, "rb") as handle:
            if handle.read() != source.raw:
                raise SourceError(f"{source.path}: changed while being fixed; left alone")
        mode = stat.S_IMODE(os.stat(source.path).st_mode)
        directory = os.path.dirname(os.path.abspath(source.path))
        descriptor, temporary = tempfile.mkstemp(prefix=".jc-", suffix=".py.tmp", dir=directory)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, mode)
            os.replace(temporary, source.path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
    except OSError as error:
        raise SourceError(f"{source.path}: cannot write: {error.strerror or error}") from error


def python_files(paths: Iterable[str], exclude: Iterable[str] = ()) -> Iterator[str]:
    """Files named directly, and ``*.py`` under directories, in a stable order.

    Raises SourceError for a path that does not exist. Symbolic links to directories are not
    followed, so link loops cannot trap the walk.
    """
    excluded = tuple(exclude)
    for path in paths:
        if os.path.isdir(path):
            yield from _walk(path, excluded)
        elif os.path.exists(path) or os.path.islink(path):
            yield path
        else:
            raise SourceError(f"{path}: no such file or directory")


def _walk(root: str, excluded: tuple[str, ...]) -> Iterator[str]:
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(
            d
            for d in subdirectories
            if d not in SKIPPED_DIRECTORIES
            and not d.endswith(".egg-info")
            and not _is_excluded(os.path.join(directory, d), d, excluded)
        )
        for name in sorted(files):
            full = os.path.join(directory, name)
            if name.endswith(".py") and not _is_excluded(full, name, excluded):
                yield full


def _is_excluded(path: str, name: str, patterns: tuple[str, ...]) -> bool:
    from fnmatch import fnmatch

    normalized = Path(path).as_posix()
    return any(
        fnmatch(name, p) or fnmatch(normalized, p) or fnmatch(normalized, f"*/{p}")
        for p in patterns
    )
