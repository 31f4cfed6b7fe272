"""Families of ground-truth programs for shapes that real programs take and the generated
captures do not: a value rebound between a ``try`` body and its handler, a compiled function
mapped over a batch after a change, a value made lazily while JAX traces, mutable contents of
an immutable holder, an object's own method changing what a compiled step reads, overrides by
``setattr`` and callbacks, a static ``self`` branching on a counter, a bound method compiled
again, and objects of one class told apart. Each stale program has a safe twin that differs in
when, or on which object, the change happens; JAX's verdicts are recorded with the others
(``ground_truth.py --record --new``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ground_truth import Program

# A value bound in a ``try`` body and rebound in the handler, which calls the compiled function
# again: the body's call traced with the first value.
_TRY_REBIND = """
SCALE = 0.5


@jax.jit
def fast(x):
    return x * SCALE


def diverged(out):
    return float(out.sum()) < 100.0


# main
x = jnp.arange(3.0)
try:
    SCALE = 0.25
    out = fast(x)
    if diverged(out):
        raise FloatingPointError("overflow")
except FloatingPointError:
    SCALE = 1.0
    out = {retry}(x)
show(out)
"""

# A solver retrying with a smaller relaxation factor: the factor is a local of the enclosing
# function, read by the compiled sweep defined beside it.
_TRY_RELAX = """
def solve(x):
    omega = 1.5

    @jax.jit
    def sweep(y):
        return y * omega

    try:
        y = sweep(x)
        if float(y.sum()) > 1.0:
            raise ArithmeticError("diverged")
    except ArithmeticError:
        omega = 0.5
{retry}
        y = sweep(x)
    return y


# main
x = jnp.arange(3.0)
show(solve(x))
"""

_REDEFINED_SWEEP = """\
        @jax.jit
        def sweep(y):
            return y * omega
"""

# A per-example compiled function called once, a global changed, then mapped over a batch:
# under ``vmap`` the function sees the per-example shape it was traced for.
_VMAP_AFTER = """
SCALE = 1.0


@jax.jit
def per_example(x):
    return x * SCALE


# main
x = jnp.arange(3.0)
show(per_example(x))
SCALE = 2.0
show(jax.vmap(per_example)({batch}))
"""

# A value made on first use while JAX traces, and drawn again later by another function.
_LAZY_GLOBAL = """
_omega = None


def omega():
    global _omega
    if _omega is None:
        _omega = jnp.ones(3) * 2.0
    return _omega


def redraw(scale):
    global _omega
    _omega = jnp.ones(3) * scale


@jax.jit
def fast(x):
    return x * omega()


# main
x = jnp.arange(3.0)
"""

_LAZY_CLOSURE = """
def build():
    table = None

    def lookup():
        nonlocal table
        if table is None:
            table = jnp.ones(3) * 2.0
        return table

    def reset(scale):
        nonlocal table
        table = jnp.ones(3) * scale

    @jax.jit
    def fast(x):
        return x * lookup()

    return fast, reset


# main
fast, reset = build()
x = jnp.arange(3.0)
"""

# Mutable contents of immutable holders, changed in place.
_FROZEN_ARRAY = """
@dataclasses.dataclass(frozen=True)
class Vocab:
    embeddings: np.ndarray


vocab = Vocab(np.ones((4, 3), dtype=np.float32))


@jax.jit
def embed(x):
    return x * vocab.embeddings[1]


# main
x = jnp.arange(3.0)
"""

_NAMED_TUPLE_LIST = """
from typing import NamedTuple


class Params(NamedTuple):
    scales: list

    def apply(self, x):
        return x * self.scales[0]


params = Params([1.0])
fast = jax.jit(params.apply)


# main
x = jnp.arange(3.0)
"""

_ADD_AT = """
COUNTS = np.ones(3, dtype=np.float32)


@jax.jit
def weighted(x):
    return x * COUNTS


# main
x = jnp.arange(3.0)
"""

# A module-level schedule whose own method reassigns what the compiled step reads.
_SCHEDULE = """
class Schedule:
    def __init__(self):
        self.lr = 1.0

    def step(self):
        self.lr = self.lr * 0.5


schedule = Schedule()


@jax.jit
def update(x):
    return x * schedule.lr


