"""Passing the lifted values on through the helpers that read them (see ``helpers``): each helper
on a value's way is split once, whichever compiled function's fix reaches it, and every call of it
is redirected to its ``_impl`` with each of its parameters.

A compiled function the value's way reaches (``@jax.jit def inner``, called while tracing) is
fixed by its own plan, which the caller's fix carries (``FunctionFix.nested``): the call is
redirected to that plan's compiled function, with each value it lifts."""

from __future__ import annotations

import ast
from collections.abc import Callable

from ..analysis.captures import StaleCapture
from ..analysis.facts.model import Read, Scope
from ..analysis.facts.queries import Facts
from ..analysis.receiver import method_self_name
from ..positions import SourceLines, Span
from .helpers import CannotThread, Chain, HelperCall, HelperFinder
from .layout import Layout
from .model import FunctionFix, HelperParameter, Lift, NoFix, Redirect, Split, Variable
from .names import Names
from .paths import identifier, minimal_paths, prefix_node, text_of


class SplitPlanner:
    """The helpers of every capture, and their splits, shared by all plans of a module."""

    def __init__(
        self,
        facts: Facts,
        source: SourceLines,
        names: Names,
        layout: Layout,
        compiled_functions: set[int],
        decorated_functions: set[int],
        assigned_functions: dict[int, ast.AST],
        nested_plan: Callable[[Scope], FunctionFix],
    ) -> None:
        self.facts = facts
        self.source = source
        self.names = names
        self.layout = layout
        self.helpers = HelperFinder(
            facts, compiled_functions, decorated_functions, assigned_functions
        )
        # The plan of a compiled function a value's way reaches (raises NoFix when it has none).
        self.nested_plan = nested_plan
        # Shared by every plan that passes values through a helper: its ``_impl`` name, its
        # parameter for each value, and the variables it passes (one set for all plans).
        self._impl_names: dict[int, str] = {}
        self._chains: dict[int, Chain | str] = {}  # id(capture) -> its chain, or why none
        # id(capture) -> the compiled functions on the value's way, also when it has no chain.
        self._compiled_reached: dict[int, list[Scope]] = {}
        self._through: dict[int, list[tuple[StaleCapture, Chain]]] = {}  # id(helper def) -> ...
        self._parameters: dict[int, list[HelperParameter]] = {}
        self._splits: dict[int, Split] = {}

    def chain(self, capture: StaleCapture) -> Chain:
        """The helpers through which the compiled function reads the captured value."""
        known = self._chains.get(id(capture))
        if known is None:
            try:
                known = self.helpers.chain(
                    capture.compiled.scope, capture.owner, capture.name, capture.attribute
                )
            except CannotThread as reason:
                known = str(reason)
                self._compiled_reached[id(capture)] = reason.compiled
            self._chains[id(capture)] = known
            if isinstance(known, Chain):
                self._compiled_reached[id(capture)] = known.compiled
                for helper in known.helpers:
                    self._through.setdefault(id(helper.node), []).append((capture, known))
        if isinstance(known, str):
            raise NoFix(known)
        if capture.read_through and not known.helpers:
            # Reached in a way the fix does not follow.
            shown = f"{capture.name}.{capture.attribute}" if capture.attribute else capture.name
            raise NoFix(
                f"'{shown}' is read inside '{capture.read_through}'; pass it to "
                f"'{capture.read_through.rstrip('()')}' as an argument"
            )
        return known

    def compiled_reached(self, capture: StaleCapture) -> list[Scope]:
        """The compiled functions through which the compiled function reads the value."""
        try:
            self.chain(capture)
        except NoFix:
            pass
        return self._compiled_reached.get(id(capture), [])

    def plan(
        self, fix: FunctionFix, threaded: list[tuple[StaleCapture, Chain, list[Lift]]]
    ) -> None:
        """Split each helper on the values' way, and redirect every call of it to its
        ``_impl``, passing each of its parameters: this fix's own, or the value read where the
        helper would have read it."""
        lifted = {variable_of(capture): lifts for capture, _, lifts in threaded}
        for capture, chain, _ in threaded:
            for helper in chain.helpers:
                if chain.is_compiled(helper):
                    self._carry(fix, helper)
                    continue
                split = self._split(helper)
                if all(split is not known for known in fix.splits):
                    fix.splits.append(split)
                    fix.statements.add(self.layout.statement_span(helper.node))
            for call in chain.calls:
                span = self.source.span(call.call)
                if any(redirect.call == span for redirect in fix.redirects):
                    continue
                if chain.is_compiled(call.helper):
                    inner = self.nested_plan(call.helper)
                    parameters = self._compiled_parameters(call.helper, inner)
                    impl = inner.compiled_name
                    _check_static(inner, lifted)
                else:
                    parameters = self._parameters_of(call.helper)
                    impl = self._impl_names[id(call.helper.node)]
                keywords = [
                    (parameter.name, self._passed(call, parameter, capture, lifted, fix))
                    for parameter in parameters
                ]
                fix.redirects.append(Redirect(span, impl, keywords))

    def _carry(self, fix: FunctionFix, compiled: Scope) -> None:
        """The caller's fix carries the plan of a compiled function it calls: applied alone,
        the caller would call a function that needs the values, or the callee's plain wrapper,
        which reads them while the caller traces."""
        inner = self.nested_plan(compiled)
        if all(inner is not known for known in fix.nested):
            fix.nested.append(inner)
            for carried in inner.carried():
                fix.statements.update(carried.statements)

    def _compiled_parameters(self, compiled: Scope, inner: FunctionFix) -> list[HelperParameter]:
        """What a call of a compiled function passes on to its plan's compiled function: a
        value for each of its lifts."""
        parameters = []
        for lift in inner.lifts:
            owner = self.facts.resolve(compiled, lift.name)
            parameters.append(
                HelperParameter(
                    (id(owner), lift.name, None), lift.path, lift.parameter, lift.value_code,
                    owner, lift.name,
                )
            )  # fmt: skip
        return parameters

    def _passed(
        self,
        call: HelperCall,
        parameter: HelperParameter,
        capture: StaleCapture,
        lifted: dict[Variable, list[Lift]],
        fix: FunctionFix,
    ) -> str:
        """What a call of a split helper passes for one of its parameters."""
        if call.caller is capture.compiled.scope:
            own = [(lift.path, lift.parameter) for lift in lifted.get(parameter.variable, [])]
        else:
            own = [
                (p.path, p.name)
                for p in self._parameters_of(call.caller)
                if p.variable == parameter.variable
            ]
        for path, name in own:
            if parameter.path[: len(path)] == path:
                return name + "".join(parameter.path[len(path) :])
        # Not lifted here: read where the helper would have read it, as it is then.
        owner, name, attribute = parameter.owner, parameter.root, parameter.variable[2]
        compiled_callee = id(call.helper.node) in self.helpers.compiled_functions
        if compiled_callee and ((name, attribute) in fix.declined or parameter.variable in lifted):
            # A value this function reports, or lifts by another path: read here, it would be
            # read while tracing, and a second fix would find it.
            raise NoFix(
                f"'{call.helper.name}' also takes '{parameter.value}', which this fix cannot "
                "pass on"
            )
        if attribute is not None:
            func = call.call.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                return func.value.id + "".join(parameter.path)
        elif self.facts.resolve(call.scope, name) is owner:
            return name + "".join(parameter.path)
        raise NoFix(
            f"'{call.helper.name}' also reads '{parameter.value}', which cannot be read where it "
            "is called"
        )

    def _parameters_of(self, helper: Scope) -> list[HelperParameter]:
        """The parameters a split helper takes: one for each path of each value some compiled
        function reads through it (or through the helpers it calls)."""
        key = id(helper.node)
        known = self._parameters.get(key)
        if known is not None:
            return known
        reads: dict[Variable, list[Read]] = {}
        first: dict[Variable, StaleCapture] = {}
        for capture, chain in self._through.get(key, []):
            variable = variable_of(capture)
            first.setdefault(variable, capture)
            found = reads.setdefault(variable, [])
            for below in chain.below(helper):
                found.extend(r for r in chain.reads.get(id(below), ()) if r not in found)
        parameters = []
        for variable, variable_reads in reads.items():
            capture = first[variable]
            root = capture.name if capture.attribute is None else method_self_name(helper)
            assert root is not None
            for path in minimal_paths(variable_reads):
                matching = [r for r in variable_reads if r.path[: len(path)] == path]
                if not path:
                    # The parameter takes the variable's name, so the body reads it unchanged.
                    name = value = root
                else:
                    name = self.names.fresh(identifier(root, path), helper)
                    value = text_of(self.source, root, path, matching)
                parameters.append(
                    HelperParameter(variable, path, name, value, capture.owner, capture.name)
                )
        self._parameters[key] = parameters
        return parameters

    def _split(self, helper: Scope) -> Split:
        key = id(helper.node)
        known = self._splits.get(key)
        if known is not None:
            return known
        node = helper.node
        assert helper.parent is not None
        if key not in self._impl_names:
            wanted = f"_{helper.name.strip('_')}_impl"
            self._impl_names[key] = self.names.fresh(wanted, helper.parent)
        parameters = self._parameters_of(helper)
        replaced: list[tuple[Span, str]] = []
        for capture, chain in self._through.get(key, []):
            for read in chain.reads.get(id(helper), ()):
                for parameter in parameters:
                    if parameter.variable != variable_of(capture) or not parameter.path:
                        continue
                    if read.path[: len(parameter.path)] == parameter.path:
                        span = self.source.span(prefix_node(read, len(parameter.path)))
                        if (span, parameter.name) not in replaced:
                            replaced.append((span, parameter.name))
        split = Split(
            self.source.span(node),
            self._impl_names[key],
            [(p.name, p.value) for p in parameters],
            method_self=method_self_name(helper),
            module_level=node.col_offset == 0,  # type: ignore[attr-defined]
            indent=self.layout.indent_unit(node),
            replaced=replaced,
            name=helper.name,
        )
        self._splits[key] = split
        return split


def variable_of(capture: StaleCapture) -> Variable:
    """What a capture reads: a variable of its owner, or an attribute of its class's objects,
    whichever method's ``self`` reads it."""
    if capture.attribute is not None:
        assert capture.owner.parent is not None
        return (id(capture.owner.parent), "", capture.attribute)
    return (id(capture.owner), capture.name, None)


def _check_static(inner: FunctionFix, lifted: dict[Variable, list[Lift]]) -> None:
    """A value the called compiled function takes as static must reach it as a Python value:
    the caller must take it static too, by the same path or a longer one."""
    for lift in inner.lifts:
        if not lift.static:
            continue
        for lifts in lifted.values():
            for own in lifts:
                if own.name == lift.name and lift.path[: len(own.path)] == own.path:
                    if not own.static:
                        raise NoFix(
                            f"'{inner.name}' takes '{lift.value_code}' as a static argument, "
                            "where this function traces it"
                        )
