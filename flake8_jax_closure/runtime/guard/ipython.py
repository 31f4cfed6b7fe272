"""The IPython extension: ``%load_ext flake8_jax_closure.guard``, then ``%jax_guard MODE``."""

from __future__ import annotations

import os
from typing import Any

from .errors import StaleCaptureError
from .install import install, uninstall
from .state import MODES, SETTINGS

MODE_VARIABLE = "FLAKE8_JAX_CLOSURE_GUARD_MODE"


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
