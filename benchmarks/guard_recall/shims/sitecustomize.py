"""Loaded at start-up of every program the guard-recall benchmark runs (its folder is put first on
``PYTHONPATH``); nothing of the program itself is changed.

- Every ``StaleCaptureWarning`` the guard gives is appended, as one JSON line, to the file named
  by ``$GUARD_RECALL_EVENTS``, whatever warning filters the program sets (notebooks often silence
  all warnings).
- ``display`` and ``get_ipython`` exist, as in a notebook, and do nothing.
- ``$GUARD_RECALL_SHIMS`` names more shims of this folder to import (comma-separated): each
  replaces a download with small synthetic data.
"""

from __future__ import annotations

import builtins
import importlib
import json
import os
import warnings

_EVENTS = os.environ.get("GUARD_RECALL_EVENTS")
_original_warn_explicit = warnings.warn_explicit


def _record(message: object, category: type, filename: str, lineno: int) -> None:
    if not _EVENTS or getattr(category, "__name__", "") != "StaleCaptureWarning":
        return
    text = str(message.args[0]) if isinstance(message, Warning) else str(message)
    entry = {"message": text, "filename": os.path.abspath(filename), "lineno": lineno}
    with open(_EVENTS, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def _warn_explicit(message, category, filename, lineno, *args, **kwargs):  # type: ignore[no-untyped-def]
    _record(message, category, filename, lineno)
    return _original_warn_explicit(message, category, filename, lineno, *args, **kwargs)


warnings.warn_explicit = _warn_explicit


class _Shell:
    """What ``get_ipython()`` returns here: every method does nothing."""

    def __getattr__(self, name: str) -> object:
        return lambda *args, **kwargs: None


if not hasattr(builtins, "display"):
    builtins.display = lambda *args, **kwargs: None  # type: ignore[attr-defined]
if not hasattr(builtins, "get_ipython"):
    builtins.get_ipython = lambda: _Shell()  # type: ignore[attr-defined]

for _name in filter(None, os.environ.get("GUARD_RECALL_SHIMS", "").split(",")):
    importlib.import_module(f"shim_{_name.strip()}")
