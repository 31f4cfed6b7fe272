"""The verifier's data: its options, the error that stops it, and what it found (a verdict per
finding, and what each program run saw)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from ...diagnostics import Finding


class Verdict(enum.Enum):
    CONFIRMED = "confirmed"  # original stale, fixed consistent
    NOT_REPRODUCED = "not-reproduced"  # the original never diverged in this run
    NOT_EXERCISED = "not-exercised"  # the compiled function was never called
    REGRESSION = "regression"  # the fixed program raised or diverged
    NO_FIX = "no-fix"


@dataclass
class RunOutcome:
    """One program run: its status and what the instrumentation saw."""

    status: str  # ok, error, timeout
    error: str | None
    platform: str
    device_kind: str
    functions: dict[int, dict[str, Any]]  # first line of the compiled function -> record
    output_tail: str = ""
    # What the runtime guard saw: stale calls, each naming the compiled function and the value.
    guard: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class FindingReport:
    finding: Finding
    verdict: Verdict
    original: dict[str, Any] | None
    fixed: dict[str, Any] | None
    fixed_output_changed: bool | None = None


@dataclass
class VerifyReport:
    path: str
    platform: str
    device_kind: str
    original: RunOutcome
    fixed: RunOutcome | None
    findings: list[FindingReport] = field(default_factory=list)
    written: bool = False
    # What to try when nothing ran (a file without a ``__main__`` block).
    hint: str | None = None
    # Stale calls the runtime guard saw whose value no finding names.
    unexplained: list[dict[str, Any]] = field(default_factory=list)

    @property
    def success(self) -> bool:
        """Every exercised finding confirmed, and at least one exercised."""
        exercised = [r for r in self.findings if r.verdict is not Verdict.NOT_EXERCISED]
        return bool(exercised) and all(r.verdict is Verdict.CONFIRMED for r in exercised)


class VerifyError(Exception):
    """Verification could not run; the message is one line for the user."""


@dataclass(frozen=True)
class VerifyOptions:
    entry: str | None = None
    pytest_args: tuple[str, ...] | None = None
    timeout: float = 300.0
    platform: str | None = None
    require_accelerator: bool = False
    write: bool = False
