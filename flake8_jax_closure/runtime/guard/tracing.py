"""Watch a trace run and collect what it read from outside its arguments.

While JAX runs the Python function to trace it (and only then), a ``sys.settrace`` function
notes every frame of user code the trace enters (the compiled function, the helpers it calls,
the bodies it hands to ``lax.scan``, ``fori_loop``, ``tree_map`` or ``vmap``, methods and
properties of objects it uses) and the lines each frame ran. When the trace ends, the paths the
bytecode of each frame reads on those lines (see ``bytecode``) are resolved against the frame's
globals, its closure cells and its arguments (see ``resolve``), and become
:class:`~.reads.Read` entries.

Why a trace function: it sees exactly the functions that ran during this trace, nothing that
merely could run, and it costs nothing outside traces. Library frames get no line events, so
tracing stays within a small factor of its normal cost (see the benchmark). An active tracer
(a debugger, coverage) keeps running: it is chained, and restored when the trace ends.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from types import CodeType, FrameType, FunctionType
from typing import Any

from .bytecode import argument_names
from .library import is_user_code
from .reads import MISSING, Read
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
    """One frame of user code that ran during the trace."""

    __slots__ = ("code", "namespace", "args", "free", "frame", "lines")

    def __init__(self, frame: FrameType) -> None:
        code = frame.f_code
        local_values = frame.f_locals
        self.code = code
        self.namespace = frame.f_globals
        self.args = {n: local_values[n] for n in argument_names(code) if n in local_values}
        self.free = {n: local_values.get(n, MISSING) for n in code.co_freevars}
        self.frame: FrameType | None = frame
        self.lines: set[int] = set()

    def local_trace(self, frame: FrameType, event: str, arg: Any) -> TraceFunction:
        if event == "line":
            self.lines.add(frame.f_lineno)
        return self.local_trace


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

    def enter(self, frame: FrameType) -> TraceFunction:
        visit = Visit(frame)
        self.visits.append(visit)
        self.by_frame[frame] = visit
        return visit.local_trace

    def __enter__(self) -> Session:
        stack = _sessions()
        if not stack:
            self.previous = sys.gettrace()
            sys.settrace(_global_trace(self.previous))
        stack.append(self)
        ACTIVE[0] += 1
        return self

    def __exit__(self, *exc: object) -> None:
        ACTIVE[0] -= 1
        stack = _sessions()
        stack.pop()
        if not stack:
            sys.settrace(self.previous)
            self.previous = None

    def reads(self) -> list[Read]:
        """Every value the trace read from outside its arguments, resolved now."""
        try:
            return resolve_reads(self)
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
