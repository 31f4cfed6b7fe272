"""The flake8 adapter: options in, findings out. No analysis of its own, and it never raises.

Its options are the declared options flake8 may be given (``Place.FLAKE8``); flake8 applies
``select``, ``ignore``, ``per-file-ignores`` and ``noqa`` itself, as for every plugin. flake8
loads every plugin before it checks anything, even with JC deselected: this module imports only
what reading options and a text check need. The analysis is imported the first time a file can
name a compile transform at all.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from . import __version__
from .analysis.words import may_compile
from .options import Place, given_in
from .settings import OPT_IN, Settings


class JaxClosureChecker:
    name = "flake8-jax-closure"
    version = __version__

    # Set once from the command line and configuration; read-only while files are checked.
    # Every code is computed: flake8 itself selects, ignores and applies ``noqa``.
    settings: ClassVar[Settings] = Settings(select=("JC",))

    def __init__(self, tree: Any, lines: Sequence[str], filename: str = "") -> None:
        # ``lines`` rather than the file: ``flake8 -`` reads standard input. flake8's own
        # ``ast`` tree spares the pre-pass a parse.
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        # API hazards are opt-in, as flake8-bugbear's opinionated B9 checks are: reported only
        # under ``--extend-select=JC2`` (or an explicit ``--select`` naming them).
        option_manager.extend_default_ignore(list(OPT_IN))
        # Each a list of names, which flake8 reads as a comma-separated list from its command
        # line and its own configuration sections.
        for option in given_in(Place.FLAKE8):
            option_manager.add_option(
                option.flag,
                default="",
                parse_from_config=True,
                comma_separated_list=True,
                help=option.help_in("flake8"),
            )

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        given: dict[str, tuple[str, ...]] = {}
        for option in given_in(Place.FLAKE8):
            value = getattr(options, option.attribute, None) or []
            if isinstance(value, str):
                value = value.split(",")
            names = tuple(name.strip() for name in value if name.strip())
            if names:
                given[option.name] = names
        if not given:
            # What resolving no options gives, without loading it.
            cls.settings = Settings(select=("JC",))
            return
        from dataclasses import replace

        from .config import FileConfig, Overrides, resolve

        cls.settings = replace(resolve(FileConfig(), Overrides(given)).settings, select=("JC",))

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        source = "".join(self.lines)
        try:
            if not may_compile(source, self.settings.compile_functions):
                return
            from .analysis.project import ProjectView, index_for
            from .engine import SourceSyntaxError, check_source

            try:
                findings = check_source(
                    source,
                    self.settings,
                    honour_noqa=False,
                    with_edits=False,
                    tree=self.tree if isinstance(self.tree, ast.Module) else None,
                    # Callers in the project's other modules count, as for ``check``.
                    project=ProjectView(self.filename, index_for(self.filename)),
                )
            except SourceSyntaxError:
                return  # flake8 reports the syntax error itself (E999)
        except Exception as error:  # noqa: BLE001 - a plugin that raises aborts flake8's file
            from .engine import analysis_failed

            findings = [analysis_failed(error)]
        for finding in findings:
            yield finding.line, finding.column, finding.text, type(self)
