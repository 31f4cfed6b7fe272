"""Guarded compiled functions: JAX's own compiled object, behind a per-call check.

JAX keys its trace caches on the Python function it is given (and a bound method on its
function and object). The guard hands JAX a *probe* instead: one function per guarded function
(so ``jax.jit(f)`` made twice still shares one cache, as in JAX), which runs the user's function
under the tracing watch of ``tracing`` whenever JAX traces it, and records what it read.

Each call of a :class:`GuardedFunction` runs the generated check of every trace recorded for
it. When all pass (the common case), it calls JAX's object directly. When one fails, the call
takes the careful path: the changed values are confirmed by value, JAX's cache signature of the
call picks the trace JAX will reuse (for ``jax.jit``), and

- ``error`` and ``warn`` make the call and then ask whether the probe ran during it. If it did,
  JAX traced afresh (new shapes, new static arguments) with the current values: nothing is
  stale. If it did not, the call reused a trace, and if that trace's values changed, the result
  is stale: ``error`` raises :class:`~.errors.StaleCaptureError` instead of returning it,
  ``warn`` warns once per function and value and returns it.
- ``retrace`` decides before the call: when the trace the call would reuse is stale, it drops
  all of the function's traces (a new probe, so a fresh cache) and lets the call trace again.
"""

from __future__ import annotations

import functools
import itertools
import sys
import threading
import warnings
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FunctionType, MethodType
from typing import Any

from .errors import StaleCaptureWarning, error_for, retrace_advice
from .library import is_user_code
from .reads import Change, Read, Record
from .tracing import ACTIVE, Session, active_session, main_code

MODES = ("error", "warn", "retrace")
MAX_RECORDS = 64  # traces remembered per function; JAX's own caches are bounded too
_PENDING: Any = object()  # the signature of a record whose call has not returned yet


OFF = "off"  # not installed: guarded functions record their traces but act on nothing
RECORD = "record"  # for verify: note each stale function and value once, change nothing
MAX_EVENTS = 1000


@dataclass(frozen=True)
class StaleEvent:
    """A stale call seen in ``record`` mode: the compiled function and the changed value."""

    function: str
    first_line: int
    filename: str
    value: str
    kind: str
    where: str
    summary: str
    code: str


_numbers = itertools.count()


def last_number() -> int:
    """The number of the latest function's statistics: later ones are numbered higher."""
    entries = SETTINGS.all_statistics()
    return entries[-1].number if entries else -1


@dataclass
class Settings:
    mode: str = OFF
    warned: set[tuple[int, str]] = field(default_factory=set)
    # Every guarded function's figures while it lives; those with stale calls or retraces
    # for good (a report at exit names them).
    statistics: weakref.WeakValueDictionary[int, FunctionStatistics] = field(
        default_factory=weakref.WeakValueDictionary
    )
    notable: dict[int, FunctionStatistics] = field(default_factory=dict)
    events: list[StaleEvent] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def all_statistics(self) -> list[FunctionStatistics]:
        with self.lock:
            entries = {**self.statistics, **self.notable}
        return [entries[number] for number in sorted(entries)]

    def keep(self, entry: FunctionStatistics) -> None:
        with self.lock:
            self.notable[entry.number] = entry


@dataclass(eq=False)
class FunctionStatistics:
    """What happened to one guarded function: calls, stale calls, retraces and their causes."""

    label: str
    number: int = field(default_factory=lambda: next(_numbers))
    calls: int = 0
    stale_calls: int = 0
    retraces: int = 0
    causes: Counter[str] = field(default_factory=Counter)
    advised: set[str] = field(default_factory=set)


SETTINGS = Settings()


def retrace_summary(after: int = -1) -> list[str]:
    """One line per function the guard traced again (of those guarded after the entry
    numbered ``after``), with the values that made it."""
    entries = [e for e in SETTINGS.all_statistics() if e.retraces and e.number > after]
    return [
        f"traced {entry.label} again {entry.retraces} times in {entry.calls} calls ("
        + ", ".join(f"{name} changed {count} times" for name, count in entry.causes.items())
        + ")"
        for entry in entries
    ]


def _label(function: Any) -> str:
    code = main_code(function)
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", None)
    if name is None and code is not None:
        name = code.co_name
    if code is None:
        return f"'{name or type(function).__name__}'"
    from .tracing import _where

    return f"'{name}' ({_where(code, code.co_firstlineno)})"


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


def _eager() -> bool:
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
            if probe is None or _eager():
                return function(*args, **kwargs)
            return probe.run(args, kwargs)

        functools.update_wrapper(traced, function)
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
        record = Record(tuple(reads), _PENDING)
        self.records.append(record)
        self.traces += 1
        outer = active_session()
        if outer is not None:
            outer.nested.extend(read.bound(args, kwargs) for read in reads)
        return out


