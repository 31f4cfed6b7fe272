"""Reading and writing source files without losing a byte of the user's work.

Sources keep their encoding (cookie or BOM) and newline style; writes go through symbolic links
to their targets, replace the file atomically keeping its mode and owner, and happen only when
the file still holds what was read and this user may write it.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass


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
    """Replace the file's content; refuse if it changed since it was read.

    A symbolic link is written through to its target. A file this user may not write, or one
    marked read-only, is refused. The new content goes to a temporary file in the same folder
    that takes the original's mode and owner and replaces it atomically; where the owner
    cannot be kept (another user's file in a folder we may write), the file is rewritten in
    place instead, so that it keeps its owner.
    """
    data = source.encode(new_text)
    target = os.path.realpath(source.path)
    try:
        with open(target, "rb") as handle:
            if handle.read() != source.raw:
                raise SourceError(f"{source.path}: changed while being fixed; left alone")
        status = os.stat(target)
        writable = status.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        if not writable or not os.access(target, os.W_OK):
            raise SourceError(f"{source.path}: cannot write: permission denied; left alone")
        directory = os.path.dirname(target)
        descriptor, temporary = tempfile.mkstemp(prefix=".jc-", suffix=".py.tmp", dir=directory)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temporary, stat.S_IMODE(status.st_mode))
            if not _same_owner(temporary, status):
                os.unlink(temporary)
                _write_in_place(target, data)
                return
            os.replace(temporary, target)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
    except OSError as error:
        raise SourceError(f"{source.path}: cannot write: {error.strerror or error}") from error


def _same_owner(path: str, original: os.stat_result) -> bool:
    """Give ``path`` the original's owner and group; False when that is not allowed."""
    current = os.stat(path)
    if (current.st_uid, current.st_gid) == (original.st_uid, original.st_gid):
        return True
    try:
        os.chown(path, original.st_uid, original.st_gid)
    except (PermissionError, AttributeError):
        return False
    return True


def _write_in_place(path: str, data: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.write(data)
        handle.truncate()
        handle.flush()
        os.fsync(handle.fileno())
