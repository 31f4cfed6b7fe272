"""Whether an object a frame of the trace received holds tracers, found at a bounded cost.

An object that holds tracers (a pytree the compiled function was given, a module rebuilt inside
the trace) is the trace's own data: what is read from it is no capture. Finding that out must
not cost what the object's size costs, since a trace reads the same large objects (a model's
parameters, ``self`` of every layer) again and again:

- each object is searched once per trace (:class:`TracerSearch` remembers the answer by
  identity while the trace's frames keep the object alive);
- the search stops at the first tracer, and after ``NODE_BUDGET`` nodes. JAX hands a trace a
  tracer at every array leaf of what it traces, so a traced pytree shows one among its first
  few nodes; an object without one in its first ``NODE_BUDGET`` nodes is taken to hold none,
  and what is read from it is then checked like any captured value (a path that meets a tracer
  is still dropped where it meets it, see ``resolve``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from types import ModuleType
from typing import Any

from .values import is_tracer

NODE_BUDGET = 256


class TracerSearch:
    """Answers ``holds_tracers`` for the objects of one trace; ``nodes`` counts the nodes it
    looked at, for tests of its bound."""

    def __init__(self) -> None:
        self._known: dict[int, bool] = {}
        self.nodes = 0

    def holds_tracers(self, value: Any) -> bool:
        """Whether ``value`` is a tracer, or has one among its pytree leaves or its instance
        attributes. ``value`` must stay alive while this search is used (its identity is the
        key of the answer)."""
        key = id(value)
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = self._search(value)
        return known

    def _search(self, value: Any) -> bool:
        if is_tracer(value):
            return True
        if self._in_pytree(value):
            return True
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, dict) and not isinstance(value, (type, ModuleType)):
            # A plain object is one leaf to JAX: its attributes are looked at one level deep.
            for attribute in itertools.islice(attributes.values(), NODE_BUDGET):
                self.nodes += 1
                if is_tracer(attribute):
                    return True
        return False

    def _in_pytree(self, value: Any) -> bool:
        """A walk of the pytree, depth first, one level at a time: an exception raised from
        deep inside JAX's own flattening would leave its recursion count behind."""
        import jax

        flatten = jax.tree_util.tree_flatten
        pending, budget = [value], NODE_BUDGET
        while pending and budget:
            node = pending.pop()
            budget -= 1
            self.nodes += 1
            if is_tracer(node):
                return True
            try:
                children, _ = flatten(node, is_leaf=_all_but(node))
            except Exception:  # noqa: BLE001 - a node JAX cannot flatten holds no leaves
                continue
            if len(children) != 1 or children[0] is not node:  # not a leaf
                pending.extend(reversed(children))
        return False


def _all_but(node: Any) -> Callable[[Any], bool]:
    """``is_leaf`` for flattening ``node`` one level: everything below it is a leaf."""

    def below(child: Any) -> bool:
        return child is not node

    return below
