"""The trees of the project's other modules, parsed once per text.

Many questions are asked of one module (what it exports, its functions, its setters, its
classes): each is answered from the same tree. The trees are only read, never changed.
"""

from __future__ import annotations

import ast
import functools


@functools.lru_cache(maxsize=32)
def parsed_tree(text: str) -> ast.Module | None:
    """The module's tree; None when it does not parse."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
