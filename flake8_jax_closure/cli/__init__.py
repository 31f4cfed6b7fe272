"""The command line: ``check``, ``fix``, ``diff``, ``rule``, ``verify``, ``lsp`` and ``guard``.
The only part of the package that prints.

``arguments`` builds the parser (the declared options' flags, generated); ``lint`` runs
``check``, ``fix`` and ``diff`` over the files, one ``per_file`` job each, and ``output``
prints them; ``commands`` holds ``rule`` and ``lsp``, ``runtime`` the commands that run the
user's program. ``main`` turns every failure into an exit status.

Exit status: 0 clean, 1 findings (``diff``: changes to show; ``fix``: findings left, or files
changed with ``--exit-non-zero-on-fix``), 2 usage errors, unreadable input, syntax errors and
internal errors, 130 interrupted. A reader that closes the output early (``| head``) ends
the run quietly, with 2.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

from ..config import ConfigCache
from ..option_kinds import ConfigError
from . import commands, runtime
from .arguments import build_parser, overrides_from_args
from .lint import lint
from .output import EXIT_ERROR, EXIT_INTERRUPTED


def main(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["guard"]:
        return runtime.guard(argv[1:], stdout, stderr)
    args = build_parser().parse_args(argv)
    try:
        if args.command == "verify":
            return runtime.verify(args, stdout, stderr)
        if args.command == "lsp":
            return commands.lsp(stderr)
        if args.command == "rule":
            return commands.rule(args.code, stdout, stderr, every=args.all)
        configs = ConfigCache(overrides_from_args(args), args.config)
        return lint(args, configs, stdin, stdout, stderr)
    except ConfigError as error:
        print(f"flake8-jax-closure: {error}", file=stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader stopped reading (``check . | head``): nothing is wrong, and nothing is
        # left to say. Python would report the pipe again when it flushes at exit.
        _discard_output(stdout)
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - a clear line, never a traceback
        print(f"flake8-jax-closure: internal error: {type(error).__name__}: {error}", file=stderr)
        return EXIT_ERROR


def _discard_output(stdout: TextIO) -> None:
    try:
        descriptor = stdout.fileno()
    except (OSError, ValueError):
        return  # not a file (a test's buffer): nothing is flushed at exit
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, descriptor)
    os.close(devnull)
