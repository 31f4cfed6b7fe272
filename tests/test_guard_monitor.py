"""The trace watch of CPython 3.12 and later (``sys.monitoring``): library code leaves the
watch for good, user code is followed as before, and other tools keep working beside it.

Counts, not timings: ``benchmarks/guard_bench.py`` measures what a watched trace costs.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("jax")
pytestmark = [
    pytest.mark.jax,
    pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is CPython 3.12+"),
]

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from flake8_jax_closure import guard  # noqa: E402
from flake8_jax_closure.guard import StaleCaptureError  # noqa: E402
from flake8_jax_closure.runtime.guard import monitor, tracing  # noqa: E402

X = jnp.arange(3.0)
SCALE = 2.0


@pytest.fixture(autouse=True)
def guarded() -> Iterator[None]:
    with guard.guarding("error"):
        yield


def scaled(x: Any) -> Any:
    for _ in range(5):
        x = jnp.sin(x) * SCALE  # noqa: JC102 - what the guard is tested on
    return x


def test_the_watch_is_the_monitor() -> None:
    watch = tracing._monitor()
    assert watch is not None
    assert sys.monitoring.get_tool(watch.tool) == "flake8-jax-closure guard"


def test_library_code_raises_no_event_after_its_first_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    watch = tracing._monitor()
    assert watch is not None
    starts: list[str] = []
    real = watch._on_start

    def counting(code: Any, offset: int) -> Any:
        starts.append(code.co_filename)
        return real(code, offset)

    # The callback is looked up when the events are set: register the counting one.
    sys.monitoring.register_callback(watch.tool, sys.monitoring.events.PY_START, counting)
    try:
        jax.jit(lambda x: scaled(x)).trace(X)
        first = len(starts)
        starts.clear()
        jax.jit(lambda x: scaled(x)).trace(X)  # a new function: JAX traces it afresh
    finally:
        sys.monitoring.register_callback(watch.tool, sys.monitoring.events.PY_START, real)
    library = [name for name in starts if name != __file__]
    # The first trace started JAX's own functions, once each. In the second, only those that
    # also ran between the two traces (where CPython dropped the events) start again.
    assert first > 100
    assert len(library) * 5 < first
    assert starts.count(__file__) == 2  # the lambda and ``scaled``, both followed


def stale_after_setting(compiled: Any, name: str, value: float) -> StaleCaptureError:
    """What ``compiled``'s second call raises once the global ``name`` is set to ``value``
    after its first (the global is set back)."""
    compiled(X)
    before = globals()[name]
    globals()[name] = value
    try:
        with pytest.raises(StaleCaptureError) as caught:
            compiled(X)
    finally:
        globals()[name] = before
    return caught.value


def test_a_change_is_caught_through_the_monitor() -> None:
    assert stale_after_setting(jax.jit(scaled), "SCALE", 3.0).value == "SCALE"


def test_another_tracer_keeps_seeing_frames() -> None:
    seen: list[str] = []

    def debugger(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename == __file__:
            seen.append(frame.f_code.co_name)
        return None

    sys.settrace(debugger)
    try:
        compiled = jax.jit(lambda x: scaled(x))
        compiled.trace(X)
    finally:
        sys.settrace(None)
    assert "scaled" in seen
    assert {read.name for read in compiled.reads} == {"SCALE", "scaled"}


def test_frames_of_another_thread_are_not_followed(followed_frames: list[str]) -> None:
    # A thread with no open session runs user code while this one traces.
    running, done = threading.Event(), threading.Event()

    def elsewhere() -> None:
        running.set()
        while not done.is_set():
            busy_work()

    def traced(x: Any) -> Any:
        running.wait()
        return scaled(x)

    worker = threading.Thread(target=elsewhere)
    worker.start()
    try:
        jax.jit(traced).trace(X)
    finally:
        done.set()
        worker.join()
    assert "busy_work" not in followed_frames
    assert {"traced", "scaled"} <= set(followed_frames)


def busy_work() -> int:
    return sum(range(10))


def test_no_free_tool_id_leaves_the_settrace_watch(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = {tool: "another tool" for tool in monitor._PREFERRED_IDS}
    monkeypatch.setattr(sys.monitoring, "get_tool", taken.get)
    assert monitor.make_monitor(lambda code: True, lambda: None) is None


RATE = 2.0


def rates() -> Iterator[float]:
    while True:
        yield RATE  # noqa: JC102 - what the guard is tested on


def test_a_generator_resumed_in_a_trace_is_followed() -> None:
    # Started before the trace: each resume inside it is a frame the trace ran, as with the
    # trace function's ``call`` event on every resume.
    source = rates()
    next(source)

    @jax.jit
    def scaled_by_rate(x: Any) -> Any:
        return x * next(source)

    assert stale_after_setting(scaled_by_rate, "RATE", 3.0).value == "RATE"


def test_the_tool_id_is_given_back_when_the_guard_is_uninstalled() -> None:
    jax.jit(lambda x: scaled(x)).trace(X)
    watch = tracing._monitor()
    assert watch is not None
    guard.uninstall()
    try:
        assert sys.monitoring.get_tool(watch.tool) is None
        assert tracing._monitor() is not watch  # a new one when a trace is watched again
    finally:
        guard.install("error")
