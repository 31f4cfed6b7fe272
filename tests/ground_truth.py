"""Runnable programs whose staleness JAX itself decides, stale and safe alike.

Each program combines a *capture* (where the compiled code reads a value from, and the route
by which the program changes it) with a *timing shape* (where the calls of the compiled object
and the change fall: in sequence, in a loop, in a function run twice, in an exception handler,
around a retrace, under ``vmap``, across a notebook-style redefinition, through a factory).
Hand-written scenarios add what does not factor that way (lazy initialisation, set-up methods,
caches, subclasses, static ``self`` hashed by value), each with a safe twin and a stale twin.

A program is *stale* when its compiled output differs from its ``jax.disable_jit()`` output
(see ``run_programs.py``). That verdict comes from running it, never from the generator: the
generator's own ``intended`` verdict only helps to read a failure. ``ground_truth_verdicts.json``
records JAX's verdicts so the linter can be compared with all of them in the fast test run;
the slow test runs every program again under JAX and checks the record.

    python tests/ground_truth.py --record     # run all programs under JAX, rewrite the record
    python tests/ground_truth.py --record --new  # run only the programs the record lacks
    python tests/ground_truth.py --show LABEL # print one program
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECORD = HERE / "ground_truth_verdicts.json"

PRELUDE = """\
import dataclasses
import functools
import types
from functools import partial

import numpy as np
import jax
import jax.numpy as jnp


def show(out):
    print(np.round(np.asarray(out, dtype=np.float64), 4).tolist())

