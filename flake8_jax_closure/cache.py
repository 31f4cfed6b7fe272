"""A cache of findings keyed by file content, tool version, the tool's own code and options.

Entries live in the user's cache folder (``$FLAKE8_JAX_CLOSURE_CACHE_DIR`` overrides it), one
small JSON file per key, written to a temporary name and renamed into place: concurrent runs can
share the folder, and a torn or unreadable entry is just a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import __version__
from .diagnostics import Applicability, Edit, Finding, Fix, Role, WitnessStep
from .settings import RunOptions, Settings


def default_directory() -> Path:
    override = os.environ.get("FLAKE8_JAX_CLOSURE_CACHE_DIR")
    if override:
        return Path(override)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "flake8-jax-closure" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "flake8-jax-closure"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "flake8-jax-closure"


_PACKAGE = Path(__file__).resolve().parent


def code_fingerprint(root: Path) -> bytes:
    """The name, size and modification time of every module under ``root``: a checkout or an
    editable install changes the tool's code without changing its version, and findings of the
    old code must then not be served. Stats only: about a millisecond."""
    entries = []
    for path in sorted(root.rglob("*.py")):
        try:
            stat = path.stat()
        except OSError:
            continue
        entries.append(f"{path.relative_to(root).as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}")
    return hashlib.blake2b("\n".join(entries).encode(), digest_size=16).digest()


@lru_cache(maxsize=1)
def _own_code() -> bytes:
    return code_fingerprint(_PACKAGE)


def _fingerprint(settings: Settings, run: RunOptions) -> bytes:
    """Every field of both: a field added to either can never share another value's entries."""
    values = [
        sorted(value) if isinstance(value, frozenset) else value
        for record in (settings, run)
        for value in (getattr(record, each.name) for each in fields(record))
    ]
    return repr(values).encode()


def _to_json(finding: Finding) -> dict[str, Any]:
    if finding.fix is not None:
        # The plan is the analysis's working state, not part of the finding: left behind.
        finding = replace(finding, fix=replace(finding.fix, plan=None))
    data = asdict(finding)
    if finding.fix is not None:
        data["fix"]["applicability"] = finding.fix.applicability.value
        del data["fix"]["plan"]
    for step in data["witness"]:
        step["role"] = step["role"].value
    return data


def _from_json(data: dict[str, Any]) -> Finding:
    fix = data.get("fix")
    if fix is not None:
        data["fix"] = Fix(
            Applicability(fix["applicability"]),
            fix["description"],
            tuple(Edit(**edit) for edit in fix["edits"]),
            tuple(fix.get("introduces", ())),
        )
    data["witness"] = tuple(
        WitnessStep(**{**step, "role": Role(step["role"])}) for step in data["witness"]
    )
    data["entry_points"] = tuple(data["entry_points"])
    return Finding(**data)


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=20).hexdigest()


class FindingsCache:
    """Findings by content, tool version and code, and the settings they were computed with
    (settings differ between files: ``per-file-ignores``, a closer configuration), and how
    (with edits or without)."""

    def __init__(self, directory: Path, code: bytes | None = None) -> None:
        self.directory = directory / __version__
        self.code = _own_code() if code is None else code

    def key(self, raw: bytes, settings: Settings, run: RunOptions) -> str:
        salt = b"\0".join((__version__.encode(), self.code, _fingerprint(settings, run), b""))
        return hashlib.blake2b(salt + raw, digest_size=20).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str, project: Callable[[], bytes] | None = None) -> list[Finding] | None:
        """The findings stored under ``key``; for findings that depended on the project's
        other files, only while ``project()`` still says what it said then."""
        try:
            with open(self._path(key), encoding="utf-8") as handle:
                entry = json.load(handle)
            depends = entry["project"]
            if depends is not None and (project is None or _digest(project()) != depends):
                return None
            return [_from_json(item) for item in entry["findings"]]
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def put(self, key: str, findings: list[Finding], project: bytes | None = None) -> None:
        """Store the findings; ``project``, when they depend on the project's other files (an
        API hazard was looked for there), says what those were."""
        path = self._path(key)
        entry = {
            "project": None if project is None else _digest(project),
            "findings": [_to_json(f) for f in findings],
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(entry, handle)
            os.replace(temporary, path)
        except OSError:
            pass  # a cache that cannot be written only costs time
