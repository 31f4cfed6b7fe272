"""Runtime instrumentation of compile transforms: every compiled call is checked against eager.

``install`` replaces ``jax.jit`` and the other compile transforms the linter knows with versions
that, for functions defined in the tracked files, run each call twice: once under
``jax.disable_jit()`` (eager: reads every captured value as it is now) and once compiled. Outputs
are compared leaf by leaf, with a tolerance for float reassociation. A compiled call that differs
from its eager evaluation is a stale capture caught in the act.

jax is imported only when ``install`` runs; importing this module costs nothing.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import itertools
import math
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

RELATIVE_TOLERANCE = 1e-5
ABSOLUTE_TOLERANCE = 1e-6
KEPT_CALLS = 1000  # calls whose output digest is kept
KEPT_DESCRIPTIONS = 8  # distinct outputs described
LEADING_VALUES = 4


@dataclass
class FunctionRecord:
    """What happened to one compiled function (keyed by its file and first line)."""

    name: str
    filename: str
    first_line: int
    calls: int = 0
    divergent_calls: list[int] = field(default_factory=list)  # 1-based call numbers
    largest_difference: float = 0.0
    # A digest of each compiled call's output (all leaves, shapes and dtypes), and a
    # description of each distinct output: its structure and leading values.
    output_digests: list[str | None] = field(default_factory=list)
    descriptions: dict[str, str] = field(default_factory=dict)
    eager_failures: int = 0
    failed_calls: int = 0  # compiled calls that raised
    # Calls made while another instrumented call ran (recursion, a compiled helper): they run
    # as they are, inside the outer call that is compared.
    nested_calls: int = 0

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Recorder:
    def __init__(self) -> None:
        self.records: dict[tuple[str, int], FunctionRecord] = {}
        self.lock = threading.Lock()

    def _record_for(self, code: CodeType) -> FunctionRecord:
        key = (code.co_filename, code.co_firstlineno)
        record = self.records.get(key)
        if record is None:
            record = FunctionRecord(code.co_name, code.co_filename, code.co_firstlineno)
            self.records[key] = record
        return record

    def record_nested(self, code: CodeType) -> None:
        with self.lock:
            self._record_for(code).nested_calls += 1

    def record_failure(self, code: CodeType) -> None:
        """A compiled call that raised counts as a call that disagrees with everything."""
        with self.lock:
            record = self._record_for(code)
            record.calls += 1
            record.failed_calls += 1
            record.divergent_calls.append(record.calls)
            record.largest_difference = math.inf

    def record(self, code: CodeType, compiled: Any, eager: Any, eager_failed: bool) -> None:
        with self.lock:
            record = self._record_for(code)
            record.calls += 1
            if len(record.output_digests) < KEPT_CALLS:
                digest = output_digest(compiled)
                record.output_digests.append(digest)
                if digest is not None and (
                    digest in record.descriptions or len(record.descriptions) < KEPT_DESCRIPTIONS
                ):
                    record.descriptions.setdefault(digest, describe_output(compiled))
            if eager_failed:
                record.eager_failures += 1
                return
            difference = difference_between(compiled, eager)
            if difference > 0:
                record.divergent_calls.append(record.calls)
                record.largest_difference = max(record.largest_difference, difference)

    def clear(self) -> None:
        with self.lock:
            self.records.clear()


def _leaves(tree: Any) -> list[Any]:
    import jax

    return list(jax.tree_util.tree_leaves(tree))


def difference_between(compiled: Any, eager: Any) -> float:
    """0.0 when equal within tolerance; otherwise the largest absolute difference (inf when the
    structures or shapes differ)."""
    import numpy as np

    compiled_leaves, eager_leaves = _leaves(compiled), _leaves(eager)
    if len(compiled_leaves) != len(eager_leaves):
        return math.inf
    largest = 0.0
    for left, right in zip(compiled_leaves, eager_leaves, strict=True):
        try:
            a, b = np.asarray(left), np.asarray(right)
        except Exception:  # noqa: BLE001 - opaque leaves compare by equality
            if left != right:
                return math.inf
            continue
        if a.shape != b.shape:
            return math.inf
        if a.dtype.kind in "fciub" and b.dtype.kind in "fciub":
            a64, b64 = a.astype(np.complex128), b.astype(np.complex128)
            if not np.allclose(
                a64, b64, rtol=RELATIVE_TOLERANCE, atol=ABSOLUTE_TOLERANCE, equal_nan=True
            ):
                largest = max(largest, float(np.nanmax(np.abs(a64 - b64))) or math.inf)
        elif not np.array_equal(a, b):
            return math.inf
    return largest


def output_digest(output: Any) -> str | None:
    """A checksum of every leaf's bytes, shape and dtype: equal outputs, equal digests."""
    import numpy as np

    digest = hashlib.sha1()
    try:
        for leaf in _leaves(output):
            array = np.asarray(leaf)
            digest.update(f"{array.dtype}{array.shape}".encode())
            digest.update(np.ascontiguousarray(array).tobytes())
    except Exception:  # noqa: BLE001 - opaque leaves have no digest
        return None
    return digest.hexdigest()[:12]


