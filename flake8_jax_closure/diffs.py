"""Unified diffs of a fix, in time linear in the file.

``difflib`` compares the whole old and new texts, which costs time quadratic in a file with many
changes (tens of seconds for a 20,000-line module with a thousand fixes). A fix knows which
lines it replaced: only those regions are compared, each with a few unchanged lines around it
(so that blank lines and other repeated lines line up much as difflib lines them up), and the
rest is equal by construction. The output is formatted as ``difflib.unified_diff`` formats it;
where difflib, comparing the whole texts, aligns repeated lines otherwise, the hunks differ,
but are never larger (a test checks both on every fixture).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Sequence

# (tag, old start, old end, new start, new end), as difflib's opcodes
Opcode = tuple[str, int, int, int, int]
# Lines as Python counts them, and as fixes number them (``str.splitlines`` also breaks at form
# feeds and other control characters).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def python_lines(text: str) -> list[str]:
    """The lines of ``text`` with their endings, as Python and the fixes count them."""
    return _LINES.findall(text)


def unified_diff(
    old: Sequence[str],
    new: Sequence[str],
    regions: Iterable[tuple[int, int, int]],
    fromfile: str,
    tofile: str,
    context: int = 3,
) -> str:
    """The diff of ``old`` and ``new`` (lines with their endings), where ``regions`` names
    every replaced range: (first old line, last old line, number of new lines), 1-based, in
    order and not overlapping. Lines outside the regions are the same in both."""
    groups = list(_grouped(_opcodes(old, new, regions), context))
    if not groups:
        return ""
    out = [f"--- {fromfile}\n", f"+++ {tofile}\n"]
    for group in groups:
        first, last = group[0], group[-1]
        old_range = _range(first[1], last[2])
        new_range = _range(first[3], last[4])
        out.append(f"@@ -{old_range} +{new_range} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(" " + line for line in old[i1:i2])
                continue
            if tag in ("replace", "delete"):
                out.extend("-" + line for line in old[i1:i2])
            if tag in ("replace", "insert"):
                out.extend("+" + line for line in new[j1:j2])
    return "".join(out)


def _opcodes(
    old: Sequence[str], new: Sequence[str], regions: Iterable[tuple[int, int, int]]
) -> list[Opcode]:
    codes: list[Opcode] = []

    def add(code: Opcode) -> None:
        if code[0] == "equal" and codes and codes[-1][0] == "equal":
            previous = codes.pop()
            code = ("equal", previous[1], code[2], previous[3], code[4])
        if code[1] < code[2] or code[3] < code[4]:
            codes.append(code)

    i = j = 0
    for first, last, count in _widened(_joined(regions), len(old)):
        start = first - 1
        add(("equal", i, start, j, j + start - i))
        j += start - i
        i = start
        matcher = difflib.SequenceMatcher(None, old[i:last], new[j : j + count], autojunk=False)
        for tag, a1, a2, b1, b2 in matcher.get_opcodes():
            add((tag, i + a1, i + a2, j + b1, j + b2))
        i, j = last, j + count
    add(("equal", i, len(old), j, len(new)))
    return codes


def _joined(
    regions: Iterable[tuple[int, int, int]], gap: int = 12, most: int = 200
) -> Iterator[tuple[int, int, int]]:
    """Regions with at most ``gap`` unchanged lines between them, as one region: compared
    apart, a line one fix moved next to another's (``def unroll`` kept below a new helper)
    cannot line up across the two, and the hunk grows past difflib's. A joined region stops
    growing at ``most`` old lines, so that a file of many close fixes is still compared in
    pieces of bounded size (the time stays linear in the file)."""
    pending: tuple[int, int, int] | None = None
    for first, last, count in regions:
        if pending is not None and first - pending[1] - 1 <= gap and pending[1] - pending[0] < most:
            between = first - pending[1] - 1
            pending = (pending[0], last, pending[2] + between + count)
            continue
        if pending is not None:
            yield pending
        pending = (first, last, count)
    if pending is not None:
        yield pending


def _widened(
    regions: Iterable[tuple[int, int, int]], lines: int, margin: int = 6
) -> Iterator[tuple[int, int, int]]:
    """The regions with up to ``margin`` unchanged lines on each side (the same lines in old
    and new): (first old line, last old line, new lines). The unchanged lines between two
    regions are shared out between them, so that no line is compared twice and the work stays
    proportional to the regions."""
    listed = list(regions)
    for index, (first, last, count) in enumerate(listed):
        before = first - 1 - (listed[index - 1][1] if index else 0)
        after = (listed[index + 1][0] - 1 if index + 1 < len(listed) else lines) - last
        low = first - min(margin, before - before // 2)
        high = last + min(margin, after // 2 if index + 1 < len(listed) else after)
        yield low, high, count + (first - low) + (high - last)


def _grouped(codes: list[Opcode], context: int) -> Iterator[list[Opcode]]:
    """``difflib.SequenceMatcher.get_grouped_opcodes``, on opcodes already known."""
    if not any(tag != "equal" for tag, *_ in codes):
        return
    codes = list(codes)
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    span = context + context
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        # An equal range longer than both contexts ends the group, with context around it.
        if tag == "equal" and i2 - i1 > span:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _range(start: int, stop: int) -> str:
    """difflib's ``_format_range_unified``."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"
