"""What compiled code reads of an object ``self`` holds, and so which changes of it matter.

``self.model.forward(params, x)`` on ``self.model = Net(2.0)`` reads what ``Net.forward``
reads of the model (``receiver.paths_read_by``), for a class of the module or of another
module of the project. A trainer that stores ``self.model.params = ...`` after each step,
while its compiled loss is given the parameters as an argument and ``forward`` reads only
``self.scale``, changes nothing the trace read. Followed only where the code shows it: every
store of ``self.model`` makes an object of the same class, every read of it is an attribute
or a method call, and the changed name is a plain attribute (no property or ``__setattr__``
of a class without bases). JAX traces only what the methods read.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from ...analysis.callgraph.graph import CallGraph
from ...analysis.facts.model import Mutation, Read, paths_overlap
from ...analysis.facts.queries import Facts
from ...analysis.project import ProjectView
from ...analysis.receiver import (
    attribute_aliases,
    called_method,
    paths_read_by,
    plain_attribute,
    setter_stores,
)

Path = tuple[str, ...]


class HeldParts:
    """The parts of one held object that compiled code reads, and whether a change touches
    them."""

    def __init__(self, paths: list[Path], reader: _ClassReader) -> None:
        self.paths = paths
        self.reader = reader

    def touches(self, below: Path) -> bool:
        """Whether a change at ``below`` (``(".params",)`` for ``self.model.params = p``)
        may change what the reads return: the whole object, an item, a name that is neither
        plain data nor a property whose setter only stores attributes, or a path one of the
        reads overlaps (for a setter, one of the attributes it stores)."""
        if not below or not below[0].startswith("."):
            return True
        name = below[0][1:]
        if self.reader.plain(name):
            changed = [below]
        else:
            stored = self.reader.setter_stores(name)
            if stored is None:
                return True
            changed = [(f".{attribute}",) for attribute in stored]
        return any(paths_overlap(c, path) for c in changed for path in self.paths)

    def replaces_code(self, below: Path) -> bool:
        """Whether a change at ``below`` stores over a name that is neither plain data nor a
        property with a simple setter (``model.forward = lambda ...``): the code a read runs
        is then not the class's."""
        if len(below) != 1 or not below[0].startswith("."):
            return False
        name = below[0][1:]
        return not self.reader.plain(name) and self.reader.setter_stores(name) is None


def held_parts(
    facts: Facts,
    graph: CallGraph,
    project: ProjectView | None,
    attribute: str,
    reads: Iterable[Read],
    stores: Iterable[Mutation],
) -> HeldParts | None:
    """What ``reads`` (of ``self.<attribute>``, below it) read of the object that ``stores``
    (every store of ``self.<attribute>``) make; None when the code does not say."""
    reader = _class_reader(facts, graph, project, list(stores))
    if reader is None:
        return None
    read_by, plain = reader.reads, reader.plain
    paths: list[Path] = []
    for read in reads:
        if read.path[:1] != (f".{attribute}",):
            return None  # not a read of the attribute itself (``self.loss_fn(x)``)
        below = read.path[1:]
        if below:
            if not below[0].startswith("."):
                return None  # ``self.model["k"]``
            name = below[0][1:]
            if plain(name):
                paths.append(below)  # ``self.model.scale``: data, and what may share it
                paths.extend((other,) for other in reader.aliases(name))
                continue
            found = read_by(name)  # a property, or a function kept in an attribute
        else:
            node = read.path_node if read.path_node is not None else read.node
            method = called_method(facts, node)
            if method is None:
                return None  # ``self.model`` handed on whole
            found = read_by(method)
        if found is None:
            return None
        paths.extend(found)
    return HeldParts(paths, reader)


@dataclass(frozen=True)
class _ClassReader:
    """Questions about the one class a held object is made from."""

    reads: Callable[[str], list[Path] | None]  # what calling a method reads of ``self``
    plain: Callable[[str], bool]  # whether storing the name only stores it
    setter_stores: Callable[[str], list[str] | None]  # what a property's setter stores
    aliases: Callable[[str], tuple[str, ...]]  # attributes that may share what one holds


def _class_reader(
    facts: Facts, graph: CallGraph, project: ProjectView | None, stores: list[Mutation]
) -> _ClassReader | None:
    """The class every store makes, as a class of the module or of another module of the
    project; None when the stores make more than one, or the code does not say."""
    made = set()
    classes = set()
    for store in stores:
        value = store.value
        if not isinstance(value, ast.Call):
            return None
        cls = graph.object_class_of_call(store.scope, value)
        if cls is not None:
            classes.add(cls)
            continue
        qualified = facts.qualified_name(store.scope, value.func)
        if qualified is None or project is None:
            return None
        made.add(qualified)
    if len(classes) + len(made) != 1:
        return None
    if classes:
        scope = classes.pop()
        return _ClassReader(
            partial(paths_read_by, facts, scope),
            partial(plain_attribute, scope),
            partial(setter_stores, scope),
            partial(attribute_aliases, scope),
        )
    qualified = made.pop()
    assert project is not None
    return _ClassReader(
        partial(project.method_reads, qualified),
        partial(project.plain_attribute, qualified),
        partial(project.setter_stores, qualified),
        partial(project.attribute_aliases, qualified),
    )
