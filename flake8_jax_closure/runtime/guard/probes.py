"""Probes: the functions JAX traces in place of the user's, recording what each trace read.

JAX keys its trace caches on the Python function it is given (and a bound method on its
function and object). The guard hands JAX a probe's callable instead: one probe per guarded
function and transform (so ``jax.jit(f)`` made twice still shares one cache, as in JAX), which
runs the user's function under the tracing watch of ``tracing`` whenever JAX traces it, and
keeps one :class:`~.reads.Record` per trace.
"""

from __future__ import annotations

import functools
import sys
import warnings
import weakref
from collections.abc import Callable
from types import FunctionType, MethodType
from typing import Any

from .library import is_user_code
from .nested import mark_probe
from .reads import Record
from .resolve import source_location
from .state import SETTINGS, FunctionStatistics
from .tracing import Session, active_session, main_code

PENDING: Any = object()  # the signature of a record whose call has not returned yet


def _label(function: Any) -> str:
    code = main_code(function)
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", None)
    if name is None and code is not None:
        name = code.co_name
    if code is None:
        return f"'{name or type(function).__name__}'"
    return f"'{name}' ({source_location(code, code.co_firstlineno)})"


def warn_at_user_code(message: str, category: type[Warning]) -> None:
    """Warn at the innermost line of user code on the stack (the call of the compiled
    function), not inside the guard or JAX."""
    frame = sys._getframe(1)
    while frame.f_back is not None and not is_user_code(frame.f_code):
        frame = frame.f_back
    registry = frame.f_globals.setdefault("__warningregistry__", {})
    warnings.warn_explicit(
        message,
        category,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=frame.f_globals.get("__name__"),
        registry=registry,
    )


def eager() -> bool:
    """True under ``jax.disable_jit()``: the function runs as Python, nothing is cached."""
    from jax._src import config

    return bool(config.disable_jit.value)


class Probe:
    """The function JAX traces in place of the user's: records each trace's reads."""

    def __init__(self, function: Any, statistics: FunctionStatistics) -> None:
        self.function = function
        self.code = main_code(function)
        self.statistics = statistics
        self.records: list[Record] = []
        self.traces = 0
        self.callable = self._make_callable()

    def _make_callable(self) -> Callable[..., Any]:
        # The function JAX traces refers to its probe weakly: a probe (and with it the trace
        # cache of the function JAX sees) lives exactly as long as what holds it, as JAX's
        # own cache does (see ``probe_for``), never longer through a reference cycle.
        function, probe_ref = self.function, weakref.ref(self)

        def traced(*args: Any, **kwargs: Any) -> Any:
            probe = probe_ref()
            if probe is None or eager():
                return function(*args, **kwargs)
            return probe.run(args, kwargs)

        functools.update_wrapper(traced, function)
        mark_probe(traced)
        if self.code is not None and "__name__" not in traced.__dict__:
            traced.__name__ = traced.__qualname__ = self.code.co_name
        return traced

    def run(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        plain = isinstance(self.function, FunctionType) and self.function.__code__ is self.code
        session = Session(self.function, self.code, plain)
        with session:
            out = self.function(*args, **kwargs)
        try:
            reads = session.reads()
        except Exception as error:  # noqa: BLE001 - the guard must never break the program
            warn_at_user_code(
                f"flake8-jax-closure guard could not analyse a trace of {_label(self.function)}:"
                f" {type(error).__name__}: {error}",
                RuntimeWarning,
            )
            reads = []
        record = Record(tuple(reads), PENDING)
        self.records.append(record)
        self.traces += 1
        outer = active_session()
        if outer is not None:
            outer.nested.extend(read.bound(args, kwargs) for read in reads)
        return out


# One probe per (transform, function), as JAX keys its caches; bound methods by their function
# and object. Weak values: a probe lives as long as a compiled object holds it.
PROBES: weakref.WeakValueDictionary[tuple[Any, ...], Probe] = weakref.WeakValueDictionary()


def probe_key(kind: str, function: Any) -> tuple[Any, ...]:
    if isinstance(function, MethodType):
        return (kind, "method", id(function.__func__), id(function.__self__))
    return (kind, id(function))


_PROBE_ATTRIBUTE = "__flake8_jax_closure_probes__"


def probe_for(kind: str, function: Any) -> Probe:
    """The probe of a function, shared as JAX shares traces: a plain function's lives as long
    as the function (``jax.jit(step)`` made again reuses the traces of earlier wrappers), a
    bound method's as long as a compiled object of an equal bound method holds it."""
    if isinstance(function, FunctionType):
        probes = function.__dict__.get(_PROBE_ATTRIBUTE)
        if probes is None or any(p.function is not function for p in probes.values()):
            # None yet, or the dictionary of the function this one wraps, copied over by
            # ``functools.wraps``: this function gets its own.
            probes = function.__dict__[_PROBE_ATTRIBUTE] = {}
        probe = probes.get(kind)
        if probe is None:
            probe = probes[kind] = _new_probe(function)
        return probe
    key = probe_key(kind, function)
    probe = PROBES.get(key)
    if probe is None:
        probe = PROBES[key] = _new_probe(function)
    return probe


def _new_probe(function: Any) -> Probe:
    statistics = FunctionStatistics(_label(function))
    with SETTINGS.lock:
        SETTINGS.statistics[statistics.number] = statistics
    return Probe(function, statistics)
