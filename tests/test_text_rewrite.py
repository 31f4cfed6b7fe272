"""The fix written as text (``fix/text_rewrite.py``) writes exactly what the libcst rewrite
writes, on every fixture and on variants of the form it writes; and it writes it without
importing libcst."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_support import fixtures

from flake8_jax_closure.engine import analyse_source
from flake8_jax_closure.fix.model import FunctionFix
from flake8_jax_closure.fix.rewrite import Rewrite, rewrite
from flake8_jax_closure.settings import Settings


def plans_of(source: str, settings: Settings) -> list[FunctionFix]:
    analysis = analyse_source(source, settings)
    if analysis is None:
        return []
    found = (f.fix.plan for f in analysis.findings if f.fix is not None)
    return list(dict.fromkeys(plan for plan in found if plan is not None))


def both_ways(source: str, settings: Settings) -> tuple[Rewrite, Rewrite]:
    plans = plans_of(source, settings)
    return rewrite(source, plans), rewrite(source, plans, as_text=False)


def assert_same(as_text: Rewrite, with_libcst: Rewrite) -> None:
    assert as_text.text == with_libcst.text
    assert as_text.edits == with_libcst.edits
    assert as_text.failed == with_libcst.failed


def test_every_fixture_is_rewritten_alike() -> None:
    written = 0
    for fixture in fixtures():
        for newline in ("\n", "\r\n"):
            source = fixture.source.replace("\n", newline)
            as_text, with_libcst = both_ways(source, fixture.settings(unsafe_fixes=True))
            assert_same(as_text, with_libcst)
            written += as_text.as_text
    # Most fixtures are about other forms; the common one is still common among them.
    assert written >= 40


# -- variants of the form written as text -----------------------------------------------------

HEADERS = [
    "def step(x, y):",
    "def step(x, y=2.0, *args):",
    "def step(x: jax.Array, y: float = 1.0) -> jax.Array:",
    "def step(x, *, y):",
    "def step(x, /, y):",
    "def  step (x,y):  # steps",
    "def step():",
    "def step(x, y,):",
    "def step(x, **kw):",
    "def step( x ):",
    "def step(x, y=(1, 2)):",
    "def step(x) -> (int):",
    "def ステップ(x, y):",
    # Spelled apart from their NFKC form, which ``ast`` gives: the source's spelling stays.
    "def step(x, ϵ=1.0, *ϵs, ﬁne=2):",
    "def ﬁt(x):",
]
BODIES = [
    "    return x * SCALE\n",
    '    """Scale x."""\n    return x * SCALE\n',
    '    """Scale x.\n\n    More words.\n    """\n\n    # the product\n    return x * SCALE\n',
    '    ("""Scale x.""")\n    return x * SCALE\n',
    '    b"bytes"\n    return x * SCALE\n',
    '    f"{x}"\n    return x * SCALE\n',
    '    "doc"; y = 1\n    return x * SCALE\n',
    "    # a comment\n    z = x * SCALE  # the scale\n    return z\n",
    '    # before the docstring\n\n    """Doc."""  # after it\n'
    "    # dropped\n\n    return x * SCALE\n",
    "    def inner(v):\n        return v * SCALE\n    return inner(x)\n",
    '    """Doc."""\n    @other\n    def inner(v):\n'
    "        return v * SCALE\n    return inner(x)\n",
]
PLACES = ["module", "class", "function"]


def variant(header: str, body: str, place: str, tabs: bool) -> str:
    function = f"@jax.jit\n# between the decorator and the def\n{header}\n{body}"
    if header.startswith("def step():"):
        function = function.replace("x * SCALE", "SCALE").replace("inner(x)", "inner(1.0)")
    if place == "module":
        code = function + "\n\nafter = 1\n"
    elif place == "class":
        # A method: its first parameter is ``self`` (a compiled function of a class used as a
        # namespace, ``def step(x)``, gets no fix).
        function = function.replace("def step(", "def step(self, ")
        nested = "".join(
            f"    {line}" if line.strip() else line for line in function.splitlines(True)
        )
        code = f"class Model:\n{nested}    after = 1\n"
    else:
        nested = "".join(
            f"    {line}" if line.strip() else line for line in function.splitlines(True)
        )
        code = f"def build():\n{nested}    return step\n"
    if tabs:
        code = code.replace("    ", "\t")
    return (
        "import jax\n\nSCALE = 1.0\n\n\n"
        + code
        + "\n\ndef set_scale(value):\n    global SCALE\n    SCALE = value\n"
    )


@pytest.mark.parametrize("place", PLACES)
def test_variants_are_rewritten_alike(place: str) -> None:
    written = fixed = 0
    settings = Settings(unsafe_fixes=True, select=("JC",))
    for header, body, tabs, newline in itertools.product(
        HEADERS, BODIES, (False, True), ("\n", "\r\n")
    ):
        source = variant(header, body, place, tabs).replace("\n", newline)
        try:
            compile(source, "variant", "exec")
        except SyntaxError:
            continue
        as_text, with_libcst = both_ways(source, settings)
        assert_same(as_text, with_libcst)
        written += as_text.as_text
        fixed += as_text.text != source
    # The forms left to libcst: 4 of the headers, 4 of the bodies.
    assert fixed >= 200 and written >= fixed // 3


SITES = [
    "fast = jax.jit(step)",
    "fast: Any = jax.jit(step)",
    "fast = jax.jit(step)  # compiled",
    "fast = jax.jit(step, donate_argnums=0)",
    "fast = jax.jit(step, static_argnums=(1,))",
    "fast = jax.jit(step, static_argnames='y')",
    "fast = jax.jit(step, donate_argnums=0,)",
    "fast = jax.jit(\n    step)",
    "fast = (jax.jit(step))",
    "a = fast = jax.jit(step)",
    "x = 1; fast = jax.jit(step)",
]
BY_CALL_BODIES = [
    "    return x * SCALE + y\n",
    '    """Doc."""\n    return x * SCALE + y\n',
    '    if MODE == "sum":\n        return x + y\n    return x * SCALE\n',
]


@pytest.mark.parametrize("place", ["module", "function", "function above the def"])
def test_by_call_variants_are_rewritten_alike(place: str) -> None:
    """``g = jax.jit(f)``: the def renamed in its piece, the compiled object and its wrapper in
    the assignment's (which may come first)."""
    written = fixed = 0
    for site, header, body, newline in itertools.product(
        SITES, HEADERS[:6], BY_CALL_BODIES, ("\n", "\r\n")
    ):
        code = f"{header}\n{body}\n\n{site}\n"
        if place == "function":
            nested = "".join(
                f"    {line}" if line.strip() else line for line in code.splitlines(True)
            )
            code = f"def build():\n{nested}    return fast\n"
        elif place == "function above the def":
            nested = "".join(f"    {line}" for line in f"{site}\n".splitlines(True))
            code = f"def build():\n{nested}    return fast\n\n\n{header}\n{body}"
        source = (
            "from typing import Any\n\nimport jax\n\nMODE = 'sum'\nSCALE = 1.0\n\n\n"
            + code
            + "\n\ndef set_mode(value):\n    global MODE, SCALE\n    MODE = SCALE = value\n"
        ).replace("\n", newline)
        try:
            compile(source, "variant", "exec")
        except SyntaxError:
            continue
        as_text, with_libcst = both_ways(source, Settings(unsafe_fixes=True, select=("JC",)))
        assert_same(as_text, with_libcst)
        written += as_text.as_text
        fixed += as_text.text != source
    # Two pieces per fix written as text; left to libcst: a call over two lines, a trailing
    # comma, static_argnames to merge, two targets.
    assert fixed >= 300 and written >= fixed


