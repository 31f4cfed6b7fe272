"""When, within one statement, an event happens: Python evaluates a call's arguments before the
call runs, so ``net(x, net.flat())`` calls the compiled ``net.flat`` before ``net.__call__``
makes its change, although ``net`` stands first in the code.

An event on a call (its callee, or the call itself) happens when the call is made, after every
part of the call: it is placed at the call's end. Other events (a store, an object handed on)
keep their place in the code. Calls that do not nest keep their order either way: one ends
before the next one starts. Two events at one call happen in the order the called function's
own body does them.
"""

from __future__ import annotations

import ast

from .callgraph.events import Event, EventKind, Reach
from .facts.model import Pos
from .facts.queries import Facts


def happens_at(facts: Facts, event: Event) -> Pos:
    """The event's place in the order of evaluation of its driver's code."""
    node = event.node
    if node is None or event.at != (
        getattr(node, "lineno", None),
        getattr(node, "col_offset", None),
    ):
        # Placed where a class body or comprehension around it runs: keep that place.
        return event.at
    call = node if isinstance(node, ast.Call) else facts.parent(node)
    if not isinstance(call, ast.Call) or (call is not node and call.func is not node):
        return event.at
    end_line = call.end_lineno
    end_column = call.end_col_offset
    if end_line is None or end_column is None:
        return event.at
    return (end_line, end_column)


def precedes(facts: Facts, first: Event, second: Event) -> bool:
    """Whether ``first`` happens before ``second`` in their driver's code."""
    return happens_at(facts, first) < happens_at(facts, second)


def happens_before(
    facts: Facts, first: Event, of_first: Reach, second: Event, of_second: Reach
) -> bool:
    """Whether ``first`` (an event of ``of_first``) happens before ``second`` (of
    ``of_second``). Two events at one call of a function (``warmup()``, which calls the
    compiled ``step`` and then sets ``lr``) happen in the order that function's own body does
    them: a compiled call and a change written there, not ones made deeper in the functions it
    calls, where the order is not followed."""
    if precedes(facts, first, second):
        return True
    inner = first.via
    if inner is None or first.node is None or second.node is not first.node:
        return False
    if second.via is not inner:
        return False
    return any(
        precedes(facts, a, b)
        for a in of_first.in_driver(inner)
        if _done_here(a)
        for b in of_second.in_driver(inner)
        if _done_here(b)
    )


def _done_here(event: Event) -> bool:
    """The event is done by the statement itself: a call of the compiled object or a store, not
    a call of a function that does it, nor a function handed on."""
    return event.kind is EventKind.RUN and event.via is None
