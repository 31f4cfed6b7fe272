"""Code that never runs: statements after a ``break``, ``continue``, ``return`` or ``raise`` in the
same block, code after a block that ends the program, and blocks a test of the module's own
constants never lets run (``constant_tests``).

A rebinding written right after ``break`` (``if done: break; opt_update = ...``) is dead code:
Python never reaches it, so it changes nothing a compiled call could have traced. A block that
ends with ``sys.exit()`` (``if args.dev: step(x); sys.exit()``) runs nothing after itself: a
compiled call in it traces, but no call outside it comes later. Likewise a block of a function
that ends with ``return`` (``if dummy: run(x); return out``) runs nothing of that run of the
function after itself. A module-level statement that always raises ``NameError`` (see
``unbound``) is a jump too: nothing after it in its block, nor in its own body, runs.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Iterator

from .constant_tests import decided_dead_blocks
from .unbound import raises_name_error

_JUMPS = (ast.Break, ast.Continue, ast.Return, ast.Raise)
_BLOCKS = ("body", "orelse", "finalbody")
_PROGRAM_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})
# Per module: the line ranges after a jump in their block, and the blocks that end the program.
_Ranges = tuple[list[tuple[int, int]], list[tuple[int, int]]]
_ranges: weakref.WeakKeyDictionary[ast.Module, _Ranges] = weakref.WeakKeyDictionary()


def after_a_jump(tree: ast.Module, node: ast.AST) -> bool:
    """Whether ``node`` sits in a statement that follows a jump in its block, or in a block
    nested in such a statement."""
    line = getattr(node, "lineno", None)
    if line is None:
        return False
    return any(first <= line <= last for first, last in _line_ranges(tree)[0])


def never_runs(tree: ast.Module, line: int) -> bool:
    """Whether the line sits after a jump in its block, or in a block nested in such a
    statement, or in a block a test of the module's constants never lets run. (Reads are
    asked with ``after_a_jump``, which leaves the last alone: a ``def`` in such a block may
    still be the one a name resolves to, and its reads stand for the one that runs.)"""
    return any(first <= line <= last for first, last in _line_ranges(tree)[0]) or any(
        first <= line <= last for first, last in decided_dead_blocks(tree)
    )


def cut_off(tree: ast.Module, earlier: int, later: int) -> bool:
    """Whether the line ``earlier`` sits in a block that ends the program and ``later`` does
    not: running ``earlier`` means ``later`` never runs after it."""
    return any(
        first <= earlier <= last and not first <= later <= last
        for first, last in _line_ranges(tree)[1]
    )


def run_ended(tree: ast.Module, function: ast.AST, earlier: int, later: int) -> bool:
    """Whether the line ``earlier`` sits in a block of ``function`` that ends with ``return``
    and ``later`` does not: in one run of the function, running ``earlier`` means ``later``
    never runs after it. Not for a block inside a ``try`` or ``with`` of the function (an
    error may be caught there and the code after it run; a ``finally`` runs after the
    ``return``), nor one with a ``break`` or ``continue`` that may leave it first."""
    return any(
        first <= earlier <= last and not first <= later <= last
        for first, last in _returning_blocks(tree).get(id(function), ())
    )


def breaks_out(loop: ast.AST, line: int) -> bool:
    """Whether ``line`` sits in a block of the loop's own body before a ``break`` of that block,
    which nothing before it may leave first: running it ends the loop, and no later pass
    follows. Not a block
    inside a nested loop (its ``break`` ends that loop), a function, or a ``try`` or ``with``
    of the body (an error may be caught there and the pass go on)."""
    if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
        return False
    pending: list[list[ast.stmt]] = [loop.body]
    while pending:
        block = pending.pop()
        ending = next((st for st in block if isinstance(st, ast.Break)), None)
        if ending is not None:
            before = block[: block.index(ending)]
            if not _leaves_early(before) and block[0].lineno <= line <= ending.lineno:
                return True
        for statement in block:
            if not isinstance(statement, _SCOPES + _CATCHING + _LOOPS):
                pending.extend(_blocks_of(statement))
    return False


_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_returns: weakref.WeakKeyDictionary[ast.Module, dict[int, list[tuple[int, int]]]] = (
    weakref.WeakKeyDictionary()
)


def _returning_blocks(tree: ast.Module) -> dict[int, list[tuple[int, int]]]:
    """For each function of the module (by ``id`` of its node), the line ranges of its nested
    blocks that end with ``return`` and are left no other way, outside any ``try`` or
    ``with`` of the function."""
    found = _returns.get(tree)
    if found is not None:
        return found
    found = {}
    for function in statements(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        ranges: list[tuple[int, int]] = []
        pending: list[ast.stmt] = list(function.body)
        while pending:
            statement = pending.pop()
            if isinstance(statement, _SCOPES + _CATCHING):
                continue  # its own function's; or an error in it may be caught, and go on
            for block in _blocks_of(statement):
                pending.extend(block)
                if isinstance(block[-1], ast.Return) and not _leaves_early(block):
                    ranges.append((block[0].lineno, block[-1].end_lineno or block[-1].lineno))
        if ranges:
            found[id(function)] = ranges
    _returns[tree] = found
    return found


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# Statements around a block that may go on after an error in it: a ``try`` (whose ``finally``
# also runs after a ``return``), a ``with`` (``contextlib.suppress``).
_CATCHING = (ast.Try, getattr(ast, "TryStar", ast.Try), ast.With, ast.AsyncWith)


def _leaves_early(block: list[ast.stmt]) -> bool:
    """Whether a ``break`` or ``continue`` in the block (outside the functions it defines)
    may leave it before its ``return``."""
    pending: list[ast.AST] = list(block)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if not isinstance(node, _SCOPES + (ast.Lambda,)):
            pending.extend(ast.iter_child_nodes(node))
    return False


def _line_ranges(tree: ast.Module) -> _Ranges:
    """One walk of the module, kept while the tree lives: the dead ranges (from the line after
    a jump to the end of its block) and the blocks that end with a program exit."""
    found = _ranges.get(tree)
    if found is None:
        dead: list[tuple[int, int]] = []
        exiting: list[tuple[int, int]] = []
        # Each statement, and whether it is module-level code (outside ``def`` and ``class``).
        pending: list[tuple[ast.AST, bool]] = [(tree, True)]
        while pending:
            node, module_level = pending.pop()
            inside = module_level and not isinstance(node, _SCOPES)
            for block in _blocks_of(node):
                pending.extend((statement, inside) for statement in block)
                last = block[-1].end_lineno or block[-1].lineno
                jump = next((st for st in block[:-1] if isinstance(st, _JUMPS)), None)
                if jump is not None and (jump.end_lineno or jump.lineno) < last:
                    dead.append(((jump.end_lineno or jump.lineno) + 1, last))
                if inside:
                    dead.extend(_after_a_name_error(tree, block, jump))
                if _ends_program(block[-1]):
                    exiting.append((block[0].lineno, last))
        found = (dead, exiting)
        _ranges[tree] = found
    return found


def _after_a_name_error(
    tree: ast.Module, block: list[ast.stmt], jump: ast.stmt | None
) -> list[tuple[int, int]]:
    """The lines that never run after the first statement of a module-level block that always
    raises ``NameError`` before any jump: the rest of the block, and that statement's own
    body when the raising part is its head (``for X, y in data_iter(...):``)."""
    last = block[-1].end_lineno or block[-1].lineno
    for statement in block:
        if statement is jump:
            return []
        raising = raises_name_error(tree, statement)
        if raising is not None:
            after = (raising.end_lineno or raising.lineno) + 1
            return [(after, last)] if after <= last else []
    return []


def statements(tree: ast.Module) -> Iterator[ast.Module | ast.stmt]:
    """The module and every statement in it, through nested blocks (``def`` and class bodies
    too), without visiting expressions: a tenth of the nodes of a full walk."""
    pending: list[ast.Module | ast.stmt] = [tree]
    while pending:
        node = pending.pop()
        yield node
        for block in _blocks_of(node):
            pending.extend(block)


# Statements that hold blocks of statements; every other statement holds none.
_COMPOUND = (
    ast.Module, ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
    getattr(ast, "TryStar", ast.Try), ast.Match, ast.FunctionDef, ast.AsyncFunctionDef,
    ast.ClassDef,
)  # fmt: skip


def _blocks_of(node: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists of a module or a statement: its body, ``else``, ``finally``, each
    handler's and each case's body."""
    if not isinstance(node, _COMPOUND):
        return []
    blocks: list[list[ast.stmt]] = [getattr(node, name, None) or [] for name in _BLOCKS]
    blocks += [handler.body for handler in getattr(node, "handlers", [])]
    blocks += [case.body for case in getattr(node, "cases", [])]
    return [block for block in blocks if block and isinstance(block[0], ast.stmt)]


def _ends_program(statement: ast.stmt) -> bool:
    """``sys.exit(...)``, ``exit()``, ``quit()``, ``os._exit(...)``, ``raise SystemExit``."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Name):
            return func.id in _PROGRAM_EXITS
        return (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and f"{func.value.id}.{func.attr}" in _PROGRAM_EXITS
        )
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(raised, ast.Name) and raised.id == "SystemExit"
    return False
