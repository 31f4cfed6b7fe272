"""The project is the unit: a stale path through a module's entry points that another module of
the project takes (a script, a notebook that star-imports the module) is a default finding,
with that module's lines as its witness; one that nothing in the project takes stays an API
hazard."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_jax_closure.analysis.project import ProjectIndex, module_names, project_root
from flake8_jax_closure.cli import main

TRAIN = """from functools import partial

import jax

LR = 0.1


@jax.jit
def step(x):
    return x * LR


def set_lr(value):
    global LR
    LR = value


class Trainer:
    def __init__(self):
        self.scale = 1.0

    @partial(jax.jit, static_argnums=0)
    def fit(self, x):
        return x * self.scale

    def rescale(self, value):
        self.scale = value
"""
STALE_SCRIPT = "from pkg.train import set_lr, step\n\nstep(1.0)\nset_lr(0.01)\nstep(1.0)\n"
SET_UP_SCRIPT = "from pkg import train\n\ntrain.set_lr(0.01)\ntrain.step(1.0)\ntrain.step(2.0)\n"


def _notebook(*cells: str) -> str:
    return json.dumps(
        {
            "cells": [
                {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                 "source": source.splitlines(keepends=True)}
                for source in cells
            ],
            "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(TRAIN)
    (tmp_path / "scripts").mkdir()
    return tmp_path


def _check(*argv: str) -> list[dict[str, object]]:
    out = io.StringIO()
    main(["check", "--format", "json", *argv], stdout=out, stderr=io.StringIO())
    return list(json.loads(out.getvalue()))


def test_a_script_of_the_project_is_the_witness(project: Path) -> None:
    (project / "scripts" / "run.py").write_text(STALE_SCRIPT)
    (finding,) = _check("--no-cache", str(project / "pkg" / "train.py"))
    assert finding["code"] == "JC102" and finding["name"] == "LR"
    assert [(s["path"], s["line"], s["role"], s["via"]) for s in finding["witness"]] == [  # type: ignore[union-attr]
        ("scripts/run.py", 3, "trace", "step"),
        ("scripts/run.py", 4, "change", "set_lr"),
        ("scripts/run.py", 5, "reuse", "step"),
    ]
    assert str(finding["message"]).endswith(
        "traced in scripts/run.py at line 3 in 'step()', changed in scripts/run.py at line 4 by "
        "'set_lr()', reused in scripts/run.py at line 5 in 'step()'"
    )


PHASES = """import jax
import jax.numpy as jnp


def phases(scales=(1.0, 2.0), fracs=(0.5, 1.0)):
    @jax.jit
    def loss(batch):
        return jnp.mean(batch) * scale

    ts = jnp.arange(100.0)
    n = ts.shape[0]
    for scale, frac in zip(scales, fracs):
        print(float(loss(ts[: int(n * frac)])))
"""


def test_phases_sliced_apart_by_their_defaults_are_an_api_hazard_until_a_module_calls_them(
    project: Path,
) -> None:
    """Fractions that give each phase its own length leave a hazard of what a caller may give;
    a call from another module of the project, with values this module does not show, makes
    the loop's path the witness."""
    (project / "pkg" / "phased.py").write_text(PHASES)
    phased = str(project / "pkg" / "phased.py")
    assert _check("--no-cache", phased) == []
    (hazard,) = _check("--no-cache", "--extend-select", "JC2", phased)
    assert hazard["code"] == "JC201"
    assert str(hazard["message"]).endswith(
        "API hazard: stale if a caller outside the project runs 'phases()' with values that "
        "give two passes of the loop at line 12 arguments of the same shapes"
    )
    (project / "scripts" / "run.py").write_text(
        "from pkg.phased import phases\n\nphases(fracs=(1.0, 1.0))\n"
    )
    (finding,) = _check("--no-cache", phased)
    assert finding["code"] == "JC101"
    assert [(s["line"], s["role"]) for s in finding["witness"]] == [  # type: ignore[union-attr]
        (13, "trace"), (12, "change"), (13, "reuse"),
    ]  # fmt: skip


def test_a_link_that_leads_nowhere_or_to_itself_is_no_file_of_the_project(
    project: Path,
) -> None:
    """``a.py -> a.py`` or a link to a removed file beside the modules: the project's other
    files are still read, and the run neither fails nor reports an analysis error."""
    (project / "scripts" / "run.py").write_text(STALE_SCRIPT)
    (project / "scripts" / "loop.py").symlink_to("loop.py")
    (project / "scripts" / "gone.py").symlink_to("removed.py")
    (finding,) = _check("--no-cache", str(project / "pkg" / "train.py"))
    assert finding["code"] == "JC102" and finding["name"] == "LR"


def test_set_up_before_the_first_call_stays_a_hazard(project: Path) -> None:
    (project / "scripts" / "run.py").write_text(SET_UP_SCRIPT)
    train = str(project / "pkg" / "train.py")
    assert _check("--no-cache", train) == []
    codes = [f["code"] for f in _check("--no-cache", "--extend-select", "JC2", train)]
    assert codes == ["JC202", "JC204"]


def test_a_notebook_star_importing_the_module_is_the_witness(project: Path) -> None:
    notebook = _notebook(
        "from pkg.train import *\nt = Trainer()\n", "t.fit(1.0)\nt.rescale(2.0)\nt.fit(1.0)\n"
    )
    (project / "demo.ipynb").write_text(notebook)
    (finding,) = _check("--no-cache", str(project / "pkg" / "train.py"))
    assert finding["code"] == "JC104"
    steps = finding["witness"]
    assert [(s["path"], s["line"], s["role"]) for s in steps] == [  # type: ignore[union-attr]
        ("demo.ipynb:cell 2", 1, "trace"),
        ("demo.ipynb:cell 2", 2, "change"),
        ("demo.ipynb:cell 2", 3, "reuse"),
    ]


def test_a_loop_in_another_module_is_the_witness(project: Path) -> None:
    (project / "scripts" / "loop.py").write_text(
        "import pkg.train as tr\n\n\ndef main():\n    for lr in (0.1, 0.01):\n"
        "        tr.set_lr(lr)\n        tr.step(1.0)\n"
    )
    (finding,) = _check("--no-cache", str(project / "pkg" / "train.py"))
    assert [(s["line"], s["role"], s["again"]) for s in finding["witness"]] == [  # type: ignore[union-attr]
        (7, "trace", None),
        (6, "change", None),
        (7, "reuse", "next pass of the loop at line 5"),
    ]


