"""The guard's modes, its Python API, and the JAX interface of guarded functions: everything
JAX's compiled objects offer works the same, and nothing is patched unless asked."""

from __future__ import annotations

import functools
import inspect
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("jax")
pytestmark = pytest.mark.jax

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from flake8_jax_closure import guard  # noqa: E402
from flake8_jax_closure.guard import StaleCaptureError, StaleCaptureWarning  # noqa: E402
from flake8_jax_closure.runtime.guard.guarded import GuardedFunction  # noqa: E402

X = jnp.arange(3.0)
RATE = 1.0


@pytest.fixture
def rate() -> Iterator[None]:
    global RATE
    RATE = 1.0
    yield
    RATE = 1.0


def set_rate(value: float) -> None:
    global RATE
    RATE = value


def compiled_scale() -> Any:
    def scale(x: Any) -> Any:
        """Scales by RATE."""
        return x * RATE  # noqa: JC102 - what the guard is tested on

    return jax.jit(scale)


# -- the API ------------------------------------------------------------------------------------


def test_importing_the_guard_imports_no_jax_and_patches_nothing() -> None:
    program = (
        "import sys\nimport flake8_jax_closure.guard\n"
        "assert 'jax' not in sys.modules, 'jax was imported'\n"
        "import jax\nassert not hasattr(jax.jit, '__flake8_jax_closure_guard__')\n"
    )
    completed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


def test_install_uninstall_and_guarding_restore_jax() -> None:
    real = jax.jit
    with guard.guarding("warn"):
        assert jax.jit is not real and guard.installed()
        assert guard.guarding is not None
        compiled = jax.jit(lambda x: x + 1)
        assert isinstance(compiled, GuardedFunction)
    assert jax.jit is real and not guard.installed()
    assert isinstance(compiled, GuardedFunction)  # compiled under the guard: still guarded
    guard.install("retrace")
    try:
        assert jax.jit is not real
    finally:
        guard.uninstall()
    assert jax.jit is real


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown guard mode 'loud'"):
        guard.install("loud")
    assert not guard.installed()


def test_library_functions_are_not_guarded() -> None:
    with guard.guarding():
        assert not isinstance(jax.jit(jnp.sin), GuardedFunction)
        assert isinstance(jax.jit(lambda x: x), GuardedFunction)


# -- modes --------------------------------------------------------------------------------------


def test_error_mode_raises_at_every_stale_call(rate: None) -> None:
    with guard.guarding("error"):
        scale = compiled_scale()
        scale(X)
        set_rate(2.0)
        for _ in range(2):
            with pytest.raises(StaleCaptureError):
                scale(X)
        assert scale(jnp.ones(2)).tolist() == [2.0, 2.0]  # a new shape traces afresh
    assert scale(X).tolist() == [0.0, 1.0, 2.0]  # uninstalled: JAX's behaviour, stale


def test_warn_mode_warns_once_per_function_and_value(rate: None) -> None:
    with guard.guarding("warn"), warnings.catch_warnings(record=True) as caught:
        scale = compiled_scale()
        scale(X)
        set_rate(2.0)
        warnings.simplefilter("always")
        assert scale(X).tolist() == [0.0, 1.0, 2.0]  # the stale result, as JAX returns it
        set_rate(3.0)
        assert scale(X).tolist() == [0.0, 1.0, 2.0]
    messages = [str(w.message) for w in caught if w.category is StaleCaptureWarning]
    assert len(messages) == 1
    assert "reused a trace that read RATE (a global, at " in messages[0]
    assert caught[0].filename == __file__  # where the program called the function


def test_retrace_mode_traces_again_and_counts(rate: None) -> None:
    outputs = []
    with guard.guarding("retrace"), warnings.catch_warnings(record=True) as caught:
        scale = compiled_scale()
        warnings.simplefilter("always")
        for value in (1.0, 2.0, 2.0, 3.0, 4.0):
            set_rate(value)
            outputs.append(scale(X).tolist()[1])
    assert outputs == [1.0, 2.0, 2.0, 3.0, 4.0]
    (entry,) = [s for s in guard.statistics() if s is scale._statistics]
    assert (entry.calls, entry.retraces, dict(entry.causes)) == (5, 3, {"RATE": 3})
    advice = [str(w.message) for w in caught if w.category is StaleCaptureWarning]
    assert advice == [
        f"RATE changed before 3 of 5 calls of compiled function {entry.label}, and each "
        "change traced and compiled it again; JC102: make RATE an argument of the compiled "
        "function instead of a global (`flake8-jax-closure fix` lifts it into a keyword-only "
        "parameter)"
    ]


# -- JAX's interface ----------------------------------------------------------------------------


