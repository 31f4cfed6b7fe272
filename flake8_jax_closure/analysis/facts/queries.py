"""The questions asked of the facts, answered on demand.

A unit's expressions are visited the first time a question needs them, and every question about
a name first visits each unit on a line where that name occurs as a word: an identifier cannot
span lines, so no fact about the name can hide elsewhere. Questions about a scope's body visit
the whole body. Each unit is visited once, by the one collector: the rules live in one place,
and a module that never asks about most names never pays for them.
"""

from __future__ import annotations

import ast
import bisect
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from fnmatch import fnmatchcase
from functools import cached_property
from typing import Generic, TypeVar

from ..words import INDEX_AFTER, word_index, word_lines
from .collector import Collector
from .model import AttributeRef, Binding, BindingKind, Mutation, Read, Scope, ScopeKind, Site
from .skeleton import Skeleton, Unit


class Facts:
    """The scope facts of one module, gathered on demand (see the module docstring)."""

    def __init__(self, tree: ast.Module, text: str) -> None:
        self.tree = tree
        skeleton = Skeleton(tree)
        self.module_scope = skeleton.module
        self.scopes: list[Scope] = skeleton.scopes
        self.units = skeleton.units
        self._firsts = [unit.first for unit in self.units]
        self.global_declarers = skeleton.global_declarers
        self.nonlocal_declarers = skeleton.nonlocal_declarers
        self.scopes_by_node: dict[int, Scope] = {id(s.node): s for s in self.scopes}
        self.parents: dict[int, ast.AST] = {}
        self.bindings: dict[str, list[Binding]] = {}
        self.reads: dict[str, list[Read]] = {}
        self.reads_by_scope: dict[int, list[Read]] = {}
        self.mutations: dict[str, list[Mutation]] = {}
        self.mutated_attributes: dict[str, list[Mutation]] = {}
        self.nested_mutated_attributes: dict[str, list[Mutation]] = {}
        self.attributes: dict[str, list[AttributeRef]] = {}
        # ``getattr`` with a computed name, by the pattern of the names it may take (``*_act``
        # for ``f"{method}_act"``, ``*`` for any).
        self.computed_attributes: dict[str, list[AttributeRef]] = {}
        self.decorated: list[tuple[Scope, ast.FunctionDef | ast.AsyncFunctionDef]] = []
        self._collector = Collector(self)
        self._text = _searchable(text)
        self._lines: dict[str, list[int]] = {}
        self._word_index: dict[str, list[int]] | None = None
        self._local: set[tuple[int, str]] = set()
        self._resolved: dict[tuple[int, str], Scope] = {}
        self._owned_bindings = _ByOwner(self.bindings)
        self._owned_reads = _ByOwner(self.reads)
        self._owned_mutations = _ByOwner(self.mutations)

    # -- recording (the collector) ---------------------------------------------------------------

    def add_read(self, read: Read) -> None:
        self.reads.setdefault(read.name, []).append(read)
        self.reads_by_scope.setdefault(id(read.scope), []).append(read)

    def add_binding(self, binding: Binding) -> None:
        self.bindings.setdefault(binding.name, []).append(binding)

    def add_mutation(self, mutation: Mutation) -> None:
        self.mutations.setdefault(mutation.name, []).append(mutation)
        if mutation.path and mutation.path[0].startswith("."):
            attribute = mutation.path[0][1:]
            self.mutated_attributes.setdefault(attribute, []).append(mutation)
        for step in mutation.path[1:]:
            if step.startswith("."):
                self.nested_mutated_attributes.setdefault(step[1:], []).append(mutation)

    def add_attribute(self, ref: AttributeRef) -> None:
        table = self.computed_attributes if ref.computed else self.attributes
        table.setdefault(ref.attr, []).append(ref)

    # -- visiting units on demand ----------------------------------------------------------------

    def lines_of(self, names: Iterable[str]) -> dict[str, list[int]]:
        """The lines where each name occurs as a word (cached per name). A few names are each
        found with ``str.find``; past ``INDEX_AFTER`` names, one pass indexes every word, so
        that a module with thousands of names costs its length once, not once per name."""
        found = {}
        for name in names:
            lines = self._lines.get(name)
            if lines is None:
                if self._word_index is None and len(self._lines) >= INDEX_AFTER:
                    self._word_index = word_index(self._text)
                if self._word_index is not None:
                    lines = self._word_index.get(name, [])
                else:
                    lines = word_lines(self._text, name)
                self._lines[name] = lines
            found[name] = lines
        return found

    def _visit_lines(self, lines: Iterable[int], begin: int, end: int) -> None:
        units, firsts = self.units, self._firsts
        for line in lines:
            index = bisect.bisect_right(firsts, line, begin, end) - 1
            # Units never overlap except on a shared line: the ones starting on the line, and
            # at most one before them that ends on it.
            while index >= begin:
                unit = units[index]
                if unit.last >= line:
                    self._visit(unit)
                if unit.first < line:
                    break
                index -= 1

    def _visit(self, unit: Unit) -> None:
        if not unit.visited:
            unit.visited = True
            self._collector.visit_unit(unit)

    def ensure_names(self, names: Iterable[str], within: Scope | None = None) -> None:
        """Visit every unit (of ``within``'s body, or of the module) where a name occurs."""
        scope = within or self.module_scope
        begin, end = scope.unit_range
        names = list(names)
        keys = [(id(scope), n) for n in names]
        missing = [n for n, key in zip(names, keys, strict=True) if key not in self._local]
        if not missing:
            return
        if begin >= end:
            self._local.update((id(scope), name) for name in missing)
            return
        # Only the lines within the scope: a common name ("x", "jnp") occurs everywhere, and
        # walking all its lines for each small scope would make a module's cost quadratic.
        first = self.units[begin].first
        last = max(self.units[end - 1].last, getattr(scope.node, "end_lineno", 0) or 0)
        for name, lines in self.lines_of(missing).items():
            self._local.add((id(scope), name))
            low = bisect.bisect_left(lines, first)
            high = bisect.bisect_right(lines, last, low)
            self._visit_lines(lines[low:high], begin, end)

    def ensure_scope(self, scope: Scope) -> None:
        """Visit the whole body of a function, class or module."""
        if scope.kind in (ScopeKind.LAMBDA, ScopeKind.COMPREHENSION):
            return  # complete once the unit holding it was visited
        begin, end = scope.unit_range
        for unit in self.units[begin:end]:
            self._visit(unit)

    # -- questions -------------------------------------------------------------------------------

    def resolve(self, scope: Scope, name: str) -> Scope:
        """The scope owning ``name`` as seen from ``scope`` (the module for globals, builtins)."""
        key = (id(scope), name)
        cached = self._resolved.get(key)
        if cached is not None:
            return cached
        current: Scope | None = scope
        result = self.module_scope
        while current is not None:
            if current is not scope and current.kind is ScopeKind.CLASS:
                # Functions nested in a class body do not see the class's names.
                current = current.parent
                continue
            if current.kind is ScopeKind.MODULE or name in current.declared_global:
                break
            if name not in current.declared_nonlocal:
                if name in current.params:
                    result = current
                    break
                if current.kind in (ScopeKind.FUNCTION, ScopeKind.CLASS):
                    self.ensure_names([name], within=current)
                if name in current.bound:
                    result = current
                    break
            current = current.parent
        self._resolved[key] = result
        return result

    def _declarers(self, owner: Scope, name: str) -> list[Scope]:
        """Scopes that bind ``name`` in ``owner`` through ``global`` or ``nonlocal``."""
        if owner.kind is ScopeKind.MODULE:
            return self.global_declarers.get(name, [])
        return [
            s
            for s in self.nonlocal_declarers.get(name, [])
            if s.is_within(owner) and s is not owner and self.resolve(s, name) is owner
        ]

    def bindings_of(self, owner: Scope, name: str) -> list[Binding]:
        self.ensure_names([name], within=owner)
        for declarer in self._declarers(owner, name):
            self.ensure_names([name], within=declarer)
        result = self._owned_bindings.of(owner, name, self.resolve)
        if name in owner.params:
            result.append(self._param_binding(owner, name))
        result.sort(key=lambda b: b.at)
        return result

    def _param_binding(self, owner: Scope, name: str) -> Binding:
        return Binding(owner, owner.node, (), name=name, kind=BindingKind.PARAM, at_start=True)

    def reads_of(self, owner: Scope, name: str) -> list[Read]:
        """Reads of the variable ``name`` of ``owner``, anywhere in the code that can see it."""
        self.ensure_names([name], within=owner)
        return self._owned_reads.of(owner, name, self.resolve)

    def mutations_of(self, owner: Scope, name: str) -> list[Mutation]:
        self.ensure_names([name], within=owner)
        return self._owned_mutations.of(owner, name, self.resolve)

    def attribute_changes(self, attr: str) -> list[Mutation]:
        """Every ``<name>.attr... = ...`` and in-place change below ``<name>.attr``."""
        self.ensure_names([attr])
        return self.mutated_attributes.get(attr, [])

    def nested_attribute_changes(self, attr: str) -> list[Mutation]:
        """Every ``<name>.<other>...attr = ...``: the attribute of an object reached through
        another (``self.target.mul = v``)."""
        self.ensure_names([attr])
        return self.nested_mutated_attributes.get(attr, [])

    def attribute_refs(self, attr: str) -> list[AttributeRef]:
        """Every ``<anything>.attr`` in the module, with ``getattr(obj, "attr")`` and the
        ``getattr`` calls whose computed name may be ``attr`` (``f"{method}_act"`` may be
        ``dpm_act``, never ``update_temp``)."""
        self.ensure_names([attr, "getattr"])
        found = list(self.attributes.get(attr, []))
        for pattern, refs in self.computed_attributes.items():
            if fnmatchcase(attr, pattern):
                found.extend(refs)
        return found

    def reads_within(self, scope: Scope) -> Iterator[Read]:
        """Every read in ``scope`` and the scopes nested in it."""
        self.ensure_scope(scope)
        for inner in scope.walk():
            yield from self.reads_by_scope.get(id(inner), ())

    def scope_of(self, node: ast.AST) -> Scope:
        return self.scopes_by_node[id(node)]

    @cached_property
    def script_lines(self) -> tuple[tuple[int, int], ...]:
        """The lines of the module's ``if __name__ == "__main__":`` blocks: code that runs only
        when the module is the program, after which no importer's code runs."""
        found = []
        for statement in self.tree.body:
            if isinstance(statement, ast.If) and _tests_main(statement.test) and statement.body:
                found.append((statement.body[0].lineno, statement.body[-1].end_lineno or 0))
        return tuple(found)

    def in_script(self, line: int) -> bool:
        return any(first <= line <= last for first, last in self.script_lines)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The statement holding ``node``; None for a node outside any (a module, a lambda's
        parameters), whose parent may be itself."""
        current: ast.AST | None = node
        for _ in range(64):
            if current is None or isinstance(current, ast.stmt):
                return current
            parent = self.parent(current)
            if parent is current:
                return None
            current = parent
        return None

    def qualified_name(self, scope: Scope, expr: ast.expr) -> str | None:
        """``jax.jit`` for ``jx.jit`` after ``import jax as jx``; None when not from an import."""
        if isinstance(expr, ast.Name):
            owner = self.resolve(scope, expr.id)
            for binding in self.bindings_of(owner, expr.id):
                if binding.kind is BindingKind.IMPORT:
                    return binding.imported
            return None
        if isinstance(expr, ast.Attribute):
            base = self.qualified_name(scope, expr.value)
            return f"{base}.{expr.attr}" if base else None
        return None

    def release(self) -> None:
        """Break the reference cycles (scopes and their parents, the collector and these
        facts), so that reference counting frees a module's facts the moment they are dropped,
        instead of the cyclic collector walking all of them once per file."""
        for scope in list(self.all_scopes()):
            scope.parent = None
            scope.children = []
        self._collector.release()
        self._collector = None  # type: ignore[assignment]

    def all_scopes(self) -> Iterator[Scope]:
        """Function and class scopes from the statement walk; expression scopes as visited."""
        return self.module_scope.walk()

    @cached_property
    def methods_by_name(self) -> dict[str, list[Scope]]:
        """The functions defined in class bodies, by name: what ``obj.name(...)`` may run when
        the class of ``obj`` is not known. Found once: each call asking would walk every scope."""
        methods: dict[str, list[Scope]] = {}
        for scope in self.all_scopes():
            parent = scope.parent
            if scope.kind is ScopeKind.FUNCTION and parent is not None:
                if parent.kind is ScopeKind.CLASS:
                    methods.setdefault(scope.name, []).append(scope)
        return methods


_Fact = TypeVar("_Fact", bound=Site)


class _ByOwner(Generic[_Fact]):
    """Facts of one kind (bindings, reads or changes), each filed under the scope that owns its
    name once, the first time a question asks about that name. Asking for each owner's share
    by filtering every fact of the name would cost the number of owners times the number of
    facts: quadratic in a module where many functions bind the same local name.

    Each question first files the facts recorded since the last one (the visits its own
    question triggers included), in the order they were recorded: every share keeps that
    order, as filtering the whole list in order would give.
    """

    def __init__(self, recorded: dict[str, list[_Fact]]) -> None:
        self._recorded = recorded
        self._filed: dict[str, int] = {}  # name -> how many of its facts are filed
        self._shares: dict[tuple[Scope, str], list[_Fact]] = {}

    def of(self, owner: Scope, name: str, resolve: Callable[[Scope, str], Scope]) -> list[_Fact]:
        """``owner``'s share of the facts of ``name``; ``resolve`` finds a fact's owner (given
        here, not kept: these tables must not hold the facts that hold them)."""
        recorded = self._recorded.get(name)
        if recorded is None:
            return []
        filed = self._filed.get(name, 0)
        # ``resolve`` may visit more units, recording more facts of the name: file them too.
        while filed < len(recorded):
            fact = recorded[filed]
            filed += 1
            self._filed[name] = filed
            key = (resolve(fact.scope, name), name)
            self._shares.setdefault(key, []).append(fact)
        return list(self._shares.get((owner, name), ()))


def _searchable(text: str) -> str:
    """The text as the tokenizer sees its lines and identifiers: every line break is ``\\n``
    and identifiers are NFKC-normalised, as the parser normalises them."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return text


def _tests_main(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    strings = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(strings) == 1
