"""A compiled object a constructor stores on its own ``self``: nothing else holds ``self`` until
the constructor returns, so a change the constructor makes afterwards comes before any call,
unless something the constructor runs in between may call the object."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from flake8_jax_closure.cli import main

ENV = """import jax
import jax.numpy as jnp


class Env:
    def __init__(self, steps):
        def _step(x):
            return x * self.num_steps

        self.step = jax.jit(_step)
{between}
        self.num_steps = steps

    def register(self):
        pass
"""
MAKE = "from .env import Env\n\n\ndef make(steps):\n    return Env(steps)\n"


def _findings(tmp_path: Path, between: str) -> list[dict[str, object]]:
    (tmp_path / "pyproject.toml").write_text("")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(MAKE)
    (package / "env.py").write_text(ENV.format(between=between))
    out = io.StringIO()
    main(
        ["check", "--format", "json", "--no-cache", "--extend-select", "JC2", str(package)],
        stdout=out,
        stderr=io.StringIO(),
    )
    return list(json.loads(out.getvalue()))


@pytest.mark.parametrize(
    "between",
    [
        # A library's function, given nothing of self.
        "        self.reset = jax.jit(jnp.zeros_like)",
        "        pass",
    ],
)
def test_a_change_before_anything_could_call_the_stored_object_is_none(
    tmp_path: Path, between: str
) -> None:
    assert _findings(tmp_path, between) == []


@pytest.mark.parametrize(
    "between",
    [
        "        self.register()",  # a method of the object may call it
        "        jax.block_until_ready(self)",  # a library's function given self
    ],
)
def test_a_call_between_that_may_run_the_object_keeps_the_hazard(
    tmp_path: Path, between: str
) -> None:
    (finding,) = _findings(tmp_path, between)
    assert finding["code"] == "JC204" and finding["name"] == "self.num_steps"