"""


@dataclass(frozen=True)
class Capture:
    """Where compiled code reads a value, and how the program changes it.

    ``define`` is module code that makes the value, the compiled object and any helpers;
    ``call`` calls the compiled object on ``{x}``; ``change`` is one statement setting the value
    to ``{v}``, valid at module level and inside a function."""

    name: str
    define: str
    call: str
    change: str
    # The definition can run again (a notebook cell run twice) making a new compiled object.
    redefinable: bool = True


def _global_function(body: str) -> str:
    return f"@jax.jit\ndef fast(x):\n    return {body}\n"


# Imported where a program uses it: the other programs run without Flax.
_NNX = "from flax import nnx\n\n"

_MODEL = (
    "class Model:\n    def __init__(self, mul):\n        self.mul = mul\n\n"
    "    def calc(self, x):\n        return x * self.mul\n\n"
    "    def set_mul(self, v):\n        self.mul = v\n\n\n"
)
_STATIC = (
    "class Model:\n    def __init__(self, mul):\n        self.mul = mul\n\n"
    "    @partial(jax.jit, static_argnums=0)\n"
    "    def calc(self, x):\n        return x * self.mul\n\n"
    "    def set_mul(self, v):\n        self.mul = v\n\n\nmodel = Model(1.0)\n"
)


CAPTURES: tuple[Capture, ...] = (
    Capture(
        "global-setter",
        "VALUE = 1.0\n\n\n" + _global_function("x * VALUE") + "\n\n"
        "def set_value(v):\n    global VALUE\n    VALUE = v\n",
        "fast({x})",
        "set_value({v})",
    ),
    Capture(
        "global-jit-call",
        "VALUE = 1.0\n\n\ndef step(x):\n    return x * VALUE\n\n\nfast = jax.jit(step)\n\n\n"
        "def set_value(v):\n    global VALUE\n    VALUE = v\n",
        "fast({x})",
        "set_value({v})",
    ),
    Capture(
        "global-lambda",
        "VALUE = 1.0\nfast = jax.jit(lambda x: x + VALUE)\n\n\n"
        "def set_value(v):\n    global VALUE\n    VALUE = v\n",
        "fast({x})",
        "set_value({v})",
    ),
    Capture(
        "closure-nonlocal",
        "def build():\n    value = 1.0\n\n    @jax.jit\n"
        "    def fast(x):\n        return x * value\n"
        "\n    def set_value(v):\n        nonlocal value\n        value = v\n\n"
        "    return fast, set_value\n\n\nfast, set_value = build()\n",
        "fast({x})",
        "set_value({v})",
        redefinable=False,
    ),
    Capture(
        "dict-item",
        'CONFIG = {"scale": 1.0}\n\n\n' + _global_function('x * CONFIG["scale"]'),
        "fast({x})",
        'CONFIG["scale"] = {v}',
    ),
    Capture(
        "list-item",
        "SCALES = [1.0]\n\n\n" + _global_function("x * SCALES[0]"),
        "fast({x})",
        "SCALES[0] = {v}",
    ),
    Capture(
        "numpy-in-place",
        "OFFSET = np.ones(3, dtype=np.float32)\n\n\n" + _global_function("x * OFFSET.sum()"),
        "fast({x})",
        "OFFSET[...] = {v}",
    ),
    Capture(
        "namespace-attribute",
        "cfg = types.SimpleNamespace(scale=1.0)\n\n\n" + _global_function("x * cfg.scale"),
        "fast({x})",
        "cfg.scale = {v}",
    ),
    Capture(
        "class-attribute",
        "class Hyper:\n    lr = 1.0\n\n\n" + _global_function("x * Hyper.lr"),
        "fast({x})",
        "Hyper.lr = {v}",
    ),
    Capture(
        "class-attribute-setattr",
        "class Hyper:\n    lr = 1.0\n\n\n" + _global_function("x * Hyper.lr"),
        "fast({x})",
        'setattr(Hyper, "lr", {v})',
    ),
    Capture(
        "class-attribute-classmethod",
        "class Hyper:\n    lr = 1.0\n\n"
        "    @classmethod\n    def set_lr(cls, v):\n        cls.lr = v\n"
        "\n\n" + _global_function("x * Hyper.lr"),
        "fast({x})",
        "Hyper.set_lr({v})",
    ),
    Capture(
        "through-helper",
        "VALUE = 1.0\n\n\ndef scaled(x):\n    return x * VALUE\n\n\n"
        + _global_function("scaled(x) + 1.0")
        + "\n\ndef set_value(v):\n    global VALUE\n    VALUE = v\n",
        "fast({x})",
        "set_value({v})",
    ),
    Capture(
        "fori-body",
        "VALUE = 1.0\n\n\ndef body(i, x):\n    return x * VALUE\n\n\n"
        + _global_function("jax.lax.fori_loop(0, 2, body, x)")
        + "\n\ndef set_value(v):\n    global VALUE\n    VALUE = v\n",
        "fast({x})",
        "set_value({v})",
    ),
    Capture(
        "scan-body",
        "VALUE = 1.0\n\n\ndef body(carry, x):\n    return carry + x * VALUE, None\n\n\n"
        + _global_function("jax.lax.scan(body, 0.0, x)[0]")
        + "\n\ndef set_value(v):\n    global VALUE\n    VALUE = v\n",
        "fast({x})",
        "set_value({v})",
    ),
    Capture(
        "tree-map-function",
        "VALUE = 1.0\n\n\ndef leaf(x):\n    return x * VALUE\n\n\n"
        + _global_function("jax.tree_util.tree_map(leaf, x)")
        + "\n\ndef set_value(v):\n    global VALUE\n    VALUE = v\n",
        "fast({x})",
        "set_value({v})",
    ),
    Capture(
        "vmap-inside",
        "VALUE = 1.0\n\n\ndef per_item(x):\n    return x * VALUE\n\n\n"
        + _global_function("jax.vmap(per_item)(x)")
        + "\n\ndef set_value(v):\n    global VALUE\n    VALUE = v\n",
        "fast({x})",
        "set_value({v})",
    ),
    # The JAX FAQ's example: a bound method compiled in call form, the attribute assigned by
    # code holding the instance.
    Capture(
        "bound-method-assigned",
        _MODEL + "model = Model(1.0)\nfast = jax.jit(model.calc)\n",
        "fast({x})",
        "model.mul = {v}",
    ),
    Capture(
        "bound-method-setter",
        _MODEL + "model = Model(1.0)\nfast = jax.jit(model.calc)\n",
        "fast({x})",
        "model.set_mul({v})",
    ),
    Capture(
        "bound-method-setattr",
        _MODEL + "model = Model(1.0)\nfast = jax.jit(model.calc)\n",
        "fast({x})",
        'setattr(model, "mul", {v})',
    ),
    Capture(
        "bound-method-callback",
        _MODEL + "model = Model(1.0)\nfast = jax.jit(model.calc)\n\n\n"
        "def on_epoch_end(trainee, v):\n    trainee.mul = v\n",
        "fast({x})",
        "on_epoch_end(model, {v})",
    ),
    Capture(
        "bound-method-other-object",
        _MODEL
        + "class Schedule:\n    def __init__(self, target):\n        self.target = target\n\n"
        "    def step(self, v):\n        self.target.mul = v\n\n\n"
        "model = Model(1.0)\nschedule = Schedule(model)\nfast = jax.jit(model.calc)\n",
        "fast({x})",
        "schedule.step({v})",
    ),
    Capture(
        "static-self-assigned",
        _STATIC.replace("    def set_mul(self, v):\n        self.mul = v\n\n\n", "\n"),
        "model.calc({x})",
        "model.mul = {v}",
    ),
    Capture(
        "static-self-setter",
        _STATIC,
        "model.calc({x})",
        "model.set_mul({v})",
    ),
    Capture(
        "closure-holding-self",
        "class Trainer:\n    def __init__(self, lr):\n        self.lr = lr\n"
        "        self.step = jax.jit(lambda x: x * self.lr)\n\n\ntrainer = Trainer(1.0)\n",
        "trainer.step({x})",
        "trainer.lr = {v}",
    ),
    # Flax NNX's ``nnx.jit`` caches its trace like ``jax.jit``, also through ``nnx.grad`` and
    # ``nnx.value_and_grad``, inside the compiled body or wrapped by it.
    Capture(
        "nnx-jit-global",
        _NNX + "VALUE = 1.0\n\n\n@nnx.jit\ndef fast(x):\n    return x * VALUE\n\n\n"
        "def set_value(v):\n    global VALUE\n    VALUE = v\n",
        "fast({x})",
        "set_value({v})",
    ),
    Capture(
        "nnx-jit-closure-nonlocal",
        _NNX + "def build():\n    value = 1.0\n\n    @nnx.jit\n"
        "    def fast(x):\n        return x * value\n"
        "\n    def set_value(v):\n        nonlocal value\n        value = v\n\n"
        "    return fast, set_value\n\n\nfast, set_value = build()\n",
        "fast({x})",
        "set_value({v})",
        redefinable=False,
    ),
    Capture(
        "nnx-jit-grad-inside",
        _NNX + "VALUE = 1.0\n\n\ndef loss(x):\n    return jnp.sum(x * x) * VALUE\n\n\n"
        "@nnx.jit\ndef fast(x):\n    return nnx.grad(loss)(x)\n\n\n"
        "def set_value(v):\n    global VALUE\n    VALUE = v\n",
        "fast({x})",
        "set_value({v})",
    ),
    Capture(
        "nnx-jit-value-and-grad-wrapped",
        _NNX + "VALUE = 1.0\n\n\ndef loss(x):\n    return jnp.sum(x * x) * VALUE\n\n\n"
        "fast = nnx.jit(nnx.value_and_grad(loss))\n\n\n"
        "def set_value(v):\n    global VALUE\n    VALUE = v\n",
        "fast({x})[1]",
        "set_value({v})",
    ),
)


@dataclass(frozen=True)
class Shape:
    """Where calls and the change fall; ``driver`` has ``{call:X}`` and ``{change:V}`` holes."""

    name: str
    driver: str
    intended_stale: bool
    needs_redefinable: bool = False


X = "jnp.arange(3.0)"
SHAPES: tuple[Shape, ...] = (
    Shape("sequence", "show({call:x}); {change:2.0}; show({call:x})", True),
    Shape("change-first", "{change:2.0}; show({call:x}); show({call:x})", False),
    Shape("change-last", "show({call:x}); {change:2.0}; print('done')", False),
    Shape("loop", "for v in (1.0, 2.0, 3.0):\n    {change:v}\n    show({call:x})", True),
    Shape(
        "function-run-twice",
        "def epoch(v):\n    {change:v}\n    show({call:x})\n\n\nepoch(2.0)\nepoch(3.0)",
        True,
    ),
    Shape(
        "function-run-once",
        "def run(v):\n    {change:v}\n    show({call:x})\n    show({call:x})\n\n\nrun(2.0)",
        False,
    ),
    Shape(
        "try-except",
        "try:\n    show({call:x})\n    raise RuntimeError('diverged')\n"
        "except RuntimeError:\n    {change:2.0}\n    show({call:x})",
        True,
    ),
    Shape(
        "exclusive-branches",
        "if len(str(x)) > 0:\n    {change:2.0}\n    show({call:x})\nelse:\n    show({call:x})",
        False,
    ),
    Shape(
        "new-shape-after",
        "show({call:jnp.arange(3.0)}); {change:2.0}; show({call:jnp.arange(5.0)})",
        False,
    ),
    Shape(
        "same-shape-after",
        "show({call:jnp.arange(3.0)}); {change:2.0}; show({call:jnp.arange(3.0) + 1.0})",
        True,
    ),
    Shape(
        "redefined-after",
        "show({call:x}); {change:2.0}\n{define}\nshow({call:x})",
        False,
        needs_redefinable=True,
    ),
)


@dataclass(frozen=True)
class Program:
    label: str
    source: str
    intended_stale: bool


def _fill(driver: str, capture: Capture) -> str:
    """Fill the driver's holes: ``{call:ARG}`` and ``{change:VALUE}`` run to the closing brace."""
    out, rest = [], driver
    while "{" in rest:
        before, _, after = rest.partition("{")
        out.append(before)
        hole, _, rest = after.partition("}")
        kind, _, argument = hole.partition(":")
        if kind == "call":
            out.append(capture.call.format(x=argument))
        elif kind == "change":
            out.append(capture.change.format(v=argument))
        elif kind == "define":
            out.append(capture.define)
        else:
            raise ValueError(hole)
    out.append(rest)
    return "".join(out)