def test_the_cache_follows_the_other_modules(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A finding that depends on another file changes when that file does, in one process
    (an editor's) as across runs."""
    monkeypatch.setenv("FLAKE8_JAX_CLOSURE_CACHE_DIR", str(tmp_path / "cache"))
    run = project / "scripts" / "run.py"
    run.write_text(STALE_SCRIPT)
    train = str(project / "pkg" / "train.py")
    assert len(_check(train)) == 1
    run.write_text(SET_UP_SCRIPT)
    assert _check(train) == []
    run.write_text(STALE_SCRIPT)
    assert len(_check(train)) == 1


def test_the_flake8_plugin_sees_the_project(project: Path) -> None:
    (project / "scripts" / "run.py").write_text(STALE_SCRIPT)
    completed = subprocess.run(
        [sys.executable, "-m", "flake8", "--select=JC", "pkg/train.py"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert completed.stdout.count(": JC102 ") == 1
    assert "traced in scripts/run.py at line 3" in completed.stdout


def test_module_names_and_the_root(project: Path) -> None:
    train = project / "pkg" / "train.py"
    assert project_root(train) == project.resolve()
    assert module_names(train, project) == {"pkg.train", "train"}
    assert module_names(project / "pkg" / "__init__.py", project) == {"pkg"}


def test_files_without_the_entry_points_are_never_parsed(project: Path) -> None:
    (project / "scripts" / "other.py").write_text("import pkg.train\nprint('no calls here')\n")
    (project / "scripts" / "broken.py").write_text("def broken(:\n")
    index = ProjectIndex(project)
    assert index.witness(project / "pkg" / "train.py", ["set_lr"], ["step"]) is None
    assert not index._calls  # neither file names set_lr or step


FORCE = """import jax.numpy as jnp


class Force:
    def __init__(self, scale):
        self.scale = scale
        self.params = jnp.ones(3)

    def forward(self, x, params):
        return self._energy(x * params)

    def _energy(self, y):
        return jnp.sum(y) * self.scale
"""
FORCE_SCRIPT = """import jax
import jax.numpy as jnp

from pkg.force import Force

model = Force(3.0)


@jax.jit
def loss(params, x):
    return model.forward(x, params)


x = jnp.arange(3.0)
for step in range(3):
    loss(model.params, x)
    model.{attribute} = model.{attribute} * 0.5
"""


@pytest.mark.parametrize(
    ("attribute", "findings"), [("params", 0), ("scale", 1)], ids=["not-read", "read"]
)
def test_a_method_of_a_class_from_another_module_reads_what_its_body_reads(
    project: Path, attribute: str, findings: int
) -> None:
    """``model.forward(x, params)`` on an object of a class another module of the project
    defines reads what ``forward`` reads of ``self`` there: a change of ``model.params`` never
    reaches the trace, one of ``model.scale`` does."""
    (project / "pkg" / "force.py").write_text(FORCE)
    script = project / "scripts" / "fit.py"
    script.write_text(FORCE_SCRIPT.format(attribute=attribute))
    found = _check("--no-cache", str(script))
    assert [(f["code"], f["name"]) for f in found] == [("JC103", "model")] * findings


HELD_SCRIPT = """from functools import partial

import jax
import jax.numpy as jnp

from pkg.force import Force


class Trainer:
    def __init__(self):
        self.model = Force(3.0)

    @partial(jax.jit, static_argnums=0)
    def loss(self, params, x):
        return self.model.forward(x, params)

    def train(self):
        x = jnp.arange(3.0)
        for step in range(3):
            self.loss(self.model.params, x)
            self.model.{attribute} = self.model.{attribute} * 0.5


Trainer().train()
"""


STATE_PROPERTY = """
    @property
    def state(self):
        return self.{attribute}

    @state.setter
    def state(self, value):
        self.{attribute} = value
"""


@pytest.mark.parametrize(
    ("attribute", "findings", "base"),
    [
        ("params", 0, ""),
        ("scale", 1, ""),
        ("params", 1, "(Base)"),
        ("state", 0, "params"),
        ("state", 1, "scale"),
    ],
    ids=["not-read", "read", "base-may-set", "setter-stores-unread", "setter-stores-read"],
)
def test_an_object_held_by_a_trainer_reads_what_its_class_in_another_module_reads(
    project: Path, attribute: str, findings: int, base: str
) -> None:
    """``self.model.forward(x, params)`` in a static-``self`` method, on ``self.model =
    Force(3.0)`` of a class another module defines, reads what ``forward`` reads there; a
    class with a base class may turn a store into a property's setter; a property's setter
    that only stores an attribute changes that attribute."""
    force = FORCE
    if attribute == "state":
        force += STATE_PROPERTY.format(attribute=base)
    elif base:
        force = FORCE.replace("class Force:", f"class Force{base}:")
    (project / "pkg" / "force.py").write_text(force)
    script = project / "scripts" / "held.py"
    script.write_text(HELD_SCRIPT.format(attribute=attribute))
    found = _check("--no-cache", str(script))
    assert [(f["code"], f["name"]) for f in found] == [("JC104", "self.model")] * findings


def test_a_class_from_another_module_with_bases_reads_its_own_attributes(project: Path) -> None:
    """A class with a base class: its own methods, reading attributes its own methods store,
    read those; a method it inherits may read anything."""
    (project / "pkg" / "force.py").write_text(FORCE.replace("class Force:", "class Force(Base):"))
    script = project / "scripts" / "fit.py"
    script.write_text(FORCE_SCRIPT.format(attribute="params"))
    assert _check("--no-cache", str(script)) == []
    inherited = FORCE.replace("class Force:", "class Force(Base):").replace(
        "return self._energy(x * params)", "return self.inherited(x * params)"
    )
    (project / "pkg" / "force.py").write_text(inherited)
    assert [f["code"] for f in _check("--no-cache", str(script))] == ["JC103"]


def test_a_relative_import_names_the_module(project: Path) -> None:
    (project / "pkg" / "force.py").write_text(FORCE)
    script = project / "pkg" / "fit.py"
    script.write_text(
        FORCE_SCRIPT.format(attribute="params").replace("from pkg.force", "from .force")
    )
    assert _check("--no-cache", str(script)) == []


@pytest.mark.parametrize(
    ("package_init", "imported", "made"),
    [
        ("from .nn.force import Force\n", "from pkg import Force", "Force(3.0)"),
        ("from pkg.nn.force import Force as Force\n", "from pkg import Force", "Force(3.0)"),
        ("from .nn import force\n", "from pkg import force as physics", "physics.Force(3.0)"),
        ("import pkg.nn.force as force\n", "import pkg", "pkg.force.Force(3.0)"),
    ],
    ids=["class-relative", "class-absolute", "module-relative", "module-attribute"],
)
@pytest.mark.parametrize(("attribute", "findings"), [("params", 0), ("scale", 1)])
def test_a_class_re_exported_by_its_package_is_found_where_it_is_defined(
    project: Path, package_init: str, imported: str, made: str, attribute: str, findings: int
) -> None:
    """``from pkg import Force`` where ``pkg/__init__.py`` imports it from ``pkg.nn.force``,
    or ``from pkg import force`` where it imports that module: the method's reads are those
    of the class where it is defined."""
    (project / "pkg" / "nn").mkdir()
    (project / "pkg" / "nn" / "__init__.py").write_text("")
    (project / "pkg" / "nn" / "force.py").write_text(FORCE)
    (project / "pkg" / "__init__.py").write_text(package_init)
    script = project / "scripts" / "fit.py"
    text = FORCE_SCRIPT.format(attribute=attribute).replace("from pkg.force import Force", imported)
    script.write_text(text.replace("Force(3.0)", made))
    found = _check("--no-cache", str(script))
    assert [(f["code"], f["name"]) for f in found] == [("JC103", "model")] * findings


def test_a_re_export_of_another_name_or_a_loop_of_imports_says_nothing(project: Path) -> None:
    """A package that imports a name it does not define from a module outside the project,
    or imports that go round in a circle, do not say the class: the method may read anything."""
    (project / "pkg" / "__init__.py").write_text("from pkg.a import Force\n")
    (project / "pkg" / "a.py").write_text("from pkg.b import Force\n")
    (project / "pkg" / "b.py").write_text("from pkg.a import Force\n")
    script = project / "scripts" / "fit.py"
    script.write_text(
        FORCE_SCRIPT.format(attribute="params").replace(
            "from pkg.force import Force", "from pkg import Force"
        )
    )
    assert [f["code"] for f in _check("--no-cache", str(script))] == ["JC103"]


def test_the_cache_follows_the_class_in_another_module(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLAKE8_JAX_CLOSURE_CACHE_DIR", str(tmp_path / "cache"))
    force = project / "pkg" / "force.py"
    force.write_text(FORCE)
    script = project / "scripts" / "fit.py"
    script.write_text(FORCE_SCRIPT.format(attribute="params"))
    assert _check(str(script)) == []
    force.write_text(FORCE.replace("* self.scale", "* self.scale * self.params[0]"))
    assert [f["code"] for f in _check(str(script))] == ["JC103"]


def test_a_wrapped_method_of_a_class_from_another_module(project: Path) -> None:
    """``model.batch_forward = jax.vmap(model.forward, ...)`` reads the attribute and what
    ``forward`` reads, for a class another module defines as for the module's own."""
    (project / "pkg" / "force.py").write_text(FORCE)
    script = project / "scripts" / "fit.py"
    source = (
        FORCE_SCRIPT.format(attribute="params")
        .replace(
            "model = Force(3.0)\n",
            "model = Force(3.0)\n"
            "model.batch_forward = jax.vmap(model.forward, in_axes=(0, None))\n",
        )
        .replace("return model.forward(x, params)", "return model.batch_forward(x[None], params)")
    )
    script.write_text(source)
    assert _check("--no-cache", str(script)) == []
    script.write_text(source.replace("model.params = model.params", "model.scale = model.scale"))
    assert [f["code"] for f in _check("--no-cache", str(script))] == ["JC103"]


MEMOISED_FACTORY = """import functools

import jax
import jax.numpy as jnp


@functools.cache
def get_product(size):
    indices = []
    for i in range(size):
        indices.append(size - 1 - i)

    def product(values):
        return values[jnp.array(indices)]

    return jax.jit(product)
"""


def test_a_memoised_factory_called_in_a_loop_elsewhere_makes_no_witness(project: Path) -> None:
    """A memoised factory fills its own tables before making its compiled object: called in a
    loop by another module, each call returns the object its first run made, without running
    the body again, so no call changes what that object read."""
    (project / "pkg" / "ops.py").write_text(MEMOISED_FACTORY)
    (project / "pkg" / "inverse.py").write_text(
        "from .ops import get_product\n\n\ndef inverse(size, steps):\n"
        "    return [get_product(size) for _ in range(steps)]\n\n\n"
        "def run(size, steps):\n    mults = []\n    for _ in range(steps):\n"
        "        mults.append(get_product(size))\n    return mults\n"
    )
    assert _check("--no-cache", "--select", "JC", str(project / "pkg" / "ops.py")) == []


LOOPING = """import jax

LR = 0.1


@jax.jit
def step(x):
    return x * LR


def train(xs):
    global LR
    for x in xs:
        step(x)
        LR = LR / 2
"""


def test_a_function_another_module_runs_makes_its_path_a_witness(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stale loop of ``train`` is a default finding once another file of the project runs
    it (the cache follows that file); before, nothing shows it running: an API hazard."""
    monkeypatch.setenv("FLAKE8_JAX_CLOSURE_CACHE_DIR", str(tmp_path / "cache"))
    (project / "pkg" / "loop.py").write_text(LOOPING)
    target = str(project / "pkg" / "loop.py")
    assert [f["code"] for f in _check("--select", "JC", target)] == ["JC202"]
    script = project / "scripts" / "run.py"
    script.write_text("from pkg.loop import train\n\ntrain([1.0, 2.0])\n")
    assert [f["code"] for f in _check("--select", "JC", target)] == ["JC102"]


LOADER = """import numpy as np


def load_dataset(arrays, batch_size):
    num_records = len(arrays)

    def init():
        return num_records // batch_size, np.random.permutation(num_records)

    def grow(extra):
        {grow}

    return init, grow
"""
EPOCHS = """import jax
import numpy as np
from jax import lax

from pkg.data import load_dataset


def main():
    train_init, grow = load_dataset(np.ones((8, 3)), 4)
    num_train, train_idx = train_init()

    @jax.jit
    def epoch(total):
        return lax.fori_loop(0, num_train, lambda i, acc: acc + 1.0, total)

    total = 0.0
    for _ in range(3):
        num_train, train_idx = train_init()
        total = epoch(total)
        grow(4)

main()
"""


@pytest.mark.parametrize(
    ("grow", "findings"),
    [("print(extra)", 0), ("nonlocal num_records\n        num_records += extra", 1)],
)
def test_a_count_a_closure_of_another_module_fixes_is_the_same_each_pass(
    project: Path, grow: str, findings: int
) -> None:
    """``num_train, idx = train_init()`` in each epoch, where ``train_init`` is the closure a
    loader of another module returned: its count is fixed when the loader made it, unless the
    loader's other closure changes what it is computed from (``nonlocal``)."""
    (project / "pkg" / "data.py").write_text(LOADER.replace("{grow}", grow))
    script = project / "scripts" / "epochs.py"
    script.write_text(EPOCHS)
    found = _check("--no-cache", str(script))
    assert [(f["code"], f["name"]) for f in found] == [("JC101", "num_train")] * findings


def test_the_cache_follows_a_function_of_another_module(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a function of another module does decides a finding (here whether a loader's
    count can change), so a change of that module is not answered from the cache."""
    monkeypatch.setenv("FLAKE8_JAX_CLOSURE_CACHE_DIR", str(tmp_path / "cache"))
    data = project / "pkg" / "data.py"
    data.write_text(LOADER.replace("{grow}", "print(extra)"))
    script = project / "scripts" / "epochs.py"
    script.write_text(EPOCHS)
    assert _check(str(script)) == []
    data.write_text(LOADER.replace("{grow}", "nonlocal num_records\n        num_records += extra"))
    assert [f["code"] for f in _check(str(script))] == ["JC101"]


RENDER = """import jax
import jax.numpy as jnp


def render_image(render_fn, rng, state, rays):
    return render_fn(rng, rays) * state

{star}
state = 1.0


@jax.jit
def render_fn(key, rays):
    return rays * state


for step in range(3):
    state = float(step)
    print(render_image(render_fn, jax.random.PRNGKey(step), jnp.ones(3)))
"""


@pytest.mark.parametrize(
    ("star", "findings"),
    [("", 0), ("from pkg.fast_render import *  # noqa: E402,F403", 1)],
)
def test_a_star_import_may_bind_the_called_name_again(
    project: Path, star: str, findings: int
) -> None:
    """``render_image(render_fn, key, rays)`` cannot bind to the module's four-parameter ``def``,
    so it runs nothing; unless a star import after the ``def`` may bind ``render_image`` to
    another function, here one of three parameters that calls ``render_fn`` every pass."""
    (project / "pkg" / "fast_render.py").write_text(
        "def render_image(render_fn, rng, rays):\n    return render_fn(rng, rays)\n"
    )
    script = project / "scripts" / "render.py"
    script.write_text(RENDER.replace("{star}", star))
    found = _check("--no-cache", str(script))
    assert [(f["code"], f["name"]) for f in found] == [("JC102", "state")] * findings


RENDER_ELSEWHERE = """def render_image(render_fn, rays):
    {keep}total = 0.0
    for chunk in rays:
        total = total + render_fn(chunk)
    return {{"rgb": total}}
"""
EVALUATE = """import functools

import jax
import jax.numpy as jnp

from pkg.render import render_image


def main():
    mask = 1.0
    for step in range(4):
        if step % 2 == 0:
            mask = float(step)

            def render(variables, rays):
                return rays * variables * mask

            render_fast = jax.jit(render)
        rendering = render_image(functools.partial(render_fast, 2.0), jnp.ones((2, 3)))
        print(rendering["rgb"])


main()
"""


@pytest.mark.parametrize(
    ("keep", "findings"),
    [("", 0), ("KEPT.append(render_fn)\n    ", 1)],
)
def test_a_function_of_another_module_that_only_calls_what_it_is_given_runs_it_now(
    project: Path, keep: str, findings: int
) -> None:
    """Each change of ``mask`` is followed by a new ``def`` and a new compiled object, and the
    only use hands that object to ``render_image`` of another module. A ``render_image`` whose
    body only calls it runs it then and returns data: the result's later uses
    (``rendering["rgb"]``) are no calls of the compiled object, and no pass reuses an old
    trace. One that also keeps it (in a module list) may have it called at any later time."""
    prefix = "KEPT = []\n\n\n" if keep else ""
    (project / "pkg" / "render.py").write_text(prefix + RENDER_ELSEWHERE.format(keep=keep))
    script = project / "scripts" / "evaluate.py"
    script.write_text(EVALUATE)
    found = _check("--no-cache", str(script))
    assert [(f["code"], f["name"]) for f in found] == [("JC101", "mask")] * findings


MODEL = """from functools import partial

import jax

from pkg import settings


class Smoother:
    def __init__(self, alpha):
        self.alpha = alpha
        self.blend = jax.jit(self._blend)

    @partial(jax.jit, static_argnums=0)
    def smooth(self, x):
        return x * self.alpha

    def _blend(self, x):
        return x * (1 - self.alpha)


@jax.jit
def update(w, g):
    return w - settings.LR * g * settings.DECAY
"""
SETTINGS = "LR = 0.1\nDECAY = 1.0\n"


@pytest.fixture
def stored(project: Path) -> Path:
    (project / "pkg" / "model.py").write_text(MODEL)
    (project / "pkg" / "settings.py").write_text(SETTINGS)
    return project


def _steps(finding: dict[str, object]) -> list[tuple[object, ...]]:
    return [(s["path"], s["line"], s["role"], s["via"], s["again"]) for s in finding["witness"]]  # type: ignore[attr-defined, index]


@pytest.mark.parametrize(
    ("method", "held"), [("smooth", "jax.jit, static self"), ("blend", "jax.jit, bound method")]
)
def test_an_attribute_stored_on_an_object_in_a_script_is_the_change(
    stored: Path, method: str, held: str
) -> None:
    """``s.alpha = 0.9`` in a script between two calls of the compiled method it imported:
    the compiled method holds ``self`` (static, or a bound method compiled in the constructor
    and kept on the object), so the second call reuses the first trace."""
    (stored / "scripts" / "run.py").write_text(
        f"from pkg.model import Smoother\n\ns = Smoother(0.5)\ns.{method}(1.0)\n"
        f"s.alpha = 0.9\ns.{method}(1.0)\n"
    )
    (finding,) = _check("--no-cache", str(stored / "pkg" / "model.py"))
    assert finding["code"] == "JC104" and finding["name"] == "self.alpha"
    via = f"Smoother.{method}"
    assert _steps(finding) == [
        ("scripts/run.py", 4, "trace", via, None),
        ("scripts/run.py", 5, "change", None, None),
        ("scripts/run.py", 6, "reuse", via, None),
    ]
    assert f"({held}) reads 'self.alpha', changed in scripts/run.py at line 5 (attribute " in str(
        finding["message"]
    )
    # The values stored there decide how the fix passes the attribute: unseen here.
    fix = finding["fix"]
    assert fix["applicability"] == "unsafe"  # type: ignore[index]
    assert "'self.alpha' is also set in scripts/run.py" in fix["message"]  # type: ignore[index]


@pytest.mark.parametrize(
    "script",
    [
        # Set before the first call.
        "s = Smoother(0.5)\ns.alpha = 0.9\ns.smooth(1.0)\ns.smooth(1.0)\n",
        # Stored on another object than the one called.
        "s = Smoother(0.5)\nt = Smoother(0.5)\ns.smooth(1.0)\nt.alpha = 0.9\ns.smooth(1.0)\n",
        # The name holds a new object by the store: a new static self traces anew.
        "s = Smoother(0.5)\ns.smooth(1.0)\ns = Smoother(0.5)\ns.alpha = 0.9\ns.smooth(1.0)\n",
        # A new object each pass.
        "for a in (0.5, 0.9):\n    s = Smoother(0.5)\n    s.alpha = a\n    s.smooth(1.0)\n",
        # The same value stored before each pass's call.
        "s = Smoother(0.5)\nfor x in (1.0, 2.0):\n    s.alpha = 0.9\n    s.smooth(x)\n",
        # The wrapper the constructor kept is made again after the store: a new trace.
        "import jax\ns = Smoother(0.5)\ns.blend(1.0)\ns.alpha = 0.9\n"
        "s.blend = jax.jit(s._blend)\ns.blend(1.0)\n",
    ],
)
def test_an_attribute_stored_where_no_call_reuses_an_old_trace_is_no_change(
    stored: Path, script: str
) -> None:
    (stored / "scripts" / "run.py").write_text("from pkg.model import Smoother\n\n" + script)
    assert _check("--no-cache", str(stored / "pkg" / "model.py")) == []


@pytest.mark.parametrize(
    ("imported", "name"),
    [("from pkg import settings", "settings"), ("import pkg.settings as cfg", "cfg")],
)
def test_an_attribute_of_a_module_stored_in_a_script_is_the_change(
    stored: Path, imported: str, name: str
) -> None:
    """``settings.LR = 0.5`` in a script between two calls of ``update``, which reads
    ``settings.LR`` at its trace: the module's attribute is a value baked into the trace."""
    (stored / "scripts" / "run.py").write_text(
        f"{imported}\nfrom pkg.model import update\n\nw = update(1.0, 1.0)\n"
        f"for epoch in range(3):\n    w = update(w, 1.0)\n    {name}.LR *= 0.5\n"
    )
    (finding,) = _check("--no-cache", str(stored / "pkg" / "model.py"))
    assert finding["code"] == "JC103" and finding["name"] == "settings"
    assert "reads 'settings.LR', mutated in place in scripts/run.py at line 7 (" in str(
        finding["message"]
    )
    assert _steps(finding) == [
        ("scripts/run.py", 6, "trace", "update", None),
        ("scripts/run.py", 7, "change", None, None),
        ("scripts/run.py", 6, "reuse", "update", "next pass of the loop at line 5"),
    ]


@pytest.mark.parametrize(
    ("script", "findings"),
    [
        ("settings.LR = 0.5\nupdate(1.0, 1.0)\nupdate(1.0, 1.0)\n", 0),
        ("for lr in (0.1, 0.2):\n    settings.DECAY = 0.5\n    update(1.0, lr)\n", 0),
        ("for lr in (0.1, 0.2):\n    update(1.0, lr)\n    settings.DECAY = 0.5\n", 1),
        # Another module's attribute of the same name.
        ("other.LR = 0.5\nupdate(1.0, 1.0)\nother.LR = 0.7\nupdate(1.0, 1.0)\n", 0),
        # The literal the trace read, written again; another literal; or the first value.
        ("settings.LR = 0.5\nupdate(1.0, 1.0)\nsettings.LR = 0.5\nupdate(1.0, 1.0)\n", 0),
        ("settings.LR = 0.5\nupdate(1.0, 1.0)\nsettings.LR = 0.7\nupdate(1.0, 1.0)\n", 1),
        ("update(1.0, 1.0)\nsettings.LR = 0.1\nupdate(1.0, 1.0)\n", 1),
    ],
)
def test_a_module_attribute_stored_before_every_call_is_no_change(
    stored: Path, script: str, findings: int
) -> None:
    (stored / "pkg" / "other.py").write_text("LR = 0.1\n")
    (stored / "scripts" / "run.py").write_text(
        "from pkg import other, settings\nfrom pkg.model import update\n\n" + script
    )
    found = _check("--no-cache", str(stored / "pkg" / "model.py"))
    assert [f["code"] for f in found] == ["JC103"] * findings


def test_the_cache_follows_a_store_in_another_module(
    stored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLAKE8_JAX_CLOSURE_CACHE_DIR", str(tmp_path / "cache"))
    run = stored / "scripts" / "run.py"
    model = str(stored / "pkg" / "model.py")
    stale = "from pkg import settings\nfrom pkg.model import update\n\nupdate(1.0, 1.0)\n"
    run.write_text(stale + "settings.LR = 0.5\nupdate(1.0, 1.0)\n")
    assert len(_check(model)) == 1
    run.write_text(stale)
    assert _check(model) == []


SIM = """import jax

DT = 0.01


def energy(x):
    return x * x


@jax.jit
def integrate(x):
    return x + DT * energy(x)
"""


@pytest.fixture
def simulated(project: Path) -> Path:
    (project / "pkg" / "sim.py").write_text(SIM)
    (project / "pkg" / "other.py").write_text("DT = 0.5\n")
    return project


def test_a_global_bound_again_by_another_module_is_the_change(simulated: Path) -> None:
    """``sim.DT = dt`` in a sweep of another module, between two calls of ``sim.integrate``,
    which read ``DT`` at its trace: the global of ``sim`` is bound again, and the compiled
    calls keep the first value."""
    (simulated / "scripts" / "sweep.py").write_text(
        "from pkg import sim\n\n\ndef sweep(dts):\n    for dt in dts:\n        sim.DT = dt\n"
        "        print(sim.integrate(1.0))\n"
    )
    (finding,) = _check("--no-cache", str(simulated / "pkg" / "sim.py"))
    assert finding["code"] == "JC102" and finding["name"] == "DT"
    assert "reads global 'DT', rebound in scripts/sweep.py at line 6 (attribute assigned)" in str(
        finding["message"]
    )
    assert _steps(finding) == [
        ("scripts/sweep.py", 7, "trace", "integrate", None),
        ("scripts/sweep.py", 6, "change", None, None),
        ("scripts/sweep.py", 7, "reuse", "integrate", "next pass of the loop at line 5"),
    ]
    fix = finding["fix"]
    assert fix["applicability"] == "unsafe"  # type: ignore[index]
    assert "'DT' is also set in scripts/sweep.py" in fix["message"]  # type: ignore[index]


@pytest.mark.parametrize(
    "script",
    [
        # Set before every call.
        "sim.DT = 0.02\nsim.integrate(1.0)\nsim.integrate(2.0)\n",
        # The same literal stored before the call of each pass.
        "for x in (1.0, 2.0):\n    sim.DT = 0.02\n    sim.integrate(x)\n",
        # Another module's global of the same name.
        "sim.integrate(1.0)\nother.DT = 0.02\nsim.integrate(1.0)\n",
        # A function, not a value: stubbing it is not timed here.
        "sim.integrate(1.0)\nsim.energy = abs\nsim.integrate(1.0)\n",
        # A name of the script itself.
        "sim.integrate(1.0)\nDT = 0.02\nsim.integrate(1.0)\n",
    ],
)
def test_a_global_bound_where_no_call_reuses_an_old_trace_is_no_change(
    simulated: Path, script: str
) -> None:
    (simulated / "scripts" / "run.py").write_text("from pkg import other, sim\n\n" + script)
    assert _check("--no-cache", str(simulated / "pkg" / "sim.py")) == []


SETTINGS_WITH_SETTER = """LR = 0.1
DECAY = 1.0


def enable_decay(value):
    global DECAY
    DECAY = value


def report():
    return DECAY
"""


@pytest.mark.parametrize(
    ("script", "steps"),
    [
        (
            "for epoch in range(3):\n    update(1.0, 1.0)\n    settings.enable_decay(0.5)\n",
            [
                ("scripts/run.py", 5, "trace", "update", None),
                ("scripts/run.py", 6, "change", "enable_decay", None),
                ("scripts/run.py", 5, "reuse", "update", "next pass of the loop at line 4"),
            ],
        ),
        ("settings.enable_decay(0.5)\nupdate(1.0, 1.0)\nupdate(1.0, 1.0)\n", None),
        # A function of the module that only reads the global.
        ("update(1.0, 1.0)\nsettings.report()\nupdate(1.0, 1.0)\n", None),
    ],
)
def test_a_function_binding_a_module_global_called_in_a_script_is_the_change(
    stored: Path, script: str, steps: list[tuple[object, ...]] | None
) -> None:
    """``settings.enable_decay(0.5)``, whose ``global DECAY`` binds the attribute that the
    compiled ``update`` reads as ``settings.DECAY``, between two calls of ``update``."""
    (stored / "pkg" / "settings.py").write_text(SETTINGS_WITH_SETTER)
    (stored / "scripts" / "run.py").write_text(
        "from pkg import settings\nfrom pkg.model import update\n\n" + script
    )
    found = _check("--no-cache", str(stored / "pkg" / "model.py"))
    if steps is None:
        assert found == []
        return
    (finding,) = found
    assert finding["code"] == "JC103" and _steps(finding) == steps
    assert "reads 'settings.DECAY', mutated in place in scripts/run.py at line 6 by " in str(
        finding["message"]
    )


FITTER = """import jax


class Fitter:
    def __init__(self, decay):
        self.decay = decay
        self._update = jax.jit(self._update_impl)

    def _update_impl(self, w):
        return w * self.decay

    def fit(self, w, epochs):
        for _ in range(epochs):
            w = self._update(w)
        return w
"""


@pytest.mark.parametrize(
    ("script", "steps"),
    [
        (
            "f = Fitter(0.5)\nf.fit(1.0, 2)\nf.decay = 0.1\nf.fit(1.0, 2)\n",
            [
                ("scripts/run.py", 4, "trace", "Fitter.fit", None),
                ("scripts/run.py", 5, "change", None, None),
                ("scripts/run.py", 6, "reuse", "Fitter.fit", None),
            ],
        ),
        ("f = Fitter(0.5)\nf.decay = 0.1\nf.fit(1.0, 2)\nf.fit(1.0, 2)\n", None),
        ("f = Fitter(0.5)\ng = Fitter(0.5)\nf.fit(1.0, 2)\ng.decay = 0.1\nf.fit(1.0, 2)\n", None),
    ],
)
def test_a_store_between_calls_of_a_method_calling_the_kept_wrapper_is_the_change(
    project: Path, script: str, steps: list[tuple[object, ...]] | None
) -> None:
    """``trainer.fit(x)``, whose loop calls ``self._update``, the ``jax.jit`` of a bound method
    the constructor kept: a store on the object between two ``fit`` calls reaches no trace."""
    (project / "pkg" / "fitter.py").write_text(FITTER)
    (project / "scripts" / "run.py").write_text("from pkg.fitter import Fitter\n\n" + script)
    found = _check("--no-cache", str(project / "pkg" / "fitter.py"))
    if steps is None:
        assert found == []
        return
    (finding,) = found
    assert finding["code"] == "JC104" and _steps(finding) == steps


INTEGRATE = """import jax

from . import constants


@jax.jit
def simulate(x):
    return x * constants.G
"""


@pytest.mark.parametrize(
    ("script", "steps"),
    [
        (
            "for g in (1.0, 2.0):\n    phys.constants.G = g\n    phys.simulate(1.0)\n",
            [
                ("scripts/run.py", 6, "trace", "simulate", None),
                ("scripts/run.py", 5, "change", None, None),
                ("scripts/run.py", 6, "reuse", "simulate", "next pass of the loop at line 4"),
            ],
        ),
        # Another module's attribute of the same name.
        ("for g in (1.0, 2.0):\n    phys.other.G = g\n    phys.simulate(1.0)\n", None),
        # The same literal before each pass's call.
        ("for x in (1.0, 2.0):\n    phys.constants.G = 3.0\n    phys.simulate(x)\n", None),
    ],
)
def test_a_dotted_module_attribute_stored_around_a_re_exported_function_is_the_change(
    project: Path, script: str, steps: list[tuple[object, ...]] | None
) -> None:
    """``phys.constants.G = g`` between calls of ``phys.simulate``, which ``phys/__init__.py``
    imports from ``phys.integrate``, where it reads ``constants.G`` at its trace."""
    package = project / "phys"
    package.mkdir()
    (package / "__init__.py").write_text("from .integrate import simulate\n")
    (package / "constants.py").write_text("G = 9.81\n")
    (package / "other.py").write_text("G = 1.0\n")
    (package / "integrate.py").write_text(INTEGRATE)
    (project / "scripts" / "run.py").write_text(
        "import phys\nimport phys.constants\nimport phys.other\n" + script
    )
    found = _check("--no-cache", str(package / "integrate.py"))
    if steps is None:
        assert found == []
        return
    (finding,) = found
    assert finding["code"] == "JC103" and _steps(finding) == steps


FORWARD = """from functools import partial

import jax

from pkg import settings


@partial(jax.jit, static_argnames="phase")
def forward(x, phase):
    return x * settings.KEEP if phase == "train" else x
"""


@pytest.mark.parametrize(
    ("second", "findings"),
    [
        ('forward(1.0, phase="eval")', 0),  # another static value: a trace of its own
        ('forward(1.0, phase="train")', 1),
        ("forward(1.0, phase=mode)", 1),  # the code does not say which
        ('forward(1.0, "eval")', 1),  # keyed by position, not by keyword: another key
    ],
)
def test_calls_given_other_static_constants_share_no_trace(
    stored: Path, second: str, findings: int
) -> None:
    """``forward(x, phase="train")``, a change, then ``forward(x, phase="eval")``: JAX keys
    the trace on the static value, so the second call traces anew and reads the change."""
    (stored / "pkg" / "forward.py").write_text(FORWARD)
    (stored / "scripts" / "run.py").write_text(
        "from pkg import settings\nfrom pkg.forward import forward\n\nmode = 'eval'\n"
        f'forward(1.0, phase="train")\nsettings.KEEP = 0.5\n{second}\n'
    )
    found = _check("--no-cache", str(stored / "pkg" / "forward.py"))
    assert [f["code"] for f in found] == ["JC103"] * findings


BASE_AGENT = """from functools import partial

import jax


class BaseAgent:
    def __init__(self, epsilon):
        self.epsilon = epsilon

    @partial(jax.jit, static_argnums=0)
    def act(self, q):
        return q * self.epsilon
"""


@pytest.mark.parametrize(
    ("subclass", "script", "steps"),
    [
        (
            "    def end_episode(self):\n        self.epsilon = self.epsilon * 0.5\n",
            "a = Explorer(0.4)\nfor episode in range(3):\n    a.act(1.0)\n    a.end_episode()\n",
            [
                ("scripts/run.py", 5, "trace", "Explorer.act", None),
                ("scripts/run.py", 6, "change", "Explorer.end_episode", None),
                ("scripts/run.py", 5, "reuse", "Explorer.act", "next pass of the loop at line 4"),
            ],
        ),
        # Set up before the first call.
        (
            "    def end_episode(self):\n        self.epsilon = self.epsilon * 0.5\n",
            "a = Explorer(0.4)\na.end_episode()\na.act(1.0)\na.act(1.0)\n",
            None,
        ),
        # Another object changed than the one called.
        (
            "    def end_episode(self):\n        self.epsilon = self.epsilon * 0.5\n",
            "a = Explorer(0.4)\nb = Explorer(0.4)\na.act(1.0)\nb.end_episode()\na.act(1.0)\n",
            None,
        ),
        # The method stores another attribute.
        (
            "    def end_episode(self):\n        self.episodes = 1\n",
            "a = Explorer(0.4)\na.act(1.0)\na.end_episode()\na.act(1.0)\n",
            None,
        ),
    ],
)
def test_a_method_of_a_subclass_in_another_file_storing_the_attribute_is_the_change(
    project: Path, subclass: str, script: str, steps: list[tuple[object, ...]] | None
) -> None:
    """``Explorer(BaseAgent)`` in another file, whose ``end_episode`` stores ``self.epsilon``,
    which the base's compiled ``act`` reads of its static ``self``."""
    (project / "pkg" / "base.py").write_text(BASE_AGENT)
    (project / "pkg" / "explorer.py").write_text(
        "from pkg.base import BaseAgent\n\n\nclass Explorer(BaseAgent):\n" + subclass
    )
    (project / "scripts" / "run.py").write_text("from pkg.explorer import Explorer\n\n" + script)
    found = _check("--no-cache", str(project / "pkg" / "base.py"))
    if steps is None:
        assert found == []
        return
    (finding,) = found
    assert finding["code"] == "JC104" and _steps(finding) == steps
    assert "'self.epsilon', changed in scripts/run.py at line 6 by 'Explorer.end_episode()'" in (
        str(finding["message"])
    )


def test_a_subclass_a_package_imports_is_that_subclass(project: Path) -> None:
    """``from pkg import Explorer``, where ``pkg/__init__.py`` imports it from
    ``pkg/explorer.py``: its ``end_episode`` between two ``act`` calls is the change."""
    (project / "pkg" / "base.py").write_text(BASE_AGENT)
    (project / "pkg" / "explorer.py").write_text(
        "from pkg.base import BaseAgent\n\n\nclass Explorer(BaseAgent):\n"
        "    def end_episode(self):\n        self.epsilon = self.epsilon * 0.5\n"
    )
    (project / "pkg" / "__init__.py").write_text("from .explorer import Explorer\n")
    (project / "scripts" / "run.py").write_text(
        "from pkg import Explorer\n\na = Explorer(0.4)\nfor episode in range(3):\n"
        "    a.act(1.0)\n    a.end_episode()\n"
    )
    (finding,) = _check("--no-cache", str(project / "pkg" / "base.py"))
    assert finding["code"] == "JC104" and _steps(finding) == [
        ("scripts/run.py", 5, "trace", "Explorer.act", None),
        ("scripts/run.py", 6, "change", "Explorer.end_episode", None),
        ("scripts/run.py", 5, "reuse", "Explorer.act", "next pass of the loop at line 4"),
    ]


SCALED = """import jax

from pkg import settings


def _scaled(x):
    return x * settings.SCALE


scaled = jax.jit(_scaled)
"""


@pytest.mark.parametrize(
    ("files", "script", "steps"),
    [
        # A function of another file that only stores; the compiled object called by the name
        # the module binds it to.
        (
            {"tune.py": "from pkg import settings\n\n\ndef adjust(v):\n    settings.SCALE = v\n"},
            "from pkg.scaled import scaled\nfrom pkg.tune import adjust\n\n"
            "for v in (1.0, 2.0):\n    scaled(1.0)\n    adjust(v)\n",
            [
                ("scripts/run.py", 5, "trace", "scaled", None),
                ("scripts/run.py", 6, "change", "adjust", None),
                ("scripts/run.py", 5, "reuse", "scaled", "next pass of the loop at line 4"),
            ],
        ),
        # A function of the script itself.
        (
            {},
            "from pkg import settings\nfrom pkg.scaled import scaled\n\n\ndef anneal(v):\n"
            "    settings.SCALE = v\n\n\nfor v in (1.0, 2.0):\n    anneal(v)\n"
            "    scaled(1.0)\n",
            [
                ("scripts/run.py", 11, "trace", "scaled", None),
                ("scripts/run.py", 10, "change", "anneal", None),
                ("scripts/run.py", 11, "reuse", "scaled", "next pass of the loop at line 9"),
            ],
        ),
        # The script's function stores before the only compiled call.
        (
            {},
            "from pkg import settings\nfrom pkg.scaled import scaled\n\n\ndef anneal(v):\n"
            "    settings.SCALE = v\n\n\nanneal(2.0)\nscaled(1.0)\n",
            None,
        ),
    ],
)
def test_a_store_by_a_function_the_script_calls_is_the_change(
    project: Path, files: dict[str, str], script: str, steps: list[tuple[object, ...]] | None
) -> None:
    """``settings.SCALE`` stored by a function a script calls between two calls of the compiled
    ``scaled`` (``scaled = jax.jit(_scaled)``): a function of another file that runs no
    compiled code itself, or one of the script's own."""
    (project / "pkg" / "settings.py").write_text("SCALE = 1.0\n")
    (project / "pkg" / "scaled.py").write_text(SCALED)
    for name, text in files.items():
        (project / "pkg" / name).write_text(text)
    (project / "scripts" / "run.py").write_text(script)
    found = _check("--no-cache", str(project / "pkg" / "scaled.py"))
    if steps is None:
        assert found == []
        return
    (finding,) = found
    assert finding["code"] == "JC103" and _steps(finding) == steps


BASE_TRAINER = """import jax
import jax.numpy as jnp


class BaseTrainer:
    def __init__(self, lr, clip):
        self.lr = lr
        self.clip = clip
        self._step = jax.jit(self._update)

    def _update(self, w, g):
        return w - self.lr * jnp.clip(g, -self.clip, self.clip)

    def end_epoch(self):
        pass

    def fit(self, w, g, epochs):
        for epoch in range(epochs):
            w = self._step(w, g)
            self.end_epoch()
        return w
"""
ANNEALED = """from pkg.base import BaseTrainer


class AnnealedTrainer(BaseTrainer):
    def end_epoch(self):
        self.clip = self.clip * 0.5
"""


@pytest.mark.parametrize(
    ("subclass", "script", "found"),
    [
        (ANNEALED, "t = AnnealedTrainer(0.1, 4.0)\nt.fit(1.0, 9.0, 3)\n", True),
        # Made through the package, which imports the subclass.
        (ANNEALED, "import pkg\n\nt = pkg.AnnealedTrainer(0.1, 4.0)\nt.fit(1.0, 9.0, 3)\n", True),
        # No object of the subclass is made: the base's hook runs, and stores nothing.
        (ANNEALED, "t = BaseTrainer(0.1, 4.0)\nt.fit(1.0, 9.0, 3)\n", False),
        # The subclass runs its own ``fit``, which calls no hook after a compiled call.
        (
            ANNEALED + "\n    def fit(self, w, g, epochs):\n        self.end_epoch()\n"
            "        return self._step(w, g)\n",
            "t = AnnealedTrainer(0.1, 4.0)\nt.fit(1.0, 9.0, 3)\n",
            False,
        ),
        # The override stores another attribute.
        (
            ANNEALED.replace("self.clip = self.clip", "self.epochs = 1"),
            "t = AnnealedTrainer(0.1, 4.0)\nt.fit(1.0, 9.0, 3)\n",
            False,
        ),
    ],
)
def test_a_hook_a_subclass_in_another_file_overrides_to_store_the_attribute_is_the_change(
    project: Path, subclass: str, script: str, found: bool
) -> None:
    """``fit`` runs the compiled ``self._step``, then ``self.end_epoch()``, which
    ``AnnealedTrainer`` in another file overrides to store ``self.clip``: on its objects the
    next pass reuses the first trace. The witness is the base's own loop."""
    (project / "pkg" / "base.py").write_text(BASE_TRAINER)
    (project / "pkg" / "annealed.py").write_text(subclass)
    (project / "pkg" / "__init__.py").write_text("from .annealed import AnnealedTrainer\n")
    (project / "scripts" / "run.py").write_text(
        "from pkg.annealed import AnnealedTrainer\nfrom pkg.base import BaseTrainer\n\n" + script
    )
    findings = _check("--no-cache", str(project / "pkg" / "base.py"))
    if not found:
        assert [f["code"] for f in findings] == []
        return
    (finding,) = findings
    assert finding["code"] == "JC104" and finding["name"] == "self.clip"
    assert _steps(finding) == [
        (None, 19, "trace", None, None),
        (None, 20, "change", "end_epoch", None),
        (None, 19, "reuse", None, "next pass of the loop at line 18"),
    ]
    assert "reads 'self.clip', changed in pkg/annealed.py at line 6 in 'AnnealedTrainer." in (
        str(finding["message"])
    )


def test_a_hook_storing_into_the_attribute_in_place_is_the_change(project: Path) -> None:
    """``self.schedule.base_lr = ...`` in the override changes in place the object the
    compiled step calls (``self.schedule(step)``)."""
    (project / "pkg" / "schedules.py").write_text(
        "class Constant:\n    def __init__(self, lr):\n        self.base_lr = lr\n\n"
        "    def __call__(self, step):\n        return self.base_lr\n"
    )
    (project / "pkg" / "base.py").write_text(
        BASE_TRAINER.replace("import jax.numpy as jnp\n", "import jax.numpy as jnp\n\n"
                             "from pkg.schedules import Constant\n")
        .replace("        self.lr = lr\n", "        self.schedule = Constant(lr)\n")
        .replace("w - self.lr * jnp.clip", "w - self.schedule(0) * jnp.clip")
    )  # fmt: skip
    (project / "pkg" / "annealed.py").write_text(
        ANNEALED.replace("self.clip = self.clip * 0.5", "self.schedule.base_lr = 0.01")
    )
    (project / "scripts" / "run.py").write_text(
        "from pkg.annealed import AnnealedTrainer\n\nt = AnnealedTrainer(0.1, 4.0)\n"
        "t.fit(1.0, 9.0, 3)\n"
    )
    (finding,) = _check("--no-cache", str(project / "pkg" / "base.py"))
    assert finding["code"] == "JC104" and finding["name"] == "self.schedule"
    assert "changed in pkg/annealed.py at line 6 in 'AnnealedTrainer.end_epoch'" in str(
        finding["message"]
    )


CALLBACK_TRAINER = """from functools import partial

import jax


class Trainer:
    def __init__(self, lr, callbacks=()):
        self.lr = lr
        self.callbacks = list(callbacks)

    @partial(jax.jit, static_argnums=0)
    def step(self, w, g):
        return w - self.lr * g

    def fit(self, w, g, epochs):
        for epoch in range(epochs):
            w = self.step(w, g)
            for cb in self.callbacks:
                cb.on_epoch_end(self, epoch)
        return w
"""
DECAY = """class LRDecay:
    def __init__(self, factor):
        self.factor = factor

    def on_epoch_end(self, trainer, epoch):
        trainer.lr = trainer.lr * self.factor
"""


@pytest.mark.parametrize(
    ("trainer", "callback", "script", "found"),
    [
        (CALLBACK_TRAINER, DECAY, "t = Trainer(0.4, [LRDecay(0.5)])\nt.fit(1.0, 2.0, 3)\n", True),
        # No object of the callback's class is made.
        (CALLBACK_TRAINER, DECAY, "t = Trainer(0.4, [])\nt.fit(1.0, 2.0, 3)\n", False),
        # The callback stores into what it is given second, not the trainer.
        (
            CALLBACK_TRAINER,
            DECAY.replace("trainer.lr = trainer.lr", "epoch.lr = trainer.lr"),
            "t = Trainer(0.4, [LRDecay(0.5)])\nt.fit(1.0, 2.0, 3)\n",
            False,
        ),
        # The callbacks run once, after the last compiled call.
        (
            CALLBACK_TRAINER.replace(
                "            for cb in self.callbacks:\n                cb.on_epoch_end(self, "
                "epoch)\n",
                "        for cb in self.callbacks:\n            cb.on_epoch_end(self, 0)\n",
            ),
            DECAY,
            "t = Trainer(0.4, [LRDecay(0.5)])\nt.fit(1.0, 2.0, 3)\n",
            False,
        ),
        # The learning rate reaches the compiled method as a static argument.
        (
            CALLBACK_TRAINER.replace("static_argnums=0", "static_argnums=(0, 3)")
            .replace("def step(self, w, g):", "def step(self, w, g, lr):")
            .replace("return w - self.lr * g", "return w - lr * g")
            .replace("w = self.step(w, g)", "w = self.step(w, g, self.lr)"),
            DECAY,
            "t = Trainer(0.4, [LRDecay(0.5)])\nt.fit(1.0, 2.0, 3)\n",
            False,
        ),
    ],
)
def test_a_callback_in_another_file_storing_into_the_object_handed_it_is_the_change(
    project: Path, trainer: str, callback: str, script: str, found: bool
) -> None:
    """``fit`` runs the compiled ``self.step``, then hands itself to each callback it was
    given (``cb.on_epoch_end(self, epoch)``); ``LRDecay`` in another file, whose objects the
    project makes, stores ``trainer.lr`` there. The handing call is the change."""
    (project / "pkg" / "trainer.py").write_text(trainer)
    (project / "pkg" / "callbacks.py").write_text(callback)
    (project / "scripts" / "run.py").write_text(
        "from pkg.callbacks import LRDecay\nfrom pkg.trainer import Trainer\n\n" + script
    )
    findings = _check("--no-cache", str(project / "pkg" / "trainer.py"))
    if not found:
        assert [f["code"] for f in findings] == []
        return
    (finding,) = findings
    assert finding["code"] == "JC104" and finding["name"] == "self.lr"
    assert _steps(finding) == [
        (None, 17, "trace", None, None),
        (None, 19, "change", "on_epoch_end", None),
        (None, 17, "reuse", None, "next pass of the loop at line 16"),
    ]
    assert "reads 'self.lr', changed in pkg/callbacks.py at line 6 in 'LRDecay.on_epoch_end'" in (
        str(finding["message"])
    )


SCALER = """GAIN = 1.0


class Scaler:
    def __call__(self, x):
        return x * GAIN


class Module:
    pass


class Net(Module):
    def __call__(self, x):
        return x + GAIN


class Own(Module):
    def apply(self, x):
        return x

    def __call__(self, x):
        return x + GAIN
"""


@pytest.mark.parametrize(
    ("made", "called", "script", "found"),
    [
        ("Scaler()", "model(x)", "forward(1.0)\nmodel_mod.GAIN = 2.0\nforward(1.0)\n", True),
        # flax's ``apply`` runs ``__call__`` of a class that does not define it.
        ("Net()", "model.apply(x)", "forward(1.0)\nmodel_mod.GAIN = 2.0\nforward(1.0)\n", True),
        # A class defining its own ``apply``: that one runs.
        ("Own()", "model.apply(x)", "forward(1.0)\nmodel_mod.GAIN = 2.0\nforward(1.0)\n", False),
        # Another method asked for: the code does not say which runs.
        (
            "Net()",
            "model.apply(x, method=None)",
            "forward(1.0)\nmodel_mod.GAIN = 2.0\nforward(1.0)\n",
            False,
        ),
        # Set before the first call.
        ("Scaler()", "model(x)", "model_mod.GAIN = 2.0\nforward(1.0)\nforward(1.0)\n", False),
    ],
)
def test_a_global_read_by_the_call_of_an_object_of_another_module_s_class_is_read_by_the_trace(
    project: Path, made: str, called: str, script: str, found: bool
) -> None:
    """``model = Scaler()`` of ``pkg/model.py``, called in the compiled ``forward``: its
    ``__call__`` reads ``GAIN`` of its own module into the trace, and a script binding
    ``model_mod.GAIN`` between two calls makes the second reuse the old value."""
    (project / "pkg" / "model.py").write_text(SCALER)
    name = made.partition("(")[0]
    (project / "pkg" / "forward.py").write_text(
        f"import jax\n\nfrom pkg.model import {name}\n\nmodel = {made}\n\n\n"
        f"@jax.jit\ndef forward(x):\n    return {called}\n"
    )
    (project / "scripts" / "run.py").write_text(
        "from pkg import model as model_mod\nfrom pkg.forward import forward\n\n" + script
    )
    findings = _check("--no-cache", str(project / "pkg" / "forward.py"))
    if not found:
        assert [f["code"] for f in findings] == []
        return
    (finding,) = findings
    assert finding["code"] == "JC102" and finding["name"] == "GAIN"
    assert _steps(finding) == [
        ("scripts/run.py", 4, "trace", "forward", None),
        ("scripts/run.py", 5, "change", None, None),
        ("scripts/run.py", 6, "reuse", "forward", None),
    ]
    assert finding["fix"] is None


@pytest.mark.parametrize(
    ("holder", "beside", "expected"),
    [
        ("work", "main.py", "work"),  # scripts beside the package: their folder
        ("work", "demo.ipynb", "work"),
        ("work", "notes.txt", "work/phys"),  # nothing that imports it: the package
        ("site-packages", "six.py", "site-packages/phys"),  # installed packages
    ],
)
def test_without_a_marker_the_folder_of_the_scripts_beside_the_package_is_the_root(
    tmp_path: Path, holder: str, beside: str, expected: str
) -> None:
    package = tmp_path / holder / "phys"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "integrate.py").write_text("")
    (tmp_path / holder / beside).write_text("")
    assert project_root(package / "sub" / "integrate.py") == (tmp_path / expected).resolve()


RETURNS = """import jax

from pkg.registry import HPARAMS


@jax.jit
def discounted(r):
    return r * HPARAMS["gamma"]
"""
TUNING = """from pkg.registry import HPARAMS


def anneal(episode):
    HPARAMS["gamma"] = 0.9 + 0.01 * episode


def report(HPARAMS):
    HPARAMS["seen"] = True


def shown():
    return HPARAMS["gamma"]
"""


@pytest.mark.parametrize(
    ("script", "change"),
    [
        ("for ep in range(3):\n    anneal(ep)\n    discounted(1.0)\n", ("anneal", 6)),
        ('for ep in range(3):\n    HPARAMS["gamma"] = ep\n    discounted(1.0)\n', (None, 6)),
        ('discounted(1.0)\nregistry.HPARAMS["gamma"] = 0.5\ndiscounted(1.0)\n', (None, 6)),
        # Before the first call, or one value before every call.
        ("anneal(1)\ndiscounted(1.0)\ndiscounted(2.0)\n", None),
        ('for ep in range(3):\n    HPARAMS["gamma"] = 0.5\n    discounted(ep)\n', None),
        # A function with an object of its own by that name, or one that only reads it.
        ("discounted(1.0)\nreport({})\nshown()\ndiscounted(1.0)\n", None),
        # Another module's object of the same name.
        ('discounted(1.0)\nother.HPARAMS["gamma"] = 0.5\ndiscounted(1.0)\n', None),
        # An entry the trace never reads; one whose key is computed may be any.
        ('for ep in range(3):\n    HPARAMS["run_name"] = ep\n    discounted(1.0)\n', None),
        ("for ep in range(3):\n    HPARAMS[str(ep)] = ep\n    discounted(1.0)\n", (None, 6)),
    ],
)
def test_an_imported_object_changed_in_place_by_another_file_is_the_change(
    project: Path, script: str, change: tuple[str | None, int] | None
) -> None:
    """``from pkg.registry import HPARAMS`` in the compiled code's module and in another,
    whose ``anneal`` stores ``HPARAMS["gamma"]``: one object, changed between two compiled
    calls of a script."""
    (project / "pkg" / "registry.py").write_text('HPARAMS = {"gamma": 0.9}\n')
    (project / "pkg" / "other.py").write_text('HPARAMS = {"gamma": 0.9}\n')
    (project / "pkg" / "returns.py").write_text(RETURNS)
    (project / "pkg" / "tuning.py").write_text(TUNING)
    (project / "scripts" / "run.py").write_text(
        "from pkg import other, registry\nfrom pkg.registry import HPARAMS\n"
        "from pkg.returns import discounted\nfrom pkg.tuning import anneal, report, shown\n"
        + script
    )
    found = _check("--no-cache", str(project / "pkg" / "returns.py"))
    if change is None:
        assert found == []
        return
    (finding,) = found
    assert finding["code"] == "JC103"
    steps = {s["role"]: (s["via"], s["line"]) for s in finding["witness"]}  # type: ignore[union-attr, index]
    assert steps["change"] == change


REGISTRY = """import jax

ACTIVATIONS = {"relu": jax.nn.relu}


def register_activation(name, fn):
    ACTIVATIONS[name] = fn


def get_activation(name):
    return ACTIVATIONS[name]
"""


@pytest.mark.parametrize(
    ("script", "steps"),
    [
        (
            "forward(1.0)\npatch_leaky()\nforward(1.0)\n",
            [
                ("scripts/run.py", 4, "trace", "forward", None),
                ("scripts/run.py", 5, "change", "patch_leaky", None),
                ("scripts/run.py", 6, "reuse", "forward", None),
            ],
        ),
        ("patch_leaky()\nforward(1.0)\nforward(1.0)\n", None),
    ],
)
def test_a_global_changed_in_place_by_its_module_s_function_is_the_change(
    project: Path, script: str, steps: list[tuple[object, ...]] | None
) -> None:
    """``get_activation("relu")`` in the compiled ``forward`` reads ``ACTIVATIONS`` of
    ``pkg/registry.py`` (imported through ``pkg/utils``), which ``register_activation``
    changes in place, called by a function of another file between two compiled calls."""
    (project / "pkg" / "registry.py").write_text(REGISTRY)
    (project / "pkg" / "utils").mkdir()
    (project / "pkg" / "utils" / "__init__.py").write_text(
        "from pkg.registry import get_activation, register_activation\n"
    )
    (project / "pkg" / "forward.py").write_text(
        "import jax\n\nfrom pkg.utils import get_activation\n\n\n@jax.jit\n"
        'def forward(x):\n    return get_activation("relu")(x)\n'
    )
    (project / "pkg" / "ablation.py").write_text(
        "import jax\n\nfrom pkg.utils import register_activation\n\n\ndef patch_leaky():\n"
        '    register_activation("relu", jax.nn.leaky_relu)\n'
    )
    (project / "scripts" / "run.py").write_text(
        "from pkg.ablation import patch_leaky\nfrom pkg.forward import forward\n\n" + script
    )
    found = _check("--no-cache", str(project / "pkg" / "forward.py"))
    if steps is None:
        assert found == []
        return
    (finding,) = found
    assert finding["code"] == "JC103" and finding["name"] == "ACTIVATIONS"
    assert _steps(finding) == steps
    assert "reads 'ACTIVATIONS' through 'get_activation()', mutated in place" in str(
        finding["message"]
    )


WRAPPERS = """from pkg import settings
from pkg.model import update


def train_epoch(w):
    return update(w, 1.0)


def evaluate(w):
    settings.LR = 0.0
    return update(w, 1.0)


def evaluate_then_restore(w):
    settings.LR = 0.0
    out = update(w, 1.0)
    settings.LR = 0.1
    return out


def set_lr_fresh(lr):
    settings.LR = lr
    update.clear_cache()
"""


@pytest.mark.parametrize(
    ("script", "steps"),
    [
        # Trace through one function, store and reuse through another.
        (
            "w = train_epoch(1.0)\nw = evaluate(w)\n",
            [(3, "trace", "train_epoch"), (4, "change", "evaluate"), (4, "reuse", "evaluate")],
        ),
        # The same function twice: the second call reuses what the first traced.
        (
            "w = evaluate(1.0)\nw = train_epoch(w)\n",
            None,
        ),
        (
            "w = train_epoch(1.0)\nw = evaluate_then_restore(w)\n",
            [
                (3, "trace", "train_epoch"),
                (4, "change", "evaluate_then_restore"),
                (4, "reuse", "evaluate_then_restore"),
            ],
        ),
        # The store comes before the first trace.
        ("w = evaluate(1.0)\nw = evaluate(w)\n", None),
        # The function that stores clears the compiled function's cache.
        ("w = train_epoch(1.0)\nset_lr_fresh(0.5)\nw = train_epoch(w)\n", None),
        ("for lr in (0.1, 0.2):\n    set_lr_fresh(lr)\n    w = train_epoch(1.0)\n", None),
        # Cleared between the trace and the reuse: that call traces anew.
        ("w = train_epoch(1.0)\nset_lr_fresh(0.5)\nw = evaluate(w)\n", None),
        # Cleared before the trace: the change after it still counts.
        (
            "set_lr_fresh(0.5)\nw = train_epoch(1.0)\nw = evaluate(w)\n",
            [(4, "trace", "train_epoch"), (5, "change", "evaluate"), (5, "reuse", "evaluate")],
        ),
    ],
)
def test_functions_of_another_file_that_run_the_entry_and_store_count_at_their_calls(
    stored: Path, script: str, steps: list[tuple[int, str, str]] | None
) -> None:
    """``main.py`` calls ``train.train_epoch()``, which runs the compiled ``update``, then
    ``train.evaluate()``, which stores ``settings.LR`` and runs it again: each function counts
    at its call as its own runs and stores, in order."""
    (stored / "pkg" / "train_loop.py").write_text(WRAPPERS)
    (stored / "scripts" / "run.py").write_text(
        "from pkg.train_loop import evaluate, evaluate_then_restore, set_lr_fresh, train_epoch"
        "\n\n" + script
    )
    found = _check("--no-cache", str(stored / "pkg" / "model.py"))
    if steps is None:
        assert found == []
        return
    (finding,) = found
    assert finding["code"] == "JC103"
    assert [(line, role, via) for _, line, role, via, _ in _steps(finding)] == steps


@pytest.mark.parametrize(
    ("package_init", "imported"),
    [
        ("from .ops import *\n", "from layers import scale, set_scale"),
        ("from .ops import *\n", "from layers import *"),
        ("from .other import *\nfrom .ops import *\n", "from layers import *"),
        ("from . import ops\nfrom .ops import set_scale, scale\n", "from layers import *"),
    ],
)
def test_a_function_a_package_star_imports_is_called_through_it(
    tmp_path: Path, package_init: str, imported: str
) -> None:
    """``layers/__init__.py`` says ``from .ops import *``; a script imports ``set_scale`` and
    ``scale`` from ``layers`` (or everything): its calls are calls of ``layers.ops``."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "layers").mkdir()
    (tmp_path / "layers" / "__init__.py").write_text(package_init)
    (tmp_path / "layers" / "other.py").write_text("def helper():\n    return 1\n")
    (tmp_path / "layers" / "ops.py").write_text(
        "import jax\n\nSCALE = 1.0\n\n\ndef set_scale(s):\n    global SCALE\n    SCALE = s\n\n\n"
        "@jax.jit\ndef scale(x):\n    return x * SCALE\n"
    )
    (tmp_path / "main.py").write_text(
        f"{imported}\n\nfor s in (1.0, 3.0):\n    set_scale(s)\n    print(scale(2.0))\n"
    )
    (finding,) = _check("--no-cache", str(tmp_path / "layers" / "ops.py"))
    assert finding["code"] == "JC102"
    assert [(s[1], s[2], s[3]) for s in _steps(finding)] == [
        (5, "trace", "scale"), (4, "change", "set_scale"), (5, "reuse", "scale"),
    ]  # fmt: skip


def test_a_private_name_is_not_star_imported(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "layers").mkdir()
    (tmp_path / "layers" / "__init__.py").write_text("from .ops import *\n")
    (tmp_path / "layers" / "ops.py").write_text(
        "import jax\n\nSCALE = 1.0\n\n\ndef _set_scale(s):\n    global SCALE\n    SCALE = s\n\n\n"
        "@jax.jit\ndef scale(x):\n    return x * SCALE\n"
    )
    (tmp_path / "main.py").write_text(
        "from layers import *\n\nfor s in (1.0, 3.0):\n    _set_scale(s)\n    print(scale(2.0))\n"
    )
    assert _check("--no-cache", str(tmp_path / "layers" / "ops.py")) == []


UTILS = """import jax
import jax.numpy as jnp
import numpy as np

CLASS_WEIGHTS = np.ones(3, dtype=np.float32)


@jax.jit
def weighted(x):
    return jnp.sum(jnp.asarray(CLASS_WEIGHTS) * x)
"""


@pytest.mark.parametrize(
    ("cells", "found"),
    [
        # Star-imported, then changed in place between two compiled calls.
        (("from train_utils import *", "weighted(x)", "CLASS_WEIGHTS[2] = 5.0", "weighted(x)"), 1),
        # Through the module's name.
        (
            (
                "import train_utils as tu",
                "tu.weighted(x)",
                "tu.CLASS_WEIGHTS[2] = 5.0",
                "tu.weighted(x)",
            ),
            1,
        ),  # fmt: skip
        # The notebook's own array of that name.
        (
            (
                "from train_utils import *",
                "CLASS_WEIGHTS = np.ones(3)",
                "weighted(x)",
                "CLASS_WEIGHTS[2] = 5.0",
                "weighted(x)",
            ),
            0,
        ),  # fmt: skip
        # Changed before the first compiled call.
        (("from train_utils import *", "CLASS_WEIGHTS[2] = 5.0", "weighted(x)", "weighted(x)"), 0),
    ],
)
def test_a_global_of_the_module_changed_in_place_by_a_notebook_is_the_change(
    tmp_path: Path, cells: tuple[str, ...], found: int
) -> None:
    """``CLASS_WEIGHTS = np.ones(3)`` in ``train_utils.py``, read by the compiled ``weighted``;
    a notebook that star-imports the module writes into the array between two calls."""
    (tmp_path / "train_utils.py").write_text(UTILS)
    prelude = "import numpy as np\nimport jax.numpy as jnp\nx = jnp.ones(3)"
    (tmp_path / "explore.ipynb").write_text(_notebook(prelude, *cells))
    findings = _check("--no-cache", str(tmp_path / "train_utils.py"))
    assert [f["code"] for f in findings] == ["JC103"] * found
    if found:
        assert [(s[0], s[2]) for s in _steps(findings[0])] == [
            ("explore.ipynb:cell 3", "trace"),
            ("explore.ipynb:cell 4", "change"),
            ("explore.ipynb:cell 5", "reuse"),
        ]


SCHEDULE = """import jax.numpy as jnp

_WARMUP = 100
_PEAK_LR = 0.01


def set_schedule(warmup, peak_lr):
    global _WARMUP, _PEAK_LR
    _WARMUP = warmup
    _PEAK_LR = peak_lr


def lr_at(step):
    return _PEAK_LR * jnp.minimum(1.0, (step + 1.0) / _WARMUP)
"""


@pytest.mark.parametrize(
    ("imported", "called"),
    [("from utils import schedule as sched", "sched.lr_at"),
     ("from utils.schedule import lr_at", "lr_at")],
)  # fmt: skip
@pytest.mark.parametrize(
    ("script", "found"),
    [
        # Traced by a smoke test, the schedule set, then reused.
        ("step(w, 0.0)\nset_schedule(5, 0.5)\nstep(w, 1.0)\n", True),
        # Set before the first call.
        ("set_schedule(5, 0.5)\nstep(w, 0.0)\nstep(w, 1.0)\n", False),
    ],
)
def test_a_global_another_module_s_function_reads_is_read_by_the_trace(
    tmp_path: Path, imported: str, called: str, script: str, found: bool
) -> None:
    """The compiled ``step`` calls ``sched.lr_at(step)``, which reads ``_WARMUP`` and
    ``_PEAK_LR`` of ``utils/schedule.py``; a script calls ``set_schedule`` between two compiled
    calls. The folders are namespace packages beside the script: the project is their folder."""
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "schedule.py").write_text(SCHEDULE)
    (tmp_path / "trainers").mkdir()
    (tmp_path / "trainers" / "sgd.py").write_text(
        f"import jax\n\n{imported}\n\n\n@jax.jit\ndef step(w, t):\n    return w * {called}(t)\n"
    )
    (tmp_path / "main.py").write_text(
        "from trainers.sgd import step\nfrom utils.schedule import set_schedule\n\nw = 1.0\n"
        + script
    )
    assert project_root(tmp_path / "trainers" / "sgd.py") == tmp_path.resolve()
    findings = _check("--no-cache", str(tmp_path / "trainers" / "sgd.py"))
    if not found:
        assert findings == []
        return
    assert [(f["code"], f["name"]) for f in findings] == [
        ("JC102", "_PEAK_LR"), ("JC102", "_WARMUP"),
    ]  # fmt: skip
    assert f"through '{called}()', rebound in main.py at line 6 by 'set_schedule()'" in str(
        findings[0]["message"]
    )
    assert [(s[1], s[2]) for s in _steps(findings[0])] == [
        (5, "trace"), (6, "change"), (7, "reuse"),
    ]  # fmt: skip
    assert findings[0]["fix"] is None


def test_a_folder_no_script_beside_it_imports_is_its_own_project(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "a.py").write_text("x = 1\n")
    (tmp_path / "main.py").write_text("import os\n")
    assert project_root(tmp_path / "tools" / "a.py") == (tmp_path / "tools").resolve()


@pytest.mark.parametrize(
    ("setter_tail", "found"),
    [
        ("", True),
        # Clears the caches itself, or through a function of the project it calls.
        ("    model.step.clear_cache()\n", False),
        ("    invalidate()\n", False),
    ],
)
def test_a_setter_that_clears_the_caches_is_no_change(
    tmp_path: Path, setter_tail: str, found: bool
) -> None:
    """``config.set_scale`` binds ``SCALE`` through ``global``; the compiled ``model.step``
    reads ``config.SCALE`` and is registered (by a decorator) in a list whose functions
    ``invalidate()`` clears."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "registry.py").write_text(
        "COMPILED = []\n\n\ndef register(f):\n    COMPILED.append(f)\n    return f\n\n\n"
        "def invalidate():\n    for f in COMPILED:\n        f.clear_cache()\n"
    )
    (tmp_path / "config.py").write_text(
        "import model\nfrom registry import invalidate\n\nSCALE = 1.0\n\n\n"
        "def set_scale(s):\n    global SCALE\n    SCALE = s\n" + setter_tail
    )
    (tmp_path / "model.py").write_text(
        "import jax\n\nimport config\nfrom registry import register\n\n\n@register\n@jax.jit\n"
        "def step(x):\n    return x * config.SCALE\n"
    )
    (tmp_path / "main.py").write_text(
        "from config import set_scale\nfrom model import step\n\nfor s in (1.0, 2.0):\n"
        "    set_scale(s)\n    step(1.0)\n"
    )
    findings = _check("--no-cache", str(tmp_path / "model.py"))
    assert [f["code"] for f in findings] == (["JC103"] if found else [])
