"""Which files a run checks, as ruff chooses them.

Folders are walked for ``*.py`` files and Jupyter notebooks (``*.ipynb``, as ruff walks them),
skipping what the closest configuration excludes
(``exclude`` replaces the default list, ``extend-exclude`` adds to it) and, by default, what
git ignores (``respect-gitignore``). Files named on the command line are checked as named,
unless ``force-exclude`` is set (pre-commit names every file: the hooks pass it). A path given
twice is checked once. Git itself answers what ``.gitignore`` ignores (``git check-ignore``),
so its rules hold exactly; without git or outside a work tree nothing is ignored that way.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .config import ConfigCache, Resolved
from .notebook import NOTEBOOK_SUFFIX

_SUFFIXES = (".py", NOTEBOOK_SUFFIX)


@dataclass(frozen=True)
class Selected:
    path: str
    resolved: Resolved


def select_files(paths: Iterable[str], configs: ConfigCache) -> tuple[list[Selected], list[str]]:
    """The files to check, in a stable order, and one error line per missing path."""
    selected: list[Selected] = []
    errors: list[str] = []
    seen: set[str] = set()
    walked: list[Selected] = []
    for path in paths:
        if os.path.isdir(path):
            for file in _walk(path, configs):
                walked.append(file)
        elif os.path.islink(path) and _is_link_loop(path):
            errors.append(f"{path}: cannot read: symbolic link loop")
        elif os.path.exists(path) or os.path.islink(path):
            resolved = configs.for_path(Path(path))
            if resolved.force_exclude and resolved.is_excluded(Path(path)):
                continue
            walked.append(Selected(path, resolved))
        else:
            errors.append(f"{path}: no such file or directory")
    trees: dict[str, str | None] = {}
    named = {p for p in paths if not os.path.isdir(p)}
    ignored = _ignored_by_git(
        [
            s
            for s in walked
            if s.resolved.respect_gitignore and (s.path not in named or s.resolved.force_exclude)
        ],
        trees,
    )
    for item in walked:
        key = os.path.realpath(item.path)
        if key in seen or item.path in ignored:
            continue
        seen.add(key)
        selected.append(item)
    return selected, errors


def _is_link_loop(path: str) -> bool:
    try:
        os.stat(path)
    except OSError as error:
        return error.errno == errno.ELOOP
    return False


def _walk(root: str, configs: ConfigCache) -> Iterator[Selected]:
    """``*.py`` and ``*.ipynb`` files under ``root``; symbolic links to folders are not
    followed, so link loops cannot trap the walk."""
    for directory, subdirectories, files in os.walk(root):
        resolved = configs.for_path(Path(directory))
        subdirectories[:] = sorted(
            d for d in subdirectories if not resolved.is_excluded_entry(Path(directory, d))
        )
        for name in sorted(files):
            full = os.path.join(directory, name)
            if name.endswith(_SUFFIXES) and not resolved.is_excluded_entry(Path(full)):
                yield Selected(full, resolved)


def _ignored_by_git(files: list[Selected], trees: dict[str, str | None]) -> set[str]:
    """The paths git ignores, asked once per work tree."""
    by_tree: dict[str, list[str]] = {}
    for item in files:
        top = _work_tree(os.path.dirname(os.path.abspath(item.path)), trees)
        if top is not None:
            by_tree.setdefault(top, []).append(item.path)
    ignored: set[str] = set()
    for top, paths in by_tree.items():
        absolute = {os.path.abspath(p): p for p in paths}
        try:
            completed = subprocess.run(
                ["git", "-C", top, "check-ignore", "--no-index", "--stdin", "-z"],
                input="\0".join(absolute).encode(),
                capture_output=True,
                timeout=60,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        for answer in completed.stdout.decode(errors="replace").split("\0"):
            if answer:
                ignored.add(absolute.get(os.path.abspath(os.path.join(top, answer)), answer))
    return ignored


def _work_tree(directory: str, trees: dict[str, str | None]) -> str | None:
    """The top of the git work tree holding ``directory``, found by its ``.git`` entry."""
    if directory in trees:
        return trees[directory]
    current = Path(directory)
    top: str | None = None
    for folder in (current, *current.parents):
        if (folder / ".git").exists():
            top = str(folder)
            break
    trees[directory] = top
    return top
