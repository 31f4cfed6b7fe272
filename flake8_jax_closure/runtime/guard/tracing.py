"""Watch a trace run and collect what it read from outside its arguments.

While JAX runs the Python function to trace it (and only then), a watch notes every frame of
user code the trace enters (the compiled function, the helpers it calls, the bodies it hands to
``lax.scan``, ``fori_loop``, ``tree_map`` or ``vmap``, methods and properties of objects it
uses) and the lines each frame ran. When the trace ends, the paths the bytecode of each frame
reads on those lines (see ``bytecode``) are resolved against the frame's globals, its closure
cells and its arguments (see ``resolve``), and become :class:`~.reads.Read` entries.

Why a watch: it sees exactly the functions that ran during this trace, nothing that merely
could run, and it costs nothing outside traces. From CPython 3.12 on the watch is
``sys.monitoring`` events (see ``monitor``, and why). Up to 3.11 it is a ``sys.settrace``
function: library frames get no line events (which code is library code is decided once per
code object), and the binds of JAX's own primitives, where no user code can run, turn the trace
function off until they return (see ``binds``), so tracing stays within a small factor of its
normal cost (see the benchmark). An active tracer (a debugger, coverage) keeps running: it is
chained, and restored when the trace ends; binds then keep it too.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from types import CodeType, FrameType, FunctionType
from typing import Any

from .binds import keep_binds, skip_binds
from .bytecode import GLOBAL, Path, PathRead, argument_names, code_reads
from .library import is_user_code
from .monitor import EnterFrame, LineHandler, Monitor, make_monitor
from .reads import MISSING, Read, walk
from .resolve import class_attribute, resolve_reads

TraceFunction = Callable[[FrameType, str, Any], Any]

_USER: dict[CodeType, bool] = {}
_local = threading.local()
# Sessions open in any thread: a compiled call made while one is open may be part of a trace.
ACTIVE = [0]


def _sessions() -> list[Session]:
    stack: list[Session] | None = getattr(_local, "sessions", None)
    if stack is None:
        stack = _local.sessions = []
    return stack


def active_session() -> Session | None:
    stack = getattr(_local, "sessions", None)
    return stack[-1] if stack else None


class Visit:
    """One frame of user code that ran during the trace. For code that stores to a path it
    also reads (``self.n += 1``, ``if self.scale is None: self.scale = ...``), ``before``
    keeps the value of each such path at its first read, if no store of this frame came
    first: the value the trace depends on, which the trace itself then changed."""

    __slots__ = ("code", "namespace", "args", "free", "frame", "lines", "before", "_written")

    def __init__(self, frame: FrameType) -> None:
        code = frame.f_code
        local_values = frame.f_locals
        self.code = code
        self.namespace = frame.f_globals
        self.args = {n: local_values[n] for n in argument_names(code) if n in local_values}
        self.free = {n: local_values.get(n, MISSING) for n in code.co_freevars}
        self.frame: FrameType | None = frame
        self.lines: set[int] = set()
        self.before: dict[Path, tuple[PathRead, Any]] = {}
        self._written: set[Path] = set()

    def line_handler(self) -> LineHandler:
        """What to do as this frame starts each line: note it, and for code that stores to a
        path it reads, also the value of each such path before the line runs."""
        return self.on_line_with_stores if code_reads(self.code).own_reads else self.on_line

    def on_line(self, frame: FrameType, line: int) -> None:
        self.lines.add(line)

    def on_line_with_stores(self, frame: FrameType, line: int) -> None:
        self.lines.add(line)
        facts = code_reads(self.code)
        for path in facts.own_reads.get(line, ()):
            key = (path.root_kind, path.root, path.steps)
            if key not in self._written and key not in self.before:
                self.before[key] = (path, _value_before(frame, path))
        # Marked when the line starts: its reads come before its store (``n += 1``).
        self._written |= facts.stores_by_line.get(line, frozenset())


def _local_trace(on_line: LineHandler) -> TraceFunction:
    """A ``sys.settrace`` local trace function that hands ``on_line`` each line event."""

    def local_trace(frame: FrameType, event: str, arg: Any) -> TraceFunction:
        if event == "line":
            on_line(frame, frame.f_lineno)
        return local_trace

    return local_trace


def _value_before(frame: FrameType, path: PathRead) -> Any:
    """The value of ``path`` now, as the line about to run will read it."""
    try:
        if path.root_kind == GLOBAL:
            value = frame.f_globals[path.root]
        else:
            value = frame.f_locals[path.root]
        return walk(value, path.steps)
    except Exception:  # noqa: BLE001 - not there yet: the line will fail or store it first
        return MISSING


class _Both:
    """Our local trace function and another tracer's, side by side."""

    def __init__(self, mine: TraceFunction | None, theirs: TraceFunction | None) -> None:
        self.mine, self.theirs = mine, theirs

    def __call__(self, frame: FrameType, event: str, arg: Any) -> Any:
        if self.mine is not None:
            self.mine = self.mine(frame, event, arg)
        if self.theirs is not None:
            self.theirs = self.theirs(frame, event, arg)
        return self if self.mine is not None or self.theirs is not None else None


def _classify(code: CodeType) -> bool:
    user = _USER[code] = is_user_code(code)
    return user


