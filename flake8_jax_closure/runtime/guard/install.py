"""Put the guard in place of JAX's compile transforms, and take it away again.

``install`` replaces ``jax.jit``, ``jax.pmap``, ``jax.experimental.pjit.pjit`` and (as soon as
equinox is imported, now or later) ``equinox.filter_jit`` and ``equinox.filter_pmap``. Functions
of library code pass straight through to JAX: equinox, optax and flax call ``jax.jit``
themselves. The mode applies to every guarded function's calls; ``uninstall`` gives JAX its
transforms back and turns the checks off, also for functions compiled while it was installed.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.abc
import importlib.machinery
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from types import MethodType, ModuleType
from typing import Any

from .guarded import GuardedFunction
from .library import is_user_code
from .nested import unwatch_nested_traces, watch_nested_traces
from .state import MODES, OFF, RECORD, SETTINGS
from .tracing import main_code, release_watch

# (module, attribute, kind): kind "jit" has JAX's cache signature; the others do not.
TRANSFORMS: tuple[tuple[str, str, str], ...] = (
    ("jax", "jit", "jit"),
    ("jax", "pmap", "pmap"),
    ("jax.experimental.pjit", "pjit", "jit"),
    ("equinox", "filter_jit", "filter_jit"),
    ("equinox", "filter_pmap", "filter_pmap"),
)
_MARK = "__flake8_jax_closure_guard__"
_originals: dict[tuple[str, str], tuple[Any, bool]] = {}
_hook: _PatchAfterImport | None = None


def _is_equinox_pytree(function: Any) -> bool:
    """Equinox traces modules and its own partials as pytrees: a probe would hide them."""
    equinox = sys.modules.get("equinox")
    if equinox is None:
        return False
    owner = function.__self__ if isinstance(function, MethodType) else function
    return isinstance(owner, equinox.Module)


def _should_guard(kind: str, function: Any) -> bool:
    code = main_code(function)
    if code is None or not is_user_code(code):
        return False
    return not (kind.startswith("filter_") and _is_equinox_pytree(function))


def _guarded_transform(kind: str, real: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(real)
    def transform(*args: Any, **kwargs: Any) -> Any:
        if not args and "fun" in kwargs and kind != "jit":  # jax.jit's is positional-only
            args = (kwargs.pop("fun"),)
        if not args:
            # ``jax.jit(static_argnums=0)`` or ``eqx.filter_jit(donate=...)``: a decorator.
            return lambda function, *more: transform(function, *more, **kwargs)
        function = args[0]
        if not callable(function) or not _should_guard(kind, function):
            return real(*args, **kwargs)
        return GuardedFunction(kind, real, function, tuple(args[1:]), kwargs)

    setattr(transform, _MARK, real)
    return transform


def _patch(module: ModuleType, attribute: str, kind: str) -> None:
    key = (module.__name__, attribute)
    if key in _originals:
        return
    present = attribute in module.__dict__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # jax.experimental.pjit.pjit
        real = getattr(module, attribute, None)
    if real is None or getattr(real, _MARK, None) is not None:
        return
    _originals[key] = (real, present)
    setattr(module, attribute, _guarded_transform(kind, real))


def _patch_module(module: ModuleType) -> None:
    for module_name, attribute, kind in TRANSFORMS:
        if module_name == module.__name__:
            _patch(module, attribute, kind)


class _Loader(importlib.abc.Loader):
    """The real loader, then the patch."""

    def __init__(self, loader: Any, after: Callable[[ModuleType], None]) -> None:
        self.loader, self.after = loader, after

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        create = getattr(self.loader, "create_module", None)
        return create(spec) if create is not None else None

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        self.after(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    """Patches a module's transforms right after it is imported (equinox: importing it up
    front would cost every guarded program that never uses it)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader, _patch_module)
                return spec
        return None


def install(mode: str = "error") -> None:
    """Guard every function compiled from now on. ``mode``: ``error`` (raise
    :class:`StaleCaptureError` instead of returning a stale result), ``warn`` (warn once per
    function and value) or ``retrace`` (trace again with the current values)."""
    global _hook
    if mode not in (*MODES, RECORD):
        raise ValueError(f"unknown guard mode {mode!r}: expected one of {', '.join(MODES)}")
    SETTINGS.mode = mode
    import jax
    import jax.experimental.pjit

    for module in (jax, jax.experimental.pjit):
        _patch_module(module)
    watch_nested_traces()
    try:  # hide the guard's frames from tracebacks, as JAX hides its own
        from jax._src import traceback_util

        traceback_util.register_exclusion(os.path.dirname(os.path.abspath(__file__)))
    except (ImportError, AttributeError):  # pragma: no cover - older or newer JAX
        pass
    if "equinox" in sys.modules:
        _patch_module(sys.modules["equinox"])
    elif _hook is None:
        _hook = _PatchAfterImport(["equinox"])
        sys.meta_path.insert(0, _hook)


def uninstall() -> None:
    """Give JAX its transforms back; guarded functions stop checking their calls."""
    global _hook
    SETTINGS.mode = OFF
    if _hook is not None:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(_hook)
        _hook = None
    unwatch_nested_traces()
    release_watch()
    for (module_name, attribute), (real, present) in list(_originals.items()):
        module = sys.modules.get(module_name)
        if module is not None:
            if present:
                setattr(module, attribute, real)
            else:
                with contextlib.suppress(AttributeError):
                    delattr(module, attribute)
        del _originals[(module_name, attribute)]


def installed() -> bool:
    return bool(_originals) or _hook is not None


@contextlib.contextmanager
def guarding(mode: str = "error") -> Iterator[None]:
    """``with guarding(mode="retrace"):`` the guard for the functions compiled in the block."""
    was_installed, previous_mode = installed(), SETTINGS.mode
    install(mode)
    try:
        yield
    finally:
        if not was_installed:
            uninstall()
        SETTINGS.mode = previous_mode