def _combined(capture: Capture, shape: Shape) -> Program:
    driver = _fill(shape.driver, capture)
    source = PRELUDE + "\n" + capture.define + "\n\n" + _main("x = jnp.arange(3.0)\n" + driver)
    return Program(f"{capture.name}--{shape.name}", source, shape.intended_stale)


def _main(driver: str) -> str:
    """The driver runs as a script's main block: importers of the module never run it."""
    return 'if __name__ == "__main__":\n' + textwrap.indent(driver.strip("\n") + "\n", "    ")


def _scenario(label: str, body: str, stale: bool) -> Program:
    """``body``: definitions, then ``# main`` and the driver."""
    definitions, _, driver = textwrap.dedent(body).partition("# main\n")
    return Program(label, PRELUDE + "\n" + definitions.lstrip() + _main(driver), stale)


# Timing shapes that do not factor into a capture and a driver; each pairs a safe twin with a
# stale one that differs in when the change runs.
_LAZY = """
class Estimator:
    def __init__(self):
        self.scale = None

    def fit(self, data):
        self.scale = float(data.std())

    @partial(jax.jit, static_argnums=0)
    def predict(self, x):
        return x * self.scale


# main
est = Estimator()
x = jnp.arange(3.0)
est.fit(jnp.arange(4.0))
show(est.predict(x))
"""

