"""The command line: ``check``, ``fix``, ``diff``, ``rule``, ``verify`` and ``lsp``. The only
module that prints.

Exit status: 0 clean, 1 findings (``diff``: changes to show; ``fix``: findings left, or files
changed with ``--exit-non-zero-on-fix``), 2 usage errors, unreadable input, syntax errors and
internal errors, 130 interrupted.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from . import __version__
from .cache import FindingsCache, default_directory
from .config import ConfigCache, ConfigError, Overrides, check_selectors, per_file_ignores_flag
from .diagnostics import Finding
from .diffs import python_lines, unified_diff
from .files import Source, SourceError, decode, read_source, write_source
from .formats import (
    FORMATS,
    FileReport,
    render,
    render_verify_json,
    render_verify_text,
    statistics,
    summary,
)
from .rules import ANALYSIS_FAILED
from .selection import Selected, select_files
from .settings import Settings

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130
# ruff's names for text output: concise is ours, full adds the source line (--show-source).
_RUFF_FORMATS = ("concise", "full")


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    # Python's own message and position (line, column) when the file does not parse.
    syntax_error: tuple[str, int, int] | None = None
    fixed: int = 0
    fixed_findings: list[Finding] = field(default_factory=list)  # for --show-fixes
    unsafe_fixes: bool = False  # whether this file's unsafe fixes are applied (marked [*])
    new_text: str | None = None  # set when fixing changed the file
    text: str = ""  # the source after fixing (the original when nothing changed)
    diff: str = ""
    # Standard input only: what ``fix -`` prints, in the input's own encoding, BOM and newlines
    # (the input's very bytes when nothing changed or it could not be read).
    output: bytes | None = None


def _codes(value: str) -> tuple[str, ...]:
    try:
        return check_selectors(value.split(","), "--select/--ignore")
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error).split(": ", 1)[1]) from error


def _per_file_ignores(value: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    try:
        return per_file_ignores_flag(value, "--per-file-ignores")
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error).split(": ", 1)[1]) from error


def _cores() -> int:
    """The cores this process may run on (a container or ``taskset`` may allow fewer than the
    machine has)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _jobs(value: str) -> int:
    """A positive number of processes, or ``auto`` for all cores (as in flake8)."""
    if value == "auto":
        return _cores()
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(
            f"a positive number of processes, or 'auto' for all cores (not {value!r})"
        )
    return jobs


