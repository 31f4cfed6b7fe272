"""JC103: a compiled function reads an object that is mutated in place later.

What it does
    Finds compiled functions that read a closure or global object (a dict, a list, a NumPy
    array, an object's attributes, a class's or an imported configuration module's attributes
    such as ``settings.LR``) that is changed in place: item or attribute assignment,
    augmented assignment or ``del`` on it, or a mutating method call (``update``, ``append``,
    ``pop``, NumPy's ``fill``, ...), after the compiled function may have run. The change
    may be made by another file of the project (``settings.LR = 0.5`` in a script, on a module
    the compiled function reads; ``HPARAMS["gamma"] = g`` on an object both files import from
    one module, or a call of a function that stores it), or by the caller of a function that
    makes the compiled one and is handed the object (``step = make_step(cfg)``, then ``cfg.lr
    = 0.01``).

Why is this bad
    Tracing reads the object's contents once; compiled calls keep those contents. NumPy arrays
    are baked in as constants, so even writing into an array does not reach compiled code.
    ``jax.Ref`` values (``jax.new_ref``) are the exception: compiled code reads them live.

Example
    CONFIG = {"clip": 1.0}

    @jax.jit
    def clip(x):
        return jnp.clip(x, -CONFIG["clip"], CONFIG["clip"])

    def main():
        CONFIG["clip"] = 0.5

Use instead
    Pass the value that changes (``CONFIG["clip"]``) as an argument of the compiled function.

Fix safety
    The fix lifts the path read (``CONFIG["clip"]``, ``hparams.l2``, ``Defaults.EPS``,
    ``settings.LR``), judged by the values that path is given, as for JC101. Lifting the whole
    object (a container changed through ``append`` or ``update``) is unsafe: as an argument it
    must hold only arrays and numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..analysis.captures import EVERY_OWNER
from ..analysis.pipeline import value_captures
from ..diagnostics import Finding
from ._common import STALE, changed, finding, shown, subject, through

if TYPE_CHECKING:
    from ..analysis.captures import StaleCapture

CODE = "JC103"
SUMMARY = "compiled function reads an object that is mutated in place after tracing"
# What the guard advises when it sees this rule's value change at run time.
RUNTIME_ADVICE = (
    "pass {name} to the compiled function as an argument instead of changing it in place "
    "(`flake8-jax-closure fix` lifts the path it reads)"
)
# Shared with the other rules on values the compiled code reads (see ``analysis.captures``).
detect = value_captures
OWNERS = EVERY_OWNER


def check(capture: StaleCapture) -> Finding | None:
    site, elsewhere = capture.mutation, capture.changed_elsewhere
    if capture.attribute is not None or capture.rebinding is not None or capture.rebound_elsewhere:
        return None
    if site is None and elsewhere is None:
        return None
    return finding(
        capture,
        CODE,
        f"{subject(capture)} reads '{shown(capture)}'{through(capture)}, "
        f"{changed(site, elsewhere, 'mutated in place')}; {STALE}",
    )