_GUARDED = """
class Scaled:
    def __init__(self):
        self.scale = None

    @partial(jax.jit, static_argnums=0)
    def apply(self, x):
        if self.scale is None:
            self.scale = 2.0
        return x * self.scale

    def backoff(self):
        self.scale = self.scale / 2


# main
s = Scaled()
x = jnp.arange(3.0)
show(s.apply(x))
"""

_SETUP = """
class Game:
    def __init__(self):
        self.difficulty = 1.0

    def setup(self, difficulty):
        self.difficulty = difficulty

    @partial(jax.jit, static_argnums=0)
    def reward(self, x):
        return x * self.difficulty


# main
game = Game()
x = jnp.arange(3.0)
game.setup(2.0)
show(game.reward(x))
"""

_HASHED = """
class Hashed:
    def __init__(self, mul):
        self.mul = mul

    def __hash__(self):
        return hash(self.mul)

    def __eq__(self, other):
        return isinstance(other, Hashed) and self.mul == other.mul

    @partial(jax.jit, static_argnums=0)
    def calc(self, x):
        return x * self.mul


# main
h = Hashed(1.0)
x = jnp.arange(3.0)
show(h.calc(x))
"""

_FROZEN = """
@dataclasses.dataclass(frozen=True)
class Frozen:
    mul: float

    @partial(jax.jit, static_argnums=0)
    def calc(self, x):
        return x * self.mul


# main
f = Frozen(1.0)
x = jnp.arange(3.0)
show(f.calc(x))
"""

