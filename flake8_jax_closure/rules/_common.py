"""Pieces every rule's message uses."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..diagnostics import Finding

if TYPE_CHECKING:
    from ..analysis.captures import StaleCapture
    from ..analysis.facts.model import Site

STALE = "compiled calls keep the value from the first trace"


def where(site: Site) -> str:
    function = site.scope.enclosing_function_name()
    return f"in '{function}'" if function else "at module level"


def finding(capture: StaleCapture, code: str, message: str) -> Finding:
    """The finding at the first read (columns in UTF-8 bytes, as ``ast`` counts them; the
    engine converts them to characters)."""
    read = capture.first_read
    (line, column), (end_line, end_column) = read.start, read.end
    change = capture.rebinding or capture.mutation
    return Finding(
        code=code,
        message=message,
        line=line,
        column=column,
        end_line=end_line,
        end_column=end_column,
        function=capture.compiled.name,
        name=capture.name if capture.attribute is None else f"{capture.name}.{capture.attribute}",
        change_line=change.line if change is not None else None,
    )


def subject(capture: StaleCapture) -> str:
    return f"'{capture.compiled.name}' ({capture.compiled.transform})"


def through(capture: StaleCapture) -> str:
    """`` through 'l2()'`` when the value is read inside a plain function the compiled one
    calls."""
    return f" through '{capture.read_through}'" if capture.read_through else ""


def shown(capture: StaleCapture) -> str:
    """The name as read: ``Defaults.EPS`` for an attribute of a class or a module, else the
    name."""
    paths = {read.path for read in capture.reads}
    if capture.class_attribute and len(paths) == 1:
        (path,) = paths
        return capture.name + "".join(path)
    return capture.name
