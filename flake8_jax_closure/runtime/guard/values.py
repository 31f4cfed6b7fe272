"""Cheap tests of whether a captured value changed, and short descriptions of values.

A rebinding shows as a new object where the trace read the old one: an identity test. An
in-place change keeps the object, so mutable values also get a *fingerprint*, taken when the
trace ends and compared on each call:

- a NumPy array of at most ``FULL_BYTES`` bytes: all its bytes; a larger one: its shape, dtype
  and ``SAMPLE`` evenly spread elements (a change confined to other elements goes unseen). The
  cost is bounded (about 2 microseconds for any size) and no array is copied.
- a dict or list: its entries (references, not copies); past ``CONTAINER_ITEMS`` entries, the
  length and the first and last ``CONTAINER_ITEMS // 2``.

When the identity or the fingerprint differs, the values are compared by value before the guard
fires: a float set again to the same number, or an equal tuple, is not a change. JAX arrays are
immutable: a new one with equal contents is not a change either.
"""

from __future__ import annotations

import itertools
import math
import reprlib
import sys
from collections.abc import Callable
from typing import Any

FULL_BYTES = 4096
SAMPLE = 64
CONTAINER_ITEMS = 64
LEADING_VALUES = 4
# JAX arrays up to this many elements are compared (and shown) through a copy on the host when
# their identity changed; larger ones on their device, which sends back one boolean.
HOST_COMPARE_ELEMENTS = 4096

_SCALARS = (int, float, complex, bool, str, bytes, type(None))
_sample_indices: dict[int, Any] = {}


def _numpy() -> Any:
    import numpy

    return numpy


def is_numpy_array(value: Any) -> bool:
    return type(value).__module__ == "numpy" and type(value).__name__ == "ndarray"


def is_tracer(value: Any) -> bool:
    core = sys.modules.get("jax.core")
    return core is not None and isinstance(value, core.Tracer)


def is_jax_array(value: Any) -> bool:
    """A concrete JAX array (not a tracer); never imports jax."""
    jax = sys.modules.get("jax")
    return jax is not None and isinstance(value, jax.Array) and not is_tracer(value)


def ndarray_fingerprint(array: Any) -> tuple[Any, ...]:
    if array.nbytes <= FULL_BYTES:
        return (array.shape, array.dtype.str, array.tobytes())
    size = array.size
    indices = _sample_indices.get(size)
    if indices is None:
        np = _numpy()
        indices = np.unique(np.linspace(0, size - 1, SAMPLE).astype(np.intp))
        _sample_indices[size] = indices
    return (array.shape, array.dtype.str, array.flat[indices].tobytes())


def dict_fingerprint(value: dict[Any, Any]) -> tuple[Any, ...]:
    if len(value) <= CONTAINER_ITEMS:
        return tuple(value.items())
    half = CONTAINER_ITEMS // 2
    head = tuple(itertools.islice(value.items(), half))
    tail = tuple(itertools.islice(reversed(value.items()), half))
    return (len(value), head, tail)


def list_fingerprint(value: list[Any]) -> tuple[Any, ...]:
    if len(value) <= CONTAINER_ITEMS:
        return tuple(value)
    half = CONTAINER_ITEMS // 2
    return (len(value), tuple(value[:half]), tuple(value[-half:]))


def fingerprint_function(value: Any) -> Callable[[Any], Any] | None:
    """How to fingerprint ``value``; None for values an identity test covers."""
    if type(value) is dict:
        return dict_fingerprint
    if type(value) is list:
        return list_fingerprint
    if is_numpy_array(value):
        return ndarray_fingerprint
    return None


def values_equal(old: Any, new: Any) -> bool:
    """Equal as far as a trace could tell: same type and same value."""
    if old is new:
        return True
    kind = type(old)
    if kind is not type(new):
        return False
    if kind in _SCALARS:
        return bool(old == new) or (kind is float and math.isnan(old) and math.isnan(new))
    if isinstance(old, (tuple, list)):
        return len(old) == len(new) and all(map(values_equal, old, new))
    if isinstance(old, dict):
        return old.keys() == new.keys() and all(values_equal(old[k], new[k]) for k in old)
    if is_numpy_array(old) or (kind.__module__ == "numpy" and hasattr(old, "dtype")):
        np = _numpy()
        if old.shape != new.shape or old.dtype != new.dtype:
            return False
        nan = old.dtype.kind in "fc"
        return bool(np.array_equal(old, new, equal_nan=nan))
    if is_jax_array(old):
        return _jax_arrays_equal(old, new)
    if kind.__module__ == "numpy" and kind.__name__.startswith("dtype"):
        return bool(old == new)
    if kind.__hash__ is not None and getattr(kind, "__eq__", None) is not object.__eq__:
        # Value semantics (frozen dataclasses, structures like a graph definition): equal
        # objects are interchangeable, as JAX holds them for static arguments.
        try:
            return (old == new) is True
        except Exception:  # noqa: BLE001 - an __eq__ that cannot compare: a change
            return False
    return False


