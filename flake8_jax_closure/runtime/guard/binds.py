"""Binds of JAX's own primitives run without the trace watch.

While a trace is watched, ``sys.settrace`` costs something in every frame Python runs, also in
the frames it hands no line events: on CPython 3.11, a trace function makes the interpreter
leave its fast path for every instruction and call the trace function at every call. Most of
the Python that tracing runs is inside ``Primitive.bind`` (abstract evaluation, JVP and batching
rules, building the jaxpr), and no user code can run there when the primitive is JAX's own and
is given no Python of the program's: so while a session watches, such binds turn the watch off
and on again around themselves. On a neural ODE (equinox, diffrax) that leaves two fifths of
the frames the watch would see (see ``benchmarks/guard_bench.py``).

A bind runs unwatched only when

- its primitive is of the class ``Primitive`` itself, with no callable among its parameters
  (classes such as dtypes, and JAX's meshes, aside), nor in a sequence among them, and every
  jaxpr among them is inert in the same sense, equation by equation (a rule of a custom
  derivative inside runs when the bind differentiates or batches the jaxpr); or it is a custom
  JVP call (``jax.nn.softplus``, ``relu``) whose functions, rule and parameters reach only
  library code and plain data (see ``library_reach``), also as an equation of a jaxpr;
- every rule JAX may run for the primitive (abstract evaluation, evaluation, JVP, transpose,
  batching, staging) is library code: a primitive the program defines itself keeps the watch;
- the current JAX trace is of a class of JAX's own, not an interpreter of the program's.

Other subclasses (call primitives, ``custom_vjp`` calls, the higher-order primitives of
``hijax``) call the functions they are given, and keep the watch. Nothing is patched while
another tracer (a debugger, coverage) is set: the guard then chains to it and must not hide
frames from it. The decision is made with the watch already off, since its own calls would
cost what the watch costs.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from functools import partial
from types import CodeType, FunctionType, MethodType
from typing import Any

from .library import is_user_code
from .library_reach import LibraryReach, class_codes, class_runs_user_code

_lock = threading.Lock()
_watches: set[Any] = set()  # the trace functions of the sessions open now, in any thread
_real_bind: Callable[..., Any] | None = None
_RULE_DEPTH = 6  # a rule nested deeper (closures, partials) is taken for user code
# The rule tables of JAX's interpreters: a primitive's rules there may run during its bind.
_RULE_TABLES = (
    ("jax._src.interpreters.ad", "primitive_jvps"),
    ("jax._src.interpreters.ad", "primitive_transposes"),
    ("jax._src.interpreters.batching", "fancy_primitive_batchers"),
    ("jax._src.interpreters.partial_eval", "custom_staging_rules"),
    ("jax._src.interpreters.partial_eval", "custom_partial_eval_rules"),
    ("jax._src.interpreters.partial_eval", "forwarding_rules"),
)
_RULE_ATTRIBUTES = ("abstract_eval", "impl", "bind_with_trace", "is_high", "to_lojax")


class _Jax:
    """What the decision needs of JAX's internals, found when the first watch starts."""

    def __init__(self) -> None:
        from jax._src import core, custom_derivatives, mesh

        self.primitive: Any = core.Primitive
        self.custom_jvp_call = custom_derivatives.CustomJVPCallPrimitive
        self.jaxprs = (core.Jaxpr, core.ClosedJaxpr)
        self.inert_callables = (type, mesh.Mesh, mesh.AbstractMesh)
        self.trace_context = core.trace_ctx
        self.trace_context.trace  # noqa: B018 - where the current trace is found


class _Decisions:
    """What is known about primitives, trace classes and jaxprs while watches are open."""

    def __init__(self, jax: _Jax) -> None:
        self.jax = jax
        self.reach = LibraryReach(self.inert_jaxpr)
        self.library_primitives: dict[Any, bool] = {}
        self.library_traces: dict[type, bool] = {}
        # id -> (whether inert, the jaxpr: kept alive while its id is a key)
        self.inert_jaxprs: dict[int, tuple[bool, Any]] = {}

    def unwatched(self, primitive: Any, args: tuple[Any, ...], params: dict[str, Any]) -> bool:
        """Whether no user code can run in this bind of ``primitive`` (of the class
        ``Primitive`` or ``CustomJVPCallPrimitive``) given ``args`` and ``params``."""
        if type(primitive) is self.jax.custom_jvp_call:
            # Its arguments are the function and its JVP rule, wrapped by JAX, then arrays.
            inert = self.library_primitive(primitive) and all(
                map(self.reach.only_library, (*args, *params.values()))
            )
        else:
            inert = self.inert_equation(primitive, params)
        if not inert:
            return False
        trace_class = type(self.jax.trace_context.trace)
        library_trace = self.library_traces.get(trace_class)
        if library_trace is None:
            library_trace = not class_runs_user_code(trace_class)
            self.library_traces[trace_class] = library_trace
        return library_trace

    def inert_equation(self, primitive: Any, params: dict[str, Any]) -> bool:
        """Whether applying ``primitive`` with ``params`` (in a bind, or as an equation of a
        jaxpr that a bind evaluates, differentiates or batches) runs only library code."""
        kind = type(primitive)
        if kind is self.jax.custom_jvp_call:
            # The equation keeps its JVP rule as a function (``jvp_jaxpr_fun``).
            return self.library_primitive(primitive) and all(
                map(self.reach.only_library, params.values())
            )
        return (
            kind is self.jax.primitive
            and not primitive.call_primitive
            and self.library_primitive(primitive)
            and self.inert(params)
        )

    def library_primitive(self, primitive: Any) -> bool:
        known = self.library_primitives.get(primitive)
        if known is None:
            known = self.library_primitives[primitive] = not _has_user_rules(primitive)
        return known

    def inert(self, params: dict[str, Any]) -> bool:
        for value in params.values():
            if isinstance(value, (tuple, list)):
                if not all(map(self.inert_value, value)):
                    return False
            elif not self.inert_value(value):
                return False
        return True

    def inert_value(self, value: Any) -> bool:
        if isinstance(value, self.jax.jaxprs):
            return self.inert_jaxpr(value)
        return isinstance(value, self.jax.inert_callables) or not callable(value)

    def inert_jaxpr(self, jaxpr: Any) -> bool:
        """Every equation (and those of the jaxprs in its parameters) is inert, as
        ``inert_equation`` says. Found once per jaxpr."""
        known = self.inert_jaxprs.get(id(jaxpr))
        if known is not None:
            return bool(known[0])
        self.inert_jaxprs[id(jaxpr)] = (False, jaxpr)  # while it is looked at: not inert
        equations = getattr(jaxpr, "jaxpr", jaxpr).eqns  # a ClosedJaxpr's own jaxpr
        inert = all(self.inert_equation(e.primitive, e.params) for e in equations)
        self.inert_jaxprs[id(jaxpr)] = (inert, jaxpr)
        return inert


