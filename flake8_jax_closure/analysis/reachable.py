"""Code that never runs: statements after a ``break``, ``continue``, ``return`` or ``raise`` in the
same block.

A rebinding written right after ``break`` (``if done: break; opt_update = ...``) is dead code:
Python never reaches it, so it changes nothing a compiled call could have traced.
"""

from __future__ import annotations

import ast

_JUMPS = (ast.Break, ast.Continue, ast.Return, ast.Raise)
_BLOCKS = ("body", "orelse", "finalbody")


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
