"""The work on one file, run in worker processes: check it, or fix it (or only compute its
diff), into a ``FileResult`` for the command to print."""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis.project import ProjectIndex, ProjectView, forget_projects, index_for
from ..cache import FindingsCache
from ..diagnostics import Finding
from ..diffs import python_lines, unified_diff
from ..files import Source, SourceError, read_source, write_source
from ..notebook import is_notebook
from ..notebook.cells import CellMap
from ..notebook.reader import OtherLanguageNotebook, read_notebook
from ..rules import ANALYSIS_FAILED
from ..settings import RunOptions, Settings

if TYPE_CHECKING:
    pass


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
    # A notebook: where its module's lines stand in its cells (the outputs name cells).
    cells: CellMap | None = None
    # A notebook of another language (with ``error`` set): skipped unless named.
    other_language: bool = False


class _Consulted(ProjectView):
    """The project as one file's analysis sees it, noting whether the analysis asked it (then
    the file's findings depend on the project's other files)."""

    def __init__(self, path: str, project: ProjectIndex | None) -> None:
        super().__init__(path, project)
        self.asked = False

    def _asked(self) -> None:
        self.asked = True


def _fingerprint(path: str) -> Callable[[], bytes]:
    """What the project's files are, asked only for an answer that looked at them."""

    def fingerprint() -> bytes:
        project = index_for(path)
        return b"" if project is None else project.fingerprint()

    return fingerprint


def check_file(
    path: str,
    settings: Settings,
    run: RunOptions,
    source: Source | None = None,
    cache: Path | None = None,
) -> FileResult:
    # Imported here: a run answered from the cache never loads the analysis.
    result = FileResult(path, unsafe_fixes=settings.unsafe_fixes)
    try:
        source = source or read_source(path)
        text = source.text
        lines_not_run: tuple[tuple[int, int], ...] = ()
        if is_notebook(path):
            notebook = read_notebook(source)
            text, result.cells = notebook.module, notebook.cell_map
            lines_not_run = notebook.lines_not_run
        store = FindingsCache(cache) if cache is not None else None
        key = store.key(source.raw, settings, run) if store is not None else ""
        cached = store.get(key, _fingerprint(path)) if store is not None else None
        if cached is not None:
            result.findings = cached
            return result
        from ..engine import SourceSyntaxError, check_source

        project = index_for(path)
        consulted = _Consulted(path, project)
        try:
            result.findings = check_source(
                text,
                settings,
                with_edits=run.with_edits,
                lazy=run.lazy,
                project=consulted,
                lines_not_run=lines_not_run,
            )
        except SourceSyntaxError as error:
            result.syntax_error = (error.message, error.line, error.column)
            return result
        if store is not None and not any(f.code == ANALYSIS_FAILED for f in result.findings):
            depends = project.fingerprint() if consulted.asked and project is not None else None
            store.put(key, result.findings, depends)
    except SourceError as error:
        result.error = str(error)
        result.other_language = isinstance(error, OtherLanguageNotebook)
    return result


def fix_file(
    path: str,
    settings: Settings,
    run: RunOptions,
    source: Source | None = None,
    write: bool = True,
) -> FileResult:
    """Fix one file, or only compute its diff (``write=False``). A ``source`` handed in (an
    editor's buffer on stdin) is never written: ``path`` then only names it for messages and
    configuration, as in ruff and flake8."""
    from ..engine import SourceSyntaxError, fix_source

    result = FileResult(path)
    from_stdin = source is not None
    with_diff = not write
    write = write and not from_stdin
    try:
        source = source or read_source(path)
        if is_notebook(path):
            return _fix_notebook(result, source, settings, run, with_diff, write, from_stdin)
        result.text = source.text
        if from_stdin:
            result.output = source.raw
        try:
            project = None if from_stdin else ProjectView(path, index_for(path))
            outcome = fix_source(source.text, settings, lazy=run.lazy, project=project)
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
        result.other_language = isinstance(error, OtherLanguageNotebook)
        result.fixed = 0
    return result


