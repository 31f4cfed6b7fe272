"""JC102: a compiled function reads a module global that is rebound later.

What it does
    Finds compiled functions that read a module-level name which is rebound by a function
    declaring it ``global``, by module-level code after the compiled function may have run, or
    by another file of the project that assigns it as the module's attribute (``sim.DT = dt``
    in a sweep script, between two calls of ``sim.integrate``).

Why is this bad
    The global's value at the first trace is baked into the compiled code. Later rebinding (a
    ``set_learning_rate()`` helper, a training loop reassigning a module constant) is invisible
    to compiled calls, while the un-compiled function follows it.

Example
    SCALE = 1.0

    @jax.jit
    def scaled(x):
        return x * SCALE

    def set_scale(value):
        global SCALE
        SCALE = value

Use instead
    Pass the value as an argument of the compiled function; ``fix`` lifts it into a keyword-only
    parameter and keeps the old signature with a wrapper.

Fix safety
    As for JC101: safe when the module shows what the global holds (arrays and numbers traced;
    dtypes, functions, classes, strings, and literal numbers used as Python values static),
    unsafe when it does not or when the kinds disagree; a read inside a helper function is passed
    on through it. A function compiled by call is renamed (``_f_impl``): other modules that
    import it by its old name must change, unless the module also uses it plainly (then a plain
    wrapper keeps the name). Under ``jax.pmap`` the value is passed positionally, broadcast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..analysis.captures import Owner
from ..analysis.pipeline import value_captures
from ..diagnostics import Finding
from ._common import STALE, changed, finding, subject, through, where

if TYPE_CHECKING:
    from ..analysis.captures import StaleCapture

CODE = "JC102"
SUMMARY = "compiled function reads a module global that is rebound after tracing"
# What the guard advises when it sees this rule's value change at run time.
RUNTIME_ADVICE = (
    "make {name} an argument of the compiled function instead of a global "
    "(`flake8-jax-closure fix` lifts it into a keyword-only parameter)"
)
# Shared with the other rules on values the compiled code reads (see ``analysis.captures``).
detect = value_captures
OWNERS = frozenset({Owner.MODULE})


def check(capture: StaleCapture) -> Finding | None:
    if capture.attribute is not None or not capture.is_global:
        return None
    site, elsewhere = capture.rebinding, capture.changed_elsewhere
    if site is not None:
        rebound = f"rebound at line {site.line} {where(site)}"
    elif capture.rebound_elsewhere and elsewhere is not None:
        # ``sim.DT = dt`` in another file of the project.
        rebound = changed(None, elsewhere, "rebound")
    else:
        return None
    return finding(
        capture,
        CODE,
        f"{subject(capture)} reads global '{capture.name}'{through(capture)}, {rebound}; {STALE}",
    )