@guard.guarding("error")
def test_lower_trace_eval_shape_and_cache(rate: None) -> None:
    scale = compiled_scale()
    assert "x * RATE" not in scale.lower(X).as_text()  # a JAX Lowered object
    assert type(scale.trace(X)).__name__ == "Traced"
    assert scale.eval_shape(X).shape == (3,)
    assert scale._cache_size() == 0  # lowering traces; only a call compiles and caches
    scale(X)
    assert scale._cache_size() == 1
    set_rate(2.0)
    with pytest.raises(StaleCaptureError):
        scale.lower(X)  # lowering the stale trace is as wrong as calling it
    scale.clear_cache()  # the fix JAX offers: trace again
    assert scale(X).tolist() == [0.0, 2.0, 4.0]


def test_wrapper_attributes_follow_the_function() -> None:
    with guard.guarding():
        scale = compiled_scale()
    assert scale.__wrapped__.__name__ == "scale"
    assert (scale.__name__, scale.__doc__) == ("scale", "Scales by RATE.")
    assert list(inspect.signature(scale).parameters) == ["x"]
    assert "PjitFunction" in repr(scale)


@guard.guarding("error")
def test_static_donated_and_pytree_arguments(rate: None) -> None:
    @functools.partial(jax.jit, static_argnames="power", donate_argnums=0)
    def step(state: dict[str, Any], power: int) -> dict[str, Any]:
        return {"w": state["w"] ** power * RATE, "n": state["n"] + 1}  # noqa: JC102 - what the guard is tested on

    def state() -> dict[str, Any]:
        return {"w": jnp.full(3, 2.0), "n": jnp.zeros((), jnp.int32)}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CPU cannot use donated buffers
        first = state()
        new = step(first, power=2)
        assert first["w"].is_deleted()  # donated, as without the guard
        assert new["w"].tolist() == [4.0, 4.0, 4.0] and int(new["n"]) == 1
        assert step(state(), power=3)["w"].tolist() == [8.0, 8.0, 8.0]
        set_rate(2.0)
        assert step(state(), power=4)["w"].tolist() == [32.0] * 3  # a new static value
        with pytest.raises(StaleCaptureError):
            step(state(), power=2)


@guard.guarding("error")
def test_grad_and_vmap_of_a_guarded_function(rate: None) -> None:
    with guard.guarding("error"):
        loss = jax.jit(lambda x: jnp.sum(x * RATE))  # noqa: JC102 - what the guard is tested on
    assert jax.grad(loss)(X).tolist() == [1.0, 1.0, 1.0]
    assert jax.vmap(loss)(jnp.ones((2, 3))).tolist() == [3.0, 3.0]
    set_rate(2.0)
    with pytest.raises(StaleCaptureError):
        jax.grad(loss)(X)
    with pytest.raises(StaleCaptureError):
        jax.vmap(loss)(jnp.ones((2, 3)))


def test_nested_guarded_functions(rate: None) -> None:
    with guard.guarding("error"):
        inner = jax.jit(lambda x: x * RATE)  # noqa: JC102 - what the guard is tested on
        outer = jax.jit(lambda x: inner(x) + 1)
        assert outer(X).tolist() == [1.0, 2.0, 3.0]
        set_rate(2.0)
        # The outer trace holds the inner one's values: it is stale too, and says which value.
        error = pytest.raises(StaleCaptureError, outer, X).value
        assert error.value == "RATE"
    with guard.guarding("retrace"):
        assert outer(X).tolist() == [1.0, 3.0, 5.0]
        assert inner(X).tolist() == [0.0, 2.0, 4.0]


@guard.guarding("error")
def test_traces_are_shared_as_jax_shares_them(rate: None) -> None:
    def scale(x: Any) -> Any:
        return x * RATE  # noqa: JC102 - what the guard is tested on

    with guard.guarding("error"):
        first = jax.jit(scale)
        first(X)
        second = jax.jit(scale)  # the same function: JAX reuses the first wrapper's trace
    assert second._cache_size() == 1
    set_rate(2.0)
    with pytest.raises(StaleCaptureError):
        second(X)


@guard.guarding("error")
def test_methods_compiled_with_a_static_self(rate: None) -> None:
    with guard.guarding("error"):

        class Model:
            @functools.partial(jax.jit, static_argnums=0)
            def apply(self, x: Any) -> Any:
                return x * RATE  # noqa: JC102 - what the guard is tested on

    model = Model()
    assert model.apply(X).tolist() == Model.apply(model, X).tolist() == [0.0, 1.0, 2.0]
    assert isinstance(Model.__dict__["apply"], GuardedFunction)


