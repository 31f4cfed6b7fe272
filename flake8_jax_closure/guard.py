"""The runtime guard's public API: ``from flake8_jax_closure import guard``.

The guard catches a stale capture at the compiled call that would return it (how it works:
``flake8_jax_closure.runtime.guard``, where it lives). This module only re-exports the names
the README documents, so that they keep one stable home:

- :func:`install` / :func:`uninstall` / :func:`installed`, and :func:`guarding` as a context
  manager, with one of :data:`MODES` (``error``, ``warn``, ``retrace``);
- :class:`StaleCaptureError` (``error`` mode) and :class:`StaleCaptureWarning` (``warn``);
- :func:`statistics`: per guarded function, calls, stale calls, retraces and their causes;
- the IPython extension: ``%load_ext flake8_jax_closure.guard``, then ``%jax_guard MODE``.

Importing it imports nothing of JAX; :func:`install` does.
"""

from __future__ import annotations

from .runtime.guard.errors import StaleCaptureError, StaleCaptureWarning
from .runtime.guard.install import guarding, install, installed, uninstall
from .runtime.guard.ipython import load_ipython_extension, unload_ipython_extension
from .runtime.guard.state import MODES, FunctionStatistics, statistics

__all__ = [
    "MODES",
    "FunctionStatistics",
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
