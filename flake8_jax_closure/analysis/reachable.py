"""Code that never runs: statements after a ``break``, ``continue``, ``return`` or ``raise`` in the
same block, and code after a block that ends the program.

A rebinding written right after ``break`` (``if done: break; opt_update = ...``) is dead code:
Python never reaches it, so it changes nothing a compiled call could have traced. A block that
ends with ``sys.exit()`` (``if args.dev: step(x); sys.exit()``) runs nothing after itself: a
compiled call in it traces, but no call outside it comes later.
"""

from __future__ import annotations

import ast
import weakref

_JUMPS = (ast.Break, ast.Continue, ast.Return, ast.Raise)
_BLOCKS = ("body", "orelse", "finalbody")
_PROGRAM_EXITS = frozenset({"sys.exit", "exit", "quit", "os._exit"})
_exiting: weakref.WeakKeyDictionary[ast.Module, list[tuple[int, int]]] = weakref.WeakKeyDictionary()


def after_a_jump(tree: ast.Module, node: ast.AST) -> bool:
    """Whether ``node`` sits in a statement that follows a jump in its block, or in a block
    nested in such a statement."""
    line = getattr(node, "lineno", None)
    if line is None:
        return False
    statements: list[ast.stmt] = tree.body
    while True:
        holder = None
        for statement in statements:
            if statement.lineno <= line <= (statement.end_lineno or statement.lineno):
                holder = statement
                break
            if isinstance(statement, _JUMPS):
                return True
        if holder is None:
            return False
        statements = _block_holding(holder, line)
        if not statements:
            return False


def _block_holding(statement: ast.stmt, line: int) -> list[ast.stmt]:
    """The statement's own block (``body``, ``orelse``, a handler's or a case's body) that
    holds the line; empty when the line is in its header."""
    blocks: list[list[ast.stmt]] = [getattr(statement, name, None) or [] for name in _BLOCKS]
    blocks += [handler.body for handler in getattr(statement, "handlers", [])]
    blocks += [case.body for case in getattr(statement, "cases", [])]
    for block in blocks:
        if block and isinstance(block[0], ast.stmt):
            first, last = block[0].lineno, block[-1].end_lineno or block[-1].lineno
            if first <= line <= last:
                return block
    return []


def cut_off(tree: ast.Module, earlier: int, later: int) -> bool:
    """Whether the line ``earlier`` sits in a block that ends the program and ``later`` does
    not: running ``earlier`` means ``later`` never runs after it."""
    return any(
        first <= earlier <= last and not first <= later <= last
        for first, last in _blocks_ending_the_program(tree)
    )


def _blocks_ending_the_program(tree: ast.Module) -> list[tuple[int, int]]:
    found = _exiting.get(tree)
    if found is None:
        found = []
        for node in ast.walk(tree):
            if not isinstance(node, ast.stmt):
                continue
            blocks: list[list[ast.stmt]] = [getattr(node, name, None) or [] for name in _BLOCKS]
            blocks += [handler.body for handler in getattr(node, "handlers", [])]
            blocks += [case.body for case in getattr(node, "cases", [])]
            for block in blocks:
                if block and isinstance(block[-1], ast.stmt) and _ends_program(block[-1]):
                    found.append((block[0].lineno, block[-1].end_lineno or block[-1].lineno))
        _exiting[tree] = found
    return found


def _ends_program(statement: ast.stmt) -> bool:
    """``sys.exit(...)``, ``exit()``, ``quit()``, ``os._exit(...)``, ``raise SystemExit``."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        return ast.unparse(statement.value.func) in _PROGRAM_EXITS
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(raised, ast.Name) and raised.id == "SystemExit"
    return False
