"""``verify`` and ``guard``: the commands that run the user's program. The only part of the
command line that imports the runtime side, and only when one of them runs."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ..config import ConfigCache
from ..files import SourceError
from .arguments import overrides_from_args
from .output import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS


def guard(argv: Sequence[str], stdout: TextIO, stderr: TextIO) -> int:
    """The guard parses its own arguments: its options stop at the program, as python's do."""
    from ..runtime.guard.runner import main as run_guarded

    return run_guarded(argv, stdout, stderr)


def verify(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from ..formats import render_verify_json, render_verify_text
    from ..runtime.verify.programs import jax_available
    from ..runtime.verify.report import VerifyError, VerifyOptions
    from ..runtime.verify.verifier import verify_file

    pytest_args: tuple[str, ...] | None = None
    if args.runner:
        if args.runner[0] != "pytest":
            print(
                f"flake8-jax-closure verify: expected '-- pytest ARGS', got {args.runner[0]!r}",
                file=stderr,
            )
            return EXIT_ERROR
        pytest_args = tuple(args.runner[1:])
    if not jax_available():
        print(
            "flake8-jax-closure verify needs jax: install the [verify] extra "
            "(pip install '.[verify]' in a checkout of flake8-jax-closure)",
            file=stderr,
        )
        return EXIT_ERROR
    if not os.path.isfile(args.file):
        print(f"{args.file}: no such file", file=stderr)
        return EXIT_ERROR
    configs = ConfigCache(overrides_from_args(args), args.config)
    settings = configs.for_path(Path(args.file)).settings_for(Path(args.file))
    options = VerifyOptions(
        entry=args.entry,
        pytest_args=pytest_args,
        timeout=args.timeout,
        platform=args.platform,
        require_accelerator=args.require_accelerator,
        write=args.write,
    )
    try:
        report = verify_file(args.file, settings, options)
    except VerifyError as error:
        print(f"flake8-jax-closure verify: {error}", file=stderr)
        return EXIT_ERROR
    except SourceError as error:
        print(f"{args.file}: {error}", file=stderr)
        return EXIT_ERROR
    stdout.write(
        render_verify_json(report) if args.format == "json" else render_verify_text(report)
    )
    return EXIT_CLEAN if report.success else EXIT_FINDINGS