_SUBCLASS = """
class Base:
    def __init__(self):
        self.scale = 1.0

    @partial(jax.jit, static_argnums=0)
    def apply(self, x):
        return x * self.scale


class Decaying(Base):
    def decay(self):
        self.scale = self.scale * 0.5


# main
model = Decaying()
x = jnp.arange(3.0)
show(model.apply(x))
"""

_GETATTR = """
class Policy:
    def __init__(self):
        self.temperature = 1.0
        self.act = jax.jit(lambda x: x * self.temperature)

    def set_temperature(self, v):
        self.temperature = v


# main
policy = Policy()
x = jnp.arange(3.0)
show(policy.act(x))
"""

_FACTORY_SHARED = """
VALUE = 1.0


def step(x):
    return x * VALUE


def make():
    return jax.jit(step)


# main
x = jnp.arange(3.0)
show(make()(x))
"""

_FACTORY_FRESH = """
VALUE = 1.0


def make():
    @jax.jit
    def step(x):
        return x * VALUE

    return step


# main
x = jnp.arange(3.0)
show(make()(x))
"""

_FACTORY_CACHED = """
VALUE = 1.0


@functools.lru_cache(maxsize=None)
def make():
    @jax.jit
    def step(x):
        return x * VALUE

    return step


# main
x = jnp.arange(3.0)
show(make()(x))
"""

_LOOP_DEF = """
# main
VALUE = 1.0
step = None
x = jnp.arange(3.0)
for v in (1.0, 2.0, 3.0):
    VALUE = v
    if step is None:
        @jax.jit
        def step(x):
            return x * VALUE
    show(step(x))
"""

_LOOP_DEF_FRESH = """
# main
VALUE = 1.0
x = jnp.arange(3.0)
for v in (1.0, 2.0, 3.0):
    VALUE = v

    @jax.jit
    def step(x):
        return x * VALUE

    show(step(x))
"""

_REBUILT_BOUND = """
class Model:
    def __init__(self):
        self.mul = 1.0

    def calc(self, x):
        return x * self.mul


# main
model = Model()
x = jnp.arange(3.0)
for v in (1.0, 2.0, 3.0):
    model.mul = v
    show(jax.jit(model.calc)(x))
"""

_PARAMETER = """
class Sampler:
    def __init__(self):
        self.beta = 1.0
        self.sample = jax.jit(lambda x: x * self.beta)


def anneal(sampler, rate):
    sampler.beta = sampler.beta * rate


# main
sampler = Sampler()
x = jnp.arange(3.0)
show(sampler.sample(x))
"""

_OPTIMIZER = """
class Optimizer:
    def __init__(self):
        self.lr = 1.0

    def decay(self):
        self.lr = self.lr * 0.5


class Trainer:
    def __init__(self):
        self.opt = Optimizer()
        self.update = jax.jit(lambda x: x * self.opt.lr)


# main
trainer = Trainer()
x = jnp.arange(3.0)
show(trainer.update(x))
"""

_COUNTER = """
class Counter:
    def __init__(self):
        self.n = 0

    def count(self, x):
        self.n += 1
        return x * self.n


# main
counter = Counter()
fast_count = jax.jit(counter.count)
x = jnp.arange(3.0)
show(fast_count(x))
"""

_LAZY_STEP = """
class Experiment:
    def __init__(self):
        self._scale = None
        self._next = 2.0
        self._update = jax.jit(self._update_fn)

    def _initialize(self):
        self._scale = self._next
        self._next = self._next + 1.0

    def _update_fn(self, x):
        return x * self._scale

    def step(self, x):
        if self._scale is None:
            self._initialize()
        return self._update(x)

    def reset(self):
        self._scale = None


# main
exp = Experiment()
x = jnp.arange(3.0)
show(exp.step(x))
"""

