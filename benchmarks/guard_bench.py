"""What the runtime guard costs: per compiled call, per training step, per trace, in memory.

Each figure compares the same function compiled by JAX alone and by the guarded ``jax.jit``,
measured side by side: rounds alternate between the two (and which goes first); per call, the
best round of each is reported, for traces the median.

- a compiled call reading 6 captured values (a global, a global array, a closure variable, an
  item of a dict, a class attribute, an attribute of ``self``): microseconds added per call;
- a training step of a small MLP (a few milliseconds on a CPU): percent added;
- tracing that step, and its first call (trace and compile): percent added by watching the
  trace;
- tracing a neural ODE training step (an equinox MLP as the vector field, diffrax's Tsit5 with
  a PID controller, the gradient of a loss and an SGD update): a real model whose trace runs
  millions of Python calls in JAX, equinox and diffrax and a few in the program's own code.
  JAX's caches are cleared before each trace, so each is a first trace, as in a fresh process
  (needs ``pip install equinox diffrax``: the ``benchmark`` extra);
- memory: what the guard allocates for a function that captured a 64 MiB NumPy array (it keeps
  a fingerprint, never a copy).

``python benchmarks/guard_bench.py`` prints the table; ``--write`` also writes it to
``benchmarks/guard_results.md`` and into the README's guard section (a test checks that the two
agree). ``--quick`` runs fewer rounds (for a smoke test).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "guard_results.md"
README = ROOT / "README.md"
README_START = "<!-- guard benchmark: written by benchmarks/guard_bench.py --write -->\n"
README_END = "<!-- end of guard benchmark -->\n"

CALL_GOAL_US = 5.0
STEP_GOAL_PERCENT = 1.0
TRACE_GOAL_RATIO = 1.5

sys.path.insert(0, str(ROOT))
# One XLA thread on a CPU: CPU time then measures one thread's work, which other processes on
# the machine barely disturb (no effect on a GPU).
CPU_FLAGS = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
os.environ.setdefault("XLA_FLAGS", CPU_FLAGS)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from flake8_jax_closure import guard  # noqa: E402

REAL_JIT = jax.jit

# -- what the compiled functions capture --------------------------------------------------------

LR = 0.1
SCALE = jnp.linspace(0.0, 1.0, 8)
CONFIG = {"clip": 4.0, "weight_decay": 1e-4}


class Defaults:
    EPS = 1e-3


class Model:
    def __init__(self) -> None:
        self.mul = 2.0

    def step_function(self) -> Callable[[Any], Any]:
        bias = 0.5

        def step(x: Any) -> Any:
            scaled = x * self.mul * LR + SCALE + bias
            return jnp.clip(scaled, -CONFIG["clip"], CONFIG["clip"]) + Defaults.EPS

        return step


def mlp_step_function() -> Callable[..., Any]:
    """A fresh SGD step of a 3-layer MLP reading LR, CONFIG["weight_decay"] and ACTIVATION."""

    def loss(params: Any, x: Any, y: Any) -> Any:
        for w, b in params[:-1]:
            x = ACTIVATION(x @ w + b)
        w, b = params[-1]
        logits = x @ w + b
        error = jnp.mean((logits - y) ** 2)
        decay = sum(jnp.sum(w * w) for w, _ in params)
        return error + CONFIG["weight_decay"] * decay

    def step(params: Any, x: Any, y: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(params, x, y)
        params = jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
        return params, value

    return step


ACTIVATION = jax.nn.relu
# The step's size: a few milliseconds on a CPU by default; a GPU needs a larger one for a step
# of a few milliseconds there (``--batch``, ``--hidden``; ``gpu_check.sh`` sets them).
WIDTHS = (256, 512, 512, 10)
BATCH = 128


def set_step_size(batch: int, hidden: int) -> None:
    global WIDTHS, BATCH
    WIDTHS = (WIDTHS[0], hidden, hidden, WIDTHS[-1])
    BATCH = batch


def mlp_data() -> tuple[Any, Any, Any]:
    keys = jax.random.split(jax.random.PRNGKey(0), 8)
    params = [
        (
            jax.random.normal(keys[i], (n_in, n_out)) / np.sqrt(n_in),
            jnp.zeros(n_out),
        )
        for i, (n_in, n_out) in enumerate(zip(WIDTHS[:-1], WIDTHS[1:], strict=True))
    ]
    x = jax.random.normal(keys[6], (BATCH, WIDTHS[0]))
    y = jax.random.normal(keys[7], (BATCH, WIDTHS[-1]))
    return params, x, y


# -- measuring ----------------------------------------------------------------------------------


def guarded_jit(function: Callable[..., Any]) -> Any:
    with guard.guarding("error"):
        return jax.jit(function)


def clock() -> Callable[[], float]:
    """CPU time on a CPU (XLA's threads included): other processes on a shared machine barely
    move it. Wall time on an accelerator, whose work CPU time does not see."""
    return time.process_time if jax.default_backend() == "cpu" else time.perf_counter


def per_call(function: Callable[[], Any], calls: int) -> float:
    now = clock()
    start = now()
    for _ in range(calls):
        function()
    return (now() - start) / calls


def side_by_side(
    plain: Callable[[], Any], guarded: Callable[[], Any], calls: int, rounds: int
) -> tuple[float, float, float]:
    """Seconds per call of each in its best round, and the difference. The best round is the
    one least disturbed by other work on the machine; the rounds alternate, so both had the
    same chances."""
    plain_times: list[float] = []
    guarded_times: list[float] = []
    for number in range(rounds):
        order = [(plain, plain_times), (guarded, guarded_times)]
        if number % 2:
            order.reverse()
        for function, times in order:
            times.append(per_call(function, calls))
    best_plain, best_guarded = min(plain_times), min(guarded_times)
    return best_plain, best_guarded, best_guarded - best_plain


def call_overhead(rounds: int) -> tuple[float, float, float, int]:
    step = Model().step_function()
    plain, guarded = REAL_JIT(step), guarded_jit(step)
    x = jnp.ones(8)
    for function in (plain, guarded):
        function(x).block_until_ready()
    reads = len(guarded.reads)
    # Dispatch is asynchronous: a call returns before the computation ends, as in a program.
    return (*side_by_side(lambda: plain(x), lambda: guarded(x), 2000, rounds), reads)


def check_cost(rounds: int) -> float:
    step = Model().step_function()
    guarded = guarded_jit(step)
    guarded(jnp.ones(8)).block_until_ready()
    record = guarded._probe.records[0]
    args: tuple[Any, ...] = (jnp.ones(8),)
    kwargs: dict[str, Any] = {}
    return statistics.median(
        per_call(lambda: record.check(args, kwargs), 20000) for _ in range(rounds)
    )


def paired(
    plain: Callable[[], Any], guarded: Callable[[], Any], pairs: int
) -> tuple[float, float, float]:
    """For calls of milliseconds: one call of each, in alternating order, ``pairs`` times.
    Both see the same moment of the machine, so the median of the paired differences is the
    guard's cost, not the machine's mood. Medians of each, and of the differences."""
    now = clock()
    plain_times, guarded_times, differences = [], [], []
    for number in range(pairs):
        order = [(plain, plain_times), (guarded, guarded_times)]
        if number % 2:
            order.reverse()
        for function, times in order:
            start = now()
            function()
            times.append(now() - start)
        differences.append(guarded_times[-1] - plain_times[-1])
    return (
        statistics.median(plain_times),
        statistics.median(guarded_times),
        statistics.median(differences),
    )


def step_overhead(rounds: int) -> tuple[tuple[float, float, float], float]:
    """The guarded step against JAX's, and (the noise floor) JAX's against another copy of
    itself: the relative difference of the medians of paired steps."""
    params, x, y = mlp_data()
    step = mlp_step_function()
    plain, guarded, again = REAL_JIT(step), guarded_jit(step), REAL_JIT(mlp_step_function())
    for function in (plain, guarded, again):
        jax.block_until_ready(function(params, x, y))

    def run(function: Any) -> Callable[[], Any]:
        return lambda: jax.block_until_ready(function(params, x, y))

    measured = paired(run(plain), run(guarded), 100 * rounds)
    first, _, difference = paired(run(plain), run(again), 100 * rounds)
    return measured, difference / first


def traced_side_by_side(
    make_step: Callable[[], Callable[..., Any]],
    arguments: tuple[Any, ...],
    rounds: int,
    compile: bool = False,
    cold: bool = False,
) -> tuple[float, float]:
    """Median seconds of tracing a fresh step function (``.trace``), or of its first call
    (trace and compile), by JAX alone and with the guard installed, in alternating order.
    ``cold``: JAX's caches are emptied before each, as in a fresh process."""
    times: dict[str, list[float]] = {"plain": [], "guarded": []}
    for number in range(rounds):
        kinds = ["plain", "guarded"] if number % 2 == 0 else ["guarded", "plain"]
        for kind in kinds:
            step = make_step()
            if cold:
                jax.clear_caches()
            gc.collect()
            with guard.guarding("error") if kind == "guarded" else nullcontext():
                compiled = jax.jit(step)
                now = clock()
                start = now()
                if compile:
                    jax.block_until_ready(compiled(*arguments))
                else:
                    compiled.trace(*arguments)
                times[kind].append(now() - start)
    return statistics.median(times["plain"]), statistics.median(times["guarded"])


def trace_overhead(rounds: int, compile: bool) -> tuple[float, float]:
    """Median seconds of a first call (trace and compile) of a fresh MLP step function, or of
    tracing it alone (``.trace``)."""
    return traced_side_by_side(mlp_step_function, mlp_data(), rounds, compile=compile)


# -- a neural ODE: equinox and diffrax --------------------------------------------------------

ODE_SIZE, ODE_WIDTH, ODE_DEPTH, ODE_BATCH, ODE_TIMES = 2, 64, 2, 8, 16
ODE_STATIC: Any = None  # the model's parts that are not arrays (set by neural_ode_parts)


def neural_ode_parts() -> tuple[Callable[[], Callable[..., Any]], tuple[Any, ...]] | None:
    """A function making a fresh training step of a neural ODE, and its arguments; None
    without equinox and diffrax. The step reads the model's static part (``ODE_STATIC``) and
    the learning rate (``LR``), globals, from outside its arguments."""
    try:
        import diffrax
        import equinox as eqx
    except ImportError:
        return None

    class VectorField(eqx.Module):
        mlp: eqx.nn.MLP

        def __init__(self, key: Any) -> None:
            self.mlp = eqx.nn.MLP(
                ODE_SIZE,
                ODE_SIZE,
                ODE_WIDTH,
                ODE_DEPTH,
                activation=jax.nn.softplus,
                final_activation=jnp.tanh,
                key=key,
            )

        def __call__(self, t: Any, y: Any, args: Any) -> Any:
            return self.mlp(y)

    class NeuralODE(eqx.Module):
        field: VectorField

        def __call__(self, ts: Any, y0: Any) -> Any:
            solution = diffrax.diffeqsolve(
                diffrax.ODETerm(self.field),
                diffrax.Tsit5(),
                t0=ts[0],
                t1=ts[-1],
                dt0=ts[1] - ts[0],
                y0=y0,
                stepsize_controller=diffrax.PIDController(rtol=1e-3, atol=1e-6),
                saveat=diffrax.SaveAt(ts=ts),
            )
            return solution.ys

    global ODE_STATIC
    model_key, data_key = jax.random.split(jax.random.PRNGKey(0))
    params, ODE_STATIC = eqx.partition(NeuralODE(VectorField(model_key)), eqx.is_array)

    def make_step() -> Callable[..., Any]:
        def loss(params: Any, ts: Any, ys: Any) -> Any:
            model = eqx.combine(params, ODE_STATIC)
            predicted = jax.vmap(model, in_axes=(None, 0))(ts, ys[:, 0])
            return jnp.mean((ys - predicted) ** 2)

        def step(params: Any, ts: Any, ys: Any) -> Any:
            value, grads = jax.value_and_grad(loss)(params, ts, ys)
            params = jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
            return params, value

        return step

    ts = jnp.linspace(0.0, 1.0, ODE_TIMES)
    ys = jax.random.normal(data_key, (ODE_BATCH, ODE_TIMES, ODE_SIZE))
    return make_step, (params, ts, ys)


def neural_ode_trace_overhead(rounds: int) -> tuple[float, float] | None:
    parts = neural_ode_parts()
    if parts is None:
        return None
    make_step, arguments = parts
    REAL_JIT(make_step()).trace(*arguments)  # first-use work of equinox and diffrax, untimed
    return traced_side_by_side(make_step, arguments, rounds, cold=True)


BIG = np.ones(16 * 1024 * 1024, dtype=np.float32)  # 64 MiB


def big_reader(x: Any) -> Any:
    return x + BIG[:4].sum() * 0 + jnp.asarray(BIG).sum()


def memory() -> tuple[int, int, int]:
    """Peak bytes Python and NumPy allocate while a function capturing a 64 MiB array is
    traced and called 100 times, by JAX alone and guarded; and the bytes of its fingerprint."""
    peaks = []
    fingerprint_bytes = 0
    for kind in ("plain", "guarded"):

        def reader(x: Any) -> Any:
            return big_reader(x)

        gc.collect()
        tracemalloc.start()
        compiled = REAL_JIT(reader) if kind == "plain" else guarded_jit(reader)
        x = jnp.ones(4)
        for _ in range(100):
            compiled(x).block_until_ready()
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        if kind == "guarded":
            fingerprint_bytes = sum(
                len(read.expected_fingerprint[2]) for read in compiled.reads if read.expected is BIG
            )
    return peaks[0], peaks[1], fingerprint_bytes


def device() -> str:
    first = jax.devices()[0]
    kind = str(getattr(first, "device_kind", first.platform))
    return first.platform if kind.lower() == first.platform else f"{first.platform}: {kind}"


def run(rounds: int) -> str:
    plain_call, guarded_call, added_call, reads = call_overhead(rounds)
    check = check_cost(rounds)
    (plain_step, guarded_step, added_step), noise = step_overhead(rounds)
    plain_trace, guarded_trace = trace_overhead(max(3, rounds // 3), compile=False)
    plain_first, guarded_first = trace_overhead(max(3, rounds // 3), compile=True)
    ode = neural_ode_trace_overhead(max(3, rounds // 3))
    plain_peak, guarded_peak, fingerprint = memory()
    added_us = added_call * 1e6
    step_percent = 100 * added_step / plain_step
    trace_percent = 100 * (guarded_trace - plain_trace) / plain_trace
    first_percent = 100 * (guarded_first - plain_first) / plain_first
    extra_mib = (guarded_peak - plain_peak) / 2**20

    def percent(value: float) -> str:
        return f"{value:+.1f}%" if abs(value) >= 0.05 else "0.0%"

    def met(ok: bool) -> str:
        return "yes" if ok else "no"

    lines = [
        f"Device: {device()}; JAX {jax.__version__}; Python {platform.python_version()}; "
        f"{os.cpu_count()} cores; best of {rounds} interleaved rounds (traces: medians); "
        f"{'CPU' if clock() is time.process_time else 'wall-clock'} time"
        f"{'; one XLA thread' if os.environ.get('XLA_FLAGS') == CPU_FLAGS else ''}.",
        "",
        "| measure | JAX alone | guarded | added | goal | met |",
        "| --- | ---: | ---: | ---: | --- | --- |",
        f"| compiled call reading {reads} captured values | {plain_call * 1e6:.2f} µs | "
        f"{guarded_call * 1e6:.2f} µs | {added_us:+.2f} µs | at most +{CALL_GOAL_US:g} µs | "
        f"{met(added_us <= CALL_GOAL_US)} |",
        f"| the guard's check of those {reads} values alone | | {check * 1e6:.2f} µs | | | |",
        f"| MLP training step ({'-'.join(map(str, WIDTHS))}, batch {BATCH}; medians of "
        f"{100 * rounds} paired steps) | "
        f"{plain_step * 1e3:.2f} ms | {guarded_step * 1e3:.2f} ms | {percent(step_percent)} | "
        f"at most +{STEP_GOAL_PERCENT:g}% | {met(step_percent <= STEP_GOAL_PERCENT)} |",
        f"| the same step, JAX alone against another copy of itself (noise) | | | "
        f"{percent(100 * noise)} | | |",
        f"| the guard's work in that step: a call's added time over the step | | | "
        f"{100 * added_call / plain_step:+.2f}% | | |",
        f"| tracing that step (`.trace`) | {plain_trace * 1e3:.1f} ms | "
        f"{guarded_trace * 1e3:.1f} ms | {percent(trace_percent)} | | |",
        f"| first call of that step: trace and compile | {plain_first * 1e3:.0f} ms | "
        f"{guarded_first * 1e3:.0f} ms | {percent(first_percent)} | | |",
        ode_row(ode, met),
        f"| peak memory: a captured 64 MiB NumPy array, traced and called 100 times | "
        f"{plain_peak / 2**20:.1f} MiB | {guarded_peak / 2**20:.1f} MiB | "
        f"{extra_mib:+.2f} MiB (fingerprint: {fingerprint} bytes) | no copy | "
        f"{met(extra_mib < 1)} |",
        "",
    ]
    return "\n".join(lines)


def ode_row(measured: tuple[float, float] | None, met: Callable[[bool], str]) -> str:
    what = (
        f"tracing a neural ODE training step (equinox MLP {ODE_SIZE}-{ODE_WIDTH}x{ODE_DEPTH}-"
        f"{ODE_SIZE} as the vector field, diffrax Tsit5 with a PID controller, batch "
        f"{ODE_BATCH}, {ODE_TIMES} saved times; gradient and SGD update; `.trace` after "
        "`jax.clear_caches()`)"
    )
    goal = f"at most ×{TRACE_GOAL_RATIO:g}"
    if measured is None:
        return f"| {what} | | | not measured: `pip install equinox diffrax` | {goal} | |"
    plain, guarded = measured
    ratio = guarded / plain
    return (
        f"| {what} | {plain:.2f} s | {guarded:.2f} s | ×{ratio:.2f} | {goal} | "
        f"{met(ratio <= TRACE_GOAL_RATIO)} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    parser.add_argument("--quick", action="store_true", help="3 rounds: a smoke test")
    parser.add_argument(
        "--write", action="store_true", help="write benchmarks/guard_results.md and the README"
    )
    parser.add_argument(
        "--batch", type=int, default=BATCH, help=f"MLP step: batch size (default {BATCH})"
    )
    parser.add_argument(
        "--hidden",
        type=int,
        default=WIDTHS[1],
        help=f"MLP step: width of its two hidden layers (default {WIDTHS[1]})",
    )
    args = parser.parse_args()
    set_step_size(args.batch, args.hidden)
    text = run(3 if args.quick else args.rounds)
    sys.stdout.write(text)
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")
        readme = README.read_text(encoding="utf-8")
        start, end = readme.index(README_START), readme.index(README_END)
        readme = readme[: start + len(README_START)] + text + readme[end:]
        README.write_text(readme, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
