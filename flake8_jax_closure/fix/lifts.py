"""Which values to lift and how: whether a captured value can be passed at all, the paths into
it the compiled function reads, and whether each is traced or static (and why a fix is unsafe),
judged on every value the variable is given and on how the compiled function uses it."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from ..analysis.bindings import library_package
from ..analysis.captures import StaleCapture
from ..analysis.compiled import CompiledFunction
from ..analysis.facts.model import BindingKind, Read, Scope
from ..analysis.facts.queries import Facts
from ..positions import SourceLines
from ..rules.jc104_self_attribute.fix import check_attribute_capture, holds_self
from .helpers import Chain
from .model import STATIC_BY_ITSELF, FunctionFix, Lift, NoFix
from .names import Names
from .paths import identifier, minimal_paths, prefix_node, text_of
from .values import Kind, ValueJudge, decide

# Callables whose arguments must be concrete Python values under tracing.
_CONCRETE_CALLEES = frozenset(
    {
        "range", "int", "float", "bool", "str", "zeros", "ones", "empty", "full", "arange",
        "eye", "linspace", "reshape", "broadcast_to", "tile", "repeat", "split", "PRNGKey",
        "key", "identity", "tri", "fori_loop",
    }
)  # fmt: skip
_CONCRETE_KEYWORDS = frozenset(
    {"shape", "axis", "num", "dtype", "length", "num_segments", "num_classes"}
)
# Callables taking an array first and then counts or axes that must be concrete
# (``lax.top_k(logits, k)``, ``jax.nn.one_hot(labels, num_classes)``).
_CONCRETE_AFTER_THE_ARRAY = frozenset(
    {"top_k", "approx_max_k", "approx_min_k", "one_hot", "expand_dims", "squeeze", "moveaxis",
     "swapaxes", "tril", "triu"}
)  # fmt: skip


class Lifter:
    """Decides, for each stale capture, whether and how its value is passed in."""

    def __init__(self, facts: Facts, source: SourceLines, names: Names, judge: ValueJudge) -> None:
        self.facts = facts
        self.source = source
        self.names = names
        self.judge = judge

    def check_capture(self, capture: StaleCapture, sites: Sequence[CompiledFunction]) -> None:
        """Raises NoFix when the captured value cannot be passed in as an argument."""
        if capture.no_fix is not None:
            raise NoFix(capture.no_fix)
        facts = self.facts
        check_attribute_capture(capture, facts)
        bindings = facts.bindings_of(capture.owner, capture.name)
        # An imported module's attribute changed in place (``config.LR = 0.5``) is a value,
        # lifted like a class attribute; a module rebound is not.
        changed_in_place = capture.mutation is not None or capture.changed_elsewhere is not None
        through_paths = changed_in_place and all(r.path for r in capture.reads)
        if capture.attribute is None and any(
            b.kind is BindingKind.DEF or (b.kind is BindingKind.IMPORT and not through_paths)
            for b in bindings
        ):
            raise NoFix(f"'{capture.name}' names a module, function or class, not a value")
        if any(b.kind is BindingKind.CLASS for b in bindings) and not all(
            read.path for read in capture.reads
        ):
            raise NoFix(f"'{capture.name}' names a module, function or class, not a value")
        mutated = capture.mutation.path if capture.mutation is not None else ()
        if len(mutated) == 1 and mutated[0] != ".config" and library_package(bindings):
            # ``np.random`` advanced by ``np.random.shuffle``: a package's member is a module
            # or a function, which no argument can carry (its ``config`` holds values).
            package = bindings[0].imported or capture.name
            raise NoFix(
                f"'{capture.name}{mutated[0]}' is a member of the package '{package}', "
                "a module or function, not a value"
            )
        scope = facts.scope_of(capture.compiled.function)
        for inner in scope.walk():
            if capture.name in inner.declared_global | inner.declared_nonlocal:
                raise NoFix(f"the compiled function rebinds '{capture.name}' itself")
        if any(m.scope.is_within(scope) for m in facts.mutations_of(capture.owner, capture.name)):
            # ``state.w = ...`` in the body: later reads there see that store, not a value
            # passed in.
            raise NoFix(f"the compiled function changes '{capture.name}' itself")
        for site in sites:
            if holds_self(capture):
                break  # the wrapper reads its own 'self', or the object compiled for
            if facts.resolve(site.site_scope, capture.name) is not capture.owner:
                raise NoFix(
                    f"'{capture.name}' means something else where the compiled object is made"
                )

    def lifts(self, capture: StaleCapture, fix: FunctionFix, chain: Chain) -> list[Lift]:
        """One lift per shortest path read (in the function or its helpers), judged traced or
        static; the reasons go to ``fix``."""
        reads = [read for read in capture.reads if _direct(capture, read)]
        inner = [read for own in chain.reads.values() for read in own]
        everything = [*reads, *inner]
        if not everything:
            raise NoFix(f"'{capture.name}' is not read where the fix can pass it")
        lifts = []
        for path in minimal_paths(everything):
            matching = [r for r in reads if r.path[: len(path)] == path]
            matching_inner = [r for r in inner if r.path[: len(path)] == path]
            nodes = [prefix_node(r, len(path)) for r in matching] if path else []
            inner_nodes = [prefix_node(r, len(path)) for r in matching_inner] if path else []
            if nodes:
                value_code = self.source.segment(nodes[0])
            elif path:
                value_code = text_of(self.source, capture.name, path, matching_inner)
            else:
                value_code = capture.name
            parameter = (
                self.names.fresh(identifier(capture.name, path), capture.compiled.scope)
                if path
                else capture.name
            )
            lift = Lift(
                capture.name, path, parameter, value_code, [self.source.span(n) for n in nodes]
            )
            self._judge(capture, lift, fix)
            uses = [*nodes, *inner_nodes]
            if not path:
                uses = [
                    r.node for r in (*matching, *matching_inner) if isinstance(r.node, ast.expr)
                ]
            decision = decide(
                value_code,
                self._value_kinds(capture, path),
                self.judge.uses(uses),
                any(self.needs_concrete(r, chain) for r in (*matching, *matching_inner)),
            )
            lift.static = decision.static
            if any(site.transform in STATIC_BY_ITSELF for site in fix.sites):
                # equinox decides per call: arrays are traced, everything else static.
                fix.explanations.append(f"'{value_code}' is passed as equinox decides")
            else:
                fix.explanations.append(decision.explanation)
                if decision.unsafe is not None:
                    fix.unsafe_reasons.append(decision.unsafe)
            if not path:
                lift.annotation = self._annotation(capture)
            lifts.append(lift)
        return lifts

    def _value_kinds(self, capture: StaleCapture, path: tuple[str, ...]) -> set[Kind]:
        """The kinds of every value the lifted expression is given."""
        facts, judge = self.facts, self.judge
        kinds: set[Kind] = set()
        if capture.attribute is None:
            kinds.update(
                judge.binding_kind_at(b, path)
                for b in facts.bindings_of(capture.owner, capture.name)
            )
        if capture.attribute is not None:
            changes = list(facts.attribute_changes(capture.attribute))
        else:
            changes = facts.mutations_of(capture.owner, capture.name)
        for mutation in changes:
            if mutation.path == path and mutation.value is not None:
                kinds.add(judge.kind(mutation.value, mutation.scope, 0))
        return kinds

    def _annotation(self, capture: StaleCapture) -> str | None:
        """The one annotation the variable is declared with, if any."""
        annotations = {
            self.source.segment(b.node.annotation)
            for b in self.facts.bindings_of(capture.owner, capture.name)
            if isinstance(b.node, ast.AnnAssign)
        }
        return annotations.pop() if len(annotations) == 1 else None

    def _judge(self, capture: StaleCapture, lift: Lift, fix: FunctionFix) -> None:
        mutation = capture.mutation
        elsewhere = capture.changed_elsewhere
        if elsewhere is not None:
            # The values stored there decide traced or static, and this file does not show them.
            fix.unsafe_reasons.append(
                f"'{lift.value_code}' is also set in {elsewhere.path}, whose values the fix "
                "does not judge"
            )
        if capture.handed_by_callers_of is not None:
            fix.unsafe_reasons.append(
                f"'{lift.value_code}' is set by the callers of "
                f"'{capture.handed_by_callers_of}()', whose values the fix does not judge"
            )
        if not lift.path and capture.rebinding is None and not capture.rebound_elsewhere:
            fix.unsafe_reasons.append(
                f"the whole object '{capture.name}' becomes an argument; it must hold only arrays "
                "and numbers"
            )
        elif (
            mutation is not None
            and capture.rebinding is None
            and mutation.path[: len(lift.path)] == lift.path
            and (len(mutation.path) > len(lift.path) or mutation.description.endswith("called"))
        ):
            # Changed inside, not replaced: the lifted value is a container.
            fix.unsafe_reasons.append(
                f"'{lift.value_code}' is changed in place, so it is a container; as an argument "
                "it must hold only arrays and numbers"
            )

    def needs_concrete(self, read: Read, chain: Chain | None = None) -> bool:
        """Whether a read is used where JAX needs a Python value (``if``, ``range``, a shape):
        there, through a local name it is assigned to, or returned from a helper whose call is
        used so (``if get_flag():``)."""
        return self._concrete_use(read.path_node or read.node, read.scope, chain, 0)

    def _concrete_use(self, node: ast.AST, scope: Scope, chain: Chain | None, depth: int) -> bool:
        facts = self.facts
        while True:
            parent = facts.parent(node)
            if parent is None:
                return False
            if isinstance(parent, ast.stmt):
                if isinstance(parent, (ast.If, ast.While, ast.Assert)):
                    return True
                return depth < 3 and self._concrete_after(parent, scope, chain, depth)
            if isinstance(parent, ast.IfExp) and parent.test is node:
                return True
            if isinstance(parent, (ast.Slice, ast.FormattedValue)):
                return True
            if isinstance(parent, ast.keyword) and parent.arg in _CONCRETE_KEYWORDS:
                return True
            if isinstance(parent, ast.Call) and node is not parent.func:
                callee = _callee_name(parent)
                if callee in _CONCRETE_CALLEES:
                    return True
                if callee in _CONCRETE_AFTER_THE_ARRAY and node in parent.args[1:]:
                    return True
            if isinstance(parent, ast.Lambda):
                return False
            node = parent

    def _concrete_after(
        self, statement: ast.stmt, scope: Scope, chain: Chain | None, depth: int
    ) -> bool:
        """Whether what a statement passes on (the value it assigns to a name, or returns from
        a helper) is used where JAX needs a Python value."""
        facts = self.facts
        if isinstance(statement, ast.Return) and chain is not None:
            function = scope.function()
            return any(
                self._concrete_use(call.call, call.scope, chain, depth + 1)
                for call in chain.calls
                if call.helper is function
            )
        target = None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
        elif isinstance(statement, ast.AnnAssign):
            target = statement.target
        if not isinstance(target, ast.Name):
            return False
        end = (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)
        owner = facts.resolve(scope, target.id)
        return any(
            self._concrete_use(read.node, read.scope, chain, depth + 1)
            for read in facts.reads_of(owner, target.id)
            if read.start >= end
        )


def _direct(capture: StaleCapture, read: Read) -> bool:
    """A read of the value in the compiled function itself (not a call of a helper that reads
    it, which the analysis records at the call)."""
    if capture.attribute is not None:
        return read.path[:1] == (f".{capture.attribute}",) and read.path_node is not None
    return isinstance(read.node, ast.Name) and read.node.id == capture.name


def _callee_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None
