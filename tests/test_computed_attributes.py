"""``getattr`` with a computed name may take a method of the file's own objects: on the object
itself, on a module the file stores the method into or hands it to, on the running script, or
through a package's function handed something of the file's."""

from __future__ import annotations

import pytest

from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import Settings

SOURCE = """import importlib
import math

import jax
import jax.numpy as jnp
{imports}

class Experiment:
    def __init__(self, lr, name):
        self.lr = lr
        self.name = name
        self.modules = importlib.import_module("jax.nn")
        self.scale = 1.0
        self.train_fn = jax.jit(self._train_fn)

    def reset(self):
        self.scale = self.lr * 2.0

    def _train_fn(self, x):
        return x * self.scale

    def step(self, x):
        out = self.train_fn(x)
        {lookup}
        return out


experiment = Experiment(0.1, "reset")
{before}
for _ in range(3):
    experiment.step(jnp.ones(2))
"""


def _reported(lookup: str, imports: str = "", before: str = "") -> bool:
    source = SOURCE.format(lookup=lookup, imports=imports, before=before)
    return bool(check_source(source, Settings()))


@pytest.mark.parametrize(
    ("lookup", "imports", "before"),
    [
        ("getattr(self, self.name)()", "", ""),
        ("getattr(hooks, self.name)()", "import hooks", "hooks.reset = experiment.reset"),
        # Handed the method, or the object whose methods it may call.
        ("getattr(jax.tree_util, self.name)(self.reset, 1.0)", "", ""),
        ("hook = getattr(math, self.name)\n        hook(self)", "", ""),
        ("hook = self.reset\n        getattr(math, self.name)(hook)", "", ""),
        ("hook, _ = self.reset, 1\n        getattr(math, self.name)(hook)", "", ""),
        ("jax.tree_util.tree_map(getattr(math, self.name), x)", "", ""),
        # What the member makes is run, or it is given an object of the file's class.
        ("getattr(operator, self.name)(self.name)(self)", "import operator", ""),
        ("getattr(operator, self.name)(self.name)(experiment)", "import operator", ""),
        ("getattr(math, self.name)(Experiment(0.2, 'reset'))", "", ""),
        # The running script, or a module the file hands its functions to.
        ("getattr(importlib.import_module(__name__), self.name)()", "", ""),
        (
            "getattr(hooks, self.name)()",
            "import hooks",
            "@hooks.register\ndef reset():\n    experiment.reset()",
        ),
        ("getattr(hooks, self.name)()", "import hooks", "hooks.register(experiment.reset)"),
    ],
)
def test_a_lookup_that_may_take_the_method_counts(lookup: str, imports: str, before: str) -> None:
    assert _reported(lookup, imports, before)


@pytest.mark.parametrize(
    ("lookup", "imports", "before"),
    [
        # Another module, never stored into nor handed the file's code, called with plain
        # values: what it holds and makes is its own.
        ("getattr(hooks, self.name)(1.0)", "import hooks", ""),
        ("make = getattr(hooks, self.name)\n        self.fn = make(self.lr)", "import hooks", ""),
        ("getattr(self.modules, self.name)(1.0)", "", ""),
    ],
)
def test_a_member_of_another_module_called_with_plain_values_takes_no_method(
    lookup: str, imports: str, before: str
) -> None:
    assert not _reported(lookup, imports, before)
