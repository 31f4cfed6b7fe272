"""PEP 695 generics (``def step[T](x: T) -> T``, Python 3.12+): the fix keeps the type
parameters on the wrapper, whose signature names them, and on the compiled function.

The analysis reads Python's own ``ast``, which takes type parameters only from 3.12 on; the
rewrite is libcst's, which reads them on every version. So the rewrite is tested everywhere
with a plan made on the same module without the brackets (they sit on the ``def`` line after
the name, and move no position the plan names), and the whole fix on 3.12 and later.
"""

from __future__ import annotations

import sys

import libcst as cst
import pytest

from flake8_jax_closure.engine import _analyse_selected, fix_source
from flake8_jax_closure.fix.rewrite import rewrite
from flake8_jax_closure.settings import Settings

DECORATED = """import jax

SCALE = 1.0


@jax.jit
def step[T](x: T) -> T:
    return x * SCALE


def set_scale(value):
    global SCALE
    SCALE = value
"""

COMPILED_BY_CALL = """import jax

SCALE = 1.0


def step[T: float](x: T) -> T:
    return x * SCALE


fast_step = jax.jit(step)


def set_scale(value):
    global SCALE
    SCALE = value
"""

EXPECTED = {
    "decorated": [
        "def _step_compiled[T](x: T, *, SCALE) -> T:",
        "def step[T](x: T) -> T:\n    return _step_compiled(x, SCALE=SCALE)",
    ],
    "compiled by call": [
        "def _step_impl[T: float](x: T, *, SCALE) -> T:",
        "def fast_step[T: float](x: T) -> T:\n    return _step_compiled(x, SCALE=SCALE)",
    ],
}
SOURCES = {"decorated": DECORATED, "compiled by call": COMPILED_BY_CALL}


def _without_type_parameters(source: str) -> str:
    return source.replace("step[T](", "step(").replace("step[T: float](", "step(")


@pytest.mark.parametrize("form", SOURCES)
def test_the_rewrite_keeps_type_parameters(form: str) -> None:
    source = SOURCES[form]
    analysis = _analyse_selected(
        _without_type_parameters(source), Settings(select=("JC",)), True, None
    )
    assert analysis is not None
    plans = list(dict.fromkeys(f.fix.plan for f in analysis.findings if f.fix and f.fix.plan))
    assert len(plans) == 1
    done = rewrite(source, plans)
    assert done.failed == {}
    for expected in EXPECTED[form]:
        assert expected in done.text
    cst.parse_module(done.text)  # libcst reads 3.12 syntax on every Python


@pytest.mark.skipif(sys.version_info < (3, 12), reason="type parameters need Python 3.12")
@pytest.mark.parametrize("form", SOURCES)
def test_a_fixed_generic_module_runs(form: str) -> None:
    fixed = fix_source(SOURCES[form], Settings(select=("JC",))).source
    for expected in EXPECTED[form]:
        assert expected in fixed
    # Without jax: a stand-in whose jit compiles nothing, to run the module's definitions.
    namespace: dict[str, object] = {}
    stub = "import types\njax = types.SimpleNamespace(jit=lambda f, **_: f)\n"
    exec(compile(fixed.replace("import jax\n", stub, 1), form, "exec"), namespace)
    public = namespace["step" if form == "decorated" else "fast_step"]
    assert public(2.0) == 2.0  # type: ignore[operator]
    namespace["set_scale"](3.0)  # type: ignore[operator]
    assert public(2.0) == 6.0  # type: ignore[operator]
