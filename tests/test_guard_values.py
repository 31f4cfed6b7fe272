"""The guard on each kind of captured value: it fires at the first call that reuses a trace
whose value changed, names the value, where the trace read it and the rule, and never fires on
a call that traces afresh or on values that did not change."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("jax")
pytestmark = pytest.mark.jax

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from flake8_jax_closure import guard  # noqa: E402
from flake8_jax_closure.guard import StaleCaptureError  # noqa: E402

X = jnp.arange(3.0)
HERE = __file__.rsplit("/", 1)[-1]


@pytest.fixture(autouse=True)
def guarded() -> Iterator[None]:
    with guard.guarding("error"):
        yield


def line_of(function: Callable[..., Any], text: str) -> int:
    """The line of ``function``'s source holding ``text``."""
    import inspect

    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def stale(call: Callable[[], Any]) -> StaleCaptureError:
    with pytest.raises(StaleCaptureError) as caught:
        call()
    return caught.value


# -- rebinding ----------------------------------------------------------------------------------


def test_closure_variable_rebound() -> None:
    def make() -> tuple[Any, Any]:
        weights = jnp.ones(3)

        @jax.jit
        def apply(x: Any) -> Any:
            return x * weights  # noqa: JC101 - what the guard is tested on

        def update(new: Any) -> None:
            nonlocal weights
            weights = new

        return apply, update

    apply, update = make()
    assert apply(X).tolist() == [0.0, 1.0, 2.0]
    update(jnp.zeros(3))
    error = stale(lambda: apply(X))
    assert error.value == "weights"
    assert error.code == "JC101"
    assert error.summary == "Array float32[3] [1.0, 1.0, 1.0] -> Array float32[3] [0.0, 0.0, 0.0]"
    assert error.where.endswith(f"{HERE}:{line_of(make, 'return x * weights')}")
    label = "'test_closure_variable_rebound.<locals>.make.<locals>.apply' ("
    assert error.function.startswith(label)
    message = str(error)
    assert "reused a trace that read weights (a closure variable, at " in message
    assert "JC101: make weights an argument of the compiled function" in message


LEARNING_RATE = 0.1


def test_global_rebound() -> None:
    global LEARNING_RATE

    @jax.jit
    def step(x: Any) -> Any:
        return x * LEARNING_RATE  # noqa: JC102 - what the guard is tested on

    step(X)
    LEARNING_RATE = 0.5
    try:
        error = stale(lambda: step(X))
    finally:
        LEARNING_RATE = 0.1
    assert (error.value, error.code, error.summary) == (
        "LEARNING_RATE",
        "JC102",
        "float 0.1 -> float 0.5",
    )
    assert "LEARNING_RATE (a global, at " in str(error)


class Scaler:
    def __init__(self) -> None:
        self.mul = 2.0

    def apply(self, x: Any) -> Any:
        return x * self.mul

    @functools.partial(jax.jit, static_argnums=0)
    def static_apply(self, x: Any) -> Any:
        return x * self.mul


def test_attribute_of_self_through_a_bound_method() -> None:
    scaler = Scaler()
    compiled = jax.jit(scaler.apply)
    compiled(X)
    scaler.mul = 3.0
    error = stale(lambda: compiled(X))
    assert (error.value, error.code, error.summary) == (
        "self.mul",
        "JC104",
        "float 2.0 -> float 3.0",
    )
    assert "JC104: pass self.mul to the compiled function as an argument" in str(error)


def test_attribute_of_a_static_self() -> None:
    # Defined under the guard: the class above was compiled before the fixture installed it.
    class Model:
        def __init__(self) -> None:
            self.mul = 2.0

        @functools.partial(jax.jit, static_argnums=0)
        def apply(self, x: Any) -> Any:
            return x * self.mul  # noqa: JC104 - what the guard is tested on

    model = Model()
    assert model.apply(X).tolist() == [0.0, 2.0, 4.0]
    model.mul = 5.0
    assert stale(lambda: model.apply(X)).value == "self.mul"
    # Another object hashes differently: JAX traces it afresh, which is not stale.
    assert Model().apply(X).tolist() == [0.0, 2.0, 4.0]


