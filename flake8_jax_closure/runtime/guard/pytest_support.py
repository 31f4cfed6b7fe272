"""``pytest --jax-guard[=MODE]``: the guard around a test session."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from .errors import StaleCaptureError


class GuardPlugin:
    def __init__(self, mode: str) -> None:
        self.mode = mode

    def pytest_configure(self, config: pytest.Config) -> None:
        from .install import install

        install(self.mode)  # before test modules are imported: their jax.jit is guarded

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        from .install import uninstall

        uninstall()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, None]:
        outcome = yield
        error = outcome.excinfo[1] if outcome.excinfo is not None else None
        if isinstance(error, StaleCaptureError):
            # The message says it all: which function, which value, where, and the fix.
            outcome.force_exception(pytest.fail.Exception(str(error), pytrace=False))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        from .state import retrace_summary

        lines = retrace_summary()
        if lines:
            terminalreporter.section("jax guard")
            for line in lines:
                terminalreporter.write_line(line)
