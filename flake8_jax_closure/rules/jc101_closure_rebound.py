"""JC101: a compiled function reads a variable of an enclosing function that is rebound later.

What it does
    Finds functions compiled with ``jax.jit`` (or ``pmap``, ``pjit``, ``equinox.filter_jit``) that
    read a variable of an enclosing function, where that variable is rebound (by ``nonlocal`` in
    another function, or later in the enclosing function) after the compiled function may have run.

Why is this bad
    The compiled function is traced at its first call, and the closure value is baked into the
    compiled code as a constant. Rebinding the variable afterwards changes what the un-compiled
    function computes, but every compiled call keeps using the first value: no error, wrong numbers.

Example
    def wrapper():
        weights = create_weight()

        @jax.jit
        def jitted_mult(x):
            return weights.dot(x)

        def update(new_weights):
            nonlocal weights
            weights = new_weights

Use instead
    Pass the value as an argument of the compiled function, and keep the old signature with a
    plain wrapper that reads the current value on every call (what ``fix`` writes).

Fix safety
    The fix is safe when the code shows what the variable holds: arrays and numbers are passed
    as traced arguments; dtypes, functions, classes and strings, and literal numbers used where
    JAX needs a Python value, as static ones (hashable by construction). It is unsafe when the
    code does not show the values (only parameters or unknown calls), when they are arrays and
    functions by turns, or when arrays are used where JAX needs a Python value. A value read
    inside a helper function is passed on through it (the helper is split the same way and keeps
    its name for other callers); a function also used without compilation keeps a plain wrapper
    under its name, which reads the value when it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..analysis.captures import Owner
from ..analysis.pipeline import value_captures
from ..diagnostics import Finding
from ._common import STALE, finding, subject, through, where

if TYPE_CHECKING:
    from ..analysis.captures import StaleCapture

CODE = "JC101"
SUMMARY = "compiled function reads a closure variable that is rebound after tracing"
# What the guard advises when it sees this rule's value change at run time.
RUNTIME_ADVICE = (
    "make {name} an argument of the compiled function instead of a variable of the "
    "enclosing function (`flake8-jax-closure fix` lifts it into a keyword-only parameter)"
)
# Shared with the other rules on values the compiled code reads (see ``analysis.captures``).
detect = value_captures
OWNERS = frozenset({Owner.ENCLOSING})


def check(capture: StaleCapture) -> Finding | None:
    if capture.attribute is not None or capture.is_global or capture.rebinding is None:
        return None
    site = capture.rebinding
    return finding(
        capture,
        CODE,
        f"{subject(capture)} reads closure variable '{capture.name}'{through(capture)}, "
        f"rebound at line {site.line} {where(site)}; {STALE}",
    )