def test_decorator_factory_form() -> None:
    with guard.guarding("error"):

        @jax.jit
        def plain(x: Any) -> Any:
            return x

        decorate = jax.jit(static_argnames="n")  # type: ignore[call-overload]
        tiled = decorate(lambda x, n: jnp.tile(x, n))
    assert isinstance(plain, GuardedFunction) and isinstance(tiled, GuardedFunction)
    assert tiled(X, n=2).shape == (6,)


@guard.guarding("error")
def test_pmap_and_pjit(rate: None) -> None:
    with guard.guarding("error"):
        from jax.experimental.pjit import pjit

        mapped = jax.pmap(lambda x: x * RATE)  # noqa: JC102 - what the guard is tested on
        partitioned = pjit(lambda x: x * RATE)  # noqa: JC102 - what the guard is tested on
    assert mapped(X[None]).tolist() == [[0.0, 1.0, 2.0]]
    assert partitioned(X).tolist() == [0.0, 1.0, 2.0]
    assert type(mapped.lower(X[None])).__name__ == "Lowered"
    set_rate(2.0)
    for call in (lambda: mapped(X[None]), lambda: partitioned(X)):
        with pytest.raises(StaleCaptureError):
            call()


@guard.guarding("error")
def test_equinox_filter_jit_and_filter_pmap(rate: None) -> None:
    eqx = pytest.importorskip("equinox")

    @eqx.filter_jit
    def scale(x: Any, times: int) -> Any:
        return x * RATE * times

    mapped = eqx.filter_pmap(lambda x: x * RATE)

    class Module(eqx.Module):
        w: jax.Array

        @eqx.filter_jit
        def __call__(self, x: Any) -> Any:
            return self.w * x * RATE

    module = Module(jnp.ones(3))
    assert scale(X, 2).tolist() == [0.0, 2.0, 4.0]
    assert mapped(X[None]).tolist() == [[0.0, 1.0, 2.0]]
    assert module(X).tolist() == [0.0, 1.0, 2.0]
    set_rate(2.0)
    assert scale(X, 3).tolist() == [0.0, 6.0, 12.0]  # a new static argument: traced afresh
    for call in (lambda: scale(X, 2), lambda: mapped(X[None]), lambda: module(X)):
        with pytest.raises(StaleCaptureError):
            call()


def test_equinox_imported_after_install_is_guarded() -> None:
    pytest.importorskip("equinox")
    program = (
        "from flake8_jax_closure import guard\nguard.install()\nimport sys\n"
        "assert 'equinox' not in sys.modules\n"
        "import equinox as eqx\n"
        "print(type(eqx.filter_jit(lambda x: x)).__name__)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )
    assert completed.stdout.strip() == "GuardedFunction", completed.stderr


@guard.guarding("error")
def test_equal_bound_methods_share_traces_as_in_jax() -> None:
    class Model:
        def __init__(self) -> None:
            self.mul = 2.0

        def apply(self, x: Any) -> Any:
            return x * self.mul

    model = Model()
    first = jax.jit(model.apply)
    first(X)
    second = jax.jit(model.apply)  # an equal bound method, while the first wrapper lives
    assert second._cache_size() == 1
    model.mul = 3.0
    error = pytest.raises(StaleCaptureError, second, X).value
    assert (error.value, error.code) == ("self.mul", "JC104")
    assert jax.jit(Model().apply)(X).tolist() == [0.0, 2.0, 4.0]  # another object: traced


def test_a_rebuilt_bound_method_traces_afresh_as_in_jax() -> None:
    """Nothing of the guard keeps an earlier wrapper's trace alive: ``jax.jit(obj.method)``
    made again after the last one is gone starts empty, guarded or not."""
    import jax

    class Scaled:
        def __init__(self) -> None:
            self.mul = 1.0

        def calc(self, x: float) -> Any:
            return x * self.mul

    s = Scaled()
    outputs = []
    with guard.guarding("error"):
        for mul in (1.0, 2.0, 3.0):
            s.mul = mul
            outputs.append(float(jax.jit(s.calc)(3.0)))
    assert outputs == [3.0, 6.0, 9.0]


def test_a_function_compiled_again_shares_its_traces_as_in_jax() -> None:
    """``jax.jit(step)`` made again on the same function reuses its traces in JAX, and so
    under the guard (which then reports the stale value); a function wrapped with
    ``functools.wraps`` has traces of its own."""
    import functools

    import jax

    def step(x: Any) -> Any:
        return x * 2.0

    @functools.wraps(step)
    def wrapped(x: Any) -> Any:
        return step(x) + 1.0

    with guard.guarding("error"):
        first = jax.jit(step)
        assert float(first(1.0)) == 2.0
        assert float(jax.jit(wrapped)(1.0)) == 3.0
        again = jax.jit(step)
        assert float(again(1.0)) == 2.0
        assert again._probe is first._probe
