"""The trace watch on CPython 3.12 and later: ``sys.monitoring`` (PEP 669) events.

From 3.12 on, ``sys.settrace`` is built on these events and costs more than it did: every
frame of every function calls back into Python and every line of library code raises an event,
so a trace function that ignores library frames still nearly doubles the time JAX takes to
trace a model, and the guard's own work comes on top. With the events themselves, the first
start of a library function's code returns ``DISABLE``: that code raises no event again and
runs at full speed, in this trace and later ones. (CPython forgets that for code that runs
while the events are off, between traces: the few functions of JAX that run around every
trace start once more in each.) Line events are asked for only on the code objects of user
functions a trace entered.

The watch is a tool of its own (a free tool id), so a debugger or coverage tool, whether it
uses ``sys.settrace`` or its own tool id, goes on working beside it. Events are global to the
interpreter; the callbacks act only in a thread with an open session, as the trace function
did in the thread that set it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

# A frame's line handler: what a Visit does when its frame starts a line.
LineHandler = Callable[[FrameType, int], None]
# Makes the Visit of a frame of user code a trace entered; returns its line handler.
EnterFrame = Callable[[FrameType], "LineHandler | None"]

_NAME = "flake8-jax-closure guard"
# Ids 0, 1, 2 and 5 are those CPython names for debuggers, coverage, profilers and optimizers.
_PREFERRED_IDS = (4, 3)


class Monitor:
    """The events of one tool id, turned on while any session of any thread is open."""

    def __init__(
        self,
        tool: int,
        is_user: Callable[[CodeType], bool],
        entering: Callable[[], EnterFrame | None],
    ) -> None:
        self.tool = tool
        self._is_user = is_user
        self._entering = entering  # the current thread's innermost session, as a frame entry
        self._open = 0
        self._lock = threading.Lock()
        self._local = threading.local()
        self._with_lines: set[CodeType] = set()
        monitoring = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
        events = self._events = monitoring.events
        self._disable = monitoring.DISABLE
        # A generator or coroutine resumed in a trace runs a frame of it again, as a start
        # does: the trace function's ``call`` event came on every resume too.
        self._callbacks = {
            events.PY_START: self._on_start,
            events.PY_RESUME: self._on_start,
            events.PY_THROW: self._on_throw,
            events.LINE: self._on_line,
        }
        for event, callback in self._callbacks.items():
            monitoring.register_callback(tool, event, callback)
        self._starts = events.PY_START | events.PY_RESUME | events.PY_THROW

    def open(self) -> None:
        with self._lock:
            self._open += 1
            if self._open == 1:
                sys.monitoring.set_events(self.tool, self._starts)  # type: ignore[attr-defined,unused-ignore]

    def close(self) -> None:
        with self._lock:
            self._open -= 1
            if self._open:
                return
            monitoring = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
            monitoring.set_events(self.tool, 0)
            for code in self._with_lines:
                monitoring.set_local_events(self.tool, code, 0)
            self._with_lines.clear()

    def forget_frames(self) -> None:
        """The current thread's outermost session ended: its frames are let go."""
        self._local.__dict__.pop("handlers", None)

    def release(self) -> None:
        """Give the tool id back (the guard was uninstalled): no event, no callback left."""
        with self._lock:
            monitoring = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
            monitoring.set_events(self.tool, 0)
            for code in self._with_lines:
                monitoring.set_local_events(self.tool, code, 0)
            self._with_lines.clear()
            for event in self._callbacks:
                monitoring.register_callback(self.tool, event, None)
            monitoring.free_tool_id(self.tool)

    # -- callbacks ------------------------------------------------------------------------------

    def _on_start(self, code: CodeType, offset: int) -> Any:
        if not self._is_user(code):
            return self._disable  # library code: not again, in any thread
        enter = self._entering()
        if enter is None:
            return None  # user code run outside a trace, or in another thread
        frame = sys._getframe(1)
        handler = enter(frame)
        if handler is None:
            return None
        handlers: dict[FrameType, LineHandler] | None = getattr(self._local, "handlers", None)
        if handlers is None:
            handlers = self._local.handlers = {}
        handlers[frame] = handler
        if code not in self._with_lines:
            with self._lock:
                self._with_lines.add(code)
                sys.monitoring.set_local_events(self.tool, code, self._events.LINE)  # type: ignore[attr-defined,unused-ignore]
        return None

    def _on_throw(self, code: CodeType, offset: int, exception: BaseException) -> Any:
        # An exception thrown into a generator resumes it; this event cannot be disabled.
        self._on_start(code, offset)
        return None

    def _on_line(self, code: CodeType, line: int) -> Any:
        handlers: dict[FrameType, LineHandler] | None = getattr(self._local, "handlers", None)
        if not handlers:
            return None
        frame = sys._getframe(1)
        handler = handlers.get(frame)
        if handler is not None:
            handler(frame, line)
        # Never DISABLE here: another frame of the same code may be followed later.
        return None


def make_monitor(
    is_user: Callable[[CodeType], bool], entering: Callable[[], EnterFrame | None]
) -> Monitor | None:
    """A monitor on a free tool id; None before 3.12, or when every id it may take is used."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return None
    for tool in _PREFERRED_IDS:
        if monitoring.get_tool(tool) is None:
            monitoring.use_tool_id(tool, _NAME)
            return Monitor(tool, is_user, entering)
    return None
