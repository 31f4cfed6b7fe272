"""The same findings, witnesses included, whatever order the facts were gathered in: that order
follows the names asked about first, which can follow a set's order (Python's string hashing),
so the call graph hands each batch of events on in the order the code stands."""

from __future__ import annotations

import ast

from flake8_jax_closure.analysis.callgraph.events import EventKind, event_at
from flake8_jax_closure.analysis.pipeline import ModuleFacts

SOURCE = """import jax


class Runner:
    def __init__(self):
        self.setup()

    def setup(self):
        self.rate = 0.1

    def warm(self):
        for _ in range(3):
            self.setup()

    def measure(self):
        self.setup()
        self.setup()


def main():
    runner = Runner()
    runner.warm()
    runner.measure()
"""


def test_events_come_in_the_order_the_code_stands_whatever_order_they_are_given() -> None:
    module = ModuleFacts(ast.parse(SOURCE), SOURCE, ("jax.jit",))
    facts, graph = module.facts, module.graph
    setup = next(s for s in facts.all_scopes() if s.name == "setup")
    statement = setup.node.body[0]  # type: ignore[attr-defined]
    direct = event_at(setup, statement, (), EventKind.RUN)
    calls = graph.uses_of_function(setup).events
    assert len(calls) == 4
    forward = graph.propagate([direct, *calls], None).events
    backward = graph.propagate([*reversed(calls), direct], None).events
    order = [(e.driver.start, e.at, e.kind.value) for e in forward]
    assert order == [(e.driver.start, e.at, e.kind.value) for e in backward]


def test_findings_at_one_place_for_one_name_come_in_the_order_of_their_messages() -> None:
    """One function compiled twice (``jax.pmap`` or ``jax.jit``, by a flag) is reported once
    for each, at one place and for one name: their order must not follow the order the
    compiled sites were found in."""
    from flake8_jax_closure.diagnostics import Finding

    by_pmap = Finding("JC204", "'_step' (jax.pmap, bound method) reads", 3, 4, 3, 9, name="self.x")
    by_jit = Finding("JC204", "'_step' (jax.jit, bound method) reads", 3, 4, 3, 9, name="self.x")
    assert sorted([by_pmap, by_jit], key=Finding.sort_key) == [by_jit, by_pmap]
    assert sorted([by_jit, by_pmap], key=Finding.sort_key) == [by_jit, by_pmap]