_decisions: _Decisions | None = None


def skip_binds(watch: Callable[..., Any]) -> None:
    """Binds that no user code can run in leave ``watch`` (a session's ``sys.settrace``
    function, in the thread that set it) off until they return."""
    global _real_bind, _decisions
    with _lock:
        _watches.add(watch)
        if _real_bind is not None:
            return
        try:
            jax = _Jax()
            decisions = _Decisions(jax)
            real = jax.primitive.__dict__["bind"]
        except Exception:  # noqa: BLE001 - another JAX: every bind keeps the watch
            return
        _decisions, _real_bind = decisions, real
        jax.primitive.bind = _unwatched_bind(real, decisions)


def keep_binds(watch: Callable[..., Any]) -> None:
    """``watch`` ended; when it was the last, JAX gets its ``bind`` back."""
    global _real_bind, _decisions
    with _lock:
        _watches.discard(watch)
        if _watches or _real_bind is None or _decisions is None:
            return
        _decisions.jax.primitive.bind = _real_bind
        _real_bind = _decisions = None


def _unwatched_bind(real: Callable[..., Any], decisions: _Decisions) -> Callable[..., Any]:
    gettrace, settrace = sys.gettrace, sys.settrace
    classes, watches = (decisions.jax.primitive, decisions.jax.custom_jvp_call), _watches

    def bind(primitive: Any, *args: Any, **params: Any) -> Any:
        watch = gettrace()
        if watch is None or watch not in watches or type(primitive) not in classes:
            return real(primitive, *args, **params)
        settrace(None)
        unwatched = False
        try:
            unwatched = decisions.unwatched(primitive, args, params)
        except Exception:  # noqa: BLE001 - undecided: the bind keeps the watch
            pass
        finally:
            if not unwatched:
                settrace(watch)
        if not unwatched:
            return real(primitive, *args, **params)
        try:
            return real(primitive, *args, **params)
        finally:
            settrace(watch)

    bind.__wrapped__ = real  # type: ignore[attr-defined]
    return bind


def _has_user_rules(primitive: Any) -> bool:
    """Whether a rule JAX may run for ``primitive`` during a bind is the program's code."""
    rules = [primitive.__dict__.get(name) for name in _RULE_ATTRIBUTES]
    for module, name in _RULE_TABLES:
        table = getattr(sys.modules.get(module), name, None)
        if isinstance(table, dict):
            rules.append(table.get(primitive))
    return any(runs_user_code(rule) for rule in rules if rule is not None)


def runs_user_code(value: Any) -> bool:
    """Whether ``value`` (a rule: a function, a closure over others, a ``partial``, a method,
    a callable object, or a class) may run the program's code. Nested deeper than
    ``_RULE_DEPTH``, it is taken to."""
    return any(code is None or is_user_code(code) for code in _codes(value, _RULE_DEPTH, set()))


def _codes(value: Any, depth: int, seen: set[int]) -> Iterator[CodeType | None]:
    """The code objects ``value`` may run; None where the search gave up."""
    if id(value) in seen:
        return
    if depth == 0:
        yield None
        return
    seen.add(id(value))
    if isinstance(value, FunctionType):
        yield value.__code__
        for cell in value.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            yield from _codes(contents, depth - 1, seen)
    elif isinstance(value, MethodType):
        yield from _codes(value.__func__, depth - 1, seen)
    elif isinstance(value, partial):
        for part in (value.func, *value.args, *value.keywords.values()):
            yield from _codes(part, depth - 1, seen)
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _codes(item, depth - 1, seen)
    elif isinstance(value, type):
        yield from class_codes(value)
    elif callable(value):
        yield from class_codes(type(value))  # its __call__ and other methods