def test_static_self_hashed_by_value_is_caught_where_jax_serves_the_stale_trace() -> None:
    def make() -> Any:
        @dataclasses.dataclass(unsafe_hash=True)
        class Config:
            scale: float

            @functools.partial(jax.jit, static_argnums=0)
            def apply(self, x: Any) -> Any:
                return x * self.scale

        return Config

    def run(config_class: Any) -> Any:
        first = config_class(1.0)
        first.apply(X)
        first.scale = 2.0
        return config_class(2.0).apply(X)  # a new object, equal to the changed one

    with unguarded():
        served = run(make())
    if float(served[1]) == 2.0:
        # JAX 0.11 and later trace the new object afresh: nothing stale, nothing said.
        assert float(run(make())[1]) == 2.0
        return
    # Earlier versions serve it the trace of the old value, found by the changed one's hash.
    error = stale(lambda: run(make()))
    assert (error.value, error.summary) == ("self.scale", "float 1.0 -> float 2.0")


@contextlib.contextmanager
def unguarded() -> Iterator[None]:
    """JAX alone, inside a guarded test."""
    guard.uninstall()
    try:
        yield
    finally:
        guard.install("error")


class Defaults:
    EPS = 1.0


def test_class_attribute() -> None:
    @jax.jit
    def add(x: Any) -> Any:
        return x + Defaults.EPS  # noqa: JC103 - what the guard is tested on

    add(X)
    Defaults.EPS = 2.0
    try:
        error = stale(lambda: add(X))
    finally:
        Defaults.EPS = 1.0
    assert (error.value, error.code) == ("Defaults.EPS", "JC103")
    assert "Defaults.EPS (a class attribute, at " in str(error)


def test_attribute_of_a_module() -> None:
    settings = types.ModuleType("guard_test_settings")
    settings.LR = 0.5  # type: ignore[attr-defined]
    sys.modules["guard_test_settings"] = settings
    namespace: dict[str, Any] = {}
    exec(
        "import jax\nimport guard_test_settings as settings\n\n"
        "@jax.jit\ndef step(x):\n    return x * settings.LR\n",
        namespace,
    )
    try:
        step = namespace["step"]
        step(X)
        settings.LR = 0.1  # type: ignore[attr-defined]
        error = stale(lambda: step(X))
    finally:
        del sys.modules["guard_test_settings"]
    assert (error.value, error.code) == ("settings.LR", "JC103")
    assert "settings.LR (a module attribute, at <string>:6)" in str(error)


# -- in place ----------------------------------------------------------------------------------

CONFIG = {"clip": 1.0, "mode": "clip"}
WEIGHTS = [1.0, 2.0]


def test_item_of_a_dict_read_by_path() -> None:
    @jax.jit
    def postprocess(x: Any) -> Any:
        if CONFIG["mode"] == "clip":  # noqa: JC103 - what the guard is tested on
            return jnp.clip(x, -CONFIG["clip"], CONFIG["clip"])
        return x * 2

    postprocess(X)
    CONFIG["clip"] = 0.5
    try:
        error = stale(lambda: postprocess(X))
    finally:
        CONFIG["clip"] = 1.0
    assert (error.value, error.code, error.summary) == (
        'CONFIG["clip"]',
        "JC103",
        "float 1.0 -> float 0.5",
    )
    assert error.where.endswith(f":{line_of(postprocess, 'jnp.clip')}")


def test_item_of_a_list() -> None:
    @jax.jit
    def second(x: Any) -> Any:
        return x * WEIGHTS[1]  # noqa: JC103 - what the guard is tested on

    second(X)
    WEIGHTS[1] = 7.0
    try:
        assert stale(lambda: second(X)).value == "WEIGHTS[1]"
    finally:
        WEIGHTS[1] = 2.0