_BRANCH_DEF = """
# main
VALUE = 1.0
x = jnp.arange(3.0)
for v in (1.0, 2.0, 3.0):
    VALUE = v
    if len(str(v)) > 0:

        @jax.jit
        def step(x):
            return x * VALUE

        show(step(x))
"""

_TRY_DEF = """
# main
VALUE = 1.0
x = jnp.arange(3.0)
for v in (1.0, 2.0, 3.0):
    VALUE = v
    try:

        @jax.jit
        def step(x):
            return x * VALUE

        show(step(x))
    except ValueError:
        pass
"""

_LOCAL_CHAIN = """
class Model:
    def __init__(self):
        self.mul = 1.0

    def calc(self, x):
        return x * self.mul


def describe(v):
    record = types.SimpleNamespace(inner=types.SimpleNamespace(mul=0.0))
    record.inner.mul = v
    return record


# main
model = Model()
fast = jax.jit(model.calc)
x = jnp.arange(3.0)
show(fast(x))
describe(2.0)
show(fast(x))
"""

_HOST_CALLBACK = """
VALUE = 1.0


def host_scale(x):
    return (np.asarray(x) * VALUE).astype(np.float32)


@jax.jit
def fast(x):
    return jax.pure_callback(host_scale, jax.ShapeDtypeStruct(x.shape, x.dtype), x)


# main
x = jnp.arange(3.0)
show(fast(x))
VALUE = 2.0
show(fast(x))
"""


# A compiled function calling another: tracing ``outer`` traces ``inner`` inline (or reuses
# ``inner``'s own cached trace for the same shapes), so what ``inner`` reads is baked into
# ``outer``'s compiled code too.
_NESTED_GLOBAL = """
VALUE = 1.0


def set_value(v):
    global VALUE
    VALUE = v


@jax.jit
def inner(x):
    return x * VALUE


@jax.jit
def outer(x):
    return inner(x) + 1.0


# main
x = jnp.arange(3.0)
"""

_NESTED_CLOSURE = """
def make():
    scale = 1.0

    @jax.jit
    def inner(x):
        return x * scale

    @jax.jit
    def outer(x):
        return inner(x) + 1.0

    def set_scale(v):
        nonlocal scale
        scale = v

    return outer, set_scale


# main
outer, set_scale = make()
x = jnp.arange(3.0)
show(outer(x))
"""

# A global rebound at module level between ``nnx.jit`` calls, and Flax's other spellings.
_NNX_GLOBAL = """
from flax import nnx

SCALE = 1.0


@nnx.jit
def fast(x):
    return x * SCALE


@nnx.jit(static_argnums=1)
def power(x, k):
    return x**k * SCALE


# main
x = jnp.arange(3.0)
"""

_NNX_IMPORTED_JIT = """
import flax.nnx
from flax.nnx import jit

SCALE = 1.0


@partial(jit, static_argnums=1)
def fast(x, power):
    return x**power * SCALE


slow = flax.nnx.jit(lambda x: x * SCALE)


# main
x = jnp.arange(3.0)
"""