READS = {
    "subscript": (
        "import jax\n\nCONFIG = {'scale': 1.0}\n\n\n@jax.jit\ndef step(x):\n"
        "    return x * (CONFIG['scale']) + CONFIG[\"scale\"]\n\n\n"
        "def set_scale(v):\n    CONFIG['scale'] = v\n"
    ),
    "attribute of a static self": (
        "import functools\n\nimport jax\n\n\nclass Model:\n    def __init__(self):\n"
        "        self.scale = 1.0\n\n    @functools.partial(jax.jit, static_argnums=0)\n"
        "    def step(self, x):\n        return x * (self.scale) + self.scale\n\n"
        "    def set_scale(self, value):\n        self.scale = value\n"
    ),
}


DECORATORS = [
    "@jax.jit",
    "@jax.jit()",
    "@ jax.jit  # compiled",
    "@(jax.jit)",
    "@jax.jit ()",
    "@partial(jax.jit, static_argnums=(1,))",
    "@partial(jax.jit, static_argnums=(1,),)",
    "@partial(jax.jit, static_argnums=(1,) )",
    "@partial(jax.jit, static_argnames='y')",
    "@partial(jax.jit, **OPTIONS)",
    "@partial(\n    jax.jit, static_argnums=(1,)\n)",
]
STATIC_BODIES = [
    '    if MODE == "sum":\n        return x + y\n    return x * SCALE\n',
    '    """Doc."""\n    return jnp.zeros(WIDTH) * SCALE + x\n',
]


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_static_values_are_rewritten_alike(newline: str) -> None:
    """Static values name themselves to the decorator: ``static_argnames`` is added."""
    written = fixed = 0
    for decorator, body in itertools.product(DECORATORS, STATIC_BODIES):
        source = (
            "from functools import partial\n\nimport jax\nimport jax.numpy as jnp\n\n"
            'MODE = "sum"\nWIDTH = 3\nSCALE = 1.0\nOPTIONS = {}\n\n\n'
            f"{decorator}\ndef step(x, y):\n{body}\n\n"
            "def set_mode(value):\n    global MODE, WIDTH, SCALE\n"
            "    MODE = WIDTH = SCALE = value\n"
        ).replace("\n", newline)
        as_text, with_libcst = both_ways(source, Settings(unsafe_fixes=True, select=("JC",)))
        assert_same(as_text, with_libcst)
        written += as_text.as_text
        fixed += as_text.text != source
        assert "static_argnames" in as_text.text
    # Five of the decorators are written as text; the others keep their layout through libcst.
    assert fixed == 2 * len(DECORATORS) and written >= 10