def test_dict_read_whole_and_changed_in_place() -> None:
    scales = {"a": 1.0, "b": 2.0}

    @jax.jit
    def total(x: Any) -> Any:
        return x * sum(scales.values())  # noqa: JC103 - what the guard is tested on

    total(X)
    scales["c"] = 3.0
    error = stale(lambda: total(X))
    assert error.value == "scales"
    assert error.code == "JC103"
    assert "(changed in place: 'c')" in error.summary


def test_numpy_array_changed_in_place() -> None:
    table = np.ones(3, dtype=np.float32)

    @jax.jit
    def add(x: Any) -> Any:
        return x + table  # noqa: JC103 - what the guard is tested on

    add(X)
    table[1] = 9.0
    error = stale(lambda: add(X))
    assert (error.value, error.code) == ("table", "JC103")
    assert error.summary == (
        "ndarray float32[3] [1.0, 1.0, 1.0] -> ndarray float32[3] [1.0, 9.0, 1.0] "
        "(changed in place)"
    )


def test_large_numpy_array_is_sampled_not_copied() -> None:
    from flake8_jax_closure.runtime.guard.values import FULL_BYTES, SAMPLE

    table = np.ones(1 << 20, dtype=np.float32)  # 4 MiB

    @jax.jit
    def first(x: Any) -> Any:
        return x + table[:3]  # noqa: JC103 - what the guard is tested on

    first(X)
    (read,) = first.reads
    # The fingerprint is a sample of at most SAMPLE elements, far below the array's size.
    assert len(read.expected_fingerprint[2]) <= SAMPLE * table.itemsize < FULL_BYTES
    first(X)  # unchanged: no alarm
    table[-1] = 2.0  # the last element is always sampled
    assert "(changed in place; sampled elements differ)" in stale(lambda: first(X)).summary


# -- through other functions -------------------------------------------------------------------

SCALE = 2.0


def scale_by_global(v: Any) -> Any:
    return v * SCALE


def test_read_inside_a_helper_function() -> None:
    global SCALE

    @jax.jit
    def uses_helper(x: Any) -> Any:
        return scale_by_global(x) + 1  # noqa: JC102 - what the guard is tested on

    uses_helper(X)
    SCALE = 4.0
    try:
        error = stale(lambda: uses_helper(X))
    finally:
        SCALE = 2.0
    assert error.value == "SCALE"
    assert error.where.endswith(f":{line_of(scale_by_global, 'return v * SCALE')}")


class Layer:
    def __init__(self) -> None:
        self.bias = 1.0
        self._gain = 2.0

    @property
    def gain(self) -> float:
        return self._gain

    def __call__(self, x: Any) -> Any:
        return x * self.gain + self.bias


def test_attributes_read_by_methods_and_properties_of_a_captured_object() -> None:
    layers = [Layer(), Layer()]

    @jax.jit
    def network(x: Any) -> Any:
        for layer in layers:  # noqa: JC103 - what the guard is tested on
            x = layer(x)
        return x

    network(X)
    layers[1]._gain = 3.0
    error = stale(lambda: network(X))
    assert (error.value, error.code) == ("self._gain", "JC104")


OFFSET = 1.0


@pytest.mark.parametrize(
    "body",
    [
        lambda x: lax.scan(lambda c, v: (c + v + OFFSET, c), 0.0, x)[0],
        lambda x: lax.fori_loop(0, 3, lambda i, c: c + OFFSET, x),
        lambda x: jax.tree_util.tree_map(lambda a: a + OFFSET, {"a": x})["a"],
        lambda x: jax.vmap(lambda a: a * OFFSET)(x),
        lambda x: lax.cond(True, lambda v: v + OFFSET, lambda v: v, x),
    ],
    ids=["scan", "fori_loop", "tree_map", "vmap", "cond"],
)
def test_read_inside_a_body_handed_to_jax(body: Callable[[Any], Any]) -> None:
    global OFFSET
    compiled = jax.jit(lambda x: body(x))
    compiled(X)
    OFFSET = 2.0
    try:
        assert stale(lambda: compiled(X)).value == "OFFSET"
    finally:
        OFFSET = 1.0