def describe_output(output: Any) -> str:
    """``float32[2,5] [5.0, 5.0, 5.0, 5.0, ...]``: dtype, shape and leading values of a single
    array; for several leaves, their count and each one's description, shortened."""
    import numpy as np

    leaves = _leaves(output)

    def one(leaf: Any) -> str:
        try:
            array = np.asarray(leaf)
        except Exception:  # noqa: BLE001 - opaque leaves are shown by type
            return type(leaf).__name__
        shape = ",".join(str(n) for n in array.shape)
        flat = array.reshape(-1)[:LEADING_VALUES].tolist()
        values = ", ".join(_number(v) for v in flat)
        if array.ndim == 0:
            return f"{array.dtype} {values}"
        more = ", ..." if array.size > LEADING_VALUES else ""
        return f"{array.dtype}[{shape}] [{values}{more}]"

    if len(leaves) == 1:
        return one(leaves[0])
    shown = "; ".join(one(leaf) for leaf in leaves[:3])
    more = "; ..." if len(leaves) > 3 else ""
    return f"{len(leaves)} leaves: {shown}{more}"


def _number(value: Any) -> str:
    """Six significant digits, as NumPy prints: float32 values read as written."""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e16:
            return repr(value)  # 20.0, as Python prints it
        return format(value, ".6g")
    if isinstance(value, complex):
        return format(value, ".6g")
    return repr(value)


def code_of(function: Any) -> CodeType | None:
    """The code object of the innermost Python function behind wrappers (``grad``,
    ``checkpoint``, ``named_call``, ``partial``, a bound method): JAX's own wrappers have code
    too, in JAX's files."""
    for _ in range(32):
        if isinstance(function, functools.partial):
            function = function.func
        elif getattr(function, "__wrapped__", None) is not None:
            function = function.__wrapped__
        elif getattr(function, "__func__", None) is not None:
            function = function.__func__  # a bound method
        else:
            code = getattr(function, "__code__", None)
            return code if isinstance(code, CodeType) else None
    return None


# Set while an instrumented call runs: compiled functions it calls (recursion, helpers) run
# as they are, since the outermost call is the one compared.
_running = threading.local()


class _FreshTraces:
    """A new trace context for every eager evaluation. ``jax.checkpoint`` and other transforms
    cache their traces by function and trace context even under ``disable_jit``: without a
    fresh context the eager evaluation would be as stale as the compiled one."""

    def __init__(self) -> None:
        import jax

        make = getattr(jax, "make_user_context", None)
        self._context = make(0) if make is not None else None
        self._numbers = itertools.count(1)

    def __call__(self) -> contextlib.AbstractContextManager[Any]:
        if self._context is None:
            return contextlib.nullcontext()
        return self._context(next(self._numbers))  # type: ignore[no-any-return]


class InstrumentedFunction:
    """A compiled function that also evaluates each call eagerly and records the comparison."""

    def __init__(
        self, compiled: Any, code: CodeType, recorder: Recorder, fresh: _FreshTraces
    ) -> None:
        self._compiled = compiled
        self._code = code
        self._recorder = recorder
        self._fresh = fresh
        functools.update_wrapper(self, compiled, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import jax

        if getattr(_running, "active", False):
            self._recorder.record_nested(self._code)
            return self._compiled(*args, **kwargs)
        _running.active = True
        try:
            # Eager first: a compiled call may donate (invalidate) its argument buffers.
            eager, eager_failed = None, False
            try:
                with jax.disable_jit(), self._fresh():
                    eager = self._compiled(*args, **kwargs)
            except Exception:  # noqa: BLE001 - the compiled call below shows the real error
                eager_failed = True
            try:
                output = self._compiled(*args, **kwargs)
            except Exception:
                self._recorder.record_failure(self._code)
                raise
        finally:
            _running.active = False
        self._recorder.record(self._code, output, eager, eager_failed)
        return output

    def __getattr__(self, name: str) -> Any:
        # ``.lower``, ``.trace``, ``.clear_cache`` ... of the compiled object still work.
        return getattr(self._compiled, name)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        return functools.partial(self, instance)


def _instrumented_transform(
    real: Callable[..., Any],
    tracked: Callable[[str], bool],
    recorder: Recorder,
    fresh: _FreshTraces,
) -> Callable[..., Any]:
    @functools.wraps(real)
    def transform(*args: Any, **kwargs: Any) -> Any:
        if not args or not callable(args[0]):
            # ``jax.jit(static_argnames=...)`` used as a decorator factory.
            return lambda function: transform(function, *args, **kwargs)
        compiled = real(*args, **kwargs)
        code = code_of(args[0])
        if code is None or not tracked(code.co_filename):
            return compiled
        return InstrumentedFunction(compiled, code, recorder, fresh)

    transform.__jax_stale_check__ = True  # type: ignore[attr-defined]
    return transform


def install(
    tracked: Callable[[str], bool],
    compile_functions: Iterable[str],
    recorder: Recorder | None = None,
) -> Recorder:
    """Replace each importable compile transform by its instrumented version."""
    recorder = recorder or Recorder()
    fresh = _FreshTraces()
    for qualified_name in sorted(compile_functions):
        module_name, _, attribute = qualified_name.rpartition(".")
        try:
            module = importlib.import_module(module_name)
            real = getattr(module, attribute)
        except (ImportError, AttributeError):
            continue
        if getattr(real, "__jax_stale_check__", False):
            continue
        setattr(module, attribute, _instrumented_transform(real, tracked, recorder, fresh))
    return recorder


def platform_description() -> dict[str, str]:
    import jax

    device = jax.devices()[0]
    return {"platform": jax.default_backend(), "device_kind": str(device.device_kind)}
