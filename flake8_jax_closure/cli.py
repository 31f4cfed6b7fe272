"""The command line: ``check``, ``fix``, ``diff`` and ``verify``. The only module that prints.

Exit status: 0 clean, 1 findings (or, with ``--exit-non-zero-on-fix``, files changed), 2 usage
errors, unreadable input, syntax errors and internal errors.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from . import __version__
from .cache import FindingsCache, default_directory
from .config import ConfigError, FileConfig, load_config
from .diagnostics import Finding
from .files import Source, SourceError, decode, python_files, read_source, write_source
from .formats import FORMATS, render, statistics
from .rules import ANALYSIS_FAILED
from .settings import Settings

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    fixed: int = 0
    new_text: str | None = None  # set when fixing changed the file
    text: str = ""  # the source after fixing (the original when nothing changed)
    diff: str = ""


def _codes(value: str) -> tuple[str, ...]:
    return tuple(code.strip().upper() for code in value.split(",") if code.strip())


def _names(value: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in value.split(",") if name.strip())


def settings_from(args: argparse.Namespace, config: FileConfig) -> Settings:
    """Command-line flags win over the configuration file, which wins over the defaults."""

    def pick(flag: Any, configured: Any, default: Any) -> Any:
        return flag if flag is not None else configured if configured is not None else default

    return Settings.with_extra_compile_functions(
        pick(getattr(args, "jax_compile_functions", None), config.jax_compile_functions, ()),
        select=pick(getattr(args, "select", None), config.select, ("JC",)),
        ignore=pick(getattr(args, "ignore", None), config.ignore, ()),
        unsafe_fixes=pick(getattr(args, "unsafe_fixes", None), config.unsafe_fixes, False),
        exclude=pick(getattr(args, "exclude", None), config.exclude, ()),
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flake8-jax-closure",
        description="Find and fix values that jax.jit bakes into compiled code while the "
        "program changes them.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "paths", nargs="*", default=["."], metavar="PATH", help="files or directories; - for stdin"
    )
    common.add_argument("--select", type=_codes, help="codes or prefixes to report (default JC)")
    common.add_argument("--ignore", type=_codes, help="codes or prefixes to leave out")
    common.add_argument("--exclude", type=_names, help="comma-separated glob patterns to skip")
    common.add_argument(
        "--jax-compile-functions",
        type=_names,
        help="extra qualified names that compile like jax.jit, comma-separated",
    )
    common.add_argument(
        "--stdin-filename", default="-", help="the name to report for source read from stdin"
    )
    common.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=os.cpu_count() or 1,
        help="parallel processes (default: all cores)",
    )

    check = commands.add_parser("check", parents=[common], help="report stale captures")
    check.add_argument("--format", choices=FORMATS, default="text")
    check.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when there are findings"
    )
    check.add_argument("--statistics", action="store_true", help="print a count per code")
    check.add_argument(
        "--no-cache", action="store_true", help="do not read or write the findings cache"
    )
    check.add_argument("--eager", action="store_true", help=argparse.SUPPRESS)

    for name, help_text in (("fix", "apply fixes"), ("diff", "print the fixes as a unified diff")):
        command = commands.add_parser(name, parents=[common], help=help_text)
        command.add_argument(
            "--unsafe-fixes", action="store_true", default=None, help="also apply unsafe fixes"
        )
        if name == "fix":
            command.add_argument(
                "--diff", action="store_true", help="print a diff instead of writing"
            )
            command.add_argument(
                "--exit-non-zero-on-fix", action="store_true", help="exit 1 when a file was changed"
            )
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
    verify.add_argument(
        "--unsafe-fixes", action="store_true", default=None, help="also apply unsafe fixes"
    )
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
    verify.add_argument(
        "--jax-compile-functions",
        type=_names,
        help="extra qualified names that compile like jax.jit",
    )
    commands.add_parser("lsp", help="run the language server over stdio (needs the [lsp] extra)")
    return parser


def main(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        if args.command == "verify":
            return _verify(args, stdout, stderr)
        if args.command == "lsp":
            return _lsp(stderr)
        try:
            settings = settings_from(args, load_config(Path.cwd()))
        except ConfigError as error:
            print(f"flake8-jax-closure: {error}", file=stderr)
            return EXIT_ERROR
        if args.command == "check":
            settings = replace(
                settings,
                with_edits=args.format in ("json", "sarif"),
                lazy=not args.eager,
            )
            return _check(args, settings, stdin, stdout, stderr)
        return _fix(
            args, settings, stdin, stdout, stderr, show_diff=args.command == "diff" or args.diff
        )
    except KeyboardInterrupt:
        print("interrupted", file=stderr)
        return EXIT_ERROR
    except Exception as error:  # noqa: BLE001 - a clear line, never a traceback
        print(f"flake8-jax-closure: internal error: {type(error).__name__}: {error}", file=stderr)
        return EXIT_ERROR


# -- per file (run in worker processes) ------------------------------------------------------------


def check_file(path: str, settings: Settings, source: Source | None = None) -> FileResult:
    # Imported here: a run answered from the cache never loads libcst.
    from .engine import SourceSyntaxError, check_source

    result = FileResult(path)
    try:
        source = source or read_source(path)
        result.findings = check_source(source.text, settings)
    except SourceError as error:
        result.error = str(error)
    except SourceSyntaxError as error:
        result.error = f"{path}: syntax error: {error}"
    return result


def fix_file(
    path: str, settings: Settings, source: Source | None = None, write: bool = True
) -> FileResult:
    """Fix one file. A ``source`` handed in (an editor's buffer on stdin) is never written:
    ``path`` then only names it for messages and configuration, as in ruff and flake8."""
    from .engine import SourceSyntaxError, fix_source

    result = FileResult(path)
    write = write and source is None
    try:
        source = source or read_source(path)
        outcome = fix_source(source.text, settings)
        result.findings, result.fixed = outcome.remaining, len(outcome.fixed)
        result.text = outcome.source
        if outcome.source != source.text:
            result.new_text = outcome.source
            result.diff = "".join(
                difflib.unified_diff(
                    source.text.splitlines(keepends=True),
                    outcome.source.splitlines(keepends=True),
                    fromfile=_diff_name("a", path),
                    tofile=_diff_name("b", path),
                )
            )
            if write:
                write_source(source, outcome.source)
    except SourceError as error:
        result.error = str(error)
    except SourceSyntaxError as error:
        result.error = f"{path}: syntax error: {error}; left alone"
    return result


def _diff_name(side: str, path: str) -> str:
    return path if os.path.isabs(path) else f"{side}/{path}"


def _run_all(
    work: Callable[..., FileResult],
    paths: list[str],
    settings: Settings,
    jobs: int,
    **kwargs: object,
) -> list[FileResult]:
    if jobs <= 1 or len(paths) <= 2:
        return [work(path, settings, **kwargs) for path in paths]
    with ProcessPoolExecutor(max_workers=min(jobs, len(paths))) as pool:
        futures = [pool.submit(work, path, settings, **kwargs) for path in paths]
        return [future.result() for future in futures]


def _check_with_cache(
    paths: list[str], settings: Settings, jobs: int, cache: FindingsCache
) -> list[FileResult]:
    """Cached files are answered here; only the others go to the worker processes."""
    results: list[FileResult | None] = []
    missing: list[tuple[int, str, str]] = []
    for path in paths:
        try:
            raw = read_source(path).raw
        except SourceError as error:
            results.append(FileResult(path, error=str(error)))
            continue
        key = cache.key(raw)
        findings = cache.get(key)
        results.append(None if findings is None else FileResult(path, findings))
        if findings is None:
            missing.append((len(results) - 1, path, key))
    computed = _run_all(check_file, [path for _, path, _ in missing], settings, jobs)
    for (index, _, key), result in zip(missing, computed, strict=True):
        results[index] = result
        # A failed analysis (JC900) is not an answer worth keeping.
        if result.error is None and not any(f.code == ANALYSIS_FAILED for f in result.findings):
            cache.put(key, result.findings)
    return [r for r in results if r is not None]


def _stdin_source(args: argparse.Namespace, stdin: TextIO) -> Source:
    buffer = getattr(stdin, "buffer", None)
    raw = buffer.read() if buffer is not None else stdin.read().encode("utf-8")
    return decode(raw, args.stdin_filename)


def _collect(
    args: argparse.Namespace,
    settings: Settings,
    stdin: TextIO,
    work: Callable[..., FileResult],
    cache: FindingsCache | None = None,
    **kwargs: object,
) -> list[FileResult]:
    results: list[FileResult] = []
    paths = [p for p in args.paths if p != "-"]
    if "-" in args.paths:
        try:
            results.append(
                work(args.stdin_filename, settings, source=_stdin_source(args, stdin), **kwargs)
            )
        except SourceError as error:
            results.append(FileResult(args.stdin_filename, error=str(error)))
    files: list[str] = []
    for path in paths:
        try:
            files.extend(python_files([path], settings.exclude))
        except SourceError as error:
            results.append(FileResult(path, error=str(error)))
    if cache is not None:
        results.extend(_check_with_cache(files, settings, args.jobs, cache))
    else:
        results.extend(_run_all(work, files, settings, args.jobs, **kwargs))
    return results


def _check(
    args: argparse.Namespace, settings: Settings, stdin: TextIO, stdout: TextIO, stderr: TextIO
) -> int:
    cache = None if args.no_cache else FindingsCache(default_directory(), settings)
    results = _collect(args, settings, stdin, check_file, cache=cache)
    for result in results:
        if result.error:
            print(result.error, file=stderr)
    found = [(r.path, r.findings) for r in results if r.findings]
    output = render(found, args.format)
    if output or args.format in ("json", "sarif"):
        stdout.write(output)
    if args.statistics:
        stdout.write(statistics(found))
    if any(r.error for r in results):
        return EXIT_ERROR
    return EXIT_FINDINGS if found and not args.exit_zero else EXIT_CLEAN


def _fix(
    args: argparse.Namespace,
    settings: Settings,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
    *,
    show_diff: bool,
) -> int:
    results = _collect(args, settings, stdin, fix_file, write=not show_diff)
    changed = False
    for result in results:
        if result.error:
            print(result.error, file=stderr)
            continue
        if result.path == args.stdin_filename and "-" in args.paths and not show_diff:
            # Editors: the fixed source (or the original) on stdout, nothing else there.
            stdout.write(result.text)
        elif show_diff:
            stdout.write(result.diff)
        changed = changed or result.new_text is not None
        for finding in result.findings:
            print(f"{result.path}:{finding.line}:{finding.column + 1}: {finding.text}", file=stderr)
    fixed = sum(r.fixed for r in results)
    remaining = sum(len(r.findings) for r in results)
    verb = "would fix" if show_diff else "fixed"
    print(f"{verb} {fixed} finding{'s' * (fixed != 1)}, {remaining} remaining", file=stderr)
    if any(r.error for r in results):
        return EXIT_ERROR
    if show_diff and changed:
        return EXIT_FINDINGS
    if changed and getattr(args, "exit_non_zero_on_fix", False):
        return EXIT_FINDINGS
    return EXIT_FINDINGS if remaining else EXIT_CLEAN


def _verify(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .verify import (
        VerifyError,
        VerifyOptions,
        jax_available,
        render_json,
        render_text,
        verify_file,
    )

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
            "flake8-jax-closure verify needs jax: pip install 'flake8-jax-closure[verify]'",
            file=stderr,
        )
        return EXIT_ERROR
    if not os.path.isfile(args.file):
        print(f"{args.file}: no such file", file=stderr)
        return EXIT_ERROR
    try:
        settings = settings_from(args, load_config(Path(args.file).parent))
    except ConfigError as error:
        print(f"flake8-jax-closure: {error}", file=stderr)
        return EXIT_ERROR
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
    stdout.write(render_json(report) if args.format == "json" else render_text(report))
    return EXIT_CLEAN if report.success else EXIT_FINDINGS


def _lsp(stderr: TextIO) -> int:
    try:
        from .lsp import main as serve
    except ImportError:
        print("the language server needs pygls: pip install 'flake8-jax-closure[lsp]'", file=stderr)
        return EXIT_ERROR
    serve()
    return EXIT_CLEAN
