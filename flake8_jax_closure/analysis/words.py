"""Words in source text, found without parsing it: which lines name a word, and whether a
file can name a compile transform at all. Light to import: the flake8 plugin asks
``may_compile`` of every file before anything heavier is loaded."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from .names import last_component

# Past this many names asked of one module, one pass indexes all its words.
INDEX_AFTER = 200
_WORD = re.compile(r"[^\W\d]\w*|\d\w*")


def word_index(text: str) -> dict[str, list[int]]:
    """The lines (1-based) of every word of the text, as ``word_lines`` finds each: a word is
    a run of identifier characters (a run that starts with a digit is a number, no name)."""
    index: dict[str, list[int]] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        for word in set(_WORD.findall(line)):
            index.setdefault(word, []).append(number)
    return index


def occurrences(text: str, word: str) -> Iterator[int]:
    """Where ``word`` starts in ``text`` with no identifier character on either side.
    ``str.find`` scans at C speed; a regular expression with look-arounds is several times
    slower on the texts this runs over."""
    find, size, length, start = text.find, len(word), len(text), 0
    while True:
        index = find(word, start)
        if index < 0:
            return
        end = index + size
        start = end
        if index and _is_identifier_char(text[index - 1]):
            continue
        if end < length and _is_identifier_char(text[end]):
            continue
        yield index


def word_lines(text: str, word: str) -> list[int]:
    """The lines (1-based) where ``word`` occurs as a word."""
    lines: list[int] = []
    count, line, counted = text.count, 1, 0
    for index in occurrences(text, word):
        line += count("\n", counted, index)
        counted = index
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def has_word(text: str, word: str) -> bool:
    """Whether ``word`` occurs in ``text`` as a word."""
    return next(occurrences(text, word), None) is not None


def _is_identifier_char(char: str) -> bool:
    if char.isascii():  # the common case, without building a string
        return char.isalnum() or char == "_"
    return ("a" + char).isidentifier()


def may_compile(text: str, compile_functions: frozenset[str]) -> bool:
    """Whether a compile transform can be named in ``text`` at all: every spelling the finder
    accepts (``jax.jit``, ``jit``, ``from jax import jit as J``) has the transform's last name
    as a word somewhere, so a file without one has no compiled function."""
    words = {last_component(name) for name in compile_functions}
    if any(has_word(text, word) for word in words):
        return True
    # The parser normalises identifiers (NFKC): ``ｊｉｔ`` is ``jit``.
    if text.isascii():
        return False
    normalized = unicodedata.normalize("NFKC", text)
    return any(has_word(normalized, word) for word in words)
