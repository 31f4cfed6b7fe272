"""Every user option, declared once.

A declaration says what the option is called, what kind of value it takes, its default and
help, where it may be given and what it changes: the analysis (a field of ``Settings``) or the
choice of files (a field of ``config.Resolved``). The configuration keys and their checks
(``config``), the command-line flags (``cli.arguments``), the flake8 plugin's option and the
language server's settings are generated from these declarations, so an option is added here
and in the record it lands in, nowhere else. How each kind of value is read and checked is in
``option_kinds``.

Where a value may be given (``Place``):

- ``FILE``: the ``[tool.flake8-jax-closure]`` table of a ``pyproject.toml`` (or the file
  ``--config`` names), keyed by the option's name;
- ``FLAKE8``: the ``[flake8]`` section of ``.flake8``, ``setup.cfg`` or ``tox.ini``, read by us
  and by flake8, whose plugin adds the option to flake8's own;
- ``FLAG``: the command line, ``--NAME`` (``--no-NAME`` for a switch that is on by default);
- ``EDITOR``: the language server's settings, keyed by the name or its camel case
  (``unsafeFixes``).

A flag or an editor's setting wins over the file, the file over the default; an ``extend-``
option then adds to its base option's value, the file's additions first.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .option_kinds import Kind, Names, Patterns, PatternTable, Selectors, Switch
from .settings import DEFAULT_SELECT, Settings, compile_functions_with

T = TypeVar("T")


class Place(enum.Enum):
    FILE = "file"
    FLAKE8 = "flake8"
    FLAG = "flag"
    EDITOR = "editor"


class Target(enum.Enum):
    """What a resolved option changes."""

    SETTINGS = "settings"  # a field of ``Settings``: what the analysis reports
    FILES = "files"  # a field of ``config.Resolved``: which files are checked


# Sections of the command line's help; the first two are its titled groups.
RULE_SELECTION, FILE_SELECTION, ANALYSIS, FIXES = (
    "rule selection", "file selection", "analysis", "fixes"
)  # fmt: skip


_EVERYWHERE = frozenset({Place.FILE, Place.FLAG, Place.EDITOR})


@dataclass(frozen=True)
class Option(Generic[T]):
    name: str  # the key in files and editors; the flag is ``--name``
    kind: Kind[T]
    default: T
    help: str  # the command line's
    section: str  # where its flag sits in the command line's help
    # What it changes; None for an ``extend-`` option, which only adds to ``extends``.
    target: Target | None = Target.SETTINGS
    extends: str | None = None
    places: frozenset[Place] = _EVERYWHERE
    # The field of its target, when not named after the option, and how the resolved value
    # becomes that field's.
    field_name: str | None = None
    convert: Callable[[T], object] | None = None
    # For a table of patterns: the setting its codes add to, for the files that match.
    per_file: str | None = None
    # Help other than ``help``: per command (``verify``), or for flake8's ``--help``.
    help_for: tuple[tuple[str, str], ...] = ()

    @property
    def attribute(self) -> str:
        """The option's name as a Python identifier (argparse's destination)."""
        return self.name.replace("-", "_")

    @property
    def field(self) -> str:
        """The field it fills in its target."""
        return self.field_name or self.attribute

    @property
    def flag(self) -> str:
        if isinstance(self.kind, Switch) and self.default:
            return f"--no-{self.name}"
        return f"--{self.name}"

    def help_in(self, where: str | None) -> str:
        return dict(self.help_for).get(where or "", self.help)


def _extension(
    base: Option[T], help_text: str, places: frozenset[Place] = _EVERYWHERE
) -> Option[T]:
    """``extend-NAME``: added to ``NAME`` after the flag, file or default is chosen."""
    nothing: Any = ()
    return Option(
        f"extend-{base.name}",
        base.kind,
        nothing,
        help_text,
        base.section,
        target=None,
        extends=base.name,
        places=places,
    )


# Folders never walked into, unless ``exclude`` replaces this list (``extend-exclude`` adds).
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pytest_cache", ".ruff_cache", ".svn", ".tox", ".venv", "__pycache__", "__pypackages__",
    "build", "dist", "node_modules", "site-packages", "venv", "*.egg-info",
)  # fmt: skip

SELECT = Option(
    "select",
    Selectors(),
    DEFAULT_SELECT,
    "codes or prefixes to report (JC1,JC9; API hazards are JC2)",
    RULE_SELECTION,
)
IGNORE = Option("ignore", Selectors(), (), "codes or prefixes to leave out", RULE_SELECTION)
JAX_COMPILE_FUNCTIONS = Option(
    "jax-compile-functions",
    Names(),
    (),
    "extra qualified names that compile like jax.jit, comma-separated",
    ANALYSIS,
    places=_EVERYWHERE | {Place.FLAKE8},
    field_name="compile_functions",
    convert=compile_functions_with,
    help_for=(
        ("verify", "extra qualified names that compile like jax.jit"),
        ("flake8", "Extra qualified names that compile like jax.jit (for example mylib.fast_jit)."),
    ),
)
EXCLUDE = Option(
    "exclude",
    Names(),
    DEFAULT_EXCLUDE,
    "glob patterns to skip (replaces defaults)",
    FILE_SELECTION,
    target=Target.FILES,
)
UNSAFE_FIXES = Option(
    "unsafe-fixes",
    Switch(),
    False,
    "also apply unsafe fixes",
    FIXES,
    help_for=(("check", "count unsafe fixes as fixable; with --fix or --diff, apply them too"),),
)
FORCE_EXCLUDE = Option(
    "force-exclude",
    Switch(),
    False,
    "apply exclusions to files named on the command line too (pre-commit)",
    FILE_SELECTION,
    target=Target.FILES,
)
RESPECT_GITIGNORE = Option(
    "respect-gitignore",
    Switch(),
    True,
    "also check files that .gitignore ignores",  # the help of --no-respect-gitignore
    FILE_SELECTION,
    target=Target.FILES,
)
PER_FILE_IGNORES = Option(
    "per-file-ignores",
    Patterns(),
    (),
    "codes to leave out in matching files (tests/*:JC103,JC104); replaces the "
    "configuration's table",
    RULE_SELECTION,
    target=Target.FILES,
    per_file="ignore",
)

# In this order: configuration errors list the keys so, and each help section its flags.
OPTIONS: tuple[Option[Any], ...] = (
    SELECT,
    _extension(SELECT, "add to --select"),
    IGNORE,
    _extension(IGNORE, "add to --ignore"),
    JAX_COMPILE_FUNCTIONS,
    EXCLUDE,
    _extension(EXCLUDE, "add to --exclude"),
    UNSAFE_FIXES,
    FORCE_EXCLUDE,
    RESPECT_GITIGNORE,
    PER_FILE_IGNORES,
    # A file has its table to replace; only flags and editors add to it.
    _extension(PER_FILE_IGNORES, "add to --per-file-ignores", _EVERYWHERE - {Place.FILE}),
)


def given_in(place: Place) -> tuple[Option[Any], ...]:
    """The options that may be given in ``place``, in declaration order."""
    return tuple(option for option in OPTIONS if place in option.places)


def resolve_values(file: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Each option's value by name, ``extend-`` ones folded into their base: what was given
    (flags, an editor), else what the file says, else the default."""
    values: dict[str, Any] = {}
    for option in OPTIONS:
        if option.extends is not None:
            continue
        value = given.get(option.name)
        if value is None:
            value = file.get(option.name)
        if value is None:
            value = option.default
        for extension in OPTIONS:
            if extension.extends == option.name:
                value = (*value, *file.get(extension.name, ()), *given.get(extension.name, ()))
        values[option.name] = value
    return values


def targeting(target: Target, values: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``target`` by name, from the resolved values."""
    fields: dict[str, Any] = {}
    for option in OPTIONS:
        if option.target is target:
            value = values[option.name]
            fields[option.field] = value if option.convert is None else option.convert(value)
    return fields


def settings_from(values: Mapping[str, Any]) -> Settings:
    return Settings(**targeting(Target.SETTINGS, values))


def per_file_options() -> tuple[tuple[Option[PatternTable], str], ...]:
    """Each table of patterns, with the setting its codes add to in the files that match."""
    return tuple((option, option.per_file) for option in OPTIONS if option.per_file is not None)
