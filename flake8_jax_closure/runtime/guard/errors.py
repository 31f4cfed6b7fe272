"""What the guard says when a compiled call would return a result computed from old values."""

from __future__ import annotations

from .reads import Change


class StaleCaptureError(RuntimeError):
    """A compiled call would reuse a trace that read a value which has changed since.

    Attributes: ``function`` (name and definition site of the compiled function), ``value``
    (``self.mul``, ``CONFIG["clip"]``, ``lr``), ``where`` (file:line where the trace read it),
    ``summary`` (old and new value), ``code`` (the linter's rule).
    """

    def __init__(
        self, message: str, *, function: str, value: str, where: str, summary: str, code: str
    ) -> None:
        super().__init__(message)
        self.function, self.value, self.where = function, value, where
        self.summary, self.code = summary, code


class StaleCaptureWarning(UserWarning):
    """The warning form of :class:`StaleCaptureError` (``--mode warn``), and the advice
    ``--mode retrace`` gives when one value changes on most calls."""


def fix_hint(code: str, name: str) -> str:
    """The rule's advice, from the rule itself (imported only when a message is written)."""
    from ...rules import runtime_advice

    return runtime_advice(code, name)


_ARTICLES = {
    "attribute of self": "an attribute of self",
    "item": "an item",
    "attribute": "an attribute",
}


def kind_phrase(kind: str) -> str:
    """``an item``, ``a global``, ``an attribute of self``."""
    return _ARTICLES.get(kind, f"a {kind}") if kind else "a value"


def _value_phrase(change: Change) -> str:
    """``CONFIG["clip"] (an item, at config.py:12)``."""
    read = change.read
    return f"{read.name} ({kind_phrase(read.kind)}, at {read.where})"


def stale_message(function: str, changes: list[Change]) -> str:
    first = changes[0]
    read = first.read
    lines = [
        f"compiled function {function} reused a trace that read {_value_phrase(first)}, "
        f"which has changed since that trace: {first.summary()}"
    ]
    for other in changes[1:4]:
        lines.append(f"  also changed: {_value_phrase(other)}: {other.summary()}")
    if len(changes) > 4:
        lines.append(f"  and {len(changes) - 4} more")
    lines.append(
        f"  {first.code}: {fix_hint(first.code, read.name)}; "
        f"`flake8-jax-closure rule {first.code}` explains"
    )
    return "\n".join(lines)


def error_for(function: str, changes: list[Change]) -> StaleCaptureError:
    first = changes[0]
    return StaleCaptureError(
        stale_message(function, changes),
        function=function,
        value=first.read.name,
        where=first.read.where,
        summary=first.summary(),
        code=first.code,
    )


def retrace_advice(function: str, name: str, code: str, changes: int, calls: int) -> str:
    return (
        f"{name} changed before {changes} of {calls} calls of compiled function {function}, "
        f"and each change traced and compiled it again; {code}: {fix_hint(code, name)}"
    )
