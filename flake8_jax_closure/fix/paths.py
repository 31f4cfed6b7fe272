"""Paths into a value (``.scale``, ``["lr"]``) and the expressions that read them: the fix passes
the shortest paths that cover every read, each as one parameter."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from ..analysis.facts.model import Read
from ..positions import SourceLines


def minimal_paths(reads: Iterable[Read]) -> list[tuple[str, ...]]:
    """The shortest paths covering every read: ``()`` when any read takes the whole value."""
    paths: list[tuple[str, ...]] = []
    for path in sorted({read.path for read in reads}, key=lambda p: (len(p), p)):
        if not any(path[: len(p)] == p for p in paths):
            paths.append(path)
    return paths


def prefix_node(read: Read, depth: int) -> ast.expr:
    """The part of the read that reads the first ``depth`` steps of its path."""
    node = read.path_node
    assert node is not None
    for _ in range(len(read.path) - depth):
        assert isinstance(node, (ast.Attribute, ast.Subscript))
        node = node.value
    return node


def identifier(name: str, path: tuple[str, ...]) -> str:
    """A parameter name for the path: ``config_lr`` for ``config["lr"]``."""
    parts = [re.sub(r"\W+", "_", element).strip("_") for element in path]
    return "_".join([name, *[p for p in parts if p]])


def text_of(source: SourceLines, root: str, path: tuple[str, ...], reads: list[Read]) -> str:
    """The path as the source writes it, read from ``root``."""
    for read in reads:
        text = source.segment(prefix_node(read, len(path)))
        if text.startswith(read.name):
            return root + text[len(read.name) :]
    return root + "".join(path)
