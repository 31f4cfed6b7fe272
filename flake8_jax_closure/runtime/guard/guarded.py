"""Guarded compiled functions: JAX's own compiled object, behind a per-call check.

JAX compiles the callable of the function's probe (see ``probes``), which records what each
trace read. Each call of a :class:`GuardedFunction` runs the generated check of every trace
recorded for it. When all pass (the common case), it calls JAX's object directly. When one
fails, the call takes the careful path: the changed values are confirmed by value, JAX's cache
signature of the call picks the trace JAX will reuse (for ``jax.jit``, see ``signatures``), and

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
from collections.abc import Callable
from types import MethodType
from typing import Any

from .errors import StaleCaptureWarning, error_for, retrace_advice
from .nested import drop_nested_traces
from .probes import PENDING, PROBES, Probe, eager, probe_for, probe_key, warn_at_user_code
from .reads import Change, Read, Record
from .signatures import EXACT, coarse_signature, jit_signature, same_signature
from .state import MAX_EVENTS, OFF, RECORD, SETTINGS, StaleEvent
from .tracing import ACTIVE, active_session

MAX_RECORDS = 64  # traces remembered per function; JAX's own caches are bounded too
# What a guarded bound method finds at its first use (``GuardedFunction._bind``).
_BOUND_LATER = frozenset({"_probe", "_statistics", "_compiled"})


class Outcome:
    """The result of running the function as Python, to compare with the compiled call's."""

    def __init__(self, value: Any, failed: bool = False) -> None:
        self.value, self.failed = value, failed

    def differs_from(self, compiled: Any) -> bool:
        from ..instrument import difference_between

        return not self.failed and difference_between(compiled, self.value) > 0


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
        if not isinstance(function, MethodType):
            self._bind()
        # A bound method's probe is found at its first use: JAX shares a bound method's traces
        # with the wrappers of an equal bound method still alive when it is called, not when
        # it is made (``fast = jax.jit(model.calc)`` made again starts empty once the old
        # ``fast`` is gone). See ``__getattr__``.
        functools.update_wrapper(self, function, updated=())
        self.__wrapped__ = function

    def _bind(self) -> None:
        self._probe = probe_for(self._kind, self._function)
        self._statistics = self._probe.statistics
        self._compiled = self._transform(
            self._probe.callable, *self._transform_args, **self._transform_kwargs
        )

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
            return self._traced(probe, traces, "__call__", args, kwargs, None, out)
        return out

    def _invoke(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self._careful(method, args, kwargs)

    def _careful(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if SETTINGS.mode == OFF or eager():
            return getattr(self._compiled, method)(*args, **kwargs)
        probe = self._probe
        stale: dict[int, list[Change]] = {}
        for record in probe.records:
            if record.signature is not PENDING:
                changes = record.changes(args, kwargs)
                if changes:
                    stale[record.number] = changes
        outer = active_session()
        signature = None
        if stale or outer is not None:
            signature = self._signature(args, kwargs)
        matched = [r for r in probe.records if same_signature(r.signature, signature)]
        candidates = matched or [r for r in probe.records if r.signature is not PENDING]
        mode = SETTINGS.mode
        if mode == "retrace" and any(r.number in stale for r in candidates):
            stale_record = next(r for r in candidates if r.number in stale)
            self._retrace(stale[stale_record.number])
            probe, candidates, matched = self._probe, [], []
        reused = candidates
        all_stale = bool(reused) and all(r.number in stale for r in reused) and mode != "retrace"
        # Values the trace itself changed after reading them: stale only if the function, run
        # now, disagrees (before the call: donated arguments are gone after it).
        proof = None
        if all_stale and all(change.read.written for change in stale[reused[0].number]):
            proof = self._run_now(method, stale[reused[0].number], args, kwargs)
        traces = probe.traces
        out = getattr(self._compiled, method)(*args, **kwargs)
        if probe.traces != traces:
            return self._traced(probe, traces, method, args, kwargs, signature, out)
        # The call reused a trace: the one its signature names, or one of the candidates. The
        # guard fires only when every trace the call may have reused is stale.
        if all_stale:
            changes = stale[reused[0].number]
            if proof is not None and not proof.differs_from(out):
                for change in changes:
                    change.read.accept(change.now)
                reused[0].refresh()
            else:
                self._stale(reused[0], changes)
        if outer is not None:
            for record in reused:
                outer.nested.extend(read.bound(args, kwargs) for read in record.reads)
        return out

    def _run_now(
        self, method: str, changes: list[Change], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Outcome:
        """What the function returns when run now as Python (as ``jax.disable_jit()`` runs
        it), with the values it stores to put back afterwards."""
        if method != "__call__":
            return Outcome(None, failed=True)  # nothing returned to compare: not stale
        import jax

        saved = [(change.read, change.read.current(args, kwargs)) for change in changes]
        try:
            with jax.disable_jit():
                return Outcome(self._function(*args, **kwargs))
        except Exception:  # noqa: BLE001 - no answer: the guard does not fire on a guess
            return Outcome(None, failed=True)
        finally:
            for read, value in saved:
                read.restore(args, kwargs, value)

    def _signature(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        signature = None
        if self._kind == "jit":
            signature = jit_signature(self._compiled, args, kwargs)
        return signature if signature is not None else coarse_signature(args, kwargs)

    def _traced(
        self,
        probe: Probe,
        traces: int,
        method: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        signature: Any,
        out: Any,
    ) -> Any:
        """The call traced afresh, with the current values, except where JAX reused the trace
        of a body (``lax.scan``, ``fori_loop``, see ``nested``) made with values changed since:
        then this fresh trace is stale too."""
        new = self._tag(probe, args, kwargs, signature)
        if SETTINGS.mode == OFF:
            return out
        for record in new:
            if record.check(args, kwargs):
                continue
            # What the trace changed itself is not stale now.
            changes = [c for c in record.changes(args, kwargs) if not c.read.written]
            if not changes:
                continue
            if SETTINGS.mode != "retrace":
                self._stale(record, changes)
                continue
            # Trace again, bodies included: JAX's cache of body traces is emptied.
            self._retrace(changes)
            probe = self._probe
            traces = probe.traces
            out = getattr(self._compiled, method)(*args, **kwargs)
            if probe.traces != traces:
                self._tag(probe, args, kwargs, signature)
            return out
        return out

    def _tag(
        self,
        probe: Probe,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        signature: Any,
    ) -> list[Record]:
        """Give the traces made during this call the call's signature, replacing older
        traces of the same signature (JAX evicted or replaced them); returns them."""
        if signature is None:
            signature = self._signature(args, kwargs)
        new = [r for r in probe.records if r.signature is PENDING]
        for record in new:
            record.signature = signature
        if signature is not None and signature[0] == EXACT:
            probe.records[:] = [
                r for r in probe.records if r in new or not same_signature(r.signature, signature)
            ]
        del probe.records[: max(0, len(probe.records) - MAX_RECORDS)]
        return new

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
        drop_nested_traces()  # bodies JAX traced apart are traced again too
        fresh = Probe(self._function, statistics)
        PROBES[probe_key(self._kind, self._function)] = fresh
        self._probe = fresh
        self._compiled = self._transform(
            fresh.callable, *self._transform_args, **self._transform_kwargs
        )

    # -- JAX's interface ------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name in _BOUND_LATER and "_function" in self.__dict__:
            self._bind()  # a bound method's first use
            return self.__dict__[name]
        if name.startswith("__") or name in _BOUND_LATER:
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
