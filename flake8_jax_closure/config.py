"""Configuration: where it is found, what it may say, and how it combines with flags and editor
settings. One resolver serves the command line, the flake8 plugin and the language server.

Each checked file uses the closest configuration above it, as ruff does: a ``pyproject.toml``
with a ``[tool.flake8-jax-closure]`` table, or a ``.flake8``, ``setup.cfg`` or ``tox.ini`` whose
``[flake8]`` section sets ``jax-compile-functions`` (the plugin's own option). ``--config``
names one file for every checked file. Precedence: flags (or the editor's settings), then the
file, then the defaults. Paths in the file (``exclude``, ``per-file-ignores``) are relative to
the folder holding it. The keys, their kinds of value and their checks are declared in
``options``.
"""

from __future__ import annotations

import configparser
import functools
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatch
from pathlib import Path, PurePath
from typing import Any

from .option_kinds import ConfigError, PatternTable
from .options import (
    Option,
    Place,
    Target,
    given_in,
    per_file_options,
    resolve_values,
    settings_from,
    targeting,
)
from .settings import Settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SECTION = "flake8-jax-closure"


def _keys(place: Place) -> dict[str, Option[Any]]:
    """The options ``place`` may give, by name, in declaration order."""
    return {option.name: option for option in given_in(place)}


