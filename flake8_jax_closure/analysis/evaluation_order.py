"""When, within one statement, an event happens: Python evaluates a call's arguments before the
call runs, so ``net(x, net.flat())`` calls the compiled ``net.flat`` before ``net.__call__``
makes its change, although ``net`` stands first in the code.

An event on a call (its callee, or the call itself) happens when the call is made, after every
part of the call: it is placed at the call's end. Other events (a store, an object handed on)
keep their place in the code. Calls that do not nest keep their order either way: one ends
before the next one starts.
"""

from __future__ import annotations

import ast

from .callgraph.events import Event
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