# main
x = jnp.arange(3.0)
"""

# Overrides by name.
_SETATTR_CLASS = """
class Config:
    lr = 1.0


@jax.jit
def update(x):
    return x * Config.lr


def override(overrides):
    for key, value in overrides.items():
        setattr(Config, key, value)


# main
x = jnp.arange(3.0)
"""

_SETATTR_ARGS = """
import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=1.0)
args = parser.parse_args([])


@jax.jit
def update(x):
    return x * args.lr


# main
x = jnp.arange(3.0)
"""

_CALLBACK_CONFIG = """
@dataclasses.dataclass
class TrainConfig:
    lr: float = 1.0


cfg = TrainConfig()


class Decay:
    def on_epoch_end(self, config):
        config.lr = config.lr * 0.5


@jax.jit
def step(x):
    return x * cfg.lr


def fit(x, callbacks, epochs):
    for _ in range(epochs):
        show(step(x))
        for callback in callbacks:
            callback.on_epoch_end(cfg)


# main
x = jnp.arange(3.0)
"""

_CURRICULUM = """
class Model:
    def __init__(self):
        self.cfg = {"temperature": 1.0}

    def temperature(self):
        return self.cfg["temperature"]

    @partial(jax.jit, static_argnums=0)
    def __call__(self, x):
        return x * self.temperature()


class Curriculum:
    def __init__(self, model):
        self.model = model

    def advance(self):
        self.model.cfg["temperature"] = 2.0


model = Model()
curriculum = Curriculum(model)


# main
x = jnp.arange(3.0)
"""

# A static ``self`` whose helper branches in Python on a counter the program advances.
_COUNTER_BRANCH = """
class Agent:
    def __init__(self):
        self.steps = 0

    def exploring(self):
        return self.steps < 2

    @partial(jax.jit, static_argnums=0)
    def act(self, x):
        if self.exploring():
            return x + 1.0
        return x


agent = Agent()


# main
x = jnp.arange(3.0)
"""

# A state at module level that a plain-Python step rebinds with ``global``.
_GLOBAL_STATE = """
state = {"count": jnp.zeros(())}


@jax.jit
def scaled(x):
    return x * (1.0 + state["count"])


def advance():
    global state
    state = {"count": state["count"] + 1.0}


# main
x = jnp.arange(3.0)
"""

# A bound method compiled again after a change.
_MODEL = """
class Model:
    def __init__(self, mul):
        self.mul = mul

    def calc(self, x):
        return x * self.mul


model = Model(1.0)
fast = jax.jit(model.calc)


# main
x = jnp.arange(3.0)
show(fast(x))
model.mul = 2.0
"""

# Objects of one class: a change to one instance, calls on another.
_STATIC_INSTANCES = """
class Scaler:
    def __init__(self, mul):
        self.mul = mul

    @partial(jax.jit, static_argnums=0)
    def calc(self, x):
        return x * self.mul


first = Scaler(1.0)
second = Scaler(1.0)


# main
x = jnp.arange(3.0)
show(first.calc(x))
"""

_SETTER_REBUILDS = """
class Trainer:
    def __init__(self, lr):
        self.set_lr(lr)

    def set_lr(self, lr):
        self.lr = lr
{rebuild}

    def update(self, x):
        return self.step(x)


trainer = Trainer(1.0)
{outside}

# main
x = jnp.arange(3.0)
show(trainer.update(x))
trainer.set_lr(2.0)
show(trainer.update(x))
"""


# A bound method compiled in the constructor, kept on the object and reached through the
# object's ``__call__``.
_DUNDER_CALL = """
class Filter:
    def __init__(self, gain):
        self.gain = gain
        self._f = jax.jit(self.compute)

    def compute(self, x):
        return x * self.gain

    def __call__(self, x):
        return self._f(x)


filt = Filter(1.0)


# main
x = jnp.arange(3.0)
"""


# ``shard_map`` inside a compiled function is traced (and cached) with it; on its own it reads
# a rebound global again at each call. Flax NNX's ``pmap`` caches as ``jax.pmap`` does.
_SHARD_MAP = """
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((1,), ("i",))
SCALE = 1.0


def body(x):
    return x * SCALE