def _jax_arrays_equal(old: Any, new: Any) -> bool:
    if old.shape != new.shape or old.dtype != new.dtype:
        return False
    if old.is_deleted() or new.is_deleted():
        return False
    np = _numpy()
    nan = np.dtype(old.dtype).kind in "fc"
    if old.size <= HOST_COMPARE_ELEMENTS:
        return bool(np.array_equal(np.asarray(old), np.asarray(new), equal_nan=nan))
    import jax
    import jax.numpy as jnp

    with jax.ensure_compile_time_eval():  # evaluate now, even under an enclosing trace
        return bool(jnp.array_equal(old, new, equal_nan=nan))


_short = reprlib.Repr()
_short.maxstring = 40
_short.maxother = 60
_short.maxlist = _short.maxtuple = _short.maxdict = 4


def _number(value: Any) -> str:
    if isinstance(value, float):
        return repr(value) if value.is_integer() and abs(value) < 1e16 else format(value, ".6g")
    return repr(value)


def _array_text(kind: str, dtype: Any, shape: tuple[int, ...], leading: list[Any] | None) -> str:
    dims = ",".join(str(n) for n in shape)
    text = f"{kind} {dtype}[{dims}]"
    if leading is None:
        return text
    size = math.prod(shape)
    values = ", ".join(_number(v) for v in leading)
    if not shape:
        return f"{kind} {dtype} {values}"
    more = ", ..." if size > len(leading) else ""
    return f"{text} [{values}{more}]"


def describe(value: Any) -> str:
    """``float 0.5``, ``Array float32[2,5] [1.0, 1.0, 1.0, 1.0, ...]``, ``dict with 2 keys``."""
    try:
        return _describe(value)
    except Exception:  # noqa: BLE001 - a value that cannot show itself is shown by its type
        return type(value).__name__


def _leading_jax_values(value: Any) -> list[Any] | None:
    if value.is_deleted():
        return None
    if value.size <= HOST_COMPARE_ELEMENTS:
        return list(_numpy().asarray(value).reshape(-1)[:LEADING_VALUES].tolist())
    import jax

    with jax.ensure_compile_time_eval():  # a few elements, even under an enclosing trace
        return list(_numpy().asarray(value.reshape(-1)[:LEADING_VALUES]).tolist())


def _describe(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, (int, float, complex)):
        return f"{type(value).__name__} {_number(value)}"
    if isinstance(value, str):
        return f"str {_short.repr(value)}"
    if is_numpy_array(value):
        leading = value.reshape(-1)[:LEADING_VALUES].tolist()
        return _array_text("ndarray", value.dtype, value.shape, leading)
    if is_jax_array(value):
        leading = _leading_jax_values(value)
        return _array_text("Array", value.dtype, tuple(value.shape), leading)
    if isinstance(value, dict):
        keys = ", ".join(_short.repr(k) for k in itertools.islice(value, 4))
        more = ", ..." if len(value) > 4 else ""
        return f"dict with {len(value)} keys ({keys}{more})"
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return f"{type(value).__name__} of {len(value)} {_short.repr(value)}"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if callable(value) and isinstance(name, str):
        module = getattr(value, "__module__", None)
        return f"{type(value).__name__} {module + '.' if module else ''}{name}"
    return f"{type(value).__name__} {_one_line(_short.repr(value))}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def describe_fingerprint_change(value: Any, old: Any) -> str:
    """What changed inside a mutable value whose identity stayed the same."""
    if is_numpy_array(value) and isinstance(old, tuple) and len(old) == 3:
        shape, dtype, data = old
        if len(data) == value.nbytes and (shape, dtype) == (value.shape, value.dtype.str):
            np = _numpy()
            before = np.frombuffer(data, dtype=value.dtype).reshape(-1)[:LEADING_VALUES]
            was = _array_text("ndarray", value.dtype, value.shape, before.tolist())
            return f"{was} -> {describe(value)} (changed in place)"
        return f"{describe(value)} (changed in place; sampled elements differ)"
    if isinstance(value, dict) and isinstance(old, tuple):
        before = dict(old) if len(old) == 0 or isinstance(old[0], tuple) else {}
        changed = [
            k for k in set(before) | set(value) if not values_equal(before.get(k), value.get(k))
        ]
        keys = ", ".join(_short.repr(k) for k in changed[:4])
        return f"{describe(value)} (changed in place: {keys or 'entries'})"
    return f"{describe(value)} (changed in place)"
