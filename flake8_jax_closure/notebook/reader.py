"""A notebook's code cells as one Python module.

The code cells, in order, make the module, each cell's lines as they are (IPython's syntax
masked, line for line, by ``magics``), a cell whose last line has no newline given one. The
standard library's ``json`` reads the file: nbformat would add a dependency to read what is a
plain JSON document, and its validation and upgrades are not wanted (a notebook is left as
its author's tools wrote it).

What is refused, with one line: a file that is not JSON, or not a notebook; nbformat 3 and
older (cells in ``worksheets``; upgrade with ``jupyter nbconvert --to notebook --inplace``); a
notebook whose kernel is not Python (``metadata.kernelspec.language`` or
``metadata.language_info.name``); a cell whose ``source`` is neither a string nor a list of
strings. Both forms of ``source`` are read, and a fixed cell is written back in its own form.
A notebook without code cells is an empty module: clean.

Execution order: when the saved ``execution_count`` values show that the cells ran in another
order than they stand (a count lower than one above it), the module holds the cells in the
order they ran, the cells without a count (or with 0: Jupyter numbers runs from 1) after
them, in the file's order. A notebook's state
is what ran; a finding then says ``in executed order``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from ..diffs import python_lines
from ..files import Source, SourceError
from .cells import CellMap
from .magics import mask_cell


class NotebookError(SourceError):
    """A file that cannot be read as a Python notebook; the message is one line."""


class OtherLanguageNotebook(NotebookError):
    """A notebook whose kernel runs another language than Python (R, Julia): refused when
    named, skipped when a folder walk finds it, as ruff does."""


@dataclass(frozen=True)
class CodeCell:
    index: int  # 0-based among all the notebook's cells
    lines: tuple[str, ...]  # as written, each with its line ending
    masked: frozenset[int]  # 0-based lines replaced by placeholders in the module
    start: int  # 1-based module line of its first line
    as_text: bool  # ``source`` is one string, not a list of lines
    newline_added: bool  # its last line had no newline; the module gives it one
    # The session the notebook was saved from ran it without a ``NameError``: its names were
    # bound then, by cells that may be gone since.
    ran: bool = True

    @property
    def number(self) -> int:
        """As the outputs name it: 1-based among all cells."""
        return self.index + 1

    @property
    def text(self) -> str:
        """The cell's source as the file holds it."""
        text = "".join(self.lines)
        return text[:-1] if self.newline_added else text


@dataclass(frozen=True)
class Notebook:
    source: Source  # the JSON document, as read
    module: str  # the code cells as one module
    cells: tuple[CodeCell, ...]  # in the module's order
    cell_map: CellMap

    @property
    def lines_not_run(self) -> tuple[tuple[int, int], ...]:
        return lines_not_run(self.cells)


def lines_not_run(cells: Sequence[CodeCell]) -> tuple[tuple[int, int], ...]:
    """The module lines (first, last) of each cell the saved session did not run cleanly."""
    return tuple(
        (cell.start, cell.start + len(cell.lines) - 1)
        for cell in cells
        if not cell.ran and cell.lines
    )


def _ran(cell: dict[str, Any]) -> bool:
    """Whether the saved session ran the code cell without a ``NameError``: it has an
    execution count or outputs, and no output is a ``NameError``."""
    count = cell.get("execution_count")
    outputs = cell.get("outputs")
    outputs = outputs if isinstance(outputs, list) else []
    counted = isinstance(count, int) and not isinstance(count, bool) and count > 0
    failed = any(
        isinstance(output, dict) and output.get("ename") == "NameError" for output in outputs
    )
    return (counted or bool(outputs)) and not failed


def _kernel_language(data: dict[str, Any]) -> str | None:
    """The notebook's language where its metadata names one that is not Python."""
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return None
    kernelspec, info = metadata.get("kernelspec"), metadata.get("language_info")
    for language in (
        kernelspec.get("language") if isinstance(kernelspec, dict) else None,
        info.get("name") if isinstance(info, dict) else None,
    ):
        if isinstance(language, str) and not language.lower().startswith("python"):
            return language
    return None


