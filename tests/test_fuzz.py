"""Programs generated from Python's grammar and from libcst's nodes: the linter never crashes,
the fixer never corrupts (slow: hypothesis and hypothesmith)."""

from __future__ import annotations

import pytest
from test_robustness import assert_sound

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# Generated programs are compiled to check they are valid; their own oddities warn.
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::SyntaxWarning")]

# Makes every generated program worth analysing: it names a compile transform.
PRELUDE = "import jax\n\n\n@jax.jit\ndef _probe(x):\n    return x\n\n\n"


def _sound_if_it_compiles(program: str) -> None:
    try:
        compile(PRELUDE + program, "<generated>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        assume(False)
    assert_sound(PRELUDE + program)


def _hypothesmith(strategy: str) -> st.SearchStrategy[str]:
    """Built when the test first draws: hypothesmith takes seconds to import and to build its
    grammar, which collection (also of a run that leaves these tests out) should not pay."""

    def build() -> st.SearchStrategy[str]:
        hypothesmith = pytest.importorskip("hypothesmith")
        return getattr(hypothesmith, strategy)()  # type: ignore[no-any-return]

    return st.deferred(build)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(_hypothesmith("from_grammar"))
def test_generated_programs_from_the_grammar(program: str) -> None:
    _sound_if_it_compiles(program)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(_hypothesmith("from_node"))
def test_generated_programs_from_libcst_nodes(program: str) -> None:
    _sound_if_it_compiles(program)
