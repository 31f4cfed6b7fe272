"""Events: something happening at a place in a driver's straight-line code.

Code runs in *drivers*: the module's own statements, or the body of a function, lambda or
method. An event is *run* (the thing happens there, during that statement) or *escape* (a
function or object is handed to code this module cannot see, which may run it at any later
time). A ``Reach`` gathers every event of one thing, and the functions that code outside the
module calls and that do it.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field

from ..facts.model import Pos, Scope, ScopeKind

END: Pos = (1 << 30, 0)  # after every line of the module


class EventKind(enum.Enum):
    RUN = "run"
    ESCAPE = "escape"


@dataclass(frozen=True, eq=False)
class Event:
    driver: Scope = field(repr=False)
    at: Pos
    loops: tuple[ast.AST, ...] = field(repr=False)
    kind: EventKind
    # For a call or escape of a function that does the thing: that function.
    via: Scope | None = field(default=None, repr=False)
    # The expression that calls or hands on.
    node: ast.AST | None = field(default=None, repr=False)
    # For a use of what a call of the barrier returned: where that call is. Each call of a
    # function that makes the object makes a new one.
    origin: Pos | None = None
    # For ``return a, b``: the position of the thing in the returned tuple.
    element: int | None = None
    # For ``return Record(step=step)``: the attribute of the returned object that holds it.
    member: str | None = None


@dataclass
class Reach:
    """Everywhere something happens: events by driver, and whether outside code can do it."""

    events: list[Event] = field(default_factory=list)
    # Functions that code outside the module calls (nothing in the module names them) and
    # that do the thing.
    entries: list[Scope] = field(default_factory=list)

    def in_driver(self, driver: Scope) -> list[Event]:
        return [e for e in self.events if e.driver is driver]

    @property
    def outside(self) -> bool:
        return bool(self.entries)

    @property
    def handed_on(self) -> bool:
        return any(e.kind is EventKind.ESCAPE for e in self.events)

    @property
    def escapes(self) -> bool:
        return self.outside or self.handed_on

    def add_entry(self, entry: Scope) -> None:
        if all(e is not entry for e in self.entries):
            self.entries.append(entry)


def level(
    scope: Scope, at: Pos, loops: tuple[ast.AST, ...]
) -> tuple[Scope, Pos, tuple[ast.AST, ...]]:
    """The driver whose straight-line code runs a site, and where: class bodies and
    comprehensions run where they stand in the code around them."""
    while scope.kind in (ScopeKind.COMPREHENSION, ScopeKind.CLASS) and scope.parent is not None:
        at, loops = scope.start, scope.loops
        scope = scope.parent
    return scope, at, loops


def event_at(
    site_scope: Scope, node: ast.AST, loops: tuple[ast.AST, ...], kind: EventKind
) -> Event:
    at = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    driver, at, loops = level(site_scope, at, loops)
    return Event(driver, at, loops, kind, node=node)


def made_in_its_run(event: Event) -> bool:
    """The event calls an object that a call in its own driver's body returned (``fn =
    make(config)`` then ``fn(x)`` in the same function), from a function each call of which
    makes a new object: every run of the driver calls one of its own."""
    driver = event.driver
    if event.kind is not EventKind.RUN or event.origin is None:
        return False
    if driver.kind not in (ScopeKind.FUNCTION, ScopeKind.LAMBDA):
        return False
    node = driver.node
    first = getattr(node, "lineno", 0)
    last = getattr(node, "end_lineno", None) or first
    return first <= event.origin[0] <= last
