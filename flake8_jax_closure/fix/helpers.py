"""Values read inside the functions a compiled function calls: passed through them.

A helper that reads a lifted value (a plain function of the module called by name, or a method
of the class called through ``self``) is split the way a function compiled by call is:
``_<helper>_impl`` takes the value as a keyword-only parameter, and the helper's own name
becomes a plain wrapper, with the old signature and docstring, that passes the value as it is
when the wrapper runs. The compiled function, and each helper on the way, calls the ``_impl``
with the value it was given.

    def l2(w):                                 def _l2_impl(w, *, WEIGHT_DECAY):
        return WEIGHT_DECAY * sum(w**2)  ->        return WEIGHT_DECAY * sum(w**2)

                                               def l2(w):
                                                   return _l2_impl(w, WEIGHT_DECAY=WEIGHT_DECAY)

Every other caller calls the wrapper and reads the value when it calls, as before.

A function compiled by its decorators (``@jax.jit def inner``) that the compiled function calls
is on the value's way too: tracing the caller traces it. It is not split here: its own fix makes
it take the value, and the caller's fix calls its compiled function with the value it was given
(see ``splits``), so that both are fixed in one pass. A default
for the new parameter would not do: a default is evaluated once, when the ``def`` runs; a
sentinel default (``scale=_UNSET``, then ``if scale is _UNSET: scale = SCALE``) would keep a
read of the variable inside the helper, on the compiled function's path as far as any reader
(and this linter) can tell; ``None`` is a value some variables hold.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..analysis.cached_bodies import CACHED_BODIES, call_given, names_denoted
from ..analysis.facts.model import BindingKind, Read, Scope, ScopeKind
from ..analysis.facts.queries import Facts
from ..analysis.names import last_name
from ..analysis.receiver import method_self_name
from ..rules.jc104_self_attribute.fix import property_read_refusal

# How deep the analysis follows helpers (``captures._HELPER_DEPTH``): reads further down are not
# reported, so they are not passed either.
HELPER_DEPTH = 3


class CannotThread(Exception):
    """The value cannot be passed through a helper; the message says why. ``compiled``: the
    compiled functions on the value's way, found before the refusal."""

    def __init__(self, message: str, compiled: list[Scope] | None = None) -> None:
        super().__init__(message)
        self.compiled = compiled or []


# What keeps a function it is handed, to run later (see ``_kept``).
_KEEPING = frozenset({"functools.partial"})
_KEEPING_BUILTINS = frozenset({"staticmethod", "classmethod"})


@dataclass
class HelperCall:
    """A call of a helper on the value's way, in the compiled function or in another helper."""

    call: ast.Call
    helper: Scope
    caller: Scope  # the compiled function, or a helper
    scope: Scope  # where the call is (the caller, or a scope nested in it)


@dataclass
class Chain:
    """The helpers a compiled function reaches the value through."""

    helpers: list[Scope] = field(default_factory=list)
    # id(helper) -> its own reads of the value
    reads: dict[int, list[Read]] = field(default_factory=dict)
    calls: list[HelperCall] = field(default_factory=list)
    # Why passing the value is unsafe: decorators the value passes through.
    unsafe: list[str] = field(default_factory=list)
    # Of ``helpers``, the functions compiled by their decorators: fixed by their own plans.
    compiled: list[Scope] = field(default_factory=list)

    def is_compiled(self, helper: Scope) -> bool:
        return any(helper is known for known in self.compiled)

    def below(self, helper: Scope) -> list[Scope]:
        """``helper`` and the helpers on the value's way that it calls, directly or not."""
        found: list[Scope] = []
        pending = [helper]
        while pending:
            current = pending.pop()
            if any(current is seen for seen in found):
                continue
            found.append(current)
            pending.extend(c.helper for c in self.calls if c.caller is current)
        return found


