"""What a code object reads from outside itself, found in its bytecode.

A *path* starts at a name (a global, a free variable of a closure, or a local such as ``self``)
and follows attribute loads and subscripts by constants: ``CONFIG["clip"]``, ``self.mul``,
``settings.LR``. Each path carries the line of its first instruction, so that the guard keeps
only the paths on lines a trace actually ran. Paths that the code itself stores to
(``self.n = ...``, ``CONFIG["k"] = ...``, ``global lr; lr = ...``) are the trace's own state.

Bytecode rather than source: it exists for every function (lambdas, notebook cells, code built
with ``exec``), names each load exactly, and costs one pass per code object, cached. The
opcodes are those of CPython 3.10 to 3.14; unknown ones end a path, which only makes it shorter.
"""

from __future__ import annotations

import dis
import sys
from dataclasses import dataclass
from types import CodeType
from typing import Any

GLOBAL, FREE, LOCAL = "global", "free", "local"
ATTR, ITEM = "attr", "item"

Step = tuple[str, Any]  # (ATTR, name) or (ITEM, constant key)

_GLOBAL_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME"})
_DEREF_LOADS = frozenset({"LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF"})
_FAST_LOADS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW"})
_PAIR_LOADS = frozenset({"LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"})
_CONST_LOADS = frozenset({"LOAD_CONST", "LOAD_SMALL_INT"})
# Instructions that leave the value being built untouched.
_TRANSPARENT = frozenset({"CACHE", "EXTENDED_ARG", "NOP", "RESUME", "NOT_TAKEN"})
# The copy an augmented assignment makes of its target's holder (and key).
_COPIES = frozenset({"COPY", "DUP_TOP", "DUP_TOP_TWO"})
_KEY_TYPES = (str, int, bytes, bool, float, type(None))
_METHOD_FLAG_IN_LOAD_ATTR = sys.version_info >= (3, 12)


@dataclass(frozen=True)
class PathRead:
    """``root`` (of ``root_kind``) followed by ``steps``, read at ``line``. ``method``: the path
    is the object a method is called on (``CONFIG.get(...)``, ``self.helper(x)``), ``called``
    the name called on it: a function the object holds itself (``state.apply_fn(p, x)``) is
    read as that attribute."""

    root_kind: str
    root: str
    steps: tuple[Step, ...]
    line: int | None
    method: bool = False
    called: str | None = None


Path = tuple[str, str, tuple[Step, ...]]  # (root_kind, root, steps)


@dataclass(frozen=True)
class CodeReads:
    """``reads``: paths the code only reads. ``own_reads`` (by line): paths it also stores
    to, whose value matters only where a read comes before the store; ``stores`` (by line):
    what each line stores to."""

    reads: tuple[PathRead, ...]
    stores: frozenset[Path]
    own_reads: dict[int, tuple[PathRead, ...]]
    stores_by_line: dict[int, frozenset[Path]]


def _is_key(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_is_key(item) for item in value)
    return isinstance(value, _KEY_TYPES)


def _is_subscript(instruction: dis.Instruction) -> bool:
    if instruction.opname == "BINARY_SUBSCR":
        return True
    # 3.14: subscripts are a binary operator.
    return instruction.opname == "BINARY_OP" and instruction.argrepr == "[]"


