"""The guard where JAX keeps a trace apart (bodies of ``lax.scan`` and ``fori_loop``), on
attributes of plain objects such as ``types.SimpleNamespace``, and on state the compiled code
stores to after reading it (``self.n += 1``): each class of program the ground truth once
caught the guard out on."""

from __future__ import annotations

import collections
import functools
import types
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

X = jnp.arange(3.0)
VALUE = 1.0


@pytest.fixture(autouse=True)
def value() -> Iterator[None]:
    global VALUE
    VALUE = 1.0
    yield
    VALUE = 1.0


def set_value(new: float) -> None:
    global VALUE
    VALUE = new


def scan_sum() -> Callable[[Any], Any]:
    def body(carry: Any, x: Any) -> Any:
        return carry + x * VALUE, None  # noqa: JC102 - what the guard is tested on

    return jax.jit(lambda xs: lax.scan(body, 0.0, xs)[0])


def fori_scale() -> Callable[[Any], Any]:
    def body(i: Any, carry: Any) -> Any:
        return carry * VALUE  # noqa: JC102 - what the guard is tested on

    # The carry keeps its shape when x changes: the body's trace can be reused.
    return jax.jit(lambda x: x * lax.fori_loop(0, 2, body, 1.0))


BODIES = pytest.mark.parametrize("make", [scan_sum, fori_scale], ids=["scan", "fori_loop"])


# -- bodies JAX traces apart ---------------------------------------------------------------------


@BODIES
def test_a_new_outer_shape_reusing_a_stale_body_trace_is_stale(make: Any) -> None:
    with guard.guarding("error"):
        compiled = make()
        compiled(X)
        set_value(2.0)
        # A new shape traces the outer function afresh, but JAX reuses the body's trace.
        with pytest.raises(StaleCaptureError, match="VALUE"):
            compiled(jnp.arange(5.0))


@BODIES
def test_a_new_outer_shape_with_unchanged_values_is_not_stale(make: Any) -> None:
    with guard.guarding("error"):
        compiled = make()
        first = compiled(X)
        compiled(jnp.arange(5.0))
        assert compiled(X).tolist() == first.tolist()


@BODIES
@pytest.mark.parametrize("shape", [3, 5], ids=["same-shape", "new-shape"])
def test_retrace_traces_the_body_again(make: Any, shape: int) -> None:
    with guard.guarding("retrace"):
        compiled = make()
        compiled(X)
        set_value(2.0)
        x = jnp.arange(float(shape))
        got = compiled(x)
        with jax.disable_jit():
            expected = compiled(x)
        assert got.tolist() == expected.tolist()


# -- attributes of plain objects --------------------------------------------------------------


def test_attribute_of_a_simple_namespace() -> None:
    cfg = types.SimpleNamespace(scale=1.0)

    with guard.guarding("error"):

        @jax.jit
        def scale(x: Any) -> Any:
            return x * cfg.scale  # noqa: JC103 - what the guard is tested on

        scale(X)
        cfg.other = "not read"
        assert scale(X).tolist() == [0.0, 1.0, 2.0]
        cfg.scale = 2.0
        with pytest.raises(StaleCaptureError, match=r"cfg\.scale"):
            scale(X)


Weights = collections.namedtuple("Weights", ["data", "boundary"])


def test_fields_of_a_named_tuple_rebound() -> None:
    """``weight.boundary`` of a named tuple reads its item through a descriptor: a record made
    again with another number is stale, one made again with equal numbers is not."""
    weight = Weights(1.0, 100.0)

    with guard.guarding("error"):

        @jax.jit
        def loss(x: Any) -> Any:
            return weight.data * x + weight.boundary  # noqa: JC101 - what the guard is tested on

        loss(X)
        weight = Weights(1.0, 100.0)
        assert loss(X).tolist() == [100.0, 101.0, 102.0]
        weight = Weights(1.0, 10.0)
        with pytest.raises(StaleCaptureError, match=r"weight\.boundary"):
            loss(X)


def test_a_function_the_object_holds_is_read_as_that_attribute() -> None:
    """``state.apply_fn(params, x)`` reads the function the record holds, not the record: a
    record rebuilt around the same function (flax's ``apply_gradients``) is no change, one
    holding another function is."""
    state = types.SimpleNamespace(apply_fn=lambda p, x: x * p, params=1.0)

    with guard.guarding("error"):

        @jax.jit
        def predict(params: Any, x: Any) -> Any:
            return state.apply_fn(params, x)  # noqa: JC101 - what the guard is tested on

        predict(1.0, X)
        state = types.SimpleNamespace(apply_fn=state.apply_fn, params=2.0)
        assert predict(2.0, X).tolist() == [0.0, 2.0, 4.0]
        state = types.SimpleNamespace(apply_fn=lambda p, x: x + p, params=2.0)
        with pytest.raises(StaleCaptureError, match=r"state\.apply_fn"):
            predict(2.0, X)


# -- state the compiled code stores to ----------------------------------------------------------


class Counter:
    def __init__(self) -> None:
        self.n = 0

    def count(self, x: Any) -> Any:
        self.n += 1
        return x * self.n  # noqa: JC104 - what the guard is tested on


def scaled_class() -> type:
    """Made under the guard: a method compiled when its class is defined."""

    class Scaled:
        def __init__(self) -> None:
            self.scale: float | None = None

        @functools.partial(jax.jit, static_argnums=0)
        def apply(self, x: Any) -> Any:
            if self.scale is None:
                self.scale = 2.0
            return x * self.scale

    return Scaled


def test_a_value_read_then_stored_by_the_trace_is_checked_as_read() -> None:
    with guard.guarding("error"):
        counter = Counter()
        fast_count = jax.jit(counter.count)
        assert fast_count(X).tolist() == [0.0, 1.0, 2.0]
        # Run as Python, the call would read n == 1 and return x * 2.
        with pytest.raises(StaleCaptureError, match=r"self\.n"):
            fast_count(X)
        assert counter.n == 1  # the guard's own check left the state as it was


def test_retrace_follows_a_value_the_trace_stores_to() -> None:
    with guard.guarding("retrace"):
        counter = Counter()
        fast_count = jax.jit(counter.count)
        outputs = [fast_count(X).tolist() for _ in range(3)]
    assert outputs == [[0.0, 1.0, 2.0], [0.0, 2.0, 4.0], [0.0, 3.0, 6.0]]


def test_a_guarded_write_changed_by_the_program_is_stale() -> None:
    with guard.guarding("error"):
        scaled = scaled_class()()
        scaled.apply(X)
        scaled.scale = 1.0
        with pytest.raises(StaleCaptureError, match=r"self\.scale"):
            scaled.apply(X)


def test_a_value_the_trace_initialises_itself_is_not_stale() -> None:
    with guard.guarding("error"):
        scaled = scaled_class()()
        # The first trace read None and stored 2.0; later calls would read 2.0 and return
        # the same: no alarm, and no check by running the function after the first.
        outputs = [scaled.apply(X).tolist() for _ in range(3)]
    assert outputs == [[0.0, 2.0, 4.0]] * 3