class HelperFinder:
    """Finds the helpers through which a compiled function reads one variable."""

    def __init__(
        self,
        facts: Facts,
        compiled_functions: set[int],
        decorated_functions: set[int],
        assigned_functions: dict[int, ast.AST],
    ) -> None:
        self.facts = facts
        self.compiled_functions = compiled_functions
        # Compiled by their decorators: the name is the compiled object (see the docstring).
        self.decorated_functions = decorated_functions
        # ``loss = jax.jit(lambda ...)``: id(compile call) -> the function it compiles.
        self.assigned_functions = assigned_functions
        self._functions: dict[tuple[int, str], Scope | None] = {}
        self._in_progress: set[int] = set()

    def chain(self, compiled: Scope, owner: Scope, name: str, attribute: str | None) -> Chain:
        """Helpers reading ``name`` of ``owner`` (or, with ``attribute``, ``self.<attribute>``
        where ``owner`` is the method whose ``self`` it is).

        Raises CannotThread when a helper on the way cannot take the value.
        """
        found: dict[int, Scope] = {}
        reads: dict[int, list[Read]] = {}
        calls: list[HelperCall] = []
        uncalled: list[tuple[Scope, Scope, int]] = []
        pending = [(compiled, 1)]
        while pending:
            body, depth = pending.pop(0)
            for helper, call, line, scope in self._helpers_called(body, attribute):
                if helper is not body and helper.is_within(body):
                    continue  # nested: its reads are the body's own
                if helper is compiled:
                    continue  # the compiled function calling itself (see ``uses.plan_recursion``)
                if call is None:
                    uncalled.append((body, helper, line))
                else:
                    calls.append(HelperCall(call, helper, body, scope))
                if id(helper) not in found and depth <= HELPER_DEPTH:
                    found[id(helper)] = helper
                    reads[id(helper)] = list(self._own_reads(helper, owner, name, attribute))
                    if id(helper.node) in self.compiled_functions:
                        # Its own fix passes the value on below it: what it reads is what
                        # that fix lifts.
                        reads[id(helper)].extend(self._reads_below(helper, owner, name, attribute))
                    else:
                        pending.append((helper, depth + 1))
        reaching = {key for key, own in reads.items() if own}
        # A helper that hands a reading function on (``lax.cond(p, scaled, kept, x)`` in
        # ``pick``) is on the value's way too: ``_check_chain`` refuses it there.
        edges = [(id(edge.caller), id(edge.helper)) for edge in calls]
        edges += [(id(body), id(helper)) for body, helper, _ in uncalled]
        changed = True
        while changed:
            changed = False
            for caller, helper_id in edges:
                if helper_id in reaching and caller in found and caller not in reaching:
                    reaching.add(caller)
                    changed = True
        chain = Chain(
            [helper for key, helper in found.items() if key in reaching],
            {key: reads[key] for key in reaching},
            [edge for edge in calls if id(edge.helper) in reaching],
        )
        chain.compiled = [h for h in chain.helpers if id(h.node) in self.compiled_functions]
        try:
            self._check_chain(chain, compiled, uncalled, reaching, owner, name, attribute)
        except CannotThread as refusal:
            refusal.compiled = chain.compiled
            raise
        return chain

    def _check_chain(
        self,
        chain: Chain,
        compiled: Scope,
        uncalled: list[tuple[Scope, Scope, int]],
        reaching: set[int],
        owner: Scope,
        name: str,
        attribute: str | None,
    ) -> None:
        for edge in chain.calls:
            if chain.is_compiled(edge.helper) and edge.caller is not compiled:
                raise CannotThread(
                    f"'{edge.caller.name}' calls the compiled '{edge.helper.name}', which reads "
                    "it; the value cannot be passed through both"
                )
        bodies = [compiled, *chain.helpers]
        for body, helper, line in uncalled:
            if id(helper) in reaching and any(body is b for b in bodies):
                shown = f"{name}.{attribute}" if attribute else name
                refusal = property_read_refusal(helper, shown)
                if refusal is not None:
                    raise CannotThread(refusal)
                raise CannotThread(
                    f"'{helper.name}' reads it and is handed on without being called (line "
                    f"{line}); the value cannot be passed through it"
                )
        for helper in chain.helpers:
            if not chain.is_compiled(helper):
                self._check_kept_elsewhere(helper)
                self._check(helper, owner, name, attribute, chain)

    def _check_kept_elsewhere(self, helper: Scope) -> None:
        """A helper the module also keeps or hands to control flow without calling it
        (``BRANCHES = [scaled, kept]``, ``partial(scaled, k=2)``, ``staticmethod(scaled)``,
        ``lax.cond(p, scaled, kept, x)`` in another function): the fix keeps that name as a
        wrapper reading the value, and what holds it may run in a trace the fix does not reach (a
        branch ``lax.switch`` keeps). A use that runs it eagerly (``jax.grad(loss)``,
        ``map(factor, xs)``) reads the value as it runs, as before."""
        if helper.parent is None or helper.parent.kind is ScopeKind.CLASS:
            return
        for read in self.facts.reads_of(helper.parent, helper.name):
            if read.called or read.scope.is_within(helper) or not self._kept(read):
                continue
            raise CannotThread(
                f"'{helper.name}' reads it and is also kept without being called (line "
                f"{read.line}); the value cannot be passed through what keeps it"
            )

    def _kept(self, read: Read) -> bool:
        """``read`` stores the function (an item of a list, tuple, set or dict written out, the
        value of an assignment) or hands it to ``partial``, ``staticmethod``, ``classmethod`` or
        control flow that keeps its trace."""
        facts = self.facts
        parent = facts.parent(read.node)
        if isinstance(parent, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            return True
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
            return parent.value is read.node
        call = call_given(facts, read.node)
        if call is None:
            return False
        if isinstance(call.func, ast.Name) and call.func.id in _KEEPING_BUILTINS:
            return True
        names = names_denoted(facts, read.scope, call.func)
        return bool(names & (_KEEPING | CACHED_BODIES))

    def _reads_below(
        self, compiled: Scope, owner: Scope, name: str, attribute: str | None
    ) -> list[Read]:
        """The reads of the value in the helpers of a compiled function the value's way
        reaches: with its own reads, the paths its own fix lifts."""
        if id(compiled) in self._in_progress:
            return []
        self._in_progress.add(id(compiled))
        try:
            below = self.chain(compiled, owner, name, attribute)
        except CannotThread:
            return []
        finally:
            self._in_progress.discard(id(compiled))
        return [read for own in below.reads.values() for read in own]

    # -- what a body calls ---------------------------------------------------------------------

    def _helpers_called(
        self, body: Scope, attribute: str | None
    ) -> Iterator[tuple[Scope, ast.Call | None, int, Scope]]:
        """The helpers ``body`` refers to: each with the call (None where it is not called), the
        line and the scope of the reference."""
        facts = self.facts
        for read in list(facts.reads_within(body)):
            helper: Scope | None
            node: ast.AST
            if attribute is None:
                helper = self._plain_function(read)
                node = read.node
            else:
                found = self._method_through_self(read)
                if found is None:
                    continue
                helper, node = found
            if helper is None:
                continue
            parent = facts.parent(node)
            call = parent if isinstance(parent, ast.Call) and parent.func is node else None
            yield helper, call, read.line, read.scope

    def _plain_function(self, read: Read) -> Scope | None:
        """The def a name refers to, when it is a function of this module defined once, plain or
        compiled by its decorators (as ``captures.CaptureAnalysis._traced_function``). Called or
        not: a helper handed on (``lax.fori_loop(0, n, body, x)``) runs while tracing too."""
        facts = self.facts
        owner = facts.resolve(read.scope, read.name)
        key = (id(owner), read.name)
        if key not in self._functions:
            self._functions[key] = self._defined_once(owner, read.name)
        return self._functions[key]

    def _defined_once(self, owner: Scope, name: str) -> Scope | None:
        facts = self.facts
        bindings = facts.bindings_of(owner, name)
        if len(bindings) == 1 and id(bindings[0].value) in self.assigned_functions:
            return facts.scope_of(self.assigned_functions[id(bindings[0].value)])
        if len(bindings) != 1 or bindings[0].kind is not BindingKind.DEF:
            return None
        node = bindings[0].node
        if id(node) in self.compiled_functions and id(node) not in self.decorated_functions:
            return None
        scope = facts.scope_of(node)
        if scope.parent is not None and scope.parent.kind is ScopeKind.CLASS:
            return None
        return scope

    def _method_through_self(self, read: Read) -> tuple[Scope, ast.AST] | None:
        """``self.helper`` where ``self`` is the first parameter of a method: that method of the
        class (defined once), with the attribute node. A compiled method is on the value's way
        too (``@partial(jax.jit, static_argnums=0)``, or compiled elsewhere as
        ``jax.jit(self.helper)`` and called here plain): its own fix leaves ``self.helper`` a
        plain wrapper that reads the value while this function traces, so the two must be fixed
        together or not at all (``plan.FixPlanner._settle``)."""
        facts = self.facts
        owner = facts.resolve(read.scope, read.name)
        if method_self_name(owner) != read.name or owner.parent is None:
            return None
        parent = facts.parent(read.node)
        if not isinstance(parent, ast.Attribute) or parent.value is not read.node:
            return None
        methods = [
            child
            for child in owner.parent.children
            if child.kind is ScopeKind.FUNCTION and child.name == parent.attr
        ]
        if len(methods) != 1:
            return None
        return methods[0], parent

    def _own_reads(
        self, helper: Scope, owner: Scope, name: str, attribute: str | None
    ) -> Iterator[Read]:
        facts = self.facts
        if attribute is None:
            for read in facts.reads_within(helper):
                if read.name == name and facts.resolve(read.scope, name) is owner:
                    yield read
            return
        self_name = method_self_name(helper)
        for read in facts.reads_within(helper):
            if (
                read.name == self_name
                and facts.resolve(read.scope, read.name) is helper
                and read.path[:1] == (f".{attribute}",)
                and read.path_node is not None
            ):
                yield read

    # -- what a helper must be to take the value -------------------------------------------------

    def _check(
        self, helper: Scope, owner: Scope, name: str, attribute: str | None, chain: Chain
    ) -> None:
        node = helper.node
        shown = f"{name}.{attribute}" if attribute else name
        if not isinstance(node, ast.FunctionDef):
            raise CannotThread(f"'{helper.name}' is async; the value cannot be passed through it")
        decorators = [last_name(d.func if isinstance(d, ast.Call) else d)
                      for d in node.decorator_list]  # fmt: skip
        refused = [d for d in decorators if d in _REFUSED_DECORATORS]
        if refused:
            raise CannotThread(
                f"'{shown}' is read inside '{helper.name}', decorated with '{refused[0]}' (a cache "
                "or a descriptor); pass it to the compiled function by hand"
            )
        if decorators:
            # The decorators stay on the ``_impl``, so every caller still goes through them, and
            # the value with it, as a keyword argument: fine for a wrapper that passes its
            # arguments on (a name scope, a logger), not for one that hashes them (a cache).
            chain.unsafe.append(
                f"'{helper.name}' is decorated; the value passes through its decorators as a "
                "keyword argument"
            )
        if attribute is None:
            for inner in helper.walk():
                if name in inner.declared_global | inner.declared_nonlocal:
                    raise CannotThread(f"'{helper.name}' rebinds '{name}' itself")
            changes = [
                *(b.scope for b in self.facts.bindings_of(owner, name)),
                *(m.scope for m in self.facts.mutations_of(owner, name)),
            ]
            if any(scope.is_within(helper) for scope in changes):
                raise CannotThread(f"'{helper.name}' changes '{name}' itself")
        else:
            for mutation in self.facts.attribute_changes(attribute):
                if mutation.scope.is_within(helper) and mutation.name == method_self_name(helper):
                    raise CannotThread(f"'{helper.name}' changes '{shown}' itself")
            if self._overridden(helper):
                raise CannotThread(
                    f"'{helper.name}' is defined again in a subclass; the value cannot be passed "
                    "through every version of it"
                )
        for call in chain.calls:
            if call.caller is helper:
                if not _passes_keywords(call.call):
                    raise CannotThread(
                        f"'{helper.name}' calls '{call.helper.name}' with unpacked keyword "
                        "arguments"
                    )

    def _overridden(self, method: Scope) -> bool:
        """Whether a class of this module that names the method's class as a base defines the
        method again."""
        cls = method.parent
        assert cls is not None
        for scope in self.facts.all_scopes():
            node = scope.node
            if scope.kind is not ScopeKind.CLASS or scope is cls:
                continue
            assert isinstance(node, ast.ClassDef)
            if not any(last_name(base) == cls.name for base in node.bases):
                continue
            if any(child.name == method.name for child in scope.children):
                return True
        return False


# Decorators the value cannot pass through: descriptors, and caches that hash their arguments.
_REFUSED_DECORATORS = frozenset(
    {"property", "cached_property", "staticmethod", "classmethod", "lru_cache", "cache"}
)


def _passes_keywords(call: ast.Call) -> bool:
    return all(keyword.arg is not None for keyword in call.keywords)