def _fix_notebook(
    result: FileResult,
    source: Source,
    settings: Settings,
    run: RunOptions,
    with_diff: bool,
    write: bool,
    from_stdin: bool,
) -> FileResult:
    """``fix_file`` for a notebook: the fixed cells written back into its JSON, every other
    byte kept; the diff is one per changed cell. Raises SourceError."""
    from ..engine import SourceSyntaxError
    from ..notebook.fixing import cell_diff, fix_notebook

    result.text = source.text
    if from_stdin:
        result.output = source.raw
    notebook = read_notebook(source)
    result.cells = notebook.cell_map
    try:
        outcome = fix_notebook(notebook, settings, lazy=run.lazy)
    except SourceSyntaxError as error:
        result.syntax_error = (error.message, error.line, error.column)
        return result
    result.findings, result.fixed = outcome.remaining, len(outcome.fixed)
    result.fixed_findings = outcome.fixed
    result.text = outcome.text
    if outcome.text == source.text:
        return result
    result.new_text = outcome.text
    if from_stdin:
        result.output = source.encode(outcome.text)
    if with_diff:
        result.diff = cell_diff(result.path, outcome.changed, _diff_name)
    if write:
        write_source(source, outcome.text)
    return result


def _diff_name(side: str, path: str) -> str:
    return path if os.path.isabs(path) else f"{side}/{path}"


Work = Callable[..., FileResult]  # check_file or fix_file


def _worker_ignores_interrupts() -> None:
    # The parent answers Ctrl-C and stops the workers; they must not print tracebacks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _apply(job: tuple[Work, str, Settings, RunOptions, dict[str, Any]]) -> FileResult:
    work, path, settings, run, kwargs = job
    return work(path, settings, run, **kwargs)


def answered_from_cache(
    path: str, settings: Settings, run: RunOptions, cache: Path
) -> FileResult | None:
    """The file's check from the cache, or None (a miss, or a file that cannot be read, which
    ``check_file`` then reports)."""
    try:
        source = read_source(path)
        cells = read_notebook(source).cell_map if is_notebook(path) else None
    except SourceError:
        return None
    store = FindingsCache(cache)
    cached = store.get(store.key(source.raw, settings, run), _fingerprint(path))
    if cached is None:
        return None
    return FileResult(path, findings=cached, unsafe_fixes=settings.unsafe_fixes, cells=cells)


def run_all(
    work: Work,
    files: list[tuple[str, Settings]],
    run: RunOptions,
    jobs: int,
    **kwargs: Any,
) -> list[FileResult]:
    """``work`` on each file, in ``jobs`` processes; the results in the files' order.

    A check answered from the cache is answered here: starting workers costs more than reading
    every cached answer, and a run where nothing changed starts none."""
    forget_projects()  # the project's files as they are now, not as an earlier run saw them
    answered: dict[int, FileResult] = {}
    cache = kwargs.get("cache")
    if work is check_file and cache is not None:
        for index, (path, settings) in enumerate(files):
            result = answered_from_cache(path, settings, run, cache)
            if result is not None:
                answered[index] = result
    pending = [(index, file) for index, file in enumerate(files) if index not in answered]
    done = _run_pending(work, [file for _, file in pending], run, jobs, **kwargs)
    answered.update((index, result) for (index, _), result in zip(pending, done, strict=True))
    return [answered[index] for index in range(len(files))]


def _run_pending(
    work: Work,
    files: list[tuple[str, Settings]],
    run: RunOptions,
    jobs: int,
    **kwargs: Any,
) -> list[FileResult]:
    if jobs <= 1 or len(files) <= 2:
        return [work(path, settings, run, **kwargs) for path, settings in files]
    # An executor, not ``multiprocessing.Pool``: interrupted while a worker waited on a slow
    # read, a pool's ``terminate`` at times hung or printed a traceback.
    executor = ProcessPoolExecutor(
        min(jobs, len(files)),
        mp_context=multiprocessing.get_context("fork"),
        initializer=_worker_ignores_interrupts,
    )
    # Submitted one by one, not with ``map``, which cancels what is pending when interrupted:
    # the executor then fails the cancelled work once it sees its workers gone, and raises.
    futures = [executor.submit(_apply, (work, path, s, run, kwargs)) for path, s in files]
    try:
        results = [future.result() for future in futures]
    except BaseException:
        # Ctrl-C: stop at once, not after the running files (a worker may wait on a slow
        # read for ever); the executor notices its workers are gone and lets go.
        for child in multiprocessing.active_children():
            child.kill()
        executor.shutdown(wait=False)
        raise
    executor.shutdown()
    return results
