"""Runtime instrumentation of compile transforms: every compiled call is checked against eager.

``install`` replaces ``jax.jit`` and the other compile transforms the linter knows with versions
that, for functions defined in the tracked files, run each call twice: once under
``jax.disable_jit()`` (eager: reads every captured value as it is now) and once compiled. Outputs
are compared leaf by leaf, with a tolerance for float reassociation. A compiled call that differs
from its eager evaluation is a stale capture caught in the act.

jax is imported only when ``install`` runs; importing this module costs nothing.
"""

from __future__ import annotations

import functools
import importlib
import math
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

RELATIVE_TOLERANCE = 1e-5
ABSOLUTE_TOLERANCE = 1e-6
KEPT_OUTPUTS = 12


@dataclass
class FunctionRecord:
    """What happened to one compiled function (keyed by its file and first line)."""

    name: str
    filename: str
    first_line: int
    calls: int = 0
    divergent_calls: list[int] = field(default_factory=list)  # 1-based call numbers
    largest_difference: float = 0.0
    compiled_outputs: list[float | None] = field(default_factory=list)  # a sum per call
    eager_failures: int = 0
    failed_calls: int = 0  # compiled calls that raised

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
            if len(record.compiled_outputs) < KEPT_OUTPUTS:
                record.compiled_outputs.append(_summary(compiled))
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


def _summary(output: Any) -> float | None:
    """The sum of all numeric leaves: enough to see a value stuck or following a change."""
    import numpy as np

    try:
        total = sum(float(np.sum(np.asarray(leaf, dtype=np.float64))) for leaf in _leaves(output))
    except Exception:  # noqa: BLE001 - outputs that are not numbers have no summary
        return None
    return float(f"{total:.6g}")


def code_of(function: Any) -> CodeType | None:
    """The code object of the Python function behind wrappers (grad, vmap, partial, ...)."""
    seen = 0
    while function is not None and seen < 16:
        seen += 1
        code = getattr(function, "__code__", None)
        if isinstance(code, CodeType):
            return code
        if isinstance(function, functools.partial):
            function = function.func
            continue
        function = getattr(function, "__wrapped__", None)
    return None


class InstrumentedFunction:
    """A compiled function that also evaluates each call eagerly and records the comparison."""

    def __init__(self, compiled: Any, code: CodeType, recorder: Recorder) -> None:
        self._compiled = compiled
        self._code = code
        self._recorder = recorder
        functools.update_wrapper(self, compiled, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import jax

        # Eager first: a compiled call may donate (invalidate) its argument buffers.
        eager, eager_failed = None, False
        try:
            with jax.disable_jit():
                eager = self._compiled(*args, **kwargs)
        except Exception:  # noqa: BLE001 - the compiled call below shows the real error
            eager_failed = True
        try:
            output = self._compiled(*args, **kwargs)
        except Exception:
            self._recorder.record_failure(self._code)
            raise
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
    real: Callable[..., Any], tracked: Callable[[str], bool], recorder: Recorder
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
        return InstrumentedFunction(compiled, code, recorder)

    transform.__jax_stale_check__ = True  # type: ignore[attr-defined]
    return transform


def install(
    tracked: Callable[[str], bool],
    compile_functions: Iterable[str],
    recorder: Recorder | None = None,
) -> Recorder:
    """Replace each importable compile transform by its instrumented version."""
    recorder = recorder or Recorder()
    for qualified_name in sorted(compile_functions):
        module_name, _, attribute = qualified_name.rpartition(".")
        try:
            module = importlib.import_module(module_name)
            real = getattr(module, attribute)
        except (ImportError, AttributeError):
            continue
        if getattr(real, "__jax_stale_check__", False):
            continue
        setattr(module, attribute, _instrumented_transform(real, tracked, recorder))
    return recorder


def platform_description() -> dict[str, str]:
    import jax

    device = jax.devices()[0]
    return {"platform": jax.default_backend(), "device_kind": str(device.device_kind)}
