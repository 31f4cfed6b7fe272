"""The guard's process-wide state: its mode, and what happened to each guarded function.

One :data:`SETTINGS` holds the mode every guarded function's calls obey (``off`` until
``install``), the warnings already given, the stale events ``record`` mode collects for verify,
and the per-function figures that :func:`statistics` and the retrace summary report.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import Counter
from dataclasses import dataclass, field

MODES = ("error", "warn", "retrace")
OFF = "off"  # not installed: guarded functions record their traces but act on nothing
RECORD = "record"  # for verify: note each stale function and value once, change nothing
MAX_EVENTS = 1000


@dataclass(frozen=True)
class StaleEvent:
    """A stale call seen in ``record`` mode: the compiled function and the changed value."""

    function: str
    first_line: int
    filename: str
    value: str
    kind: str
    where: str
    summary: str
    code: str


_numbers = itertools.count()


def last_number() -> int:
    """The number of the latest function's statistics: later ones are numbered higher."""
    entries = SETTINGS.all_statistics()
    return entries[-1].number if entries else -1


@dataclass
class Settings:
    mode: str = OFF
    warned: set[tuple[int, str]] = field(default_factory=set)
    # Every guarded function's figures while it lives; those with stale calls or retraces
    # for good (a report at exit names them).
    statistics: weakref.WeakValueDictionary[int, FunctionStatistics] = field(
        default_factory=weakref.WeakValueDictionary
    )
    notable: dict[int, FunctionStatistics] = field(default_factory=dict)
    events: list[StaleEvent] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def all_statistics(self) -> list[FunctionStatistics]:
        with self.lock:
            entries = {**self.statistics, **self.notable}
        return [entries[number] for number in sorted(entries)]

    def keep(self, entry: FunctionStatistics) -> None:
        with self.lock:
            self.notable[entry.number] = entry


@dataclass(eq=False)
class FunctionStatistics:
    """What happened to one guarded function: calls, stale calls, retraces and their causes."""

    label: str
    number: int = field(default_factory=lambda: next(_numbers))
    calls: int = 0
    stale_calls: int = 0
    retraces: int = 0
    causes: Counter[str] = field(default_factory=Counter)
    advised: set[str] = field(default_factory=set)


SETTINGS = Settings()


def statistics() -> list[FunctionStatistics]:
    """Per guarded function: calls, stale calls, retraces and the values that caused them."""
    return SETTINGS.all_statistics()


def retrace_summary(after: int = -1) -> list[str]:
    """One line per function the guard traced again (of those guarded after the entry
    numbered ``after``), with the values that made it."""
    entries = [e for e in SETTINGS.all_statistics() if e.retraces and e.number > after]
    return [
        f"traced {entry.label} again {entry.retraces} times in {entry.calls} calls ("
        + ", ".join(f"{name} changed {count} times" for name, count in entry.causes.items())
        + ")"
        for entry in entries
    ]