# -- safe programs -----------------------------------------------------------------------------

FACTOR = 1.0


def test_a_call_that_traces_afresh_is_not_stale() -> None:
    global FACTOR

    @jax.jit
    def scale(x: Any) -> Any:
        return x * FACTOR  # noqa: JC102 - what the guard is tested on

    scale(X)
    FACTOR = 2.0
    try:
        assert scale(jnp.ones(5)).tolist() == [2.0] * 5  # new shape: traced with 2.0
        assert scale(jnp.ones(5)).tolist() == [2.0] * 5  # reuses that trace: right
        stale(lambda: scale(X))  # reuses the first trace: stale
    finally:
        FACTOR = 1.0


def test_values_that_do_not_change() -> None:
    global FACTOR
    captured = {"steps": (1, 2), "array": jnp.ones(3), "table": np.ones(3)}

    @jax.jit
    def use(x: Any) -> Any:
        return x * FACTOR * sum(captured["steps"]) + captured["array"] + captured["table"]  # noqa: JC102, JC103 - what the guard is tested on

    use(X)
    FACTOR = float("1.0")  # another float object, the same value
    captured["steps"] = (1, 2)
    captured["array"] = jnp.ones(3)  # another array, the same contents
    captured["table"][:] = 1.0  # written in place with the same values
    try:
        for _ in range(3):
            assert use(X).tolist() == [2.0, 5.0, 8.0]
    finally:
        FACTOR = 1.0


def test_a_value_changed_and_changed_back_is_not_stale() -> None:
    global FACTOR

    @jax.jit
    def scale(x: Any) -> Any:
        return x * FACTOR  # noqa: JC102 - what the guard is tested on

    scale(X)
    FACTOR = 3.0
    FACTOR = 1.0
    assert scale(X).tolist() == [0.0, 1.0, 2.0]


def test_frozen_dataclass_replaced() -> None:
    @dataclasses.dataclass(frozen=True)
    class Config:
        lr: float

    @functools.partial(jax.jit, static_argnums=1)
    def step(x: Any, config: Config) -> Any:
        return x * config.lr

    config = Config(1.0)
    step(X, config)
    config = dataclasses.replace(config, lr=2.0)
    assert step(X, config).tolist() == [0.0, 2.0, 4.0]
    assert step(X, Config(1.0)).tolist() == [0.0, 1.0, 2.0]


def test_state_the_trace_sets_itself_is_not_a_capture() -> None:
    class Counter:
        def __init__(self) -> None:
            self.traces = 0

        @functools.partial(jax.jit, static_argnums=0)
        def step(self, x: Any) -> Any:
            self.traces += 1
            self.last = "traced"
            return x + 1

    counter = Counter()
    counter.step(X)
    counter.last = "changed by the program"
    assert counter.step(X).tolist() == [1.0, 2.0, 3.0]


def test_a_function_made_again_traces_again() -> None:
    scale = 1.0
    outputs = []
    for scale in (1.0, 2.0):
        outputs.append(jax.jit(lambda x, s=scale: x * s)(X).tolist())
    assert outputs == [[0.0, 1.0, 2.0], [0.0, 2.0, 4.0]]


def test_eager_calls_are_never_stale() -> None:
    global FACTOR

    @jax.jit
    def scale(x: Any) -> Any:
        return x * FACTOR  # noqa: JC102 - what the guard is tested on

    scale(X)
    FACTOR = 2.0
    try:
        with jax.disable_jit():
            assert scale(X).tolist() == [0.0, 2.0, 4.0]
    finally:
        FACTOR = 1.0
