"""Traces JAX keeps apart from the compiled function's own: the bodies of ``lax.scan``,
``fori_loop``, ``while_loop``, ``cond`` and the other control-flow primitives.

JAX traces such a body through ``partial_eval.trace_to_jaxpr``, whose cache is keyed on the
body function and the abstract values it is traced for, not on the function that calls
``scan``. So when the compiled function traces again (new shapes, or the guard's ``retrace``),
the body's trace may come from that cache, with the values the body read back then, and the
body's Python does not run. The guard watches that function while a trace is recorded:

- when the body runs, the reads of the frames it ran are resolved and kept under JAX's own
  cache key (the body function, weakly, then the trace context and the arguments);
- when it does not run (JAX reused the body's trace), the reads kept for that key join the
  enclosing trace's reads with the values the body read, so a changed value shows at once;
- :func:`drop_nested_traces` empties JAX's cache of body traces, so that the guard's
  ``retrace`` traces the bodies again with the current values.

Compiled functions the guard watches itself (their probes) keep their own records and are left
alone here.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

from .reads import Read
from .tracing import active_session

_PROBE_MARK = "__flake8_jax_closure_probe__"
_real: Callable[..., Any] | None = None
# body function -> JAX's cache key for it -> the reads of the trace made under that key
_BODY_READS: weakref.WeakKeyDictionary[Any, dict[Any, tuple[Read, ...]]] = (
    weakref.WeakKeyDictionary()
)


def mark_probe(function: Callable[..., Any]) -> None:
    """A probe's callable: its traces are recorded by the probe."""
    setattr(function, _PROBE_MARK, True)


def _trace_context() -> Any:
    from jax._src import config

    return config.trace_context()


class _Watched:
    """JAX's ``trace_to_jaxpr`` behind the watch; everything else (``cache_clear``,
    ``evict_weakref``, ...) is JAX's own."""

    def __init__(self, real: Callable[..., Any]) -> None:
        self.real = real
        functools.update_wrapper(self, real)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def __call__(self, fun: Any, *args: Any, **kwargs: Any) -> Any:
        real = self.real
        session = active_session()
        if session is None or getattr(fun, _PROBE_MARK, False):
            return real(fun, *args, **kwargs)
        try:
            key: Any = (_trace_context(), args, tuple(sorted(kwargs.items())))
            hash(key)
        except Exception:  # noqa: BLE001 - a key JAX hashes its own way: nothing to keep
            key = None
        mark = session.mark()
        out = real(fun, *args, **kwargs)
        if key is None or not _weakly_referable(fun):
            return out
        if session.ran_since(mark):
            _BODY_READS.setdefault(fun, {})[key] = tuple(session.reads_since(mark))
        else:
            kept = _BODY_READS.get(fun, {}).get(key)
            if kept:
                session.nested.extend(kept)
        return out


def _weakly_referable(value: Any) -> bool:
    try:
        weakref.ref(value)
    except TypeError:
        return False
    return True


def watch_nested_traces() -> None:
    """Put the watch on JAX's tracing of bodies (``install`` does)."""
    global _real
    if _real is not None:
        return
    from jax._src.interpreters import partial_eval

    _real = partial_eval.trace_to_jaxpr
    partial_eval.trace_to_jaxpr = _Watched(_real)


def unwatch_nested_traces() -> None:
    global _real
    if _real is None:
        return
    from jax._src.interpreters import partial_eval

    partial_eval.trace_to_jaxpr = _real  # type: ignore[assignment]
    _real = None


def drop_nested_traces() -> None:
    """Make JAX trace every body again the next time it is asked to."""
    from jax._src.interpreters import partial_eval

    real = _real if _real is not None else partial_eval.trace_to_jaxpr
    clear = getattr(real, "cache_clear", None)
    if clear is not None:
        clear()
    _BODY_READS.clear()