def _known_user(code: CodeType) -> bool:
    user = _USER.get(code)
    return _classify(code) if user is None else user


def _entering() -> EnterFrame | None:
    """How the current thread's innermost session takes a frame; None outside sessions."""
    stack = getattr(_local, "sessions", None)
    return stack[-1].enter_lines if stack else None


_MONITORS: list[Monitor | None] = []


def _monitor() -> Monitor | None:
    """The ``sys.monitoring`` watch (see ``monitor``), made once; None before CPython 3.12,
    where the watch is a ``sys.settrace`` function."""
    if not _MONITORS:
        with _MONITOR_LOCK:
            if not _MONITORS:
                _MONITORS.append(make_monitor(_known_user, _entering))
    return _MONITORS[0]


_MONITOR_LOCK = threading.Lock()


def release_watch() -> None:
    """The guard was uninstalled: a ``sys.monitoring`` watch gives its tool id back (the next
    guarded trace takes one again)."""
    with _MONITOR_LOCK:
        if _MONITORS and _MONITORS[0] is not None and not ACTIVE[0]:
            _MONITORS[0].release()
            _MONITORS.clear()


def _global_trace(previous: TraceFunction | None) -> TraceFunction:
    """The function ``sys.settrace`` gets while a trace runs. It is called for every frame
    JAX's tracing machinery enters, so library frames leave it after one dictionary lookup."""
    known = _USER.get
    local = _local

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        code = frame.f_code
        user = known(code)
        if user is None:
            user = _classify(code)
        if not user:
            return None
        stack = local.sessions
        return stack[-1].enter(frame) if stack else None

    if previous is None:
        return trace

    def chained(frame: FrameType, event: str, arg: Any) -> Any:
        theirs = previous(frame, event, arg)
        mine = trace(frame, event, arg)
        if mine is None or theirs is None:
            return mine or theirs
        return _Both(mine, theirs)

    return chained


class Session:
    """The frames one trace ran, and the reads of nested compiled calls it used."""

    def __init__(self, top: Any, top_code: CodeType | None, arguments_are_roots: bool) -> None:
        self.top = top  # the callable JAX traces, unwrapped of our probe
        self.top_code = top_code
        self.arguments_are_roots = arguments_are_roots
        self.visits: list[Visit] = []
        self.by_frame: dict[FrameType, Visit] = {}
        self.nested: list[Read] = []
        self.previous: Any = None  # the tracer that was set when the trace began
        self.watch: TraceFunction | None = None  # the trace function this session set

    def visit(self, frame: FrameType) -> Visit:
        """A frame of user code the trace entered."""
        visit = Visit(frame)
        self.visits.append(visit)
        self.by_frame[frame] = visit
        return visit

    def enter(self, frame: FrameType) -> TraceFunction:
        return _local_trace(self.visit(frame).line_handler())

    def enter_lines(self, frame: FrameType) -> LineHandler:
        return self.visit(frame).line_handler()

    def __enter__(self) -> Session:
        stack = _sessions()
        if not stack:
            monitor = _monitor()
            if monitor is not None:
                monitor.open()
            else:
                self.previous = sys.gettrace()
                self.watch = _global_trace(self.previous)
                sys.settrace(self.watch)
                if self.previous is None:
                    skip_binds(self.watch)
        stack.append(self)
        ACTIVE[0] += 1
        return self

    def __exit__(self, *exc: object) -> None:
        ACTIVE[0] -= 1
        stack = _sessions()
        stack.pop()
        if stack:
            return
        monitor = _monitor()
        if monitor is not None:
            monitor.forget_frames()
            monitor.close()
            return
        sys.settrace(self.previous)
        if self.watch is not None and self.previous is None:
            keep_binds(self.watch)
        self.previous = self.watch = None

    def mark(self) -> tuple[int, int]:
        """Where the trace is now: what ran after this is told by ``ran_since``."""
        return len(self.visits), len(self.nested)

    def ran_since(self, mark: tuple[int, int]) -> bool:
        return (len(self.visits), len(self.nested)) != mark

    def reads_since(self, mark: tuple[int, int]) -> list[Read]:
        """What the frames that ran since ``mark`` read (a body JAX traced apart)."""
        visits, nested = mark
        return resolve_reads(self, self.visits[visits:], self.nested[nested:])

    def reads(self) -> list[Read]:
        """Every value the trace read from outside its arguments, resolved now."""
        try:
            return resolve_reads(self, self.visits, self.nested, top=True)
        finally:
            for visit in self.visits:
                visit.frame = None  # frames hold tracers: let them go
            self.by_frame.clear()


def main_code(function: Any) -> CodeType | None:
    """The code object JAX ends up running for ``function``."""
    for _ in range(16):
        # Wrappers first: jax.grad(f), functools.wraps decorators are functions too.
        inner = getattr(function, "__wrapped__", None)
        if inner is None and isinstance(function, FunctionType):
            return function.__code__
        if inner is None:
            inner = getattr(function, "func", None)  # functools.partial
        if inner is None:
            inner = getattr(function, "__func__", None)  # a bound method
        if inner is None:
            call = class_attribute(type(function), "__call__")
            return call.__code__ if isinstance(call, FunctionType) else None
        function = inner
    return None
