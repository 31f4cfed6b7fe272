"""New sources of some cells, written into the notebook's JSON text; every other byte kept.

Serialising the whole document again would rewrite what the user's tools wrote their own way
(number forms, escapes, key order, indentation, the final newline). Only the ``source`` value of
each changed cell is replaced, in place in the text, by the new value written as the rest of
the file is: the indentation unit found in the file (nbformat writes 1 space), ASCII escapes
when the file is all ASCII (``ensure_ascii``), and the cell's own form, one string or a list
of lines split as nbformat splits them. The result is read back and compared with what was
meant, so a notebook is never written wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..files import Source
from .reader import CodeCell, NotebookError

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_decoder = json.JSONDecoder()


def _skip(text: str, position: int) -> int:
    match = _WHITESPACE.match(text, position)
    return match.end() if match is not None else position


def _value_end(text: str, position: int) -> int:
    _, end = _decoder.raw_decode(text, position)
    return end


def _members(text: str, position: int) -> list[tuple[str, int, int]]:
    """(key, value start, value end) of the object starting at ``position``."""
    members: list[tuple[str, int, int]] = []
    position = _skip(text, position + 1)  # after ``{``
    if text[position] == "}":
        return members
    while True:
        key, position = json.decoder.scanstring(text, position + 1)  # type: ignore[attr-defined]
        position = _skip(text, _skip(text, position) + 1)  # after ``:``
        end = _value_end(text, position)
        members.append((key, position, end))
        position = _skip(text, end)
        if text[position] == "}":
            return members
        position = _skip(text, position + 1)  # after ``,``


def _items(text: str, position: int) -> list[tuple[int, int]]:
    """(start, end) of each value of the array starting at ``position``."""
    items: list[tuple[int, int]] = []
    position = _skip(text, position + 1)
    if text[position] == "]":
        return items
    while True:
        end = _value_end(text, position)
        items.append((position, end))
        position = _skip(text, end)
        if text[position] == "]":
            return items
        position = _skip(text, position + 1)


def source_spans(text: str) -> dict[int, tuple[int, int]]:
    """Cell index -> where its ``source`` value stands in the document's text. The text has
    been read as JSON already, so its structure holds."""
    top = _members(text, _skip(text, 0))
    cells = [(start, end) for key, start, end in top if key == "cells"][-1]
    spans: dict[int, tuple[int, int]] = {}
    for index, (start, _) in enumerate(_items(text, cells[0])):
        sources = [(s, e) for key, s, e in _members(text, start) if key == "source"]
        if sources:
            spans[index] = sources[-1]  # a repeated key: json reads the last
    return spans


def _style(text: str) -> tuple[str | None, tuple[str, str]]:
    """The indentation unit (None: all on one line) and the separators the file uses."""
    indented = re.match(r"\s*\{\r?\n([ \t]+)\"", text)
    if indented is not None:
        return indented.group(1), (",", ": ")
    item = ", " if re.search(r'",\s"', text) else ","
    key = ": " if re.search(r'":\s', text) else ":"
    return None, (item, key)


def _line_indent(text: str, position: int) -> str:
    start = text.rfind("\n", 0, position) + 1
    line = text[start:position]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _value(cell: CodeCell, new_text: str) -> str | list[str]:
    # nbformat's split: ``str.splitlines(keepends=True)``.
    return new_text if cell.as_text else new_text.splitlines(keepends=True)


def write_cells(source: Source, new_texts: Mapping[CodeCell, str]) -> str:
    """The document's text with each cell's source replaced by its new text. Raises
    NotebookError when the result would not read back as exactly that."""
    text = source.text
    spans = source_spans(text)
    unit, separators = _style(text)
    ensure_ascii = text.isascii()
    # The file's own line break between JSON lines (``json.dumps`` writes only ``\n``).
    newline = "\r\n" if "\r\n" in text else "\n"
    out = text
    for cell in sorted(new_texts, key=lambda c: spans[c.index][0], reverse=True):
        start, end = spans[cell.index]
        written = json.dumps(
            _value(cell, new_texts[cell]),
            indent=unit,
            separators=separators,
            ensure_ascii=ensure_ascii,
        )
        if unit is not None:
            written = written.replace("\n", newline + _line_indent(text, start))
        out = out[:start] + written + out[end:]
    _check(text, out, {cell.index: _value(cell, new) for cell, new in new_texts.items()}, source)
    return out


def _check(old: str, new: str, changed: Mapping[int, Any], source: Source) -> None:
    """The new document is the old one with only the changed sources replaced."""
    before, after = json.loads(old), json.loads(new)
    for index, value in changed.items():
        if after["cells"][index].get("source") != value:
            break
        after["cells"][index]["source"] = before["cells"][index].get("source")
    else:
        if before == after:
            return
    raise NotebookError(f"{source.path}: the fixed cells could not be written back; left alone")
