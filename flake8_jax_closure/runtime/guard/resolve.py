"""Resolve what a trace read: the paths its frames read, found again as values.

When a trace ends, the paths the bytecode of each frame it ran reads on the lines it ran (see
``bytecode``) are resolved against the frame's globals, its closure cells and its arguments,
and followed as far as a cheap, side-effect-free test can follow them again on each call. Each
becomes a :class:`~.reads.Read`, with the rule code the linter gives such a read. Closure cells
are found through the function objects the trace touched (the garbage collector is asked only
when nothing it touched holds the function).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from types import CellType, CodeType, FunctionType, MethodType, ModuleType
from typing import TYPE_CHECKING, Any

from .bytecode import ATTR, FREE, GLOBAL, ITEM, LOCAL, PathRead, Step, code_reads
from .library import is_library_module
from .reads import (
    MISSING,
    ArgumentRoot,
    CellRoot,
    GlobalRoot,
    ObjectRoot,
    Read,
    Root,
)
from .tracer_search import TracerSearch
from .values import (
    fingerprint_function,
    is_jax_array,
    is_numpy_array,
    is_tracer,
)

if TYPE_CHECKING:
    from .tracing import Session, Visit


def resolve_reads(
    session: Session, visits: list[Visit], nested: list[Read], top: bool = False
) -> list[Read]:
    """What ``visits`` (frames the session's trace ran) read from outside the trace, resolved
    now, then the ``nested`` reads. ``top``: the visits start with the traced function, whose
    arguments are read from each call."""
    return _Resolver(session, visits, nested, top).reads()


def _is_method_of(value: Any) -> bool:
    return isinstance(value, MethodType) or (
        type(value).__name__ in ("builtin_function_or_method", "method-wrapper")
        and not isinstance(getattr(value, "__self__", None), (ModuleType, type(None)))
    )


def class_attribute(owner: type, name: str) -> Any:
    for klass in owner.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return MISSING


def _plain_instance_attribute(value: Any, name: str) -> bool:
    """``value.name`` is data stored on the instance or its class, not computed by a property,
    ``__getattr__`` or a custom ``__getattribute__``."""
    owner = type(value)
    instance = getattr(value, "__dict__", None)
    in_instance = isinstance(instance, dict) and name in instance
    lookup = getattr(owner, "__getattribute__", None)
    if lookup is not object.__getattribute__:
        # A type written in C with its own slot (``types.SimpleNamespace``, ``argparse``'s
        # results are Python): plain when the value is the one its ``__dict__`` holds.
        return (
            type(lookup).__name__ == "wrapper_descriptor"
            and in_instance
            and class_attribute(owner, name) is MISSING
            and _same_as_stored(value, name, instance)
        )
    found = class_attribute(owner, name)
    if found is MISSING:
        return in_instance
    descriptor = type(found)
    if descriptor.__name__ == "member_descriptor":
        return True  # __slots__
    if hasattr(descriptor, "__get__"):
        if hasattr(descriptor, "__set__") or hasattr(descriptor, "__delete__"):
            return False  # a property: the getter's own frame holds its reads
        return in_instance  # a method, unless the instance shadows it
    return True


def _named_tuple(value: Any) -> bool:
    """A ``namedtuple`` or ``typing.NamedTuple`` instance: a tuple whose fields are its items,
    read by name through descriptors that only index it."""
    owner = type(value)
    return (
        isinstance(value, tuple)
        and isinstance(getattr(owner, "_fields", None), tuple)
        and owner.__getitem__ is tuple.__getitem__
    )


def _same_as_stored(value: Any, name: str, instance: Any) -> bool:
    try:
        return getattr(value, name) is instance[name]
    except Exception:  # noqa: BLE001 - an attribute that cannot be read is not followed
        return False


_NOW: Any = object()  # a path read as it is when the trace ends


class _Followed:
    __slots__ = ("steps", "leaf", "kind")

    def __init__(self, steps: tuple[Step, ...], leaf: Any, kind: str) -> None:
        self.steps, self.leaf, self.kind = steps, leaf, kind


def _follow(root: Any, steps: tuple[Step, ...]) -> _Followed | None:
    """Follow ``steps`` as far as a cheap, side-effect-free test can follow them again on each
    call; None when the path is no capture (a library module, a tracer, a method call on an
    object whose method the trace watched)."""
    value, kept, kind = root, [], ""
    for step in steps:
        step_kind, key = step
        if is_tracer(value):
            return None
        if isinstance(value, ModuleType):
            if is_library_module(value) or step_kind != ATTR:
                return None
            following = value.__dict__.get(key, MISSING)
            kind = "module attribute"
        elif isinstance(value, type):
            if step_kind != ATTR:
                break
            try:
                following = getattr(value, key)
            except Exception:  # noqa: BLE001 - an attribute the trace could not have read
                return None
            if _is_method_of(following):
                return None  # a classmethod call
            kind = "class attribute"
        elif type(value) is dict:
            if step_kind != ITEM:
                break
            following = value.get(key, MISSING)
            kind = "item"
        elif type(value) in (list, tuple) or _named_tuple(value):
            if step_kind == ATTR and key in getattr(type(value), "_fields", ()):
                following = getattr(value, key)  # a named tuple's field: its item
                kind = "attribute"
            elif step_kind != ITEM or not isinstance(key, int):
                break
            else:
                try:
                    following = value[key]
                except IndexError:
                    return None
                kind = "item"
        elif is_numpy_array(value) or is_jax_array(value):
            break
        elif step_kind == ATTR and _plain_instance_attribute(value, key):
            following = getattr(value, key, MISSING)
            kind = "attribute"
        else:
            return None
        if following is MISSING:
            return None
        value = following
        kept.append(step)
    # ``weights.dot(x)``, ``CONFIG.get("k")``: the object whose method is called is read.
    if is_tracer(value) or isinstance(value, ModuleType) or _is_method_of(value):
        return None
    return _Followed(tuple(kept), value, kind)


def _follow_called(root: Any, path: PathRead) -> _Followed | None:
    """``state.apply_fn(p, x)`` where the object holds the function itself (a field of a
    flax ``TrainState``, an attribute set on the instance, a plain function or a bound method
    such as ``model.apply``): the call reads that attribute, not the whole object, so a new
    state holding the same function is no change. None when the name is a method of the
    object's class, or the object is not followed to the end."""
    if path.called is None:
        return None
    receiver = _follow(root, path.steps)
    if receiver is None or receiver.steps != path.steps:
        return None
    instance = getattr(receiver.leaf, "__dict__", None)
    held = instance.get(path.called, MISSING) if isinstance(instance, dict) else MISSING
    if not isinstance(held, (FunctionType, MethodType)):
        return None
    if not _plain_instance_attribute(receiver.leaf, path.called):
        return None
    return _Followed((*path.steps, (ATTR, path.called)), held, "attribute")


def _unwrap_functions(value: Any) -> Iterator[FunctionType]:
    for _ in range(8):
        if isinstance(value, FunctionType):
            yield value
            return
        inner = getattr(value, "func", None) or getattr(value, "__func__", None)
        inner = inner or getattr(value, "__wrapped__", None)
        if inner is None or inner is value:
            return
        value = inner


def _lexically_inside(inner: CodeType, outer: CodeType) -> bool:
    inner_name = getattr(inner, "co_qualname", None)
    outer_name = getattr(outer, "co_qualname", None)
    if inner_name is None or outer_name is None:  # Python 3.10
        return inner in outer.co_consts
    return str(inner_name).startswith(f"{outer_name}.<locals>.")


def source_location(code: CodeType, line: int | None) -> str:
    filename = code.co_filename
    try:
        relative = os.path.relpath(filename)
        if not relative.startswith(".."):
            filename = relative
    except ValueError:  # another drive
        pass
    return f"{filename}:{line if line is not None else code.co_firstlineno}"


def _rule(root_kind: str, root: str, steps: tuple[Step, ...], kind: str) -> tuple[str, str]:
    """The rule code the linter gives such a read, and a word for what the value is."""
    if not steps:
        if root_kind == GLOBAL:
            return "JC102", "global"
        return "JC101", "closure variable"
    if root == "self":
        return "JC104", "attribute of self" if kind == "attribute" else kind
    return "JC103", kind or "attribute"


class _Resolver:
    def __init__(
        self, session: Session, visits: list[Visit], nested: list[Read], top: bool
    ) -> None:
        self.session = session
        self.visits, self.nested, self.top = visits, nested, top
        self._functions: dict[CodeType, list[FunctionType]] | None = None
        self._searched: set[CodeType] = set()
        self.tracers = TracerSearch()

    def reads(self) -> list[Read]:
        found: dict[tuple[Any, ...], Read] = {}
        tops = self._tops()
        # Paths the trace stored to first: the value it read before its own store is the
        # one it depends on (and a later read elsewhere sees the trace's own value).
        for visit, top in zip(self.visits, tops, strict=True):
            for path, before in visit.before.values():
                self._add(found, visit, path, top, before)
        for visit, top in zip(self.visits, tops, strict=True):
            for path in code_reads(visit.code).reads:
                if path.line is None or path.line in visit.lines:
                    self._add(found, visit, path, top, _NOW)
        return list(found.values()) + self.nested

    def _tops(self) -> list[bool]:
        """Which visit is the traced function itself, whose arguments each call passes."""
        tops, top_seen = [], not self.top
        for visit in self.visits:
            top = (
                not top_seen
                and visit.code is self.session.top_code
                and self.session.arguments_are_roots
            )
            top_seen = top_seen or top
            tops.append(top)
        return tops

    def _add(
        self,
        found: dict[tuple[Any, ...], Read],
        visit: Visit,
        path: PathRead,
        top: bool,
        before: Any,
    ) -> None:
        resolved = self._root(visit, path, top)
        if resolved is None:
            return
        root, key, value = resolved
        followed = _follow_called(value, path) if before is _NOW else None
        followed = followed or _follow(value, path.steps)
        if followed is None:
            return
        identity = (key, followed.steps)
        if identity in found:
            return
        leaf = followed.leaf
        written = before is not _NOW
        if written:
            if followed.steps != path.steps or before is MISSING or is_tracer(before):
                return
            leaf = before
        code, kind = _rule(path.root_kind, path.root, followed.steps, followed.kind)
        fingerprint = fingerprint_function(leaf)
        found[identity] = Read(
            root,
            followed.steps,
            code,
            kind,
            source_location(visit.code, path.line),
            leaf,
            fingerprint,
            fingerprint(leaf) if fingerprint is not None else None,
            written,
        )

    def _root(
        self, visit: Visit, path: PathRead, top: bool
    ) -> tuple[Root, tuple[Any, ...], Any] | None:
        name = path.root
        if path.root_kind == GLOBAL:
            namespace = visit.namespace
            if name not in namespace:
                return None  # a builtin
            value = namespace[name]
            if isinstance(value, ModuleType) and (is_library_module(value) or not path.steps):
                return None
            return GlobalRoot(namespace, name), ("global", id(namespace), name), value
        if path.root_kind == FREE:
            cell = self._cell(visit, name)
            if cell is None:
                return None
            try:
                value = cell.cell_contents
            except ValueError:
                return None
            return CellRoot(cell, name), ("cell", id(cell)), value
        if path.root_kind == LOCAL:
            # ``self.helper(x)``: the method's own frame says what it reads.
            if not path.steps or name not in visit.args:
                return None
            value = visit.args[name]
            if is_numpy_array(value) or is_jax_array(value) or self.tracers.holds_tracers(value):
                return None
            if top:
                position, default = self._parameter(visit.code, name)
                return ArgumentRoot(name, position, default), ("argument", name), value
            return ObjectRoot(value, name), ("object", id(value)), value
        return None

    def _parameter(self, code: CodeType, name: str) -> tuple[int | None, Any]:
        index = code.co_varnames.index(name)
        position = index if index < code.co_argcount else None
        default = MISSING
        function = self.session.top
        if isinstance(function, FunctionType):
            if position is not None and function.__defaults__:
                first_default = code.co_argcount - len(function.__defaults__)
                if position >= first_default:
                    default = function.__defaults__[position - first_default]
            elif position is None and function.__kwdefaults__:
                default = function.__kwdefaults__.get(name, MISSING)
        return position, default

    # -- closure cells ----------------------------------------------------------------------

    def _parent(self, visit: Visit) -> Visit | None:
        frame = visit.frame.f_back if visit.frame is not None else None
        while frame is not None:
            found = self.session.by_frame.get(frame)
            if found is not None:
                return found
            frame = frame.f_back
        return None

    def _cell(self, visit: Visit, name: str) -> CellType | None:
        parent = self._parent(visit)
        while parent is not None:
            # A variable of a function the trace ran is the trace's own value.
            if name in parent.code.co_cellvars and _lexically_inside(visit.code, parent.code):
                return None
            parent = self._parent(parent)
        function = self._function_of(visit)
        if function is not None and function.__closure__:
            return function.__closure__[visit.code.co_freevars.index(name)]
        parent = self._parent(visit)
        if parent is not None and name in parent.code.co_freevars:
            return self._cell(parent, name)  # a comprehension's or inner function's
        return None

    def _matches(self, function: FunctionType, visit: Visit) -> bool:
        if function.__code__ is not visit.code:
            return False
        for name, cell in zip(visit.code.co_freevars, function.__closure__ or (), strict=False):
            seen = visit.free.get(name, MISSING)
            if seen is MISSING:
                continue
            try:
                if cell.cell_contents is not seen:
                    return False
            except ValueError:
                return False
        return True

    def _function_of(self, visit: Visit) -> FunctionType | None:
        functions = self._candidates()
        for function in functions.get(visit.code, ()):
            if self._matches(function, visit):
                return function
        if visit.code not in self._searched:
            # Not reachable from what the trace touched: ask the collector (slow, rare).
            self._searched.add(visit.code)
            for referrer in gc.get_referrers(visit.code):
                if isinstance(referrer, FunctionType) and referrer.__code__ is visit.code:
                    functions.setdefault(visit.code, []).append(referrer)
            for function in functions.get(visit.code, ()):
                if self._matches(function, visit):
                    return function
        return None

    def _candidates(self) -> dict[CodeType, list[FunctionType]]:
        if self._functions is not None:
            return self._functions
        functions: dict[CodeType, list[FunctionType]] = {}

        def add(value: Any) -> None:
            for function in _unwrap_functions(value):
                known = functions.setdefault(function.__code__, [])
                if not any(f is function for f in known):
                    known.append(function)
                    for cell in function.__closure__ or ():
                        try:
                            add(cell.cell_contents)
                        except ValueError:
                            pass

        add(self.session.top)
        for visit in self.session.visits:
            for value in visit.args.values():
                add(value)
            for value in visit.free.values():
                add(value)
            if visit.frame is not None:
                for value in visit.frame.f_locals.values():
                    add(value)
            for name in visit.code.co_names:
                add(visit.namespace.get(name))
        self._functions = functions
        return functions