def _document(source: Source) -> dict[str, Any]:
    path = source.path
    try:
        data = json.loads(source.text)
    except json.JSONDecodeError as error:
        raise NotebookError(
            f"{path}: not a notebook: invalid JSON: {error.msg} at line {error.lineno} "
            f"column {error.colno}"
        ) from error
    except (ValueError, RecursionError) as error:
        raise NotebookError(f"{path}: not a notebook: invalid JSON: {error}") from error
    if not isinstance(data, dict):
        raise NotebookError(f"{path}: not a notebook: the JSON is not an object")
    major = data.get("nbformat")
    if not isinstance(major, int) or isinstance(major, bool):
        raise NotebookError(f"{path}: not a notebook: no 'nbformat' version")
    if major < 4:
        raise NotebookError(
            f"{path}: nbformat {major} is not supported, only 4: upgrade it with "
            f"`jupyter nbconvert --to notebook --inplace {path}`"
        )
    if not isinstance(data.get("cells"), list):
        raise NotebookError(f"{path}: not a notebook: no 'cells' list")
    language = _kernel_language(data)
    if language is not None:
        raise OtherLanguageNotebook(
            f"{path}: not a Python notebook (its kernel's language is {language!r})"
        )
    return data


def _cell_source(cell: object, number: int, path: str) -> tuple[str, bool] | None:
    """A code cell's text and whether it is stored as one string; None for other cells."""
    if not isinstance(cell, dict):
        raise NotebookError(f"{path}: cell {number} is not a JSON object")
    if cell.get("cell_type") != "code":
        return None
    source = cell.get("source", [])
    if isinstance(source, str):
        return source, True
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source), False
    raise NotebookError(
        f"{path}: cell {number}: 'source' is neither a string nor a list of strings"
    )


def _execution_order(counts: list[object]) -> list[int] | None:
    """Positions of the code cells in the order they ran, when that is not the file's order.
    Jupyter numbers runs from 1: a saved 0 (some tools write it for a cell that did not run)
    is no run, as ``null`` is not."""
    numbered = [
        (count, position)
        for position, count in enumerate(counts)
        if isinstance(count, int) and not isinstance(count, bool) and count > 0
    ]
    if all(a[0] <= b[0] for a, b in zip(numbered, numbered[1:], strict=False)):
        return None
    ran = [position for _, position in sorted(numbered)]
    seen = set(ran)
    return ran + [position for position in range(len(counts)) if position not in seen]


def read_notebook(source: Source) -> Notebook:
    """The notebook in ``source`` as a module; raises NotebookError for what is not a Python
    notebook of nbformat 4."""
    data = _document(source)
    found: list[tuple[int, str, bool]] = []
    counts: list[object] = []
    ran: set[int] = set()
    for index, cell in enumerate(data["cells"]):
        read = _cell_source(cell, index + 1, source.path)
        if read is not None:
            found.append((index, *read))
            counts.append(cell.get("execution_count"))
            if _ran(cell):
                ran.add(index)
    order = _execution_order(counts)
    if order is not None:
        found = [found[position] for position in order]
    module, cells, cell_map = module_of(found, executed_order=order is not None, ran=ran)
    return Notebook(source, module, cells, cell_map)


def module_of(
    found: list[tuple[int, str, bool]],
    executed_order: bool = False,
    ran: Collection[int] | None = None,
) -> tuple[str, tuple[CodeCell, ...], CellMap]:
    """The module of code cells (index among all cells, text, whether stored as one string),
    in the order given; its cells and its cell map. The language server makes it from the
    editor's cells. ``ran``: the indices of the cells the saved session ran cleanly (all when
    None)."""
    cells: list[CodeCell] = []
    module: list[str] = []
    for index, text, as_text in found:
        lines = python_lines(text)
        newline_added = bool(lines) and not lines[-1].endswith(("\n", "\r"))
        if newline_added:
            lines[-1] += "\n"
        masked_lines, masked = mask_cell(lines)
        cells.append(
            CodeCell(
                index,
                tuple(lines),
                masked,
                len(module) + 1,
                as_text,
                newline_added,
                ran=ran is None or index in ran,
            )
        )
        module.extend(masked_lines)
    shown = [cell for cell in cells if cell.lines]
    cell_map = CellMap(
        tuple(cell.start for cell in shown),
        tuple(cell.number for cell in shown),
        executed_order=executed_order,
    )
    return "".join(module), tuple(cells), cell_map
