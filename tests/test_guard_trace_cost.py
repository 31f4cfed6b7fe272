"""What the guard does while JAX traces is bounded by what the trace reads, not by the size of
the pytrees it reads, and skips library work without missing a read of the program's own.

Counts, not timings: the time a guarded trace takes is measured by ``benchmarks/guard_bench.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("jax")
pytestmark = pytest.mark.jax

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from flake8_jax_closure import guard  # noqa: E402
from flake8_jax_closure.guard import StaleCaptureError  # noqa: E402
from flake8_jax_closure.runtime.guard import tracing  # noqa: E402
from flake8_jax_closure.runtime.guard.tracer_search import NODE_BUDGET, TracerSearch  # noqa: E402

X = jnp.arange(3.0)


@pytest.fixture(autouse=True)
def guarded() -> Iterator[None]:
    with guard.guarding("error"):
        yield


# -- looking for tracers in what a frame received -----------------------------------------------

FLATTENED = [0]  # calls of Node's flatten function


class Node:
    """A pytree node the program registered: JAX calls its flatten function for each node."""

    def __init__(self, children: list[Any], scale: float) -> None:
        self.children, self.scale = children, scale


def _flatten(node: Node) -> tuple[list[Any], float]:
    FLATTENED[0] += 1
    return node.children, node.scale


def _unflatten(scale: float, children: list[Any]) -> Node:
    return Node(list(children), scale)


jax.tree_util.register_pytree_node(Node, _flatten, _unflatten)


def chain(length: int, leaf: Any) -> Node:
    """``length`` nested nodes, the innermost holding ``leaf``."""
    node = Node([leaf], 2.0)
    for _ in range(length - 1):
        node = Node([node], 2.0)
    return node


def scaled(tree: Node, x: Any) -> Any:
    return x * tree.scale


def flattened_while_tracing(tree: Node) -> tuple[int, Any]:
    """How many nodes of ``tree`` the guard flattened while tracing a function that hands it
    to a helper reading ``tree.scale``; and the compiled function."""

    @jax.jit
    def reads_tree(x: Any) -> Any:
        return scaled(tree, x)

    FLATTENED[0] = 0
    reads_tree.trace(X)
    return FLATTENED[0], reads_tree


def test_looking_for_tracers_does_not_grow_with_the_tree_a_helper_receives() -> None:
    small, _ = flattened_while_tracing(chain(2 * NODE_BUDGET, 1.0))
    large, compiled = flattened_while_tracing(chain(20 * NODE_BUDGET, 1.0))
    assert 0 < small == large <= NODE_BUDGET
    # What the helper read is checked all the same.
    assert "tree.scale" in [read.name for read in compiled.reads]


def test_a_change_read_from_a_large_tree_is_caught() -> None:
    tree = chain(2 * NODE_BUDGET, 1.0)

    @jax.jit
    def reads_tree(x: Any) -> Any:
        return scaled(tree, x)  # noqa: JC103 - what the guard is tested on

    reads_tree(X)
    tree.scale = 3.0
    with pytest.raises(StaleCaptureError) as caught:
        reads_tree(X)
    assert caught.value.value == "tree.scale"


def wide(width: int, leaf: Any) -> Node:
    """A node holding ``leaf`` first, then ``width`` nodes."""
    return Node([leaf, *(Node([1.0], 2.0) for _ in range(width))], 2.0)


def test_a_traced_tree_is_known_by_its_first_tracer() -> None:
    # A tree the compiled function is given holds tracers while it traces: what is read from
    # it is the call's own argument, not a capture. The search stops at the first tracer; the
    # guard flattens the argument once more only to find JAX's cache signature of the call.
    real_jit = jax.jit.__flake8_jax_closure_guard__

    def takes_tree(tree: Node, x: Any) -> Any:
        return scaled(tree, x)

    for width in (4, 20 * NODE_BUDGET):
        tree = wide(width, jnp.ones(3))
        FLATTENED[0] = 0
        real_jit(takes_tree).trace(tree, X)
        by_jax = FLATTENED[0]
        FLATTENED[0] = 0
        guarded = jax.jit(takes_tree)
        guarded.trace(tree, X)
        nodes = 1 + width
        assert FLATTENED[0] - by_jax <= nodes + 2
        assert "tree.scale" not in [read.name for read in guarded.reads]


def test_the_search_stops_at_the_first_tracer_and_after_its_budget() -> None:
    found: list[tuple[bool, int]] = []

    def search_in(tree: Node) -> None:
        search = TracerSearch()
        found.append((search.holds_tracers(tree), search.nodes))
        found.append((search.holds_tracers(tree), search.nodes))  # known: not searched again

    def tracing(leaf: Any) -> Any:
        search_in(wide(20 * NODE_BUDGET, leaf))
        search_in(chain(20 * NODE_BUDGET, leaf))  # a tracer past the budget is not found
        return leaf

    jax.make_jaxpr(tracing)(1.0)
    search_in(chain(20 * NODE_BUDGET, 1.0))
    search_in(chain(3, 1.0))
    # Nodes of the pytree, then the two attributes of the root (``children``, ``scale``).
    assert found == [
        (True, 2),
        (True, 2),
        (False, NODE_BUDGET + 2),
        (False, NODE_BUDGET + 2),
        (False, NODE_BUDGET + 2),
        (False, NODE_BUDGET + 2),
        (False, 4 + 2),
        (False, 4 + 2),
    ]


# -- frames the watch follows -------------------------------------------------------------------


def count_visits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the code of every frame the watch follows from now on."""
    visited: list[str] = []
    enter = tracing.Session.enter

    def counting(self: tracing.Session, frame: Any) -> Any:
        visited.append(frame.f_code.co_name)
        return enter(self, frame)

    monkeypatch.setattr(tracing.Session, "enter", counting)
    return visited


@pytest.mark.parametrize("depth", [1, 6])
def test_frames_followed_do_not_grow_with_an_equinox_model(
    depth: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    eqx = pytest.importorskip("equinox")
    model = eqx.nn.MLP(3, 3, 8, depth, key=jax.random.PRNGKey(0))
    visited = count_visits(monkeypatch)

    @eqx.filter_jit
    def apply(model: Any, x: Any) -> Any:
        return jax.vmap(model)(jnp.stack([x, x]))

    apply.lower(model, X)
    # equinox flattens and unflattens the model's modules many times (code it writes with
    # ``exec``): none of those frames is followed.
    assert visited == ["apply"]
