"""JC104: compiled code holds ``self`` and reads an attribute that is changed elsewhere.

What it does
    Finds methods compiled with ``self`` static (``partial(jax.jit, static_argnums=0)``, or
    ``static_argnames`` naming ``self``), bound methods compiled in call form
    (``jax.jit(self.step)``), and compiled closures made inside a method, that read
    ``self.<attr>`` (directly, or through a method or property of the same class) while that
    attribute is assigned, augmented, deleted or mutated in place in another method, later in the
    same method, or on an instance of the class elsewhere in the module or in another file of
    the project that imports the class (``s.alpha = 0.9`` between two calls in a script).

Why is this bad
    A static ``self`` is hashed by identity, so JAX's cache never notices that an attribute
    changed; a bound method or a closure bakes ``self``'s attributes into the trace. Compiled
    calls keep computing with the old attribute values. JAX's FAQ warns about exactly this.

Example
    class Model:
        def __init__(self, mul):
            self.mul = mul

        @partial(jax.jit, static_argnums=0)
        def calc(self, y):
            return y * 2 if self.mul else y

    model = Model(True)
    model.calc(3)
    model.mul = False     # model.calc(3) still returns 6

Use instead
    Pass the attribute as an argument (what ``fix`` writes: the compiled method takes
    ``self_mul`` and a wrapper method passes ``self.mul`` on every call), register the class as a
    pytree so that ``self`` is traced, or move the compiled function out of the class. Flax
    and Equinox modules are not reported: they cannot change in place. Frozen dataclasses and
    NamedTuples are reported only for changes inside what an attribute holds
    (``obj.scales[0] = v``): their attributes cannot be set again.

Fix safety
    With ``self`` static, the compiled method takes the attribute as a keyword-only parameter and
    a wrapper method of the same name passes ``self.<attr>`` on every call; the attribute's
    values decide traced or static, and safety, as for JC101. A bound method
    (``jax.jit(self.step)``) becomes a method taking the attribute, compiled for its object
    behind a wrapper that reads the attribute through that object; a read through another method
    is passed on through it. There is no fix for a read through a property, or for a compiled
    method that changes the attribute it reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...analysis.captures import EVERY_OWNER
from ...diagnostics import Finding
from .._common import STALE, changed, finding
from .detection import MethodCaptureAnalysis

if TYPE_CHECKING:
    from ...analysis.captures import Owner, StaleCapture
    from ...analysis.pipeline import ModuleFacts

CODE = "JC104"
SUMMARY = "compiled code holds self and reads an attribute that changes after tracing"
# What the guard advises when it sees this rule's value change at run time.
RUNTIME_ADVICE = (
    "pass {name} to the compiled function as an argument (a wrapper method can pass it), "
    "or register the class as a pytree so that its attributes are traced"
)


# ``self`` lives in the method that holds the compiled code; its attributes are the objects.
OWNERS = EVERY_OWNER


def detect(module: ModuleFacts, owners: frozenset[Owner]) -> Iterator[StaleCapture]:
    """Attributes of ``self`` that compiled code holding ``self`` reads, and their changes."""
    methods = MethodCaptureAnalysis(module.facts, module.graph, module.values, module.finder)
    return methods.stale_captures(module.compiled)


def check(capture: StaleCapture) -> Finding | None:
    site = capture.mutation
    elsewhere = capture.changed_elsewhere
    if capture.attribute is None or (site is None and elsewhere is None):
        return None
    compiled = capture.compiled
    held = (
        ", static self" if capture.static_self else ", bound method" if capture.bound_method else ""
    )
    through = f" through '{capture.name}.{capture.read_through}'" if capture.read_through else ""
    return finding(
        capture,
        CODE,
        f"'{compiled.name}' ({compiled.transform}{held}) reads '{capture.name}.{capture.attribute}'"
        f"{through}, {_changed(capture)}; {STALE}",
    )


def _changed(capture: StaleCapture) -> str:
    """Where the attribute changes; for a subclass's override in another file, ``changed in
    trainers/annealed.py at line 13 in 'AnnealedClipTrainer.end_epoch' (attribute
    assigned)``."""
    stored = capture.changed_in
    if stored is None:
        return changed(capture.mutation, capture.changed_elsewhere)
    return f"changed in {stored.path} at line {stored.line} in '{stored.via}' (attribute assigned)"
