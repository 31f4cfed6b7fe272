"""Configuration files: ``[tool.flake8-jax-closure]`` in pyproject.toml, and the plugin's options
in the ``[flake8]`` section of setup.cfg or tox.ini. Command-line flags win over both."""

from __future__ import annotations

import configparser
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SECTION = "flake8-jax-closure"
_LIST_KEYS = ("select", "ignore", "jax-compile-functions", "exclude")
_BOOL_KEYS = ("unsafe-fixes",)


class ConfigError(Exception):
    """A configuration file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class FileConfig:
    path: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    jax_compile_functions: tuple[str, ...] | None = None
    exclude: tuple[str, ...] | None = None
    unsafe_fixes: bool | None = None


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
        if key in _LIST_KEYS:
            values[key.replace("-", "_")] = _as_list(value, where, key)
        elif key in _BOOL_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: '{key}' must be true or false")
            values[key.replace("-", "_")] = value
        else:
            known = ", ".join(_LIST_KEYS + _BOOL_KEYS)
            raise ConfigError(f"{where}: unknown key '{key}' (known: {known})")
    for key in ("select", "ignore"):
        if key in values:
            values[key] = tuple(code.upper() for code in values[key])
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


def load_config(start: Path) -> FileConfig:
    """The closest configuration above ``start``: pyproject.toml first, then setup.cfg, tox.ini."""
    directory = start.resolve()
    if directory.is_file():
        directory = directory.parent
    for folder in (directory, *directory.parents):
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            found = _pyproject(pyproject)
            if found is not None:
                return found
        for name in ("setup.cfg", "tox.ini"):
            candidate = folder / name
            if candidate.is_file():
                found = _flake8_section(candidate)
                if found is not None:
                    return found
    return FileConfig()
