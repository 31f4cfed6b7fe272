"""The runtime guard: catch a stale capture at the compiled call that would return it.

The linter judges code it cannot run. The guard watches code that runs: when JAX traces a
compiled function, it records every value the trace read from outside the function's arguments
(closure cells, module globals, attributes of ``self`` and of classes and modules, dict and list
items read by path, NumPy arrays, also inside helpers and the bodies handed to ``lax.scan``,
``fori_loop``, ``tree_map`` or ``vmap``); on each later call that reuses that trace, it checks
that those values are still what the trace read. A call that traces afresh (new shapes, new
static arguments) is never stale.

How, and why this way:

- *When a trace happens*: JAX is handed a probe in place of the function (one per function, so
  JAX's caches are shared exactly as without the guard). The probe runs only when JAX runs the
  Python function, that is when it traces; a call during which the probe did not run reused a
  trace. This is exact, where counting ``_cache_size()`` would miss traces that JAX keeps in its
  other caches (``lower``, nested calls).
- *What a trace read*: a ``sys.settrace`` function, set only while the probe runs, notes the
  frames of user code the trace ran and their lines; the bytecode of each frame says which
  globals, closure variables and attribute or item paths those lines read (``bytecode``,
  ``tracing``). Frames tell exactly which helpers ran, with which ``self``; bytecode names the
  values exactly, for lambdas and notebook cells too. The linter's static facts could only say
  what *might* run.
- *Checking cheaply*: each trace's reads become one generated Python function of identity
  tests, plus a bounded fingerprint for mutable values (``values``). A call costs a few hundred
  nanoseconds per value (see ``benchmarks/guard_bench.py``); only when a test fails does the
  guard compare by value, find the trace JAX will reuse (JAX's own cache signature, for
  ``jax.jit``) and decide.

Modes: ``error`` raises :class:`StaleCaptureError`; ``warn`` warns once per function and value;
``retrace`` drops the stale traces and traces again with the current values, and warns with the
fix when one value changes before most calls.

Entry points: ``flake8-jax-closure guard [--mode MODE] SCRIPT|-m MODULE [ARGS]``, ``pytest
--jax-guard[=MODE]``, :func:`install` / :func:`uninstall` / :func:`guarding`, and
``%load_ext flake8_jax_closure.guard`` in IPython. Importing this package imports nothing of
JAX; :func:`install` does.
"""

from __future__ import annotations

import os
from typing import Any

from .errors import StaleCaptureError, StaleCaptureWarning
from .guarded import MODES, SETTINGS, FunctionStatistics
from .install import guarding, install, installed, uninstall

__all__ = [
    "MODES",
    "StaleCaptureError",
    "StaleCaptureWarning",
    "guarding",
    "install",
    "installed",
    "load_ipython_extension",
    "statistics",
    "uninstall",
    "unload_ipython_extension",
]

MODE_VARIABLE = "FLAKE8_JAX_CLOSURE_GUARD_MODE"


def statistics() -> list[FunctionStatistics]:
    """Per guarded function: calls, stale calls, retraces and the values that caused them."""
    return SETTINGS.all_statistics()


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext flake8_jax_closure.guard``: guard what later cells compile (mode from
    ``$FLAKE8_JAX_CLOSURE_GUARD_MODE``, default ``error``; ``%jax_guard MODE`` or ``off``
    changes it). A stale call shows its message, without a traceback."""
    install(os.environ.get(MODE_VARIABLE, "error"))

    def show(shell: Any, kind: type, error: BaseException, tb: Any, tb_offset: Any = None) -> None:
        print(f"{kind.__name__}: {error}")

    ipython.set_custom_exc((StaleCaptureError,), show)

    def jax_guard(line: str) -> None:
        mode = line.strip()
        if not mode:
            print(f"guard mode: {SETTINGS.mode}")
            return
        if mode == "off":
            uninstall()
            print("guard off: functions compiled from now on are not guarded")
            return
        if mode not in MODES:
            print(f"unknown mode {mode!r}: use one of {', '.join(MODES)} or off")
            return
        install(mode)
        print(f"guard on, mode {mode}")

    ipython.register_magic_function(jax_guard, "line", "jax_guard")


def unload_ipython_extension(ipython: Any) -> None:
    uninstall()
    ipython.set_custom_exc((), None)
