"""The diff of a fix, built from the regions the fix replaced (in time linear in the file): a
correct unified diff, as small as difflib's of the two whole texts."""

from __future__ import annotations

import difflib
import sys

import pytest
from fixture_support import ROOT, fixtures
from program_generator import programs

from flake8_jax_closure.diffs import python_lines, unified_diff
from flake8_jax_closure.engine import fix_source
from flake8_jax_closure.settings import Settings

sys.path.insert(0, str(ROOT / "benchmarks"))
from run import generated_module  # noqa: E402

SOURCES = {
    **{f.name: f.source for f in fixtures()},
    **{p.label: p.source for p in list(programs())[::15]},
    "generated module": generated_module(1500),
    "no final newline": generated_module(60).rstrip("\n"),
    "crlf": generated_module(60).replace("\n", "\r\n"),
}


def _ours(source: str, fixed_source: str, changes: tuple[tuple[int, int, str], ...]) -> str:
    regions = [(first, last, len(python_lines(new))) for first, last, new in changes]
    return unified_diff(python_lines(source), python_lines(fixed_source), regions, "a/m", "b/m")


def _apply(diff: str, old: list[str]) -> list[str]:
    """The new lines, from the old ones and a unified diff."""
    lines = python_lines(diff)[2:]
    new: list[str] = []
    position = 0  # in old
    for line in lines:
        if line.startswith("@@"):
            start = int(line.split()[1][1:].split(",")[0])
            count = line.split()[1].split(",")
            first = start - 1 if len(count) == 1 or count[1] != "0" else start
            new.extend(old[position:first])
            position = first
        elif line.startswith("-"):
            assert old[position] == line[1:]
            position += 1
        elif line.startswith("+"):
            new.append(line[1:])
        else:
            assert old[position] == line[1:]
            new.append(line[1:])
            position += 1
    return new + old[position:]


def _changed(diff: str) -> int:
    return sum(1 for line in python_lines(diff)[2:] if line[:1] in "+-")


@pytest.mark.parametrize("name", SOURCES)
def test_the_diff_is_correct_and_small(name: str) -> None:
    source = SOURCES[name]
    fixed = fix_source(source, Settings(unsafe_fixes=True))
    old, new = python_lines(source), python_lines(fixed.source)
    ours = _ours(source, fixed.source, fixed.changes)
    assert _apply(ours, old) == new
    assert (ours == "") == (fixed.source == source)
    assert ours.startswith("--- a/m\n+++ b/m\n@@ -") or ours == ""
    whole = "".join(difflib.unified_diff(old, new, "a/m", "b/m"))
    assert _changed(ours) <= _changed(whole)


def test_regions_next_to_each_other_and_at_the_ends() -> None:
    old = [f"{n}\n" for n in range(20)]
    new = ["first\n", *old[1:5], "x\n", "y\n", *old[6:19], "last\n", "more\n"]
    regions = [(1, 1, 1), (6, 6, 2), (20, 20, 2)]
    expected = "".join(difflib.unified_diff(old, new, "a", "b"))
    assert unified_diff(old, new, regions, "a", "b") == expected
    assert unified_diff(old, old, [], "a", "b") == ""


def test_node_ranges_are_libcsts_positions() -> None:
    """The fixes' own position recorder gives every node libcst's ``PositionProvider`` range."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from flake8_jax_closure.fix.node_positions import node_ranges

    for source in [*(f.source for f in fixtures()[::4]), generated_module(300)]:
        module = cst.parse_module(source)
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        ranges = node_ranges(module)
        assert ranges.keys() == expected.keys()
        for node, where in expected.items():
            start, end = where.start, where.end
            assert ranges[node] == ((start.line, start.column), (end.line, end.column))


def test_close_regions_are_compared_together() -> None:
    """A fix that keeps ``def unroll`` below a new helper, and a second fix two lines on:
    compared apart, the kept line cannot line up across the two regions."""
    old = ["a\n", "def unroll():\n", "    old\n", "\n", "x = jit(unroll)\n", "z\n"]
    new = [
        "a\n", "def impl():\n", "    new\n", "\n", "c = jit(impl)\n", "\n",
        "def unroll():\n", "    call\n", "\n", "x = unroll\n", "z\n",
    ]  # fmt: skip
    regions = [(2, 3, 2), (5, 5, 6)]
    expected = "".join(difflib.unified_diff(old, new, "a", "b"))
    assert unified_diff(old, new, regions, "a", "b") == expected
