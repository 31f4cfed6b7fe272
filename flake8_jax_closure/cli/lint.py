"""``check``, ``fix`` and ``diff``: the files to read (standard input, named paths, walked
folders), the work on each, and what is printed and returned."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from ..cache import default_directory
from ..config import ConfigCache
from ..files import SourceError, decode
from ..formats import render, statistics, summary
from ..selection import Selected, select_files
from ..settings import RunOptions, Settings
from .arguments import RUFF_FORMATS
from .output import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    fixes_listing,
    open_output,
    print_errors,
    reports,
    write_bytes,
)
from .per_file import FileResult, Work, check_file, fix_file, run_all


def lint(
    args: argparse.Namespace,
    configs: ConfigCache,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    if args.format in RUFF_FORMATS:
        args.show_source = args.show_source or args.format == "full"
        args.format = "text"
    fixing = args.command != "check" or args.fix or args.diff
    if not fixing:
        return _check(args, configs, stdin, stdout, stderr)
    show_diff = args.command == "diff" or args.diff
    return _fix(args, configs, stdin, stdout, stderr, show_diff=show_diff)


def _run_options(args: argparse.Namespace) -> RunOptions:
    """What this command needs of the analysis: edits only for outputs that carry them."""
    if args.command == "check":
        return RunOptions(
            lazy=not getattr(args, "eager", False), with_edits=args.format in ("json", "sarif")
        )
    return RunOptions(with_edits=False)


def _read_stdin(stdin: TextIO) -> bytes:
    buffer = getattr(stdin, "buffer", None)
    return buffer.read() if buffer is not None else stdin.read().encode("utf-8")


def _reads_stdin(args: argparse.Namespace, stderr: TextIO) -> bool:
    """Whether the run reads standard input: ``-`` among the paths, or ``--stdin-filename``,
    which (as in ruff) means stdin whatever the paths; those are then ignored, with a
    warning."""
    if args.stdin_filename is None:
        return "-" in args.paths
    if args.paths != ["."]:
        for path in args.paths:
            if path != "-":
                print(
                    f"warning: ignoring {path}: --stdin-filename reads standard input",
                    file=stderr,
                )
    args.paths = ["-"]
    return True


def _collect(
    args: argparse.Namespace,
    configs: ConfigCache,
    stdin: TextIO,
    stderr: TextIO,
    work: Work,
    **kwargs: Any,
) -> list[FileResult]:
    results: list[FileResult] = []
    run = _run_options(args)
    if _reads_stdin(args, stderr):
        name = args.stdin_filename or "-"
        resolved = configs.for_path(Path(name) if name != "-" else Path.cwd())
        settings = resolved.settings_for(Path(name) if name != "-" else None)
        raw = _read_stdin(stdin)
        try:
            source = decode(raw, name)
        except SourceError as error:
            results.append(FileResult(name, error=str(error), output=raw))
        else:
            excluded = name != "-" and resolved.force_exclude and resolved.is_excluded(Path(name))
            if excluded:
                results.append(FileResult(name, text=source.text, output=raw))
            else:
                extra = {k: v for k, v in kwargs.items() if k != "cache"}
                results.append(work(name, settings, run, source=source, **extra))
    paths = [p for p in args.paths if p != "-"]
    if not paths:
        return results
    selected, errors = select_files(paths, configs)
    results.extend(FileResult(error.split(":", 1)[0], error=error) for error in errors)
    if not selected and not errors and not args.quiet:
        print("warning: no Python files found under the given paths", file=stderr)
    files = [(s.path, _file_settings(s)) for s in selected]
    named = set(paths)
    results.extend(
        result
        for result in run_all(work, files, run, args.jobs, **kwargs)
        # A folder's notebooks of other languages are not ours; a named one is refused.
        if not (result.other_language and result.path not in named)
    )
    return results


def _file_settings(selected: Selected) -> Settings:
    return selected.resolved.settings_for(Path(selected.path))


def _check(
    args: argparse.Namespace, configs: ConfigCache, stdin: TextIO, stdout: TextIO, stderr: TextIO
) -> int:
    cache = None if args.no_cache else default_directory()
    results = _collect(args, configs, stdin, stderr, check_file, cache=cache)
    print_errors(results, stderr)
    found_reports = reports(results)
    out, close = open_output(args, stdout)
    try:
        if args.statistics:  # the table alone, as ruff prints it
            out.write(statistics(found_reports, args.format))
        else:
            out.write(render(found_reports, args.format, show_source=args.show_source))
        if args.format == "text" and not args.quiet and not args.statistics:
            out.write(summary(found_reports, failed=any(r.error for r in results)))
    finally:
        close()
    if any(r.error or r.syntax_error for r in results):
        return EXIT_ERROR
    found = any(r.findings for r in results)
    return EXIT_FINDINGS if found and not args.exit_zero else EXIT_CLEAN


def _fix(
    args: argparse.Namespace,
    configs: ConfigCache,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    *,
    show_diff: bool,
) -> int:
    results = _collect(args, configs, stdin, stderr, fix_file, write=not show_diff)
    print_errors(results, stderr)
    reading_stdin = "-" in args.paths
    for result in results:
        if result.output is not None and not show_diff:
            # Editors: the fixed source (or the input, byte for byte, when nothing changed or
            # it could not be read: a buffer is never blanked) on stdout, nothing else there.
            write_bytes(stdout, result.output)
        elif show_diff:
            stdout.write(result.diff)
    found_reports = reports(results)
    # Findings left go to stdout when it is free, else (stdin, diff) to stderr.
    out_stream = stderr if reading_stdin or show_diff else stdout
    out, close = open_output(args, out_stream)
    try:
        out.write(render(found_reports, args.format, show_source=args.show_source))
        if args.show_fixes:
            out.write(fixes_listing(results, would=show_diff))
    finally:
        close()
    fixed = sum(r.fixed for r in results if not r.error)
    remaining = sum(len(r.findings) for r in results)
    if not args.quiet:
        verb = "would fix" if show_diff else "fixed"
        print(f"{verb} {fixed} finding{'s' * (fixed != 1)}, {remaining} remaining", file=stderr)
    changed = any(r.new_text is not None and not r.error for r in results)
    if any(r.error or r.syntax_error for r in results):
        return EXIT_ERROR
    if show_diff:
        return EXIT_FINDINGS if changed else EXIT_CLEAN
    if changed and getattr(args, "exit_non_zero_on_fix", False):
        return EXIT_FINDINGS
    return EXIT_FINDINGS if remaining and not args.exit_zero else EXIT_CLEAN
