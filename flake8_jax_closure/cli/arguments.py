"""The command line's arguments: the declared options' flags, generated, and each command's
own flags around them."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import __version__
from ..config import Overrides
from ..formats import FORMATS
from ..option_kinds import ConfigError, Switch
from ..options import (
    ANALYSIS,
    FILE_SELECTION,
    FIXES,
    RULE_SELECTION,
    Option,
    Place,
    given_in,
)

# ruff's names for text output: concise is ours, full adds the source line (--show-source).
RUFF_FORMATS = ("concise", "full")


def _flag_reader(option: Option[Any]) -> Callable[[str], Any]:
    """The option's flag text to its value; argparse prints the message without its
    ``where`` (the flag is already named in argparse's own words)."""

    def read(text: str) -> Any:
        try:
            return option.kind.from_flag(text, option.flag)
        except ConfigError as error:
            raise argparse.ArgumentTypeError(str(error).split(": ", 1)[1]) from error

    return read


def add_option_flags(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    section: str,
    command: str | None = None,
) -> None:
    """The flags of the declared options of ``section``, in declaration order; ``command``
    picks its own help where an option has one."""
    for option in given_in(Place.FLAG):
        if option.section != section:
            continue
        help_text = option.help_in(command)
        if isinstance(option.kind, Switch):
            action = "store_false" if option.default else "store_true"
            parser.add_argument(
                option.flag, dest=option.attribute, action=action, default=None, help=help_text
            )
            continue
        parser.add_argument(
            option.flag,
            dest=option.attribute,
            type=_flag_reader(option),
            # None: not given, the file or the default decides; extensions add nothing.
            default=() if option.extends is not None else None,
            metavar=option.kind.metavar,
            help=help_text,
        )


def overrides_from_args(args: argparse.Namespace) -> Overrides:
    """The declared options given as flags (a command without a flag leaves it to the file)."""
    given = {
        option.name: value
        for option in given_in(Place.FLAG)
        if (value := getattr(args, option.attribute, None)) is not None
    }
    return Overrides(given)


def cores() -> int:
    """The cores this process may run on (a container or ``taskset`` may allow fewer than the
    machine has)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _jobs(value: str) -> int:
    """A positive number of processes, or ``auto`` for all cores (as in flake8)."""
    if value == "auto":
        return cores()
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(
            f"a positive number of processes, or 'auto' for all cores (not {value!r})"
        )
    return jobs


def _common_options() -> argparse.ArgumentParser:
    """What ``check``, ``fix`` and ``diff`` share."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "paths", nargs="*", default=["."], metavar="PATH", help="files or directories; - for stdin"
    )
    add_option_flags(common.add_argument_group(RULE_SELECTION), RULE_SELECTION)
    add_option_flags(common.add_argument_group(FILE_SELECTION), FILE_SELECTION)
    common.add_argument("--config", type=Path, help="the configuration file to use")
    add_option_flags(common, ANALYSIS)
    common.add_argument(
        "--stdin-filename",
        help="read the source from stdin (as with -), under this name for messages and "
        "configuration",
    )
    common.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        default=cores(),
        help="parallel processes, or auto (default: all cores)",
    )
    common.add_argument(
        "--format",
        "--output-format",
        dest="format",
        choices=(*FORMATS, *RUFF_FORMATS),
        default="text",
        help="output format (concise is text; full is text with --show-source)",
    )
    common.add_argument("--output-file", "-o", type=Path, help="write findings to this file")
    common.add_argument("--show-source", action="store_true", help="show the line and a caret")
    common.add_argument("--quiet", "-q", action="store_true", help="print findings only")
    common.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when there are findings"
    )
    return common


def _add_verify(commands: Any) -> None:
    verify = commands.add_parser(
        "verify",
        help="run the original and the fixed program under JAX and judge each finding",
        description="Run FILE and its fixed version, each in a subprocess, comparing every "
        "compiled call with its eager evaluation. Runs user code: only on programs you trust.",
    )
    verify.add_argument("file", metavar="FILE")
    verify.add_argument(
        "runner",
        nargs="*",
        metavar="-- pytest ARGS",
        help="run a test selection instead of __main__",
    )
    verify.add_argument("--entry", help="module:function to call instead of the __main__ block")
    add_option_flags(verify, FIXES, "verify")
    verify.add_argument(
        "--write",
        action="store_true",
        help="write the fix when every exercised finding is confirmed",
    )
    verify.add_argument(
        "--timeout", type=float, default=300.0, help="seconds per program run (default 300)"
    )
    verify.add_argument(
        "--platform",
        choices=("cpu", "gpu", "tpu"),
        help="JAX platform (default: JAX's default backend)",
    )
    verify.add_argument(
        "--require-accelerator", action="store_true", help="fail when only a CPU is present"
    )
    verify.add_argument("--format", choices=("text", "json"), default="text")
    verify.add_argument("--config", type=Path, help="the configuration file to use")
    add_option_flags(verify, ANALYSIS, "verify")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flake8-jax-closure",
        description="Find and fix values that jax.jit bakes into compiled code while the "
        "program changes them.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = _common_options()

    check = commands.add_parser("check", parents=[common], help="report stale captures")
    check.add_argument(
        "--statistics", action="store_true", help="print only a count per code, as ruff does"
    )
    check.add_argument(
        "--no-cache", action="store_true", help="do not read or write the findings cache"
    )
    # Visit every statement first (tests and the benchmark compare it with the lazy default).
    check.add_argument("--eager", action="store_true", help=argparse.SUPPRESS)
    check.add_argument("--fix", action="store_true", help="apply fixes, as the fix command does")
    add_option_flags(check, FIXES, "check")

    for name, help_text in (("fix", "apply fixes"), ("diff", "print the fixes as a unified diff")):
        command = commands.add_parser(name, parents=[common], help=help_text)
        add_option_flags(command, FIXES, name)
        # Accepted as on check: fixing never reads or writes the findings cache.
        command.add_argument("--no-cache", action="store_true", help=argparse.SUPPRESS)
    for command in (check, commands.choices["fix"]):
        command.add_argument("--diff", action="store_true", help="print a diff instead of writing")
        command.add_argument(
            "--exit-non-zero-on-fix", action="store_true", help="exit 1 when a file was changed"
        )
    for command in (check, commands.choices["fix"], commands.choices["diff"]):
        command.add_argument(
            "--show-fixes", action="store_true", help="list the findings fixed, per file"
        )

    rule = commands.add_parser("rule", help="explain a rule")
    rule.add_argument("code", metavar="CODE", nargs="?", help="JC101, ...; all rules without it")
    rule.add_argument("--all", action="store_true", help="explain every rule")

    _add_verify(commands)
    commands.add_parser("lsp", help="run the language server over stdio (needs the [lsp] extra)")
    # Parsed by the guard itself: its options stop at the program, as python's do.
    commands.add_parser("guard", help="run a program with its compiled functions guarded")
    return parser
