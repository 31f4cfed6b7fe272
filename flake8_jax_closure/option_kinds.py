"""How each kind of option value is read where it may be given (a configuration file, a
flag, an editor's settings) and checked. A value that cannot be used raises ``ConfigError``,
whose message starts with where it was given and names the key.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import PurePath
from typing import Any, Generic, TypeVar

T = TypeVar("T")
# ``per-file-ignores``: (pattern, codes) in the order given.
PatternTable = tuple[tuple[str, tuple[str, ...]], ...]
EDITOR_SETTINGS = "editor settings"  # where an editor's bad value is said to be


class ConfigError(Exception):
    """A configuration that cannot be used; the message names the file (or the flag, or the
    editor's settings) and the key."""


def check_selectors(codes: Iterable[str], where: str) -> tuple[str, ...]:
    """Codes and prefixes, upper-cased as flake8 writes them; an unknown one is an error
    (``JX999`` would otherwise quietly select nothing). ``ALL``, ruff's word for every rule,
    is the prefix they all share."""
    # Imported here: the flake8 plugin reads its options before any file needs the rules.
    from .rules import CODES

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


def as_list(value: Any, where: str, key: str) -> tuple[str, ...]:
    """A list of strings, or one string of them separated by commas or lines (flake8's
    sections, and a TOML string), without blanks."""
    if isinstance(value, str):
        value = value.replace("\n", ",").split(",")
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: '{key}' must be a list of strings")
    return tuple(item.strip() for item in value if item.strip())


class Kind(ABC, Generic[T]):
    """How a kind of value is read in each place it may be given. Readers raise ConfigError
    with a message that starts with ``where``."""

    metavar: str | None = None  # the flag's value in the help; None: the option's name

    @abstractmethod
    def from_file(self, value: Any, where: str, key: str) -> T:
        """A value of a configuration file, as TOML or flake8's sections give it."""

    def check(self, value: T, where: str) -> T:
        """What is checked once the whole table is read (its other errors come first)."""
        return value

    @abstractmethod
    def from_flag(self, text: str, where: str) -> T:
        """A flag's text."""

    @abstractmethod
    def from_editor(self, value: Any, key: str) -> T | None:
        """An editor's JSON value; None when it is not of this kind (the editor's setting is
        then left out, as unknown keys are)."""


class Names(Kind[tuple[str, ...]]):
    """Strings: qualified names, glob patterns."""

    def from_file(self, value: Any, where: str, key: str) -> tuple[str, ...]:
        return as_list(value, where, key)

    def from_flag(self, text: str, where: str) -> tuple[str, ...]:
        return tuple(name.strip() for name in text.split(",") if name.strip())

    def from_editor(self, value: Any, key: str) -> tuple[str, ...] | None:
        return tuple(str(item) for item in value) if isinstance(value, list) else None


class Selectors(Names):
    """Rule codes and prefixes, checked against the rules there are."""

    def check(self, value: tuple[str, ...], where: str) -> tuple[str, ...]:
        return check_selectors(value, where)

    def from_flag(self, text: str, where: str) -> tuple[str, ...]:
        return check_selectors(text.split(","), where)

    def from_editor(self, value: Any, key: str) -> tuple[str, ...] | None:
        names = super().from_editor(value, key)
        return None if names is None else check_selectors(names, EDITOR_SETTINGS)


class Switch(Kind[bool]):
    """On or off. Its flag takes no value (see ``Option.flag``)."""

    def from_file(self, value: Any, where: str, key: str) -> bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: '{key}' must be true or false")
        return value

    def from_flag(self, text: str, where: str) -> bool:
        raise TypeError("a switch's flag takes no value")

    def from_editor(self, value: Any, key: str) -> bool | None:
        return value if isinstance(value, bool) else None


class Patterns(Kind[PatternTable]):
    """File patterns, each with the rule codes it concerns."""

    metavar = "PATTERN:CODES"

    def from_file(self, value: Any, where: str, key: str) -> PatternTable:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: '{key}' must be a table of patterns to codes")
        return tuple(
            (pattern, check_selectors(as_list(codes, where, key), where))
            for pattern, codes in value.items()
        )

    def from_flag(self, text: str, where: str) -> PatternTable:
        """As flake8 and ruff spell it: ``pattern:codes`` groups separated by spaces or commas,
        codes separated by commas (``tests/*:JC103,JC104 __init__.py:JC1``). A pattern with a
        folder in it is relative to the current folder, as on ruff's command line; a bare
        file name matches that name anywhere."""
        table: list[tuple[str, list[str]]] = []
        for token in (t for t in text.replace(",", " ").split() if t):
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

    def from_editor(self, value: Any, key: str) -> PatternTable | None:
        if not isinstance(value, dict):
            return None
        return tuple(
            (str(pattern), check_selectors(as_list(codes, EDITOR_SETTINGS, key), EDITOR_SETTINGS))
            for pattern, codes in value.items()
        )