@dataclass(frozen=True)
class FileConfig:
    """What one configuration file says: values by option name, only those it sets."""

    path: Path | None = None
    values: Mapping[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        """The folder paths in the file are relative to."""
        return self.path.parent if self.path is not None else Path.cwd()


@dataclass(frozen=True)
class Overrides:
    """Flags on the command line, or an editor's settings: values by option name, only those
    given."""

    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Resolved:
    """Settings for the analysis, and the file selection rules around it: one field for each
    option of ``Target.FILES``."""

    settings: Settings
    root: Path
    config_path: Path | None
    exclude: tuple[str, ...]
    per_file_ignores: PatternTable
    force_exclude: bool
    respect_gitignore: bool

    def is_excluded(self, path: Path) -> bool:
        """Whether ``exclude`` matches the path (or a folder above it, below the root)."""
        return matches(path, self.exclude, self.root)

    def is_excluded_entry(self, path: Path) -> bool:
        """Whether ``exclude`` matches a file or folder met in a walk, by its own name or path:
        the folders above it were matched when the walk met them, and the folder the walk
        started from was named by the user."""
        return matches(path, self.exclude, self.root, folders_above=False)

    def settings_for(self, path: Path | None) -> Settings:
        """The settings for one file: a table of patterns (``per-file-ignores``) adds the codes
        of the patterns the file matches to its setting (``ignore``)."""
        settings = self.settings
        if path is None:
            return settings
        for option, setting in per_file_options():
            table: PatternTable = getattr(self, option.attribute)
            extra = tuple(
                code
                for pattern, codes in table
                if matches(path, (pattern,), self.root)
                for code in codes
            )
            if extra:
                added: dict[str, Any] = {setting: (*getattr(settings, setting), *extra)}
                settings = replace(settings, **added)
        return settings


@functools.lru_cache(maxsize=256)
def _absolute_root(root: Path) -> str:
    return os.path.abspath(root)


def matches(path: Path, patterns: Iterable[str], root: Path, *, folders_above: bool = True) -> bool:
    """Glob patterns against the path relative to ``root``, against the file's own name, and,
    with ``folders_above``, against each folder on the way below ``root``. A path outside
    ``root`` is matched by its own name and its absolute path only: the folders above it
    (``site-packages`` of an installed package named on the command line) are not its own."""
    patterns = tuple(patterns)
    if not patterns:
        return False
    absolute, base = os.path.abspath(path), _absolute_root(root)
    if absolute != base and not absolute.startswith(base.rstrip(os.sep) + os.sep):
        candidates = {PurePath(absolute).as_posix(), path.name}
    else:
        relative = PurePath(os.path.relpath(absolute, base)).as_posix()
        parts = relative.split("/")
        # The absolute path too: patterns given on the command line are made absolute.
        candidates = {relative, parts[-1], PurePath(absolute).as_posix()}
        if folders_above:
            candidates.update(parts)
            candidates.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return any(
        fnmatch(candidate, pattern.rstrip("/")) for pattern in patterns for candidate in candidates
    )


def _from_table(table: Any, where: str, path: Path) -> FileConfig:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    keys = _keys(Place.FILE)
    values: dict[str, Any] = {}
    for key, value in table.items():
        option = keys.get(key)
        if option is None:
            known = ", ".join(keys)
            raise ConfigError(f"{where}: unknown key '{key}' (known: {known})")
        values[key] = option.kind.from_file(value, where, key)
    for option in keys.values():  # rule selectors are checked once every key is read
        if option.name in values:
            values[option.name] = option.kind.check(values[option.name], where)
    return FileConfig(path, values)


def _pyproject(path: Path) -> FileConfig | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from error
    table = data.get("tool", {}).get(SECTION)
    if table is None:
        return None
    return _from_table(table, f"{path}: [tool.{SECTION}]", path)


def _flake8_section(path: Path) -> FileConfig | None:
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot parse: {error}") from error
    where = f"{path}: [flake8]"
    values = {
        option.name: option.kind.from_file(parser.get("flake8", option.name), where, option.name)
        for option in given_in(Place.FLAKE8)
        if parser.has_option("flake8", option.name)
    }
    if not values:
        return None
    return FileConfig(path, values)


def read_config(path: Path) -> FileConfig:
    """The configuration in one named file (``--config``)."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such configuration file")
    found = _pyproject(path) if path.suffix == ".toml" else _flake8_section(path)
    if found is None:
        flake8_keys = " or ".join(f"[flake8] {option.name}" for option in given_in(Place.FLAKE8))
        raise ConfigError(f"{path}: no [tool.{SECTION}] table or {flake8_keys}")
    return found


def find_config(start: Path) -> FileConfig:
    """The closest configuration at or above ``start`` (a file or a folder)."""
    directory = start.resolve()
    if not directory.is_dir():
        directory = directory.parent
    for folder in (directory, *directory.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            found = _pyproject(pyproject)
            if found is not None:
                return found
        for name in (".flake8", "setup.cfg", "tox.ini"):
            candidate = folder / name
            if candidate.is_file():
                found = _flake8_section(candidate)
                if found is not None:
                    return found
    return FileConfig()


class ConfigCache:
    """Configuration per folder, read once per run."""

    def __init__(self, overrides: Overrides, config_path: Path | None = None) -> None:
        self.overrides = overrides
        self._named = read_config(config_path) if config_path is not None else None
        self._by_folder: dict[Path, Resolved] = {}

    def for_path(self, path: Path) -> Resolved:
        try:
            folder = path.resolve()
        except (OSError, RuntimeError):  # a symbolic link loop: its folder decides
            folder = Path(os.path.abspath(path))
        if not folder.is_dir():
            folder = folder.parent
        resolved = self._by_folder.get(folder)
        if resolved is None:
            config = self._named if self._named is not None else find_config(folder)
            resolved = resolve(config, self.overrides)
            self._by_folder[folder] = resolved
        return resolved


def resolve(config: FileConfig, overrides: Overrides | None = None) -> Resolved:
    """Defaults, then the file, then the flags or editor settings."""
    given = overrides.values if overrides is not None else {}
    values = resolve_values(config.values, given)
    return Resolved(
        settings=settings_from(values),
        root=config.root,
        config_path=config.path,
        **targeting(Target.FILES, values),
    )


def overrides_from(values: Mapping[str, Any]) -> Overrides:
    """Overrides from an editor's settings, keyed by the options' names or their camel case;
    what is not an option, or not a value of its kind, is left out."""
    keys = _keys(Place.EDITOR)
    given: dict[str, Any] = {}
    for key, value in values.items():
        option = keys.get(key) or keys.get(_camel_to_kebab(key))
        if option is None:
            continue
        read = option.kind.from_editor(value, key)
        if read is not None:
            given[option.name] = read
    return Overrides(given)


def _camel_to_kebab(key: str) -> str:
    return "".join(f"-{c.lower()}" if c.isupper() else c for c in key)