@jax.jit
def fast(x):
    return jax.shard_map(body, mesh=mesh, in_specs=P(), out_specs=P())(x)


mapped = jax.shard_map(body, mesh=mesh, in_specs=P(), out_specs=P())


# main
x = jnp.arange(3.0)
"""

_NNX_SIBLINGS = """
from flax import nnx
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((1,), ("i",))
OFFSET = 1.0
GAIN = 1.0


@nnx.pmap
def shifted(x):
    return x + OFFSET


@nnx.jit
def sharded(x):
    return nnx.shard_map(lambda y: y * GAIN, mesh=mesh, in_specs=P(), out_specs=P())(x)


scaled = nnx.shard_map(lambda y: y * GAIN, mesh=mesh, in_specs=P(), out_specs=P())


# main
x = jnp.arange(3.0)
"""


# A Flax NNX graph definition read as a global, split again after ``model.eval()``: the state
# keeps its structure, so the trace made with the old graph definition is reused.
_GRAPHDEF = """
from flax import nnx


class Net(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(3, 3, rngs=rngs)
        self.norm = nnx.BatchNorm(3, rngs=rngs)

    def __call__(self, x):
        return self.norm(self.linear(x))


model = Net(nnx.Rngs(0))
graphdef, state = nnx.split(model)


@jax.jit
def forward(state, x):
    return nnx.merge(graphdef, state)(x)


# main
x = jnp.arange(6.0).reshape(2, 3)
"""

# The same expression computed again in each pass of a training loop: equal values when it is
# made of array constructors, arithmetic and ``jax.random`` of an unchanging key; a new value
# when it draws NumPy random numbers.
_RECOMPUTED = """
np.random.seed(0)
scale = {value}


@jax.jit
def scaled(x):
    return x * scale


# main
x = jnp.arange(3.0)
for epoch in range(3):
    show(scaled(x))
    scale = {value}
"""

# A notebook defines another network and initialises its parameters before calling the
# compiled loss again: another architecture gives parameters of another structure, so JAX
# traces again; the same architecture with another activation reuses the trace.
_NETWORK_REMADE = """
def make_network(widths, activation):
    def init(key):
        params = []
        for width in widths:
            key, sub = jax.random.split(key)
            params.append(jax.random.normal(sub, (width, width)) * 0.1)
        return params

    def apply(params, x):
        for weight in params:
            x = activation(x[: weight.shape[0]] @ weight)
        return x

    return init, apply


init_fn, apply_fn = make_network([3, 3], jnp.tanh)
params = init_fn(jax.random.PRNGKey(0))


@jax.jit
def loss(params, x):
    return jnp.sum(apply_fn(params, x) ** 2)


# main
x = jnp.arange(3.0)
show(loss(params, x))
init_fn, apply_fn = make_network({widths}, {activation})
params = init_fn(jax.random.PRNGKey(1))
show(loss(params, x))
"""

# A method called on a module-level object inside the compiled loss: the loop changes one
# attribute of the object, which the method reads or does not.
_METHOD_READS = """
class Force:
    def __init__(self):
        self.scale = 3.0
        self.params = jnp.ones(3)

    def forward(self, x, params):
        return self._energy(x * params)

    def _energy(self, y):
        return jnp.sum(y) * self.scale


model = Force()


@jax.jit
def loss(params, x):
    return model.forward(x, params)


# main
x = jnp.arange(3.0)
for step in range(3):
    show(loss(model.params, x))
    model.{attribute} = model.{attribute} * 0.5
"""

# An optimiser made again with another rate (a notebook's set-up cell edited and run again),
# and its state initialised again: the state has the parameters' structure, so the trace made
# with the first rate is reused; the same rate makes an optimiser doing the same.
_OPTIMISER_REMADE = """
from jax.example_libraries import optimizers

learning_rate = 0.1
opt_init, opt_update, get_params = optimizers.sgd(learning_rate)


@jax.jit
def step(i, state):
    return opt_update(i, jnp.ones(3), state)


# main
x = jnp.arange(3.0)
show(get_params(step(0, opt_init(x))))
learning_rate = {rate}
opt_init, opt_update, get_params = optimizers.sgd(learning_rate)
show(get_params(step(0, opt_init(x))))
"""


# A trainer keeping its flax training state in ``self.state`` and rebuilding it from itself
# after each step: the compiled step reads the state's function, given the parameters, or
# reads the parameters from the state too.
_TRAINER_STATE = """
import optax
from flax.training import train_state


def apply(params, x):
    return x * params["w"]


class Trainer:
    def __init__(self):
        self.state = train_state.TrainState.create(
            apply_fn=apply, params={{"w": jnp.ones(3)}}, tx=optax.sgd(0.1)
        )
        self.step = jax.jit(self._step)

    def _step(self, params, x):
        return self.state.apply_fn({params}, x)


# main
trainer = Trainer()
x = jnp.arange(3.0)
for i in range(3):
    show(trainer.step(trainer.state.params, x))
    trainer.state = trainer.state.apply_gradients(grads={{"w": jnp.ones(3)}})
"""

# A module-level object whose attribute a plain helper stores from its argument: the compiled
# loss stores its own argument there before reading it, or the loop stores a new value between
# compiled calls.
_HELPER_STORE = """
class Layer:
    def __init__(self):
        self.speed = jnp.ones(3)


class Environment:
    def __init__(self):
        self.layer = Layer()


env = Environment()


def set_speed(speed):
    env.layer.speed = speed


def field():
    return jnp.sum(env.layer.speed)


@jax.jit
def loss(speed):
    {store}
    return field() * speed


# main
x = jnp.arange(3.0)
for i in range(3):
    show(loss(x + i))
    {between}
"""

# A compiled method that stores its argument through a setter of the class before reading the
# attribute, or reads the attribute first (a recurrent state).
_SETTER_FIRST = """
class Model:
    def __init__(self):
        self.params = jnp.ones(3)
        self.step = jax.jit(self._step)

    def set_params(self, params):
        self.params = params

    def _step(self, params, x):
{body}


# main
model = Model()
x = jnp.arange(3.0)
for i in range(3):
    show(model.step(x + i, x))
"""


# A training function keeps a flax training state in a local variable and rebinds it to what
# a compiled step returns for it; the compiled prediction beside it reads only the state's
# function (given the parameters), or the parameters too.
_STATE_HANDED = """
import optax
from flax.training import train_state


def apply(params, x):
    return x * params["w"]


def train(x):
    state = train_state.TrainState.create(
        apply_fn=apply, params={{"w": jnp.ones(3)}}, tx=optax.sgd(0.1)
    )

    @jax.jit
    def predict(params, x):
        return state.apply_fn({params}, x)

    @jax.jit
    def update(state, x):
        grads = jax.grad(lambda p: jnp.sum(state.apply_fn(p, x)))(state.params)
        return state.apply_gradients(grads=grads)

    for i in range(3):
        show(predict(state.params, x))
        state = update(state, x)


# main
train(jnp.arange(3.0))
"""


# A memoised factory fills a table, then makes a compiled function reading it; the program
# asks it for objects of two sizes, and calls the first again. The table is the factory's own
# local, or a global every object reads.
_MEMOISED_TABLE = """
TABLE = []


@functools.lru_cache(maxsize=None)
def make(size):
    {declare}{table} = []
    for i in range(size):
        {table}.append(float(size + i))

    def weigh(x):
        return x[:size] * jnp.array({table}[:size])

    return jax.jit(weigh)


# main
x = jnp.arange(3.0) + 1.0
first = make(2)
show(first(x))
make(3)(x)
show(first(x))
"""


# A factory called in each pass of a loop: each call makes a new function object with its own
# cache; kept across passes, an earlier pass's object is called again.
_FACTORY_IN_LOOP = """
def run():
    {kept}
    for scale in (1.0, 2.0, 3.0):
        factor = scale * 2

        def make():
            def scaled(x):
                return x * factor

            return jax.jit(scaled)

        {use}


# main
run()
"""

# A loop over a list holding the compiled function calls it in each pass.
_LOOP_OVER_LIST = """
lr = 0.1


@jax.jit
def step(x):
    return x * lr


# main
steps = [("step", step)]
for epoch in range(3):
    for name, fn in steps:
        show(fn(jnp.ones(3)))
    {change}
"""


def families() -> Iterator[Program]:
    from ground_truth import _scenario

    yield _scenario(
        "factory-in-loop--one-per-pass",
        _FACTORY_IN_LOOP.format(kept="pass", use="fn = make()\n        show(fn(jnp.ones(3)))"),
        False,
    )
    yield _scenario(
        "factory-in-loop--kept-across-passes",
        _FACTORY_IN_LOOP.format(
            kept="fns = []",
            use="fns.append(make())\n        for fn in fns:\n            show(fn(jnp.ones(3)))",
        ),
        True,
    )
    yield _scenario("loop-over-list--changed", _LOOP_OVER_LIST.format(change="lr = lr / 2"), True)
    yield _scenario("loop-over-list--unchanged", _LOOP_OVER_LIST.format(change="pass"), False)

    yield _scenario(
        "recomputed--numpy-random",
        _RECOMPUTED.format(value="np.random.randn(3)"),
        True,
    )
    yield _scenario(
        "recomputed--same-expression",
        _RECOMPUTED.format(
            value="jnp.ones(3) * 2.0 + jax.random.normal(jax.random.PRNGKey(0), (3,))"
        ),
        False,
    )
    yield _scenario(
        "network-remade--other-architecture",
        _NETWORK_REMADE.format(widths="[3, 3, 3]", activation="jnp.tanh"),
        False,
    )
    yield _scenario(
        "network-remade--other-activation",
        _NETWORK_REMADE.format(widths="[3, 3]", activation="jax.nn.relu"),
        True,
    )
    yield _scenario(
        "memoised-table--global",
        _MEMOISED_TABLE.format(table="TABLE", declare="global TABLE\n    "),
        True,
    )
    yield _scenario(
        "memoised-table--local", _MEMOISED_TABLE.format(table="table", declare=""), False
    )
    yield _scenario("state-handed--params-read", _STATE_HANDED.format(params="state.params"), True)
    yield _scenario("state-handed--params-given", _STATE_HANDED.format(params="params"), False)
    yield _scenario(
        "trainer-state--params-read", _TRAINER_STATE.format(params="self.state.params"), True
    )
    yield _scenario("trainer-state--params-given", _TRAINER_STATE.format(params="params"), False)
    yield _scenario(
        "helper-store--between-calls",
        _HELPER_STORE.format(store="", between="set_speed(x * i)"),
        True,
    )
    yield _scenario(
        "helper-store--own-argument",
        _HELPER_STORE.format(store="set_speed(speed)", between="pass"),
        False,
    )
    yield _scenario(
        "setter-first--stored-then-read",
        _SETTER_FIRST.format(
            body="        self.set_params(params)\n        return x * self.params"
        ),
        False,
    )
    yield _scenario(
        "setter-first--read-then-stored",
        _SETTER_FIRST.format(
            body="        out = x * self.params\n"
            "        self.set_params(params)\n"
            "        return out"
        ),
        True,
    )
    # The helper reading the changed attribute inherited from a base class.
    inherited = _METHOD_READS.replace(
        "class Force:",
        "class Energy:\n    def _energy(self, y):\n"
        "        return jnp.sum(y) * self.scale\n\n\nclass Force(Energy):",
    ).replace(
        "\n    def _energy(self, y):\n        return jnp.sum(y) * self.scale\n\n\nmodel",
        "\n\nmodel",
    )
    yield _scenario("method-reads--inherited", inherited.format(attribute="scale"), True)
    yield _scenario("method-reads--changed", _METHOD_READS.format(attribute="scale"), True)
    yield _scenario("method-reads--other", _METHOD_READS.format(attribute="params"), False)
    yield _scenario("optimiser-remade--other-rate", _OPTIMISER_REMADE.format(rate="0.01"), True)
    yield _scenario("optimiser-remade--same-rate", _OPTIMISER_REMADE.format(rate="0.1"), False)
    yield _scenario("try-rebind--retry-same", _TRY_REBIND.format(retry="fast"), True)
    yield _scenario(
        "try-rebind--retry-new",
        _TRY_REBIND.format(retry="jax.jit(lambda y: y * SCALE)"),
        False,
    )
    yield _scenario("try-relax--retry-same", _TRY_RELAX.format(retry=""), True)
    yield _scenario("try-relax--retry-redefined", _TRY_RELAX.format(retry=_REDEFINED_SWEEP), False)

    yield _scenario(
        "vmap-after--same-example-shape", _VMAP_AFTER.format(batch="jnp.stack([x, x])"), True
    )
    yield _scenario(
        "vmap-after--new-example-shape",
        _VMAP_AFTER.format(batch="jnp.ones((2, 5))"),
        False,
    )

    yield _scenario(
        "lazy-global--redrawn", _LAZY_GLOBAL + "show(fast(x))\nredraw(3.0)\nshow(fast(x))\n", True
    )
    yield _scenario(
        "lazy-global--drawn-first",
        _LAZY_GLOBAL + "redraw(3.0)\nshow(fast(x))\nshow(fast(x))\n",
        False,
    )
    yield _scenario(
        "lazy-closure--reset", _LAZY_CLOSURE + "show(fast(x))\nreset(3.0)\nshow(fast(x))\n", True
    )
    yield _scenario(
        "lazy-closure--reset-first",
        _LAZY_CLOSURE + "reset(3.0)\nshow(fast(x))\nshow(fast(x))\n",
        False,
    )

    change = "vocab.embeddings[1] = 2.0\n"
    yield _scenario(
        "frozen-array--in-place", _FROZEN_ARRAY + f"show(embed(x))\n{change}show(embed(x))\n", True
    )
    yield _scenario(
        "frozen-array--before", _FROZEN_ARRAY + f"{change}show(embed(x))\nshow(embed(x))\n", False
    )
    change = "params.scales[0] = 2.0\n"
    yield _scenario(
        "named-tuple-list--in-place",
        _NAMED_TUPLE_LIST + f"show(fast(x))\n{change}show(fast(x))\n",
        True,
    )
    yield _scenario(
        "named-tuple-list--before",
        _NAMED_TUPLE_LIST + f"{change}show(fast(x))\nshow(fast(x))\n",
        False,
    )
    change = "np.add.at(COUNTS, [0, 1], 1.0)\n"
    yield _scenario(
        "add-at--in-place", _ADD_AT + f"show(weighted(x))\n{change}show(weighted(x))\n", True
    )
    yield _scenario(
        "add-at--before", _ADD_AT + f"{change}show(weighted(x))\nshow(weighted(x))\n", False
    )

    yield _scenario(
        "schedule-step--each-epoch",
        _SCHEDULE + "for epoch in range(3):\n    show(update(x))\n    schedule.step()\n",
        True,
    )
    yield _scenario(
        "schedule-step--warm-up-first",
        _SCHEDULE + "schedule.step()\nfor epoch in range(3):\n    show(update(x))\n",
        False,
    )

    yield _scenario(
        "setattr-class--after",
        _SETATTR_CLASS + 'show(update(x))\noverride({"lr": 2.0})\nshow(update(x))\n',
        True,
    )
    yield _scenario(
        "setattr-class--before",
        _SETATTR_CLASS + 'override({"lr": 2.0})\nshow(update(x))\nshow(update(x))\n',
        False,
    )
    overrides = 'for key, value in {"lr": 2.0}.items():\n    setattr(args, key, value)\n'
    yield _scenario(
        "setattr-args--after",
        _SETATTR_ARGS + f"show(update(x))\n{overrides}show(update(x))\n",
        True,
    )
    yield _scenario(
        "setattr-args--before",
        _SETATTR_ARGS + f"{overrides}show(update(x))\nshow(update(x))\n",
        False,
    )
    yield _scenario("callback-config--fit", _CALLBACK_CONFIG + "fit(x, [Decay()], 3)\n", True)
    yield _scenario("callback-config--no-callbacks", _CALLBACK_CONFIG + "fit(x, [], 3)\n", False)
    yield _scenario(
        "curriculum-dict--advanced",
        _CURRICULUM + "show(model(x))\ncurriculum.advance()\nshow(model(x))\n",
        True,
    )
    yield _scenario(
        "curriculum-dict--advanced-first",
        _CURRICULUM + "curriculum.advance()\nshow(model(x))\nshow(model(x))\n",
        False,
    )

    yield _scenario(
        "counter-branch--advanced",
        _COUNTER_BRANCH + "for i in range(4):\n    show(agent.act(x))\n    agent.steps += 1\n",
        True,
    )
    yield _scenario(
        "counter-branch--advanced-first",
        _COUNTER_BRANCH + "agent.steps = 4\nfor i in range(4):\n    show(agent.act(x))\n",
        False,
    )

    yield _scenario(
        "global-state--advanced",
        _GLOBAL_STATE + "for i in range(3):\n    show(scaled(x))\n    advance()\n",
        True,
    )
    yield _scenario(
        "global-state--advanced-first",
        _GLOBAL_STATE + "advance()\nfor i in range(3):\n    show(scaled(x))\n",
        False,
    )

    yield _scenario(
        "bound-method-again--old-wrapper-alive",
        _MODEL + "again = jax.jit(model.calc)\nshow(again(x))\n",
        True,
    )
    yield _scenario(
        "bound-method-again--old-wrapper-gone",
        _MODEL + "fast = jax.jit(model.calc)\nshow(fast(x))\n",
        False,
    )

    yield _scenario(
        "dunder-call--changed-between",
        _DUNDER_CALL + "show(filt(x))\nfilt.gain = 2.0\nshow(filt(x))\n",
        True,
    )
    yield _scenario(
        "dunder-call--changed-first",
        _DUNDER_CALL + "filt.gain = 2.0\nshow(filt(x))\nshow(filt(x))\n",
        False,
    )
    yield _scenario(
        "shard-map--inside-jit", _SHARD_MAP + "show(fast(x))\nSCALE = 2.0\nshow(fast(x))\n", True
    )
    yield _scenario(
        "shard-map--inside-jit-set-first",
        _SHARD_MAP + "SCALE = 2.0\nshow(fast(x))\nshow(fast(x))\n",
        False,
    )
    yield _scenario(
        "shard-map--alone", _SHARD_MAP + "show(mapped(x))\nSCALE = 2.0\nshow(mapped(x))\n", False
    )
    yield _scenario(
        "nnx-pmap--rebound-between-calls",
        _NNX_SIBLINGS + "show(shifted(x[None]))\nOFFSET = 2.0\nshow(shifted(x[None]))\n",
        True,
    )
    yield _scenario(
        "nnx-pmap--rebound-first",
        _NNX_SIBLINGS + "OFFSET = 2.0\nshow(shifted(x[None]))\nshow(shifted(x[None]))\n",
        False,
    )
    yield _scenario(
        "nnx-shard-map--inside-nnx-jit",
        _NNX_SIBLINGS + "show(sharded(x))\nGAIN = 2.0\nshow(sharded(x))\n",
        True,
    )
    yield _scenario(
        "nnx-shard-map--alone",
        _NNX_SIBLINGS + "show(scaled(x))\nGAIN = 2.0\nshow(scaled(x))\n",
        False,
    )
    yield _scenario(
        "nnx-graphdef--split-after-eval",
        _GRAPHDEF + "show(forward(state, x))\nmodel.eval()\ngraphdef, state = nnx.split(model)\n"
        "show(forward(state, x))\n",
        True,
    )
    yield _scenario(
        "nnx-graphdef--split-again-unchanged",
        _GRAPHDEF + "show(forward(state, x))\ngraphdef, state = nnx.split(model)\n"
        "show(forward(state, x))\n",
        False,
    )
    yield _scenario(
        "static-instances--same-object",
        _STATIC_INSTANCES + "first.mul = 2.0\nshow(first.calc(x))\n",
        True,
    )
    yield _scenario(
        "static-instances--other-object",
        _STATIC_INSTANCES + "second.mul = 2.0\nshow(second.calc(x))\n",
        False,
    )
    yield _scenario(
        "setter-rebuilds--closure-remade",
        _SETTER_REBUILDS.format(
            rebuild="        self.step = jax.jit(lambda x: x * self.lr)", outside=""
        ),
        False,
    )
    yield _scenario(
        "setter-rebuilds--shared-function",
        _SETTER_REBUILDS.format(
            rebuild="        self.step = jax.jit(scale_by_lr)",
            outside="",
        ).replace(
            "class Trainer:", "def scale_by_lr(x):\n    return x * trainer.lr\n\n\nclass Trainer:"
        ),
        True,
    )
