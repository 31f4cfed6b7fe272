"""IPython's own syntax in a code cell, replaced by Python statements of the same line count.

IPython transforms a cell before Python parses it: a line that starts a statement with ``!``
(shell), ``%`` (line magic), ``?``/``??`` (help), or ``,``, ``;``, ``/`` (auto-call), or
that ends in ``?``, becomes a call; so does the right side of ``x = !cmd`` and ``x = %magic``;
a first line ``%%name`` (below comment lines only, such as Colab's ``# @title``) makes the
rest of the cell the input of a cell magic. Each such line becomes
``pass`` at its own indentation (``globals()`` for a magic that binds names unseen, such as
``%run``) (a block holding only ``%pip install`` stays a block), and an
assignment keeps its targets (``x = None``): the name is rebound there, as IPython rebinds it.
A line magic continued with a backslash is masked with its continuation lines. ``%time`` runs
the statement after it in the notebook's namespace: that statement is kept (``if 1: y = f(x)``,
as long as ``%time y = f(x)``, so columns stay).

A cell magic's body is not Python (``%%bash``, ``%%writefile``), except for the magics listed
in ``PYTHON_CELL_MAGICS``, which run the rest of the cell as Python in the notebook's
namespace: only their first line is masked. Any other cell magic masks every line.

Only lines that start a statement are looked at: a line inside brackets or a string that
begins with ``%`` or ``/`` is Python (``tokenize`` tells where statements end).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Sequence

# Cell magics whose body is Python run in the notebook's namespace.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture"})

# Statements that hold others: never the one statement a line magic runs.
_COMPOUND = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Match,
)  # fmt: skip
# A cheap test first: most cells hold nothing IPython transforms.
_MAYBE = re.compile(r"^[ \t]*[!%?/,;]|\?[ \t]*$|=[ \t]*[!%]", re.MULTILINE)
_ESCAPES = ("!", "%", "?", "/", ",", ";")
# ``x = !ls``, ``a, b = %time f()``: IPython's assignment from a shell command or a magic.
_ASSIGNED = re.compile(
    r"(?P<targets>[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)[ \t]*=[ \t]*[!%]"
)

# ``%run script.py``, ``%load cell.py``, ``%store -r name``, ``%pylab``: they bind names in the
# notebook's namespace that no statement shows. They stand as ``globals()``, which the analysis
# takes for code that may bind any name.
_NAMESPACE_MAGIC = re.compile(r"%(run|load|store|pylab)\b")


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _placeholder(line: str) -> str | None:
    """The statement that stands for ``line`` when IPython transforms it, else None."""
    code = line.strip()
    if not code or code.startswith("#"):
        return None
    assigned = _ASSIGNED.match(code)
    if assigned is not None:
        return f"{assigned.group('targets')} = None"
    timed = _timed(code)
    if timed is not None:
        return timed
    if _NAMESPACE_MAGIC.match(code):
        return "globals()"
    if code.startswith(_ESCAPES):
        return "pass"
    # ``obj?``, ``obj.attr??``: help. A comment may end in ``?``; Python code never does.
    if code.endswith("?") and "#" not in code:
        return "pass"
    return None


def _timed(code: str) -> str | None:
    """``%time y = f(x)`` runs ``y = f(x)`` in the notebook's namespace: kept as ``if 1: y =
    f(x)`` (``if 1:`` is as long as ``%time``, so columns stay), when it is one simple
    statement on its line."""
    if not code.startswith("%time ") and not code.startswith("%time\t"):
        return None
    statement = code[len("%time") :].strip()
    try:
        tree = ast.parse(statement)
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1 or isinstance(tree.body[0], _COMPOUND):
        return None
    return "if 1:" + code[len("%time") :]


def _complete(text: str) -> bool:
    """Whether ``text`` ends a statement (no open bracket, string or backslash)."""
    try:
        for _ in tokenize.generate_tokens(io.StringIO(text).readline):
            pass
    except tokenize.TokenError:
        return False
    except (SyntaxError, ValueError):
        return True  # Python's parse will name the error
    return True


def _continued(line: str) -> bool:
    return line.rstrip("\r\n").endswith("\\")


def mask_cell(lines: Sequence[str]) -> tuple[list[str], frozenset[int]]:
    """The cell's lines (with their endings) as Python, and the 0-based numbers of the lines
    replaced."""
    out = list(lines)
    # Comments may stand above a cell magic: Colab's form lines (``# @title``) do.
    first = next(
        (i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")),
        None,
    )
    if first is None:
        return out, frozenset()
    head = lines[first].strip()
    if head.startswith("%%"):
        name = head[2:].split(maxsplit=1)[0] if head[2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            masked = range(first, len(lines))
            out[first:] = [f"pass{_ending(line)}" for line in lines[first:]]
            return out, frozenset(masked)
        out[first] = f"{_indent(lines[first])}pass{_ending(lines[first])}"
        rest, masked_rest = mask_cell(["\n"] * (first + 1) + list(lines[first + 1 :]))
        out[first + 1 :] = rest[first + 1 :]
        return out, frozenset({first, *masked_rest})
    if not _MAYBE.search("".join(lines)):
        return out, frozenset()
    masked_lines: set[int] = set()
    pending = ""  # the statement read so far, while it is not complete
    index = 0
    while index < len(lines):
        line = lines[index]
        replacement = None if pending else _placeholder(line)
        if replacement is None:
            pending += line
            if _complete(pending):
                pending = ""
            index += 1
            continue
        indent = _indent(line)
        out[index] = f"{indent}{replacement}{_ending(line)}"
        masked_lines.add(index)
        while _continued(lines[index]) and index + 1 < len(lines):
            index += 1
            out[index] = f"{indent}pass{_ending(lines[index])}"
            masked_lines.add(index)
        index += 1
    return out, frozenset(masked_lines)
