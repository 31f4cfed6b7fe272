"""A compiled call given an optimiser made since the change traces again: flax keeps the optax
transformation, a new object every time one is made, as static data the trace is keyed on.
Only an optimiser the code plainly makes after the change, right before the call, counts."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from flake8_jax_closure.cli import main

PROGRAM = """import jax.numpy as jnp
import optax
from flax import nnx

scale = 1.0


def make_tx():
    return optax.sgd(0.0)


@nnx.jit
def train_step(model, optimizer, x):
    return (model(x) ** 2).mean() * scale


x = jnp.ones((4, 2))
{driver}"""


def _codes(tmp_path: Path, driver: str) -> list[str]:
    path = tmp_path / "train.py"
    path.write_text(PROGRAM.format(driver=driver))
    out = io.StringIO()
    main(["check", "--format", "json", "--no-cache", str(path)], stdout=out, stderr=io.StringIO())
    return [str(f["code"]) for f in json.loads(out.getvalue())]


@pytest.mark.parametrize(
    "made",
    [
        "nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)",
        "nnx.Optimizer(model, tx=optax.adam(1e-3), wrt=nnx.Param)",
        "nnx.ModelAndOptimizer(model, optax.chain(optax.clip(1.0), optax.adam(1e-3)))",
    ],
    ids=["positional", "keyword", "model-and-optimizer"],
)
def test_an_optimiser_made_in_each_pass_after_the_change(tmp_path: Path, made: str) -> None:
    driver = (
        "for scale in (1.0, 0.5):\n"
        "    model = nnx.Linear(2, 1, rngs=nnx.Rngs(0))\n"
        f"    optimizer = {made}\n"
        "    for step in range(2):\n"
        "        train_step(model, optimizer, x)\n"
    )
    assert _codes(tmp_path, driver) == []


@pytest.mark.parametrize(
    "driver",
    [
        # Not always made before the call: the first pass's optimiser may be reused.
        "optimizer = nnx.Optimizer(model, optax.sgd(0.0), wrt=nnx.Param)\n"
        "for scale in (1.0, 0.5):\n"
        "    if scale > 0.7:\n"
        "        optimizer = nnx.Optimizer(model, optax.sgd(0.0), wrt=nnx.Param)\n"
        "    train_step(model, optimizer, x)\n",
        # A transformation the code does not show being made: a helper may keep one.
        "for scale in (1.0, 0.5):\n"
        "    optimizer = nnx.Optimizer(model, make_tx(), wrt=nnx.Param)\n"
        "    train_step(model, optimizer, x)\n",
        # Made after the call in the pass: the next pass's call comes first.
        "optimizer = nnx.Optimizer(model, optax.sgd(0.0), wrt=nnx.Param)\n"
        "for scale in (1.0, 0.5):\n"
        "    train_step(model, optimizer, x)\n"
        "    other = nnx.Optimizer(model, optax.sgd(0.0), wrt=nnx.Param)\n",
        # A function's compiled call given an optimiser it did not make.
        "optimizer = nnx.Optimizer(model, optax.sgd(0.0), wrt=nnx.Param)\n\n\n"
        "def run():\n"
        "    train_step(model, optimizer, x)\n\n\n"
        "for scale in (1.0, 0.5):\n"
        "    run()\n",
    ],
    ids=["under-an-if", "helper-transformation", "made-after-the-call", "made-outside-the-run"],
)
def test_an_optimiser_not_plainly_made_since_the_change(tmp_path: Path, driver: str) -> None:
    driver = "model = nnx.Linear(2, 1, rngs=nnx.Rngs(0))\n" + driver
    assert _codes(tmp_path, driver) == ["JC102"]