def _names(value: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in value.split(",") if name.strip())


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "paths", nargs="*", default=["."], metavar="PATH", help="files or directories; - for stdin"
    )
    selection = common.add_argument_group("rule selection")
    selection.add_argument("--select", type=_codes, help="codes or prefixes to report (JC)")
    selection.add_argument("--extend-select", type=_codes, default=(), help="add to --select")
    selection.add_argument("--ignore", type=_codes, help="codes or prefixes to leave out")
    selection.add_argument("--extend-ignore", type=_codes, default=(), help="add to --ignore")
    selection.add_argument(
        "--per-file-ignores",
        type=_per_file_ignores,
        metavar="PATTERN:CODES",
        help="codes to leave out in matching files (tests/*:JC103,JC104); replaces the "
        "configuration's table",
    )
    selection.add_argument(
        "--extend-per-file-ignores",
        type=_per_file_ignores,
        default=(),
        metavar="PATTERN:CODES",
        help="add to --per-file-ignores",
    )
    files = common.add_argument_group("file selection")
    files.add_argument("--exclude", type=_names, help="glob patterns to skip (replaces defaults)")
    files.add_argument("--extend-exclude", type=_names, default=(), help="add to --exclude")
    files.add_argument(
        "--force-exclude",
        action="store_true",
        default=None,
        help="apply exclusions to files named on the command line too (pre-commit)",
    )
    files.add_argument(
        "--no-respect-gitignore",
        dest="respect_gitignore",
        action="store_false",
        default=None,
        help="also check files that .gitignore ignores",
    )
    common.add_argument("--config", type=Path, help="the configuration file to use")
    common.add_argument(
        "--jax-compile-functions",
        type=_names,
        help="extra qualified names that compile like jax.jit, comma-separated",
    )
    common.add_argument(
        "--stdin-filename",
        help="read the source from stdin (as with -), under this name for messages and "
        "configuration",
    )
    common.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        default=_cores(),
        help="parallel processes, or auto (default: all cores)",
    )
    common.add_argument(
        "--format",
        "--output-format",
        dest="format",
        choices=(*FORMATS, *_RUFF_FORMATS),
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
    check.add_argument("--eager", action="store_true", help=argparse.SUPPRESS)
    check.add_argument("--fix", action="store_true", help="apply fixes, as the fix command does")
    check.add_argument(
        "--unsafe-fixes",
        action="store_true",
        default=None,
        help="count unsafe fixes as fixable; with --fix or --diff, apply them too",
    )

    for name, help_text in (("fix", "apply fixes"), ("diff", "print the fixes as a unified diff")):
        command = commands.add_parser(name, parents=[common], help=help_text)
        command.add_argument(
            "--unsafe-fixes", action="store_true", default=None, help="also apply unsafe fixes"
        )
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
    verify.add_argument("--config", type=Path, help="the configuration file to use")
    verify.add_argument(
        "--jax-compile-functions",
        type=_names,
        help="extra qualified names that compile like jax.jit",
    )
    commands.add_parser("lsp", help="run the language server over stdio (needs the [lsp] extra)")
    # Parsed by the guard itself: its options stop at the program, as python's do.
    commands.add_parser("guard", help="run a program with its compiled functions guarded")
    return parser


def overrides_from_args(args: argparse.Namespace) -> Overrides:
    return Overrides(
        select=getattr(args, "select", None),
        extend_select=getattr(args, "extend_select", ()),
        ignore=getattr(args, "ignore", None),
        extend_ignore=getattr(args, "extend_ignore", ()),
        jax_compile_functions=getattr(args, "jax_compile_functions", None),
        exclude=getattr(args, "exclude", None),
        extend_exclude=getattr(args, "extend_exclude", ()),
        unsafe_fixes=getattr(args, "unsafe_fixes", None),
        force_exclude=getattr(args, "force_exclude", None),
        respect_gitignore=getattr(args, "respect_gitignore", None),
        per_file_ignores=getattr(args, "per_file_ignores", None),
        extend_per_file_ignores=getattr(args, "extend_per_file_ignores", ()),
    )


def main(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["guard"]:
        from .runtime.guard.runner import main as guard

        return guard(argv[1:], stdout, stderr)
    args = build_parser().parse_args(argv)
    try:
        if args.command == "verify":
            return _verify(args, stdout, stderr)
        if args.command == "lsp":
            return _lsp(stderr)
        if args.command == "rule":
            return _rule(args.code, stdout, stderr, every=args.all)
        try:
            configs = ConfigCache(overrides_from_args(args), args.config)
        except ConfigError as error:
            print(f"flake8-jax-closure: {error}", file=stderr)
            return EXIT_ERROR
        return _run(args, configs, stdin, stdout, stderr)
    except ConfigError as error:
        print(f"flake8-jax-closure: {error}", file=stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=stderr)
        return EXIT_INTERRUPTED
    except Exception as error:  # noqa: BLE001 - a clear line, never a traceback
        print(f"flake8-jax-closure: internal error: {type(error).__name__}: {error}", file=stderr)
        return EXIT_ERROR


# -- per file (run in worker processes) ------------------------------------------------------------


def _tune(args: argparse.Namespace, settings: Settings) -> Settings:
    """What this command needs of the analysis."""
    if args.command == "check":
        return replace(
            settings,
            with_edits=args.format in ("json", "sarif"),
            lazy=not getattr(args, "eager", False),
        )
    return replace(settings, with_edits=False)


def check_file(
    path: str, settings: Settings, source: Source | None = None, cache: Path | None = None
) -> FileResult:
    # Imported here: a run answered from the cache never loads the analysis.
    result = FileResult(path, unsafe_fixes=settings.unsafe_fixes)
    try:
        source = source or read_source(path)
        store = FindingsCache(cache) if cache is not None else None
        key = store.key(source.raw, settings) if store is not None else ""
        cached = store.get(key) if store is not None else None
        if cached is not None:
            result.findings = cached
            return result
        from .engine import SourceSyntaxError, check_source

        try:
            result.findings = check_source(source.text, settings)
        except SourceSyntaxError as error:
            result.syntax_error = (error.message, error.line, error.column)
            return result
        if store is not None and not any(f.code == ANALYSIS_FAILED for f in result.findings):
            store.put(key, result.findings)
    except SourceError as error:
        result.error = str(error)
    return result


def fix_file(
    path: str, settings: Settings, source: Source | None = None, write: bool = True
) -> FileResult:
    """Fix one file, or only compute its diff (``write=False``). A ``source`` handed in (an
    editor's buffer on stdin) is never written: ``path`` then only names it for messages and
    configuration, as in ruff and flake8."""
    from .engine import SourceSyntaxError, fix_source

    result = FileResult(path)
    from_stdin = source is not None
    with_diff = not write
    write = write and not from_stdin
    try:
        source = source or read_source(path)
        result.text = source.text
        if from_stdin:
            result.output = source.raw
        try:
            outcome = fix_source(source.text, settings)
        except SourceSyntaxError as error:
            result.syntax_error = (error.message, error.line, error.column)
            return result
        result.findings, result.fixed = outcome.remaining, len(outcome.fixed)
        result.fixed_findings = outcome.fixed
        result.text = outcome.source
        if outcome.source != source.text:
            result.new_text = outcome.source
            if from_stdin:
                result.output = source.encode(outcome.source)
            if with_diff:
                result.diff = unified_diff(
                    python_lines(source.text),
                    python_lines(outcome.source),
                    [(first, last, len(python_lines(new))) for first, last, new in outcome.changes],
                    fromfile=_diff_name("a", path),
                    tofile=_diff_name("b", path),
                )
            if write:
                write_source(source, outcome.source)
    except SourceError as error:
        result.error = str(error)
        result.fixed = 0
    return result


def _diff_name(side: str, path: str) -> str:
    return path if os.path.isabs(path) else f"{side}/{path}"


def _worker_ignores_interrupts() -> None:
    # The parent answers Ctrl-C and stops the workers; they must not print tracebacks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _apply(job: tuple[Callable[..., FileResult], str, Settings, dict[str, Any]]) -> FileResult:
    work, path, settings, kwargs = job
    return work(path, settings, **kwargs)


def _run_all(
    work: Callable[..., FileResult],
    files: list[tuple[str, Settings]],
    jobs: int,
    **kwargs: Any,
) -> list[FileResult]:
    if jobs <= 1 or len(files) <= 2:
        return [work(path, settings, **kwargs) for path, settings in files]
    pool = multiprocessing.Pool(min(jobs, len(files)), initializer=_worker_ignores_interrupts)
    try:
        results = pool.map(_apply, [(work, path, s, kwargs) for path, s in files], chunksize=1)
    except BaseException:
        pool.terminate()  # Ctrl-C: stop at once, not after the running files
        raise
    pool.close()
    pool.join()
    return results


# -- the run -----------------------------------------------------------------------------------


def _read_stdin(stdin: TextIO) -> bytes:
    buffer = getattr(stdin, "buffer", None)
    return buffer.read() if buffer is not None else stdin.read().encode("utf-8")


def _write_bytes(stream: TextIO, data: bytes) -> None:
    """Bytes as they are (encoding, BOM, newlines), through the text stream's buffer."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(data.decode("utf-8", errors="surrogateescape"))
        return
    stream.flush()
    buffer.write(data)
    buffer.flush()


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
    work: Callable[..., FileResult],
    **kwargs: Any,
) -> list[FileResult]:
    results: list[FileResult] = []
    if _reads_stdin(args, stderr):
        name = args.stdin_filename or "-"
        resolved = configs.for_path(Path(name) if name != "-" else Path.cwd())
        settings = _tune(args, resolved.settings_for(Path(name) if name != "-" else None))
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
                results.append(work(name, settings, source=source, **extra))
    paths = [p for p in args.paths if p != "-"]
    if not paths:
        return results
    selected, errors = select_files(paths, configs)
    results.extend(FileResult(error.split(":", 1)[0], error=error) for error in errors)
    if not selected and not errors and not args.quiet:
        print("warning: no Python files found under the given paths", file=stderr)
    files = [(s.path, _tune(args, _file_settings(s))) for s in selected]
    results.extend(_run_all(work, files, args.jobs, **kwargs))
    return results


def _file_settings(selected: Selected) -> Settings:
    return selected.resolved.settings_for(Path(selected.path))


def _open_output(args: argparse.Namespace, stdout: TextIO) -> tuple[TextIO, Callable[[], None]]:
    if args.output_file is None:
        return stdout, lambda: None
    handle = open(args.output_file, "w", encoding="utf-8")  # noqa: SIM115 - closed by the caller
    return handle, handle.close


def _reports(results: list[FileResult]) -> list[FileReport]:
    return [
        FileReport(
            r.path, r.findings, r.syntax_error, _without_path(r.error, r.path), r.unsafe_fixes
        )
        for r in results
        if r.findings or r.syntax_error or r.error
    ]


def _without_path(error: str | None, path: str) -> str | None:
    """The message of an error line, ``path: message``."""
    if error is None:
        return None
    return error[len(path) + 2 :] if error.startswith(f"{path}: ") else error


def _print_errors(results: list[FileResult], stderr: TextIO) -> None:
    for result in results:
        if result.error:
            print(result.error, file=stderr)
        elif result.syntax_error is not None:
            message, line, column = result.syntax_error
            print(f"{result.path}:{line}:{column}: syntax error: {message}", file=stderr)


def _run(
    args: argparse.Namespace,
    configs: ConfigCache,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    if args.format in _RUFF_FORMATS:
        args.show_source = args.show_source or args.format == "full"
        args.format = "text"
    fixing = args.command != "check" or args.fix or args.diff
    if not fixing:
        return _check(args, configs, stdin, stdout, stderr)
    show_diff = args.command == "diff" or args.diff
    return _fix(args, configs, stdin, stdout, stderr, show_diff=show_diff)


def _check(
    args: argparse.Namespace, configs: ConfigCache, stdin: TextIO, stdout: TextIO, stderr: TextIO
) -> int:
    cache = None if args.no_cache else default_directory()
    results = _collect(args, configs, stdin, stderr, check_file, cache=cache)
    _print_errors(results, stderr)
    reports = _reports(results)
    out, close = _open_output(args, stdout)
    try:
        if args.statistics:  # the table alone, as ruff prints it
            out.write(statistics(reports, args.format))
        else:
            out.write(render(reports, args.format, show_source=args.show_source))
        if args.format == "text" and not args.quiet and not args.statistics:
            out.write(summary(reports, failed=any(r.error for r in results)))
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
    _print_errors(results, stderr)
    reading_stdin = "-" in args.paths
    for result in results:
        if result.output is not None and not show_diff:
            # Editors: the fixed source (or the input, byte for byte, when nothing changed or
            # it could not be read: a buffer is never blanked) on stdout, nothing else there.
            _write_bytes(stdout, result.output)
        elif show_diff:
            stdout.write(result.diff)
    reports = _reports(results)
    # Findings left go to stdout when it is free, else (stdin, diff) to stderr.
    out_stream = stderr if reading_stdin or show_diff else stdout
    out, close = _open_output(args, out_stream)
    try:
        out.write(render(reports, args.format, show_source=args.show_source))
        if args.show_fixes:
            out.write(_fixes_listing(results, would=show_diff))
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


def _fixes_listing(results: list[FileResult], *, would: bool) -> str:
    """``--show-fixes``: what was fixed, per file and code, as ruff lists it."""
    fixed = [r for r in results if r.fixed_findings and not r.error]
    total = sum(len(r.fixed_findings) for r in fixed)
    if not total:
        return ""
    lines = [f"{'Would fix' if would else 'Fixed'} {total} finding{'s' * (total != 1)}:"]
    for result in fixed:
        lines.append(f"- {result.path}:")
        counts = Counter(f.code for f in result.fixed_findings)
        lines.extend(f"    {count} × {code}" for code, count in sorted(counts.items()))
    return "\n".join(lines) + "\n"


def _rule(code: str | None, stdout: TextIO, stderr: TextIO, *, every: bool = False) -> int:
    from .rules import SUMMARIES, rule_documentation

    if every:
        stdout.write("\n".join(rule_documentation(known) or "" for known in SUMMARIES))
        return EXIT_CLEAN
    if code is None:
        for known, summary_text in SUMMARIES.items():
            stdout.write(f"{known}  {summary_text}\n")
        return EXIT_CLEAN
    text = rule_documentation(code.upper())
    if text is None:
        print(f"flake8-jax-closure: unknown rule '{code}'", file=stderr)
        return EXIT_ERROR
    stdout.write(text)
    return EXIT_CLEAN


def _verify(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    from .runtime.verify.programs import jax_available
    from .runtime.verify.report import VerifyError, VerifyOptions
    from .runtime.verify.verifier import verify_file

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


def _lsp(stderr: TextIO) -> int:
    try:
        from .lsp import main as serve
    except ImportError:
        print(
            "the language server needs pygls: install the [lsp] extra "
            "(pip install '.[lsp]' in a checkout of flake8-jax-closure)",
            file=stderr,
        )
        return EXIT_ERROR
    serve()
    return EXIT_CLEAN