def scenarios() -> Iterator[Program]:
    yield _scenario("lazy-init--fit-once", _LAZY + "show(est.predict(x))\n", False)
    yield _scenario(
        "lazy-init--refit", _LAZY + "est.fit(jnp.arange(8.0))\nshow(est.predict(x))\n", True
    )
    yield _scenario(
        "guarded-write--reset-before",
        _GUARDED.replace("show(s.apply(x))", "s.scale = 4.0\ns.backoff()\nshow(s.apply(x))")
        + "show(s.apply(x))\n",
        False,
    )
    yield _scenario("guarded-write--backoff", _GUARDED + "s.backoff()\nshow(s.apply(x))\n", True)
    yield _scenario("setup-name--once", _SETUP + "show(game.reward(x))\n", False)
    yield _scenario("setup-name--again", _SETUP + "game.setup(5.0)\nshow(game.reward(x))\n", True)
    yield _scenario(
        "hashed-self--new-object", _HASHED + "h = Hashed(3.0)\nshow(h.calc(x))\n", False
    )
    yield _scenario("hashed-self--in-place", _HASHED + "h.mul = 3.0\nshow(h.calc(x))\n", True)
    yield _scenario(
        "frozen-self--replaced",
        _FROZEN + "f = dataclasses.replace(f, mul=3.0)\nshow(f.calc(x))\n",
        False,
    )
    yield _scenario(
        "subclass-change--before",
        _SUBCLASS.replace("show(model.apply(x))", "model.decay()\nshow(model.apply(x))")
        + "show(model.apply(x))\n",
        False,
    )
    yield _scenario(
        "subclass-change--decay", _SUBCLASS + "model.decay()\nshow(model.apply(x))\n", True
    )
    yield _scenario(
        "setter-by-name--before",
        "\n".join(_GETATTR.splitlines()[:-1])
        + '\ngetattr(policy, "set_temperature")(2.0)\nshow(policy.act(x))\n',
        False,
    )
    yield _scenario(
        "setter-by-name--after",
        _GETATTR + 'getattr(policy, "set_temperature")(2.0)\nshow(policy.act(x))\n',
        True,
    )
    change = "VALUE = 2.0\nshow(make()(x))\n"
    yield _scenario("factory-shared-jit--remade", _FACTORY_SHARED + change, True)
    yield _scenario("factory-fresh-def--remade", _FACTORY_FRESH + change, False)
    yield _scenario("factory-lru-cache--remade", _FACTORY_CACHED + change, True)
    yield _scenario("def-in-loop--guarded", _LOOP_DEF, True)
    yield _scenario("def-in-loop--each-pass", _LOOP_DEF_FRESH, False)
    yield _scenario("bound-method--rejit-each-pass", _REBUILT_BOUND, False)
    yield _scenario(
        "object-as-parameter--before",
        _PARAMETER.replace(
            "show(sampler.sample(x))", "anneal(sampler, 0.5)\nshow(sampler.sample(x))"
        )
        + "show(sampler.sample(x))\n",
        False,
    )
    yield _scenario(
        "object-as-parameter--annealed",
        _PARAMETER + "anneal(sampler, 0.5)\nshow(sampler.sample(x))\n",
        True,
    )
    yield _scenario(
        "other-object-method--before",
        _OPTIMIZER.replace(
            "show(trainer.update(x))", "trainer.opt.decay()\nshow(trainer.update(x))"
        )
        + "show(trainer.update(x))\n",
        False,
    )
    yield _scenario("host-callback--reads-live", _HOST_CALLBACK, False)
    yield _scenario("own-write--called-once", _COUNTER, False)
    yield _scenario("own-write--called-again", _COUNTER + "show(fast_count(x))\n", True)
    yield _scenario(
        "run-once-setup--guarded",
        _LAZY_STEP.replace("    def reset(self):\n        self._scale = None\n", "")
        + "show(exp.step(x))\n",
        False,
    )
    yield _scenario("run-once-setup--reset", _LAZY_STEP + "exp.reset()\nshow(exp.step(x))\n", True)
    yield _scenario("def-in-loop--same-branch-as-use", _BRANCH_DEF, False)
    yield _scenario("def-in-loop--try-body", _TRY_DEF, False)
    yield _scenario("local-object-chain--unrelated", _LOCAL_CHAIN, False)
    yield _scenario(
        "other-object-method--decayed",
        _OPTIMIZER + "trainer.opt.decay()\nshow(trainer.update(x))\n",
        True,
    )
    yield _scenario(
        "nested-jit--set-after",
        _NESTED_GLOBAL + "show(outer(x))\nset_value(2.0)\nshow(outer(x))\n",
        True,
    )
    yield _scenario(
        "nested-jit--set-before",
        _NESTED_GLOBAL + "set_value(2.0)\nshow(outer(x))\nshow(outer(x))\n",
        False,
    )
    yield _scenario(
        "nested-jit--inner-traced-first",
        _NESTED_GLOBAL + "show(inner(x))\nset_value(2.0)\nshow(outer(x))\n",
        True,
    )
    yield _scenario(
        "nested-jit-closure--set-after", _NESTED_CLOSURE + "set_scale(2.0)\nshow(outer(x))\n", True
    )
    yield _scenario(
        "nnx-jit--rebound-between-calls",
        _NNX_GLOBAL + "show(fast(x))\nshow(power(x, 2))\nSCALE = 2.0\nshow(power(x, 2))\n",
        True,
    )
    yield _scenario(
        "nnx-jit--rebound-before-first-call",
        _NNX_GLOBAL + "SCALE = 2.0\nshow(fast(x))\nshow(power(x, 2))\nshow(fast(x))\n",
        False,
    )
    yield _scenario(
        "nnx-jit--imported-jit-rebound",
        _NNX_IMPORTED_JIT + "show(fast(x, 1))\nshow(slow(x))\nSCALE = 2.0\nshow(slow(x))\n",
        True,
    )
    yield _scenario(
        "nnx-jit--imported-jit-rebound-first",
        _NNX_IMPORTED_JIT + "SCALE = 2.0\nshow(fast(x, 1))\nshow(slow(x))\nshow(fast(x, 1))\n",
        False,
    )


