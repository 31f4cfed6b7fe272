"""What changes the analysis's answer, passed explicitly to every run.

``Settings`` holds the user options that change which findings a file gets and which fixes
apply; ``options.py`` declares them and builds a ``Settings`` from their resolved values, and a
test checks that every field here has its declaration. ``RunOptions`` holds the switches of a
run that change how it computes, never what it reports; no user sets them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .analysis.names import COMPILE_FUNCTIONS


def compile_functions_with(extra: Iterable[str]) -> frozenset[str]:
    """The compile transforms the analysis knows, and ``extra`` qualified names."""
    return COMPILE_FUNCTIONS | frozenset(name.strip() for name in extra if name.strip())


# The rules with a witness, and JC900. API hazards (JC2xx) are opt-in: ``--extend-select JC2``.
DEFAULT_SELECT = ("JC1", "JC9")
OPT_IN = ("JC2",)


@dataclass(frozen=True)
class Settings:
    compile_functions: frozenset[str] = COMPILE_FUNCTIONS
    select: tuple[str, ...] = DEFAULT_SELECT
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool = False

    @classmethod
    def with_extra_compile_functions(cls, extra: Iterable[str], **kwargs: object) -> Settings:
        return cls(compile_functions=compile_functions_with(extra), **kwargs)  # type: ignore[arg-type]

    def is_selected(self, code: str) -> bool:
        """Longest matching prefix wins between ``select`` and ``ignore``, as in flake8."""
        selected = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        ignored = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return selected > ignored


@dataclass(frozen=True)
class RunOptions:
    """How a run computes its findings, never which ones."""

    # Visit statements only where a question needs them (see ``analysis.facts``); False
    # visits every statement first, which must never change a finding (tests and the
    # benchmark check that).
    lazy: bool = True
    # Compute each fix's text edits (JSON, SARIF, editors); other outputs only need its safety.
    with_edits: bool = True
