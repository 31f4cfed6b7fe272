"""Passing the lifted values on through the helpers that read them (see ``helpers``): each helper
on a value's way is split once, whichever compiled function's fix reaches it, and every call of it
is redirected to its ``_impl`` with each of its parameters."""

from __future__ import annotations

import ast

from ..analysis.captures import StaleCapture, method_self_name
from ..analysis.facts.model import Read, Scope
from ..analysis.facts.queries import Facts
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
    ) -> None:
        self.facts = facts
        self.source = source
        self.names = names
        self.layout = layout
        self.helpers = HelperFinder(facts, compiled_functions)
        # Shared by every plan that passes values through a helper: its ``_impl`` name, its
        # parameter for each value, and the variables it passes (one set for all plans).
        self._impl_names: dict[int, str] = {}
        self._chains: dict[int, Chain | str] = {}  # id(capture) -> its chain, or why none
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
            self._chains[id(capture)] = known
            if isinstance(known, Chain):
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

    def plan(
        self, fix: FunctionFix, threaded: list[tuple[StaleCapture, Chain, list[Lift]]]
    ) -> None:
        """Split each helper on the values' way, and redirect every call of it to its
        ``_impl``, passing each of its parameters: this fix's own, or the value read where the
        helper would have read it."""
        lifted = {variable_of(capture): lifts for capture, _, lifts in threaded}
        for capture, chain, _ in threaded:
            for helper in chain.helpers:
                split = self._split(helper)
                if all(split is not known for known in fix.splits):
                    fix.splits.append(split)
                    fix.statements.add(self.layout.statement_span(helper.node))
            for call in chain.calls:
                span = self.source.span(call.call)
                if any(redirect.call == span for redirect in fix.redirects):
                    continue
                keywords = [
                    (parameter.name, self._passed(call, parameter, capture, lifted))
                    for parameter in self._parameters_of(call.helper)
                ]
                impl = self._impl_names[id(call.helper.node)]
                fix.redirects.append(Redirect(span, impl, keywords))

    def _passed(
        self,
        call: HelperCall,
        parameter: HelperParameter,
        capture: StaleCapture,
        lifted: dict[Variable, list[Lift]],
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
