"""``flake8-jax-closure guard``: run a program as ``python`` would, with the guard installed.

The program gets the same ``sys.argv``, runs as ``__main__`` with its own folder (a script) or
the current folder (``-m``) first on ``sys.path``, and its exit status is the command's. An
uncaught :class:`StaleCaptureError` exits 1 with its message alone; other uncaught exceptions
print their traceback, without the runner's own frames, as Python does.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from .errors import StaleCaptureError
from .state import MODES

USAGE = (
    "usage: flake8-jax-closure guard [--mode {error,warn,retrace}] (SCRIPT | -m MODULE) [ARGS ...]"
)
HELP = f"""{USAGE}

Run a Python program (as `python SCRIPT ARGS` or `python -m MODULE ARGS` would) with every
function it compiles through jax.jit, jax.pmap, pjit, equinox.filter_jit or filter_pmap
guarded: a compiled call that would reuse a trace whose captured values (closure variables,
globals, attributes of self, class and module attributes, dict and list items, NumPy arrays)
changed since is stale.

options:
  --mode error    raise StaleCaptureError at the stale call (default); exit status 1
  --mode warn     warn once per compiled function and value, and go on
  --mode retrace  trace again with the current values, so that results are right
  -m MODULE       run a module, as python -m does
"""


class UsageError(Exception):
    pass


@dataclass(frozen=True)
class Invocation:
    mode: str
    target: str
    is_module: bool
    arguments: tuple[str, ...]


def parse(argv: Sequence[str]) -> Invocation | None:
    """Options stop at the program, as for ``python``: what follows is the program's."""
    mode = "error"
    index = 0
    while index < len(argv):
        argument = argv[index]
        if argument in ("-h", "--help"):
            return None
        if argument == "--mode" or argument.startswith("--mode="):
            if argument == "--mode":
                index += 1
                if index >= len(argv):
                    raise UsageError("--mode needs a value: error, warn or retrace")
                value = argv[index]
            else:
                value = argument.split("=", 1)[1]
            if value not in MODES:
                raise UsageError(f"unknown mode {value!r}: expected error, warn or retrace")
            mode = value
        elif argument == "-m" or (argument.startswith("-m") and len(argument) > 2):
            module = argument[2:] or (argv[index + 1] if index + 1 < len(argv) else "")
            if not module:
                raise UsageError("-m needs a module name")
            rest = argv[index + 1 :] if argument[2:] else argv[index + 2 :]
            return Invocation(mode, module, True, tuple(rest))
        elif argument == "--":
            if index + 1 >= len(argv):
                raise UsageError("no program to run")
            return Invocation(mode, argv[index + 1], False, tuple(argv[index + 2 :]))
        elif argument.startswith("-"):
            raise UsageError(f"unknown option {argument!r}")
        else:
            return Invocation(mode, argument, False, tuple(argv[index + 1 :]))
        index += 1
    raise UsageError("no program to run: give a SCRIPT or -m MODULE")


def _exit_status(error: SystemExit, stderr: TextIO) -> int:
    code = error.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=stderr)
    return 1


def _raised_by_runpy(error: BaseException) -> bool:
    """The module to run was not found: no frame of the program is in the traceback."""
    here = os.path.dirname(os.path.abspath(__file__))
    tb = error.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not (filename.startswith(here) or "runpy" in filename):
            return False
        tb = tb.tb_next
    return True


def _print_traceback(error: BaseException, stderr: TextIO) -> None:
    """Python's traceback, starting at the program's first frame."""
    tb = error.__traceback__
    here = os.path.dirname(os.path.abspath(__file__))
    while tb is not None and (
        tb.tb_frame.f_code.co_filename.startswith(here)
        or tb.tb_frame.f_code.co_filename == runpy.__file__
        or "<frozen runpy>" in tb.tb_frame.f_code.co_filename
    ):
        tb = tb.tb_next
    stderr.write("Traceback (most recent call last):\n" if tb is not None else "")
    formatted = traceback.TracebackException(type(error), error, tb)
    lines = list(formatted.format())
    if lines and lines[0].startswith("Traceback") and tb is not None:
        lines = lines[1:]
    stderr.write("".join(lines))


def _summary(stderr: TextIO, after: int) -> None:
    from .state import retrace_summary

    for line in retrace_summary(after):
        print(f"flake8-jax-closure guard: {line}", file=stderr)


def run(invocation: Invocation, stderr: TextIO) -> int:
    from .install import install

    if not invocation.is_module and not os.path.isfile(invocation.target):
        print(f"flake8-jax-closure guard: {invocation.target}: no such file", file=stderr)
        return 2
    try:
        install(invocation.mode)
    except ImportError as error:
        print(
            f"flake8-jax-closure guard needs jax ({error}): pip install "
            "'flake8-jax-closure[verify]'",
            file=stderr,
        )
        return 2
    from .state import last_number

    before = last_number()
    saved_argv, saved_path0 = sys.argv, sys.path[0] if sys.path else None
    try:
        if invocation.is_module:
            sys.argv = ["-m", *invocation.arguments]  # runpy puts the module's path first
            sys.path[0:1] = [os.getcwd()]
            runpy.run_module(invocation.target, run_name="__main__", alter_sys=True)
        else:
            sys.argv = [invocation.target, *invocation.arguments]
            sys.path[0:1] = [os.path.dirname(os.path.abspath(invocation.target))]
            runpy.run_path(invocation.target, run_name="__main__")
        status = 0
    except SystemExit as error:
        status = _exit_status(error, stderr)
    except StaleCaptureError as error:
        sys.stdout.flush()
        print(f"StaleCaptureError: {error}", file=stderr)
        status = 1
    except ImportError as error:
        if invocation.is_module and _raised_by_runpy(error):
            print(f"flake8-jax-closure guard: {error}", file=stderr)  # No module named ...
            status = 1
        else:
            sys.stdout.flush()
            _print_traceback(error, stderr)
            status = 1
    except KeyboardInterrupt:
        print("interrupted", file=stderr)
        status = 130
    except BaseException as error:  # noqa: BLE001 - shown as Python shows it
        sys.stdout.flush()
        _print_traceback(error, stderr)
        status = 1
    finally:
        sys.argv = saved_argv
        if saved_path0 is not None:
            sys.path[0:1] = [saved_path0]
    if invocation.mode == "retrace":
        _summary(stderr, before)
    from .install import uninstall

    uninstall()  # the state of the process before, when run in process (tests)
    return status


def main(argv: Sequence[str], stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    try:
        invocation = parse(argv)
    except UsageError as error:
        print(f"{USAGE}\nflake8-jax-closure guard: error: {error}", file=stderr)
        return 2
    if invocation is None:
        stdout.write(HELP)
        return 0
    return run(invocation, stderr)
