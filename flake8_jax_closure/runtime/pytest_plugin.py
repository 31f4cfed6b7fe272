"""pytest plugin: ``pytest --jax-stale-check`` checks every compiled call of a test suite.

Off by default. When on, the compile transforms the linter knows are instrumented for functions
defined under the rootdir; a test fails when a compiled function's output differs from its eager
evaluation during that test, naming the function and the captured names the linter reports.

``pytest --jax-guard[=MODE]`` is the cheap check: the runtime guard (``flake8_jax_closure.guard``)
fails a test at the compiled call that would reuse a trace whose captured values changed
(``error``, the default), warns (``warn``) or traces again (``retrace``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Generator
from typing import Any

import pytest

from ..analysis.names import COMPILE_FUNCTIONS
from .instrument import FunctionRecord, Recorder, install

_RECORDER_KEY = pytest.StashKey[Recorder]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jax-stale-check")
    group.addoption(
        "--jax-stale-check",
        action="store_true",
        default=False,
        help="fail tests whose compiled JAX functions return stale results (compares every "
        "compiled call with its eager evaluation)",
    )
    group.addoption(
        "--jax-guard",
        nargs="?",
        const="error",
        default=None,
        type=_guard_mode,
        metavar="MODE",
        help="guard compiled JAX functions: a call that would reuse a trace whose captured "
        "values changed fails the test (error, the default), warns (warn) or traces again "
        "(retrace); cheap enough to leave on",
    )


def _guard_mode(value: str) -> str:
    # ``--jax-guard tests/`` would read ``tests/`` as the mode (as ``--cov tests/`` does).
    if value not in ("error", "warn", "retrace"):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a mode (error, warn, retrace): write --jax-guard=MODE, or put "
            "paths before --jax-guard"
        )
    return value


def pytest_configure(config: pytest.Config) -> None:
    guard_mode = config.getoption("--jax-guard")
    if guard_mode is not None:
        from .guard.pytest_support import GuardPlugin

        config.pluginmanager.register(GuardPlugin(guard_mode), "jax-guard")
    if not config.getoption("--jax-stale-check"):
        return
    root = str(config.rootpath)

    def tracked(filename: str) -> bool:
        path = os.path.realpath(filename)
        return path.startswith(root + os.sep) and "site-packages" not in path

    config.stash[_RECORDER_KEY] = install(tracked, COMPILE_FUNCTIONS)


def _captured_names(record: FunctionRecord) -> list[str]:
    """What the linter reports for the function, to say which capture went stale."""
    from ..engine import SourceSyntaxError, check_source
    from ..files import SourceError, read_source
    from ..settings import Settings

    try:
        findings = check_source(read_source(record.filename).text, Settings())
    except (SourceError, SourceSyntaxError):
        return []
    return sorted({f.name for f in findings if f.function == record.name})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, None]:
    # An old-style wrapper, so that the plugin loads on every pytest it may meet.
    recorder = item.config.stash.get(_RECORDER_KEY, None)
    if recorder is None:
        yield
        return
    before = {key: len(r.divergent_calls) for key, r in recorder.records.items()}
    outcome = yield
    stale = [
        record
        for key, record in recorder.records.items()
        if len(record.divergent_calls) > before.get(key, 0)
    ]
    if stale and outcome.excinfo is None:
        lines = []
        for record in stale:
            names = _captured_names(record)
            captured = f"; it reads {', '.join(repr(n) for n in names)}" if names else ""
            lines.append(
                f"compiled '{record.name}' ({os.path.basename(record.filename)}:"
                f"{record.first_line}) returned a result that differs from its eager evaluation"
                f"{captured}"
            )
        message = "stale compiled function:\n" + "\n".join(lines)
        outcome.force_exception(pytest.fail.Exception(message, pytrace=False))
