"""What the guard does while JAX traces is bounded by what the trace reads, not by the size of
the pytrees it reads, and skips library work without missing a read of the program's own.

Counts, not timings: the time a guarded trace takes is measured by ``benchmarks/guard_bench.py``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("jax")
pytestmark = pytest.mark.jax

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from flake8_jax_closure import guard  # noqa: E402
from flake8_jax_closure.guard import StaleCaptureError  # noqa: E402
from flake8_jax_closure.runtime.guard import binds, tracing  # noqa: E402
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


@pytest.mark.parametrize("depth", [1, 6])
def test_frames_followed_do_not_grow_with_an_equinox_model(
    depth: int, followed_frames: list[str]
) -> None:
    eqx = pytest.importorskip("equinox")
    model = eqx.nn.MLP(3, 3, 8, depth, key=jax.random.PRNGKey(0))

    @eqx.filter_jit
    def apply(model: Any, x: Any) -> Any:
        return jax.vmap(model)(jnp.stack([x, x]))

    apply.lower(model, X)
    # equinox flattens and unflattens the model's modules many times (code it writes with
    # ``exec``): none of those frames is followed.
    assert followed_frames == ["apply"]


# -- primitive binds ----------------------------------------------------------------------------


def many_operations(x: Any) -> Any:
    for _ in range(20):
        x = jnp.sin(x) * 2.0 + jnp.cos(x)
    return x


# Bind skipping serves the ``sys.settrace`` watch, the watch of CPython 3.11 and earlier (and of
# a later one whose monitoring tool ids are all taken); it follows the JAX those versions get.
settrace_watch = pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="the watch is sys.monitoring from CPython 3.12 on"
)


def events_while_tracing(function: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> int:
    """How many frames the watch's global trace function is called for while ``function``
    traces."""
    events = [0]
    real = tracing._global_trace

    def counting_global(previous: Any) -> Any:
        watch = real(previous)

        def counted(frame: Any, event: str, arg: Any) -> Any:
            events[0] += 1
            return watch(frame, event, arg)

        return counted

    with monkeypatch.context() as patch:
        patch.setattr(tracing, "_global_trace", counting_global)
        jax.jit(lambda x: function(x)).trace(X)  # a new function: JAX traces it afresh
    return events[0]


@settrace_watch
def test_binds_of_jax_primitives_run_without_the_watch(monkeypatch: pytest.MonkeyPatch) -> None:
    from jax._src import core

    real_bind = core.Primitive.__dict__["bind"]
    watched_binds = events_while_tracing(many_operations, monkeypatch)
    assert core.Primitive.__dict__["bind"] is real_bind  # JAX's own again after the trace
    monkeypatch.setattr(tracing, "skip_binds", lambda watch: None)
    monkeypatch.setattr(tracing, "keep_binds", lambda watch: None)
    all_watched = events_while_tracing(many_operations, monkeypatch)
    assert watched_binds * 2 < all_watched


@settrace_watch
def test_binds_keep_the_watch_under_another_tracer() -> None:
    from jax._src import core

    real_bind = core.Primitive.__dict__["bind"]
    seen: list[Any] = []

    def other(frame: Any, event: str, arg: Any) -> Any:
        seen.append(core.Primitive.__dict__["bind"])
        return None

    sys.settrace(other)
    try:
        jax.jit(lambda x: many_operations(x)).trace(X)
    finally:
        sys.settrace(None)
    assert seen and all(bind is real_bind for bind in seen)


def many_softplus(x: Any) -> Any:
    for _ in range(20):
        x = jax.nn.softplus(x) * 2.0
    return x.sum()


@settrace_watch
def test_custom_jvp_calls_of_library_functions_run_without_the_watch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gradient = jax.grad(many_softplus)
    watched_binds = events_while_tracing(gradient, monkeypatch)
    monkeypatch.setattr(tracing, "skip_binds", lambda watch: None)
    monkeypatch.setattr(tracing, "keep_binds", lambda watch: None)
    all_watched = events_while_tracing(gradient, monkeypatch)
    assert watched_binds * 2 < all_watched


@settrace_watch
def test_what_reaches_only_library_code() -> None:
    import math
    import operator
    import os
    from functools import partial

    from jax._src import api_util, linear_util

    from flake8_jax_closure.runtime.guard.library_reach import BUDGET, LibraryReach

    reach = LibraryReach(lambda jaxpr: True)

    def own(x: Any) -> Any:
        return x

    def wrapped(function: Any) -> Any:
        """``function`` as JAX hands it to a bind."""
        debug = api_util.debug_info("test", function, (X,), {})
        return linear_util.wrap_init(function, debug_info=debug)

    library = [os.path.join, partial(operator.add, 1.0), (jnp.float32, None, "a", jnp.ones(2))]
    library += [math.sqrt, jax.tree_util.tree_structure(((1, 2), {"a": [3]}))]
    library.append(wrapped(os.path.basename))
    assert all(map(reach.only_library, library))
    programs = [own, partial(operator.add, own), [os.path.join, (own,)], Node, Node([], 1.0)]
    programs.append(jax.tree_util.tree_structure(Node([1.0], 2.0)))
    programs.append(wrapped(own))
    assert not any(map(reach.only_library, programs))
    nested: Any = ()
    for _ in range(BUDGET):
        nested = (nested,)
    assert reach.only_library(nested[0]) and not reach.only_library(nested)  # past the budget


GAIN = 2.0


def _abstract_scale(x: Any) -> Any:
    # A rule of the program's own primitive: it runs inside the primitive's bind.
    assert GAIN > 0
    return x


def user_primitive() -> Any:
    from jax.extend.core import Primitive

    primitive = Primitive("program_scale")
    primitive.def_abstract_eval(_abstract_scale)
    return primitive


PROGRAM_SCALE = user_primitive()


def test_rules_of_a_primitive_of_the_program_are_watched() -> None:
    @jax.jit
    def uses_primitive(x: Any) -> Any:
        return PROGRAM_SCALE.bind(x)

    uses_primitive.trace(X)
    assert "GAIN" in [read.name for read in uses_primitive.reads]
    assert not binds.runs_user_code(jnp.sin)  # jnp's own code is the library's


SLOPE = 3.0


@jax.custom_jvp
def soft(x: Any) -> Any:
    return jnp.tanh(x)


@soft.defjvp
def _soft_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return soft(x), SLOPE * t  # noqa: JC102 - what the guard is tested on


def test_a_custom_rule_of_the_program_is_watched() -> None:
    grad = jax.jit(jax.grad(lambda x: soft(x).sum()))
    grad.trace(X)
    assert "SLOPE" in [read.name for read in grad.reads]


def test_a_custom_rule_run_by_the_bind_of_a_jaxpr_is_watched() -> None:
    # lax.cond traces its branches into jaxprs; the custom JVP rule inside runs when the
    # gradient differentiates the cond's jaxpr, within its bind.
    def loss(x: Any) -> Any:
        return lax.cond(x.sum() > 0, lambda y: soft(y).sum(), lambda y: y.sum(), x)

    grad = jax.jit(jax.grad(loss))
    grad.trace(X)
    assert "SLOPE" in [read.name for read in grad.reads]


# -- a neural ODE -------------------------------------------------------------------------------

DAMPING = 0.5
LEARNING_RATE = 0.1


def test_a_neural_ode_is_watched_where_the_program_runs(followed_frames: list[str]) -> None:
    # The vector field runs inside diffrax's loops, under the gradient: its reads are
    # recorded, and no frame of equinox or diffrax is followed.
    eqx = pytest.importorskip("equinox")
    diffrax = pytest.importorskip("diffrax")

    class Field(eqx.Module):
        mlp: Any

        def __call__(self, t: Any, y: Any, args: Any) -> Any:
            return self.mlp(y) - DAMPING * y  # noqa: JC102 - what the guard is tested on

    model = Field(eqx.nn.MLP(2, 2, 8, 1, key=jax.random.PRNGKey(0)))
    params, static = eqx.partition(model, eqx.is_array)

    def loss(params: Any, y0: Any) -> Any:
        field = eqx.combine(params, static)
        solution = diffrax.diffeqsolve(
            diffrax.ODETerm(field), diffrax.Tsit5(), 0.0, 1.0, 0.25, y0, max_steps=8
        )
        return jnp.sum(solution.ys**2)

    def step(params: Any, y0: Any) -> Any:
        grads = jax.grad(loss)(params, y0)
        return jax.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)

    compiled = jax.jit(step)
    compiled.trace(params, jnp.ones(2))
    names = {read.name for read in compiled.reads}
    assert {"DAMPING", "LEARNING_RATE", "static"} <= names
    assert set(followed_frames) == {"step", "loss", "__call__", "<lambda>"}
