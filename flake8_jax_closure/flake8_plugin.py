"""The flake8 adapter: options in, findings out. No analysis of its own, and it never raises.

flake8 loads every plugin before it checks anything, even with JC deselected: this module
imports only what reading options and a text check need. The analysis is imported the first
time a file can name a compile transform at all.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from . import __version__
from .analysis.words import may_compile
from .settings import Settings


class JaxClosureChecker:
    name = "flake8-jax-closure"
    version = __version__

    # Set once from the command line and configuration; read-only while files are checked.
    settings: ClassVar[Settings] = Settings()

    def __init__(self, tree: Any, lines: Sequence[str], filename: str = "") -> None:
        # ``lines`` rather than the file: ``flake8 -`` reads standard input. flake8's own
        # ``ast`` tree spares the pre-pass a parse.
        self.tree = tree
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, option_manager: Any) -> None:
        option_manager.add_option(
            "--jax-compile-functions",
            default="",
            parse_from_config=True,
            comma_separated_list=True,
            help="Extra qualified names that compile like jax.jit (for example mylib.fast_jit).",
        )

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        extra = getattr(options, "jax_compile_functions", None) or []
        if isinstance(extra, str):
            extra = extra.split(",")
        # flake8 applies select, ignore and noqa itself; the rest resolves as everywhere else.
        names = tuple(name.strip() for name in extra if name.strip())
        if not names:
            cls.settings = Settings()  # what resolving no options gives, without loading it
            return
        from .config import FileConfig, Overrides, resolve

        cls.settings = resolve(FileConfig(), Overrides(jax_compile_functions=names)).settings

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        source = "".join(self.lines)
        try:
            if not may_compile(source, self.settings.compile_functions):
                return
            from .engine import SourceSyntaxError, check_source

            try:
                findings = check_source(
                    source,
                    self.settings,
                    honour_noqa=False,
                    with_edits=False,
                    tree=self.tree if isinstance(self.tree, ast.Module) else None,
                )
            except SourceSyntaxError:
                return  # flake8 reports the syntax error itself (E999)
        except Exception as error:  # noqa: BLE001 - a plugin that raises aborts flake8's file
            from .engine import analysis_failed

            findings = [analysis_failed(error)]
        for finding in findings:
            yield finding.line, finding.column, finding.text, type(self)