def programs() -> list[Program]:
    found = [
        _combined(capture, shape)
        for capture in CAPTURES
        for shape in SHAPES
        if capture.redefinable or not shape.needs_redefinable
    ]
    found.extend(scenarios())
    from ground_truth_families import families  # beside this module; it imports _scenario

    found.extend(families())
    return found


def sample(every: int = 6) -> list[Program]:
    """A spread of programs for the fast run: every ``every``-th, plus every scenario."""
    all_programs = programs()
    combined = [p for p in all_programs if "--" in p.label and p.label.split("--")[0] in
                {c.name for c in CAPTURES}]  # fmt: skip
    return combined[::every] + [p for p in all_programs if p not in combined]


def run_under_jax(chosen: list[Program]) -> dict[str, tuple[str, str]]:
    """Each program's (compiled output, eager output), from one process running them all."""
    with tempfile.TemporaryDirectory() as folder:
        paths = {}
        for program in chosen:
            path = Path(folder) / (program.label.replace("-", "_") + ".py")
            path.write_text(program.source, encoding="utf-8")
            paths[program.label] = str(path)
        listing = Path(folder) / "paths.json"
        listing.write_text(json.dumps(list(paths.values())), encoding="utf-8")
        completed = subprocess.run(
            [sys.executable, str(HERE / "run_programs.py"), str(listing)],
            capture_output=True,
            text=True,
            env={**os.environ, "JAX_PLATFORMS": "cpu"},
            timeout=1800,
        )
        if completed.returncode != 0:
            raise RuntimeError(completed.stderr[-3000:])
        outputs = json.loads(completed.stdout)
    return {label: tuple(outputs[path]) for label, path in paths.items()}  # type: ignore[misc]


def verdict(outputs: tuple[str, str]) -> str:
    compiled, eager = outputs
    if "error:" in compiled or "error:" in eager:
        return "error"
    return "stale" if compiled != eager else "safe"


def load_record() -> dict[str, str]:
    return json.loads(RECORD.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--record", action="store_true")
    parser.add_argument(
        "--new", action="store_true", help="with --record: run only programs the record lacks"
    )
    parser.add_argument("--show")
    args = parser.parse_args()
    by_label = {p.label: p for p in programs()}
    if args.show:
        print(by_label[args.show].source)
        return
    if args.record:
        # Keeping the verdicts of programs already recorded saves running all of them again
        # after adding a few; labels no longer generated are dropped.
        kept = load_record() if args.new and RECORD.exists() else {}
        kept = {label: found for label, found in kept.items() if label in by_label}
        outputs = run_under_jax([p for label, p in by_label.items() if label not in kept])
        record = {label: kept.get(label) or verdict(outputs[label]) for label in by_label}
        RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        for label, found in record.items():
            if label in kept:
                continue
            if found == "error":
                print("error:", label, outputs[label], file=sys.stderr)
            elif (found == "stale") != by_label[label].intended_stale:
                print("not as intended:", label, found, file=sys.stderr)
        print(f"{len(record)} programs, {sum(v == 'stale' for v in record.values())} stale")


if __name__ == "__main__":
    main()