class _Scanner:
    def __init__(self, code: CodeType) -> None:
        self.code = code
        self.reads: list[PathRead] = []
        self.stores: set[Path] = set()
        self.stores_by_line: dict[int, set[Path]] = {}
        self.chain: tuple[str, str, list[Step], int | None] | None = None
        self.key: Any = _NO_KEY
        self.line: int | None = code.co_firstlineno
        # ``self.n += 1``, ``D["k"] += 1``: the path copied before its read, stored after.
        self.augmented: tuple[str, str, tuple[Step, ...], Any] | None = None

    def _kind_of_deref(self, name: str) -> str:
        # A variable of this function that inner functions capture is still its own local.
        return FREE if name in self.code.co_freevars else LOCAL

    def flush(self, method: bool = False, called: str | None = None) -> None:
        chain, self.chain, self.key = self.chain, None, _NO_KEY
        if chain is None:
            return
        kind, root, steps, line = chain
        if kind == LOCAL and not steps and not method:
            return  # a local used whole is the code's own business
        self.reads.append(PathRead(kind, root, tuple(steps), line, method, called))

    def start(self, kind: str, root: str) -> None:
        self.flush()
        self.chain = (kind, root, [], self.line)

    def store(self, path: Path) -> None:
        self.stores.add(path)
        if self.line is not None:
            self.stores_by_line.setdefault(self.line, set()).add(path)

    def scan(self) -> tuple[list[PathRead], set[Path], dict[int, set[Path]]]:
        for instruction in dis.get_instructions(self.code):
            self.step(instruction)
        self.flush()
        return self.reads, self.stores, self.stores_by_line

    def step(self, ins: dis.Instruction) -> None:
        positions = getattr(ins, "positions", None)
        if positions is not None and positions.lineno is not None:
            self.line = positions.lineno
        elif ins.starts_line:
            self.line = int(ins.starts_line)
        op = ins.opname
        if op in _TRANSPARENT:
            return
        if op in _GLOBAL_LOADS:
            self.start(GLOBAL, ins.argval)
        elif op in _DEREF_LOADS:
            self.start(self._kind_of_deref(ins.argval), ins.argval)
        elif op in _FAST_LOADS:
            self.start(LOCAL, ins.argval)
        elif op in _PAIR_LOADS:
            first, second = ins.argval
            self.start(LOCAL, first)
            self.start(LOCAL, second)
        elif op in ("LOAD_ATTR", "LOAD_METHOD") and self.chain is not None:
            if self.key is not _NO_KEY:
                self.flush()
                return
            method = op == "LOAD_METHOD" or (
                _METHOD_FLAG_IN_LOAD_ATTR and op == "LOAD_ATTR" and bool((ins.arg or 0) & 1)
            )
            if method:
                self.flush(method=True, called=str(ins.argval))
            else:
                self.chain[2].append((ATTR, ins.argval))
        elif op in _CONST_LOADS and self.chain is not None and self.key is _NO_KEY:
            if _is_key(ins.argval):
                self.key = ins.argval
            else:
                self.flush()
        elif _is_subscript(ins) and self.chain is not None and self.key is not _NO_KEY:
            self.chain[2].append((ITEM, self.key))
            self.key = _NO_KEY
        elif op in _COPIES and self.chain is not None:
            kind, root, chain_steps, _ = self.chain
            self.augmented = (kind, root, tuple(chain_steps), self.key)
        elif op == "STORE_ATTR" and self.chain is None and self.augmented is not None:
            kind, root, held, _ = self.augmented
            self.store((kind, root, (*held, (ATTR, ins.argval))))
            self.augmented = None
        elif op == "STORE_SUBSCR" and self.chain is None and self.augmented is not None:
            kind, root, held, key = self.augmented
            if key is not _NO_KEY:
                self.store((kind, root, (*held, (ITEM, key))))
            self.augmented = None
        elif op == "STORE_ATTR" and self.chain is not None and self.key is _NO_KEY:
            kind, root, steps, _ = self.chain
            self.store((kind, root, (*steps, (ATTR, ins.argval))))
            self.chain = None
        elif op == "STORE_SUBSCR" and self.chain is not None and self.key is not _NO_KEY:
            kind, root, steps, _ = self.chain
            self.store((kind, root, (*steps, (ITEM, self.key))))
            self.chain, self.key = None, _NO_KEY
        elif op in ("STORE_GLOBAL", "STORE_NAME"):
            self.flush()
            self.store((GLOBAL, ins.argval, ()))
        elif op == "STORE_DEREF":
            self.flush()
            self.store((self._kind_of_deref(ins.argval), ins.argval, ()))
        else:
            self.flush()


class _NoKey:
    def __repr__(self) -> str:
        return "<no key>"


_NO_KEY: Any = _NoKey()
_CACHE: dict[CodeType, CodeReads] = {}


def code_reads(code: CodeType) -> CodeReads:
    """The paths ``code`` reads, in order, without those it stores to (cached per code)."""
    found = _CACHE.get(code)
    if found is None:
        scanned, stores, by_line = _Scanner(code).scan()
        reads: list[PathRead] = []
        own_reads: dict[int, list[PathRead]] = {}
        for read in scanned:
            if (read.root_kind, read.root, read.steps) not in stores:
                reads.append(read)
            elif read.line is not None and not read.method:
                own_reads.setdefault(read.line, []).append(read)
        found = _CACHE[code] = CodeReads(
            tuple(reads),
            frozenset(stores),
            {line: tuple(paths) for line, paths in own_reads.items()},
            {line: frozenset(paths) for line, paths in by_line.items()},
        )
    return found


def argument_names(code: CodeType) -> tuple[str, ...]:
    """Positional (and positional-only) parameters, then keyword-only ones."""
    count = code.co_argcount + code.co_kwonlyargcount
    return tuple(code.co_varnames[:count])
