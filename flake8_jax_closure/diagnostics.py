"""What the linter reports: findings, and the fixes they carry. Plain frozen data, no logic
(a fix also holds the plan its edits are made from, opaque here)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .fix.model import FunctionFix


class Applicability(enum.Enum):
    SAFE = "safe"  # applied by ``fix``
    UNSAFE = "unsafe"  # applied only with ``--unsafe-fixes``: may change more than freshness


@dataclass(frozen=True)
class Edit:
    """Replace the text between two positions (1-based lines, 0-based columns) with ``content``."""

    start_line: int
    start_column: int
    end_line: int
    end_column: int
    content: str


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    description: str  # what the fix does, then why it is safe or unsafe in parentheses
    edits: tuple[Edit, ...]
    # The names the fix writes into the module (the compiled function's new name, a split
    # method's ``_impl``, a helper's), so that tools find the fixed code without guessing.
    introduces: tuple[str, ...] = ()
    # How the edits are made, kept for ``fix`` and for outputs that ask for the edits later
    # (an editor's code action). Not a value of the finding: never compared, never saved.
    plan: FunctionFix | None = field(default=None, compare=False, repr=False)

    @property
    def title(self) -> str:
        """What the fix does, without the reason: short enough for an editor's menu."""
        return self.description.split(" (", 1)[0]


class Role(enum.Enum):
    """What a step of a witness shows."""

    TRACE = "trace"  # a compiled call that traces, reading the value
    CHANGE = "change"  # the value changes
    REUSE = "reuse"  # a later compiled call of the same object, served the old trace


@dataclass(frozen=True)
class WitnessStep:
    """One step of the path that makes a compiled call stale, in code that runs."""

    role: Role
    line: int  # 1-based
    column: int  # 0-based
    # The function called there that does it (``set_lr``), when the statement does not.
    via: str | None = None
    # When the step is a later run of the same code: ``next pass of the loop at line 12``.
    again: str | None = None
    # Another file of the project, from its root (``scripts/train.py``, ``nb.ipynb:cell 3``);
    # None for the finding's own file.
    path: str | None = None

    @property
    def clause(self) -> str:
        """``changed at line 40 by 'set_lr()'``: the step as words."""
        verb = {Role.TRACE: "traced", Role.CHANGE: "changed", Role.REUSE: "reused"}[self.role]
        where = f" in {self.path}" if self.path is not None else ""
        text = f"{verb}{where} at line {self.line}"
        if self.via is not None:
            text += f" by '{self.via}()'" if self.role is Role.CHANGE else f" in '{self.via}()'"
        if self.again is not None:
            text += f" ({self.again})"
        return text


@dataclass(frozen=True)
class Finding:
    code: str
    message: str  # without the code
    line: int  # 1-based
    column: int  # 0-based, as flake8 reports it before adding one
    end_line: int
    end_column: int
    function: str = ""  # the compiled function
    name: str = ""  # the captured name
    fix: Fix | None = None
    no_fix_reason: str | None = None
    # Where the captured value changes (for editors' related information).
    change_line: int | None = None
    # The stale path the code shows: trace, change, reuse. Empty for an API hazard, which
    # names instead the entry points through which code outside the project makes it stale.
    witness: tuple[WitnessStep, ...] = ()
    entry_points: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return f"{self.code} {self.message}"

    def sort_key(self) -> tuple[int, int, str, str, str]:
        # The name next: a call of a helper can read several values at one position. The
        # message last: one function compiled twice (``jax.pmap`` or ``jax.jit``, by a flag)
        # is reported once for each, at one place, and the order must not vary between runs.
        return (self.line, self.column, self.code, self.name, self.message)
