"""Configuration: where it is found, what it may say, and how it combines with flags and editor
settings. One resolver serves the command line, the flake8 plugin and the language server.

Each checked file uses the closest configuration above it, as ruff does: a ``pyproject.toml``
with a ``[tool.flake8-jax-closure]`` table, or a ``.flake8``, ``setup.cfg`` or ``tox.ini`` whose
``[flake8]`` section sets ``jax-compile-functions`` (the plugin's own option). ``--config``
names one file for every checked file. Precedence: flags (or the editor's settings), then the
file, then the defaults. Paths in the file (``exclude``, ``per-file-ignores``) are relative to
the folder holding it.
"""

from __future__ import annotations

import configparser
import functools
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path, PurePath
from typing import Any

from .rules import CODES
from .settings import Settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SECTION = "flake8-jax-closure"
_LIST_KEYS = (
    "select", "extend-select", "ignore", "extend-ignore", "jax-compile-functions", "exclude",
    "extend-exclude",
)  # fmt: skip
_BOOL_KEYS = ("unsafe-fixes", "force-exclude", "respect-gitignore")
_TABLE_KEYS = ("per-file-ignores",)
# Folders never walked into, unless ``exclude`` replaces this list (``extend-exclude`` adds).
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pytest_cache", ".ruff_cache", ".svn", ".tox", ".venv", "__pycache__", "__pypackages__",
    "build", "dist", "node_modules", "site-packages", "venv", "*.egg-info",
)  # fmt: skip


class ConfigError(Exception):
    """A configuration that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class FileConfig:
    """What one configuration file says; None where it says nothing."""

    path: Path | None = None
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] | None = None
    extend_ignore: tuple[str, ...] = ()
    jax_compile_functions: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    unsafe_fixes: bool | None = None
    force_exclude: bool | None = None
    respect_gitignore: bool | None = None

    @property
    def root(self) -> Path:
        """The folder paths in the file are relative to."""
        return self.path.parent if self.path is not None else Path.cwd()


@dataclass(frozen=True)
class Overrides:
    """Flags on the command line, or an editor's settings: None where not given."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] | None = None
    extend_ignore: tuple[str, ...] = ()
    jax_compile_functions: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    unsafe_fixes: bool | None = None
    force_exclude: bool | None = None
    respect_gitignore: bool | None = None
    # ``--per-file-ignores`` replaces the file's table, ``--extend-per-file-ignores`` adds to it.
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class Resolved:
    """Settings for the analysis, and the file selection rules around it."""

    settings: Settings
    root: Path
    exclude: tuple[str, ...]
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    force_exclude: bool = False
    respect_gitignore: bool = True
    config_path: Path | None = None

    def is_excluded(self, path: Path) -> bool:
        """Whether ``exclude`` matches the path (or a folder above it, below the root)."""
        return matches(path, self.exclude, self.root)

    def is_excluded_entry(self, path: Path) -> bool:
        """Whether ``exclude`` matches a file or folder met in a walk, by its own name or path:
        the folders above it were matched when the walk met them, and the folder the walk
        started from was named by the user."""
        return matches(path, self.exclude, self.root, folders_above=False)

    def settings_for(self, path: Path | None) -> Settings:
        """The settings for one file: ``per-file-ignores`` adds to ``ignore``."""
        if path is None or not self.per_file_ignores:
            return self.settings
        extra = tuple(
            code
            for pattern, codes in self.per_file_ignores
            if matches(path, (pattern,), self.root)
            for code in codes
        )
        if not extra:
            return self.settings
        return Settings(
            compile_functions=self.settings.compile_functions,
            select=self.settings.select,
            ignore=(*self.settings.ignore, *extra),
            unsafe_fixes=self.settings.unsafe_fixes,
            lazy=self.settings.lazy,
            with_edits=self.settings.with_edits,
        )


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


def check_selectors(codes: Iterable[str], where: str) -> tuple[str, ...]:
    """Codes and prefixes, upper-cased as flake8 writes them; an unknown one is an error
    (``JX999`` would otherwise quietly select nothing). ``ALL``, ruff's word for every rule,
    is the prefix they all share."""
    checked = []
    for code in codes:
        code = code.strip().upper()
        if not code:
            continue
        if code == "ALL":  # ruff's name for every rule
            code = "JC"
        if not any(known.startswith(code) for known in CODES):
            known = ", ".join(CODES)
            raise ConfigError(f"{where}: unknown rule selector '{code}' (known: {known})")
        checked.append(code)
    return tuple(checked)


