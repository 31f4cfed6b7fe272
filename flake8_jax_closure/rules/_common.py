"""Pieces every rule's message uses."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..diagnostics import Finding

if TYPE_CHECKING:
    from ..model import StaleCapture
    from ..scopes import Site

STALE = "compiled calls keep the value from the first trace"


def where(site: Site) -> str:
    function = site.scope.enclosing_function_name()
    return f"in '{function}'" if function else "at module level"


def finding(capture: StaleCapture, code: str, message: str) -> Finding:
    read = capture.first_read
    return Finding(
        code=code,
        message=message,
        line=read.line,
        column=read.column,
        end_line=read.end_line,
        end_column=read.end_column,
        function=capture.compiled.name,
        name=capture.name,
    )


def subject(capture: StaleCapture) -> str:
    return f"'{capture.compiled.name}' ({capture.compiled.transform})"
