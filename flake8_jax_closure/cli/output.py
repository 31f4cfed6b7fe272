"""What the commands print, and the exit statuses they end with."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable
from typing import TextIO

from ..formats import FileReport
from .per_file import FileResult

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


def write_bytes(stream: TextIO, data: bytes) -> None:
    """Bytes as they are (encoding, BOM, newlines), through the text stream's buffer."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(data.decode("utf-8", errors="surrogateescape"))
        return
    stream.flush()
    buffer.write(data)
    buffer.flush()


def open_output(args: argparse.Namespace, stdout: TextIO) -> tuple[TextIO, Callable[[], None]]:
    """Where findings go (``--output-file``, else ``stdout``), and how to close it."""
    if args.output_file is None:
        return stdout, lambda: None
    handle = open(args.output_file, "w", encoding="utf-8")  # noqa: SIM115 - closed by the caller
    return handle, handle.close


def reports(results: list[FileResult]) -> list[FileReport]:
    return [
        FileReport(
            r.path,
            r.findings,
            r.syntax_error,
            _without_path(r.error, r.path),
            r.unsafe_fixes,
            r.cells,
        )
        for r in results
        if r.findings or r.syntax_error or r.error
    ]


def _without_path(error: str | None, path: str) -> str | None:
    """The message of an error line, ``path: message``."""
    if error is None:
        return None
    return error[len(path) + 2 :] if error.startswith(f"{path}: ") else error


def print_errors(results: list[FileResult], stderr: TextIO) -> None:
    for result in results:
        if result.error:
            print(result.error, file=stderr)
        elif result.syntax_error is not None:
            message, line, column = result.syntax_error
            where = f"{line}"
            if result.cells is not None:
                cell, line = result.cells.locate(line)
                where = f"cell {cell}:{line}"
            print(f"{result.path}:{where}:{column}: syntax error: {message}", file=stderr)


def fixes_listing(results: list[FileResult], *, would: bool) -> str:
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