def per_file_ignores_flag(value: str, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``--per-file-ignores``, as flake8 and ruff spell it: ``pattern:codes`` groups separated
    by spaces or commas, codes separated by commas (``tests/*:JC103,JC104 __init__.py:JC1``).
    A pattern with a folder in it is relative to the current folder, as on ruff's command line;
    a bare file name matches that name anywhere."""
    table: list[tuple[str, list[str]]] = []
    for token in (t for t in value.replace(",", " ").split() if t):
        pattern, colon, code = token.rpartition(":")
        if colon:
            if not pattern:
                raise ConfigError(f"{where}: '{token}' has no file pattern before the colon")
            if "/" in pattern or os.sep in pattern:
                pattern = PurePath(os.path.abspath(pattern)).as_posix()
            table.append((pattern, []))
        elif not table:
            raise ConfigError(f"{where}: '{token}' comes before any 'pattern:codes'")
        if code:
            table[-1][1].append(code)
    return tuple((pattern, check_selectors(codes, where)) for pattern, codes in table)


def _as_list(value: Any, where: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.replace("\n", ",").split(",")
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings")
    return tuple(item.strip() for item in value if item.strip())


def _from_table(table: Any, where: str, path: Path) -> FileConfig:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    values: dict[str, Any] = {}
    for key, value in table.items():
        name = key.replace("-", "_")
        if key in _LIST_KEYS:
            values[name] = _as_list(value, where, key)
        elif key in _BOOL_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: '{key}' must be true or false")
            values[name] = value
        elif key in _TABLE_KEYS:
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: '{key}' must be a table of patterns to codes")
            values[name] = tuple(
                (pattern, check_selectors(_as_list(codes, where, key), where))
                for pattern, codes in value.items()
            )
        else:
            known = ", ".join((*_LIST_KEYS, *_BOOL_KEYS, *_TABLE_KEYS))
            raise ConfigError(f"{where}: unknown key '{key}' (known: {known})")
    for key in ("select", "extend_select", "ignore", "extend_ignore"):
        if key in values:
            values[key] = check_selectors(values[key], where)
    return FileConfig(path=path, **values)


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
    if not parser.has_option("flake8", "jax-compile-functions"):
        return None
    value = parser.get("flake8", "jax-compile-functions")
    where = f"{path}: [flake8]"
    return FileConfig(
        path=path, jax_compile_functions=_as_list(value, where, "jax-compile-functions")
    )


def read_config(path: Path) -> FileConfig:
    """The configuration in one named file (``--config``)."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such configuration file")
    found = _pyproject(path) if path.suffix == ".toml" else _flake8_section(path)
    if found is None:
        raise ConfigError(f"{path}: no [tool.{SECTION}] table or [flake8] jax-compile-functions")
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


def resolve(config: FileConfig, overrides: Overrides = Overrides()) -> Resolved:
    """Defaults, then the file, then the flags or editor settings."""

    def pick(flag: Any, configured: Any, default: Any) -> Any:
        return flag if flag is not None else configured if configured is not None else default

    select = pick(overrides.select, config.select, ("JC",))
    select = (*select, *config.extend_select, *overrides.extend_select)
    ignore = pick(overrides.ignore, config.ignore, ())
    ignore = (*ignore, *config.extend_ignore, *overrides.extend_ignore)
    exclude = pick(overrides.exclude, config.exclude, DEFAULT_EXCLUDE)
    exclude = (*exclude, *config.extend_exclude, *overrides.extend_exclude)
    settings = Settings.with_extra_compile_functions(
        pick(overrides.jax_compile_functions, config.jax_compile_functions, ()),
        select=tuple(select),
        ignore=tuple(ignore),
        unsafe_fixes=pick(overrides.unsafe_fixes, config.unsafe_fixes, False),
    )
    return Resolved(
        settings=settings,
        root=config.root,
        exclude=tuple(exclude),
        per_file_ignores=(
            *pick(overrides.per_file_ignores, config.per_file_ignores, ()),
            *overrides.extend_per_file_ignores,
        ),
        force_exclude=pick(overrides.force_exclude, config.force_exclude, False),
        respect_gitignore=pick(overrides.respect_gitignore, config.respect_gitignore, True),
        config_path=config.path,
    )


def overrides_from(values: Mapping[str, Any]) -> Overrides:
    """Overrides from a mapping with the configuration's key names (an editor's settings)."""
    known = {f.replace("_", "-"): f for f in Overrides.__dataclass_fields__}
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        name = known.get(key) or known.get(_camel_to_kebab(key))
        if name is None:
            continue
        if isinstance(value, list):
            value = tuple(str(v) for v in value)
            if name in ("select", "extend_select", "ignore", "extend_ignore"):
                value = check_selectors(value, "editor settings")
        elif name in ("per_file_ignores", "extend_per_file_ignores"):
            if not isinstance(value, dict):
                continue
            value = tuple(
                (str(pattern), check_selectors(_as_list(codes, "editor settings", key),
                                               "editor settings"))
                for pattern, codes in value.items()
            )  # fmt: skip
        kwargs[name] = value
    return Overrides(**kwargs)


def _camel_to_kebab(key: str) -> str:
    return "".join(f"-{c.lower()}" if c.isupper() else c for c in key)