# One probe per (transform, function), as JAX keys its caches; bound methods by their function
# and object. Weak values: a probe lives as long as a compiled object holds it.
_PROBES: weakref.WeakValueDictionary[tuple[Any, ...], Probe] = weakref.WeakValueDictionary()


def _probe_key(kind: str, function: Any) -> tuple[Any, ...]:
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
    key = _probe_key(kind, function)
    probe = _PROBES.get(key)
    if probe is None:
        probe = _PROBES[key] = _new_probe(function)
    return probe


def _new_probe(function: Any) -> Probe:
    statistics = FunctionStatistics(_label(function))
    with SETTINGS.lock:
        SETTINGS.statistics[statistics.number] = statistics
    return Probe(function, statistics)


def _jit_signature(compiled: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The key JAX's ``jit`` caches the call's trace under: static arguments, the structure
    of the others, their shapes and dtypes (None when it cannot be computed)."""
    try:
        from jax._src import core, tree_util
        from jax._src.lib import jax_jit

        info = compiled._jit_info
        signature, dynamic = jax_jit.parse_arguments(
            args,
            tuple(kwargs.values()),
            tuple(kwargs),
            info.static_argnums,
            info.static_argnames,
            tree_util.tracing_registry,
        )
        avals = tuple(core.shaped_abstractify(value) for value in dynamic)  # type: ignore[no-untyped-call]
        return (EXACT, info, signature, avals)
    except Exception:  # noqa: BLE001 - private API: fall back on the coarse signature
        return None


def _coarse_signature(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """For transforms that do not say how they key their traces (pmap, equinox): the
    structure of the arguments, shape, dtype and weak type of each array, every other leaf by
    value. Equal for two calls JAX may still tell apart (hence never taken as exact), and
    different for calls that differ only in spelling (then every trace is a candidate)."""
    try:
        import jax
        import numpy as np

        leaves, structure = jax.tree_util.tree_flatten((args, kwargs))
        parts: list[Any] = []
        for leaf in leaves:
            if isinstance(leaf, (jax.Array, np.ndarray, np.generic)):
                weak = bool(getattr(leaf, "weak_type", False))
                parts.append((np.shape(leaf), str(leaf.dtype), weak))
            else:
                parts.append(("static", leaf))
        signature = (COARSE, structure, tuple(parts))
        hash(signature)
        return signature
    except Exception:  # noqa: BLE001 - unhashable or opaque arguments: no signature
        return None


EXACT, COARSE = "exact", "coarse"


def _same(left: Any, right: Any) -> bool:
    try:
        return left is not None and bool(left == right)
    except Exception:  # noqa: BLE001 - static values that cannot be compared: not the same
        return False


class GuardedFunction:
    """A compiled function (``jax.jit(f)``, ...) that checks, on each call, what its traces
    read. Everything else is JAX's object: ``lower``, ``trace``, ``eval_shape``,
    ``clear_cache``, ``_cache_size``, static and donated arguments, use as a method."""

    def __init__(
        self,
        kind: str,
        transform: Callable[..., Any],
        function: Any,
        transform_args: tuple[Any, ...],
        transform_kwargs: dict[str, Any],
    ) -> None:
        self._kind = kind
        self._transform = transform
        self._function = function
        self._transform_args = transform_args
        self._transform_kwargs = transform_kwargs
        self._probe = probe_for(kind, function)
        self._statistics = self._probe.statistics
        self._compiled = transform(self._probe.callable, *transform_args, **transform_kwargs)
        functools.update_wrapper(self, function, updated=())
        self.__wrapped__ = function

    # -- calls ----------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        probe = self._probe
        self._statistics.calls += 1
        for record in probe.records:
            if not record.check(args, kwargs):
                return self._careful("__call__", args, kwargs)
        if ACTIVE[0]:
            return self._careful("__call__", args, kwargs)
        traces = probe.traces
        out = self._compiled(*args, **kwargs)
        if probe.traces != traces:
            self._tag(probe, traces, args, kwargs, None)
        return out

    def _invoke(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self._careful(method, args, kwargs)

    def _careful(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if SETTINGS.mode == OFF or _eager():
            return getattr(self._compiled, method)(*args, **kwargs)
        probe = self._probe
        stale: dict[int, list[Change]] = {}
        for record in probe.records:
            if record.signature is not _PENDING:
                changes = record.changes(args, kwargs)
                if changes:
                    stale[record.number] = changes
        outer = active_session()
        signature = None
        if stale or outer is not None:
            signature = self._signature(args, kwargs)
        matched = [r for r in probe.records if _same(r.signature, signature)]
        candidates = matched or [r for r in probe.records if r.signature is not _PENDING]
        mode = SETTINGS.mode
        if mode == "retrace" and any(r.number in stale for r in candidates):
            stale_record = next(r for r in candidates if r.number in stale)
            self._retrace(stale[stale_record.number])
            probe, candidates, matched = self._probe, [], []
        traces = probe.traces
        out = getattr(self._compiled, method)(*args, **kwargs)
        if probe.traces != traces:
            self._tag(probe, traces, args, kwargs, signature)
            return out
        # The call reused a trace: the one its signature names, or one of the candidates. The
        # guard fires only when every trace the call may have reused is stale.
        reused = candidates
        if reused and all(r.number in stale for r in reused) and mode != "retrace":
            self._stale(reused[0], stale[reused[0].number])
        if outer is not None:
            for record in reused:
                outer.nested.extend(read.bound(args, kwargs) for read in record.reads)
        return out

    def _signature(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        signature = None
        if self._kind == "jit":
            signature = _jit_signature(self._compiled, args, kwargs)
        return signature if signature is not None else _coarse_signature(args, kwargs)

    def _tag(
        self,
        probe: Probe,
        traces: int,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        signature: Any,
    ) -> None:
        """Give the traces made during this call the call's signature, replacing older
        traces of the same signature (JAX evicted or replaced them)."""
        if signature is None:
            signature = self._signature(args, kwargs)
        new = [r for r in probe.records if r.signature is _PENDING]
        for record in new:
            record.signature = signature
        if signature is not None and signature[0] == EXACT:
            probe.records[:] = [
                r for r in probe.records if r in new or not _same(r.signature, signature)
            ]
        del probe.records[: max(0, len(probe.records) - MAX_RECORDS)]

    def _stale(self, record: Record, changes: list[Change]) -> None:
        self._statistics.stale_calls += 1
        SETTINGS.keep(self._statistics)
        label = self._statistics.label
        if SETTINGS.mode == "error":
            raise error_for(label, changes)
        key = (id(self._statistics), changes[0].read.name)
        with SETTINGS.lock:
            first = key not in SETTINGS.warned
            SETTINGS.warned.add(key)
        if first and SETTINGS.mode == RECORD:
            self._record_event(changes[0])
        elif first:
            warn_at_user_code(str(error_for(label, changes)), StaleCaptureWarning)
        # Warned once: take the values as they are, so that later calls run at full speed.
        for change in changes:
            change.read.accept(change.now)
        record.refresh()

    def _record_event(self, change: Change) -> None:
        code = self._probe.code
        event = StaleEvent(
            function=code.co_name if code is not None else self._statistics.label,
            first_line=code.co_firstlineno if code is not None else 0,
            filename=code.co_filename if code is not None else "",
            value=change.read.name,
            kind=change.read.kind,
            where=change.read.where,
            summary=change.summary(),
            code=change.code,
        )
        with SETTINGS.lock:
            if len(SETTINGS.events) < MAX_EVENTS:
                SETTINGS.events.append(event)

    def _retrace(self, changes: list[Change]) -> None:
        statistics = self._statistics
        statistics.retraces += 1
        SETTINGS.keep(statistics)
        for change in changes:
            name = change.read.name
            statistics.causes[name] += 1
            count = statistics.causes[name]
            if count >= 3 and 2 * count > statistics.calls and name not in statistics.advised:
                statistics.advised.add(name)
                warn_at_user_code(
                    retrace_advice(statistics.label, name, change.code, count, statistics.calls),
                    StaleCaptureWarning,
                )
        fresh = Probe(self._function, statistics)
        _PROBES[_probe_key(self._kind, self._function)] = fresh
        self._probe = fresh
        self._compiled = self._transform(
            fresh.callable, *self._transform_args, **self._transform_kwargs
        )

    # -- JAX's interface ------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_compiled", "_probe"):
            raise AttributeError(name)
        return getattr(self._compiled, name)

    @property
    def lower(self) -> Callable[..., Any]:
        self._compiled.lower  # noqa: B018 - AttributeError where JAX's object has none
        return functools.partial(self._invoke, "lower")

    @property
    def trace(self) -> Callable[..., Any]:
        self._compiled.trace  # noqa: B018
        return functools.partial(self._invoke, "trace")

    @property
    def eval_shape(self) -> Callable[..., Any]:
        self._compiled.eval_shape  # noqa: B018
        return functools.partial(self._invoke, "eval_shape")

    def clear_cache(self) -> None:
        self._compiled.clear_cache()
        self._probe.records.clear()

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return MethodType(self, instance)

    def __repr__(self) -> str:
        return repr(self._compiled)

    @property
    def reads(self) -> list[Read]:
        """What the traces of this function read (for tests and for the curious)."""
        return [read for record in self._probe.records for read in record.reads]
