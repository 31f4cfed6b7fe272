"""Within one statement, a call's arguments are evaluated before the call runs: a witness orders
its steps that way, not by where they stand in the line."""

from __future__ import annotations

import pytest

from flake8_jax_closure.diagnostics import Role
from flake8_jax_closure.engine import check_source
from flake8_jax_closure.settings import Settings

PRELUDE = """import jax

scale = 1.0


@jax.jit
def step(x):
    return x * scale


def set_scale(value):
    global scale
    scale = value
    return value


class Runner:
    def retune(self, value):
        set_scale(value)
        return self

    def run(self, x):
        return step(x)


runner = Runner()
step(1.0)
"""


def _witness(source: str) -> list[tuple[Role, int]] | None:
    findings = check_source(PRELUDE + source, Settings())
    if not findings:
        return None
    (finding,) = findings
    assert finding.code == "JC102"
    return [(step.role, step.line) for step in finding.witness]


LAST = PRELUDE.count("\n")  # the line before the statements under test


def _steps(trace: int, change: int, reuse: int) -> list[tuple[Role, int]]:
    return [(Role.TRACE, trace), (Role.CHANGE, change), (Role.REUSE, reuse)]


@pytest.mark.parametrize(
    ("statements", "witness"),
    [
        # The change is an argument of the compiled call: it runs first.
        (
            "step(set_scale(2.0))\n",
            _steps(LAST, LAST + 1, LAST + 1),
        ),
        # The compiled call is an argument of the change: it runs first, and nothing follows.
        ("set_scale(step(2.0))\n", None),
        (
            "set_scale(step(2.0))\nstep(3.0)\n",
            _steps(LAST, LAST + 1, LAST + 2),
        ),
        # A chained call: ``retune`` returns before ``run`` is called.
        (
            "runner.retune(2.0).run(1.0)\n",
            _steps(LAST, LAST + 1, LAST + 1),
        ),
        # Calls side by side keep the order they stand in.
        (
            "set_scale(2.0); step(1.0)\n",
            _steps(LAST, LAST + 1, LAST + 1),
        ),
        ("step(1.0); set_scale(2.0)\n", None),
        # Across lines: a call's arguments written on the lines after it still run first.
        ("set_scale(\n    step(2.0),\n)\n", None),
    ],
)
def test_steps_follow_the_order_of_evaluation(
    statements: str, witness: list[tuple[Role, int]] | None
) -> None:
    assert _witness(statements) == witness


ONE_CALL = """import jax

lr = 0.1


@jax.jit
def step(x):
    return x * lr


def helper():
    global lr
{body}


{calls}
"""


@pytest.mark.parametrize(
    ("body", "calls", "witness"),
    [
        # Inside the call, a trace and then the change; the next call reuses.
        (["step(1.0)", "lr = 0.5"], ["helper()", "step(2.0)"], _steps(17, 17, 18)),
        # A trace before the call; inside it, the change and then a reuse.
        (["lr = 0.5", "step(1.0)"], ["step(2.0)", "helper()"], _steps(17, 18, 18)),
        # Inside the call, the change and then the first trace: nothing reuses an old one.
        (["lr = 0.5", "step(1.0)"], ["helper()", "step(2.0)"], None),
    ],
)
def test_steps_at_one_call_follow_the_order_of_the_called_function(
    body: list[str], calls: list[str], witness: list[tuple[Role, int]] | None
) -> None:
    source = ONE_CALL.format(body="\n".join(f"    {line}" for line in body), calls="\n".join(calls))
    findings = check_source(source, Settings())
    assert [[(s.role, s.line) for s in f.witness] for f in findings] == (
        [] if witness is None else [witness]
    )


FACTORY = """import functools

import jax

scale = 1.0


@functools.lru_cache(maxsize=None)
def make(value):
    global scale
    scale = value

    def weigh(x):
        return x * scale

    return jax.jit(weigh)


first = make(2.0)
first(1.0)
make(3.0)(1.0)
{later}
"""


@pytest.mark.parametrize(
    ("later", "reuse"),
    [
        # ``make(3.0)(1.0)`` calls the object that call made, after the change: it traces. (The
        # factory is memoised, so its objects are not told apart by the call making them.)
        ("", None),
        # A later call of the first object reuses its trace.
        ("first(1.0)", 22),
    ],
)
def test_the_object_a_changing_call_returns_is_not_traced_before_it(
    later: str, reuse: int | None
) -> None:
    findings = check_source(FACTORY.format(later=later), Settings())
    reuses = [s.line for f in findings for s in f.witness if s.role is Role.REUSE]
    assert reuses == ([] if reuse is None else [reuse])