@pytest.mark.parametrize("source", READS.values(), ids=READS.keys())
def test_reads_replaced_by_parameters_are_rewritten_alike(source: str) -> None:
    """Each read becomes the parameter; its parentheses stay."""
    as_text, with_libcst = both_ways(source, Settings(unsafe_fixes=True, select=("JC",)))
    assert as_text.as_text == 1
    assert_same(as_text, with_libcst)
    assert "x * (CONFIG_scale) + CONFIG_scale" in as_text.text or (
        "x * (self_scale) + self_scale" in as_text.text
    )


@pytest.mark.parametrize("by_call", [False, True], ids=["decorated", "by call"])
def test_the_common_forms_do_not_import_libcst(tmp_path: Path, by_call: bool) -> None:
    """Edits of the common forms need no libcst: a JSON run on them never imports it."""
    program = (
        "import sys\n"
        "from flake8_jax_closure.engine import check_source\n"
        "from flake8_jax_closure.settings import Settings\n"
        "source = open(sys.argv[1]).read()\n"
        "found = check_source(source, Settings(select=('JC',)))\n"
        "assert found and all(f.fix and f.fix.edits for f in found), found\n"
        "print('libcst' in sys.modules)\n"
    )
    source = variant(HEADERS[2], BODIES[2], "module", False)
    if by_call:
        source = source.replace("@jax.jit\n", "").replace(
            "\nafter = 1\n", "\nfast_step = jax.jit(step)\n"
        )
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-c", program, str(path)], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
