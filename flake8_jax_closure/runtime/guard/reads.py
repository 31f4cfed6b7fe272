"""The values a trace read, and the per-call test that they are still what it read.

A :class:`Read` is a root (a module global, a closure cell, an argument of the compiled call,
or an object a helper received) followed by attribute and constant-subscript steps, with the
value found at the end of the trace. A :class:`Record` holds the reads of one trace and a check
function generated from them: one Python expression of identity tests (and fingerprint tests
for mutable values) that runs on each call, without loops or attribute lookups beyond the paths
themselves.
"""

from __future__ import annotations

import contextlib
import itertools
import keyword
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CellType, ModuleType
from typing import Any

from .bytecode import ATTR, Step
from .library import GENERATED
from .values import describe, describe_fingerprint_change, fingerprint_function, values_equal


class Missing:
    """What a path leads to when a step fails (a key deleted, an attribute removed)."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = Missing()


class Root:
    label: str

    def value(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        raise NotImplementedError

    def expression(self, names: dict[str, Any], index: int) -> str:
        """Python source that evaluates the root in the check function's namespace."""
        raise NotImplementedError

    def bound(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Root:
        """This root for a trace nested in another: arguments become the objects passed."""
        return self

    def assign(self, value: Any) -> None:
        """Bind the root's name to ``value`` again (globals and closure cells only)."""


class GlobalRoot(Root):
    def __init__(self, namespace: dict[str, Any], name: str) -> None:
        self.namespace, self.label = namespace, name

    def value(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self.namespace[self.label]

    def assign(self, value: Any) -> None:
        self.namespace[self.label] = value

    def expression(self, names: dict[str, Any], index: int) -> str:
        names[f"g{index}"] = self.namespace
        return f"g{index}[{self.label!r}]"


class CellRoot(Root):
    def __init__(self, cell: CellType, name: str) -> None:
        self.cell, self.label = cell, name

    def value(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self.cell.cell_contents

    def assign(self, value: Any) -> None:
        self.cell.cell_contents = value

    def expression(self, names: dict[str, Any], index: int) -> str:
        names[f"c{index}"] = self.cell
        return f"c{index}.cell_contents"


class ArgumentRoot(Root):
    """An argument of the compiled function: static ``self``, a static configuration. Read
    from each call, since JAX serves a trace to every call whose static arguments are equal."""

    def __init__(self, name: str, position: int | None, default: Any) -> None:
        self.label, self.position, self.default = name, position, default

    def value(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.position is not None and self.position < len(args):
            return args[self.position]
        found = kwargs.get(self.label, self.default)
        if found is MISSING:
            raise LookupError(self.label)
        return found

    def expression(self, names: dict[str, Any], index: int) -> str:
        names[f"d{index}"] = self.default
        by_name = f"kwargs.get({self.label!r}, d{index})"
        if self.position is None:
            return by_name
        return f"(args[{self.position}] if len(args) > {self.position} else {by_name})"

    def bound(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Root:
        return ObjectRoot(self.value(args, kwargs), self.label)


class ObjectRoot(Root):
    """An object a function run by the trace received: a bound method's ``self``, a helper's
    argument, a partial's bound argument."""

    def __init__(self, obj: Any, name: str) -> None:
        self.obj, self.label = obj, name

    def value(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        return self.obj

    def expression(self, names: dict[str, Any], index: int) -> str:
        names[f"o{index}"] = self.obj
        return f"o{index}"


def path_text(root: str, steps: tuple[Step, ...]) -> str:
    """``CONFIG["clip"]``, ``self.mul``, ``settings.LR``."""
    parts = [root]
    for kind, key in steps:
        if kind == ATTR:
            parts.append(f".{key}")
        elif isinstance(key, str) and '"' not in key:
            parts.append(f'["{key}"]')
        else:
            parts.append(f"[{key!r}]")
    return "".join(parts)


def _step_expression(kind: str, key: Any, names: dict[str, Any], label: str) -> str:
    if kind == ATTR:
        if key.isidentifier() and not keyword.iskeyword(key):
            return f".{key}"
        names[label] = key
        return f".__getattribute__({label})"
    if isinstance(key, (str, int, bool, type(None))):
        return f"[{key!r}]"
    names[label] = key
    return f"[{label}]"


def walk(value: Any, steps: tuple[Step, ...]) -> Any:
    """Follow ``steps`` from ``value`` as the compiled code did."""
    for kind, key in steps:
        value = getattr(value, key) if kind == ATTR else value[key]
    return value


@dataclass(eq=False)
class Read:
    root: Root
    steps: tuple[Step, ...]
    code: str  # the rule the linter would report: JC101 ... JC104
    kind: str  # "global", "closure variable", "module attribute", ...
    where: str  # file:line where the trace read it
    expected: Any
    fingerprint: Callable[[Any], Any] | None = None
    expected_fingerprint: Any = None
    # The trace stored to this path after reading it: ``expected`` is the value it read
    # first, and a changed value is stale only if running the function now says so.
    written: bool = False

    @property
    def name(self) -> str:
        return path_text(self.root.label, self.steps)

    def current(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            return walk(self.root.value(args, kwargs), self.steps)
        except Exception:  # noqa: BLE001 - a path that no longer resolves has changed
            return MISSING

    def change(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Change | None:
        """How the value differs from what the trace read, or None. An equal value under a
        new identity is accepted: the next call's fast test passes again."""
        now = self.current(args, kwargs)
        if now is self.expected:
            if self.fingerprint is None:
                return None
            print_now = self.fingerprint(now)
            try:
                if print_now == self.expected_fingerprint:
                    return None
            except Exception:  # noqa: BLE001 - arrays among the entries: compare by value
                pass
            old = self.expected_fingerprint
            if _fingerprints_equal(old, print_now):
                self.expected_fingerprint = print_now
                return None
            return Change(self, now, in_place=True, old_fingerprint=old)
        if now is not MISSING and values_equal(self.expected, now):
            self.accept(now)
            return None
        return Change(self, now, in_place=False)

    def accept(self, now: Any) -> None:
        self.expected = now
        self.fingerprint = fingerprint_function(now)
        self.expected_fingerprint = self.fingerprint(now) if self.fingerprint else None

    def bound(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Read:
        try:
            root = self.root.bound(args, kwargs)
        except LookupError:
            root = self.root
        return Read(
            root,
            self.steps,
            self.code,
            self.kind,
            self.where,
            self.expected,
            self.fingerprint,
            self.expected_fingerprint,
            self.written,
        )

    def restore(self, args: tuple[Any, ...], kwargs: dict[str, Any], value: Any) -> None:
        """Put ``value`` back at the path (after running the function to compare)."""
        if value is MISSING:
            return
        with contextlib.suppress(Exception):
            if not self.steps:
                self.root.assign(value)
                return
            holder = walk(self.root.value(args, kwargs), self.steps[:-1])
            kind, key = self.steps[-1]
            if kind == ATTR:
                setattr(holder, key, value)
            else:
                holder[key] = value


def _fingerprints_equal(old: Any, new: Any) -> bool:
    """Fingerprints of dicts and lists hold references: compare their entries by value."""
    try:
        return values_equal(old, new)
    except Exception:  # noqa: BLE001 - opaque entries differ
        return False


@dataclass
class Change:
    read: Read
    now: Any
    in_place: bool
    old_fingerprint: Any = None

    @property
    def code(self) -> str:
        return "JC103" if self.in_place else self.read.code

    def summary(self) -> str:
        if self.now is MISSING:
            return f"{describe(self.read.expected)} -> no longer there"
        if self.in_place:
            return describe_fingerprint_change(self.now, self.old_fingerprint)
        return f"{describe(self.read.expected)} -> {describe(self.now)}"


_records = itertools.count()


@dataclass(eq=False)
class Record:
    """The reads of one trace, and the signature JAX caches that trace under (None when the
    transform does not say)."""

    reads: tuple[Read, ...]
    signature: Any = None
    check: Callable[[tuple[Any, ...], dict[str, Any]], bool] = field(init=False, repr=False)
    number: int = field(default_factory=lambda: next(_records))

    def __post_init__(self) -> None:
        self.check = compile_check(self.reads)

    def changes(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Change]:
        found = [c for read in self.reads if (c := read.change(args, kwargs)) is not None]
        if not found:
            self.refresh()  # values accepted as equal: a fast test that passes again
        return found

    def refresh(self) -> None:
        self.check = compile_check(self.reads)


def _always(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return True


def compile_check(reads: tuple[Read, ...]) -> Callable[[tuple[Any, ...], dict[str, Any]], bool]:
    """One function testing every read: ``True`` when all are what the trace read."""
    if not reads:
        return _always
    names: dict[str, Any] = {}
    tests = []
    for index, read in enumerate(reads):
        expression = read.root.expression(names, index)
        for number, (kind, key) in enumerate(read.steps):
            expression += _step_expression(kind, key, names, f"k{index}_{number}")
        names[f"v{index}"] = read.expected
        if read.fingerprint is None:
            tests.append(f"{expression} is v{index}")
        else:
            names[f"p{index}"] = read.fingerprint
            names[f"f{index}"] = read.expected_fingerprint
            tests.append(f"(t := {expression}) is v{index} and p{index}(t) == f{index}")
    body = " and ".join(f"({test})" for test in tests)
    source = (
        "def check(args, kwargs):\n"
        "    try:\n"
        f"        return bool({body})\n"
        "    except Exception:\n"
        "        return False\n"
    )
    exec(compile(source, GENERATED, "exec"), names)
    check: Callable[[tuple[Any, ...], dict[str, Any]], bool] = names["check"]
    return check


def is_module(value: Any) -> bool:
    return isinstance(value, ModuleType)
