"""The libcst transformer that applies fix plans to one parsed piece of source: the compiled
function and its sites, the reads it replaces, the helpers split and the calls redirected."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

import libcst as cst

from ..analysis.compiled import Form
from .arguments import (
    add_static_argnames,
    keyword,
    lifted_arguments,
    static_arg,
    with_options,
)
from .model import FunctionFix, SitePlan, Split, static_names
from .node_index import NodeIndex
from .parameters import with_keyword_only, with_lifted
from .wrappers import WrapperBuilder, docstring_of, has_wrapper, without_docstring


class LiftTransformer(cst.CSTTransformer):
    """Applies function fixes to the module they were planned on.

    Only the nodes it changes and those around them are visited: a subtree without one is left
    as it is (rebuilding every node of every statement costs more than all the rest of a fix).
    """

    def __init__(
        self,
        module: cst.Module,
        index: NodeIndex,
        fixes: Iterable[FunctionFix],
        originals: dict[int, cst.FunctionDef | cst.Lambda],
    ) -> None:
        super().__init__()
        self.functions: dict[cst.CSTNode, FunctionFix] = {}
        self.decorators: dict[cst.CSTNode, tuple[FunctionFix, SitePlan]] = {}
        self.compile_calls: dict[cst.CSTNode, tuple[FunctionFix, SitePlan]] = {}
        self.assignments: dict[cst.CSTNode, tuple[FunctionFix, SitePlan]] = {}
        self.inline_calls: dict[cst.CSTNode, tuple[FunctionFix, SitePlan]] = {}
        self.replacements: dict[cst.CSTNode, str] = {}
        # Reads of a function compiled by call, renamed with it.
        self.renames: dict[cst.CSTNode, str] = {}
        # Calls of a compiled function by itself: the new callee, and the fix whose values
        # they pass on.
        self.recursive_calls: dict[cst.CSTNode, tuple[str, FunctionFix]] = {}
        self.wrappers: set[int] = set()
        self.build = WrapperBuilder(module, originals, self.wrappers)
        # Helpers split to take the values, with every plan's parameters for them; the calls
        # redirected to their ``_impl``, with the keywords passed on.
        self.splits: dict[cst.CSTNode, Split] = {}
        self.redirects: dict[cst.CSTNode, tuple[str, list[tuple[str, str]]]] = {}
        # ``obj.method`` in ``jax.jit(obj.method)``: the method's raw name.
        self.method_reads: dict[cst.CSTNode, str] = {}
        # Compiled objects passed on directly: the compile call (replaced by the wrapper's
        # name) and the statement they are bound before.
        self.passed_calls: dict[cst.CSTNode, tuple[FunctionFix, SitePlan]] = {}
        self.passed_statements: dict[cst.CSTNode, list[tuple[FunctionFix, SitePlan]]] = {}
        self.passed_made: dict[int, cst.BaseExpression] = {}
        # The calls that carry a compile transform's options (``jax.pmap(f, in_axes=...)``).
        self.option_calls: dict[cst.CSTNode, SitePlan] = {}
        for fix in fixes:
            self._index_threading(index, fix)
            function = index.function(fix)
            if function is not None:
                self.functions[function] = fix
            for lift in fix.lifts:
                for span in lift.nodes:
                    _put(self.replacements, index.expression(span), lift.parameter)
            if fix.raw_name is not None and (has_wrapper(fix) or fix.plain_wrapper):
                for span in fix.renamed_reads:
                    _put(self.renames, index.name(span), fix.raw_name)
            for span, target in fix.recursive_calls:
                _put(self.recursive_calls, index.call(span), (target, fix))
            for site in fix.sites:
                if site.decorator_index is not None and isinstance(function, cst.FunctionDef):
                    self.decorators[function.decorators[site.decorator_index]] = (fix, site)
                elif site.options_call is not None:
                    _put(self.compile_calls, index.call(site.options_call), (fix, site))
                    _put(self.option_calls, index.call(site.options_call), site)
                if site.compile_call is not None:
                    call = index.call(site.compile_call)
                    if call is not None:
                        self.compile_calls.setdefault(call, (fix, site))
                if site.statement_line is not None:
                    _put(self.assignments, index.statement(site.statement_line), (fix, site))
                if site.inline_call is not None:
                    _put(self.inline_calls, index.call(site.inline_call), (fix, site))
                if site.method_attribute is not None and fix.raw_name is not None:
                    _put(self.method_reads, index.expression(site.method_attribute), fix.raw_name)
                if site.passed_statement is not None and site.compile_call is not None:
                    _put(self.passed_calls, index.call(site.compile_call), (fix, site))
                    statement = index.statement(site.passed_statement)
                    if statement is not None:
                        self.passed_statements.setdefault(statement, []).append((fix, site))
        self._positions = index.positions
        tables: list[Mapping[cst.CSTNode, object]] = [
            self.functions, self.decorators, self.compile_calls, self.assignments,
            self.inline_calls, self.replacements, self.renames, self.recursive_calls,
            self.splits, self.redirects, self.method_reads, self.passed_calls,
            self.passed_statements, self.option_calls,
        ]  # fmt: skip
        self._targets = {node for table in tables for node in table}
        self._target_ranges = [
            where for node in self._targets if (where := self._positions.get(node)) is not None
        ]
        # A def's range, and its block's, start at ``def``, after its decorators: a target in
        # a decorator is reached through the def it decorates.
        decorated = [
            where
            for node, where in self._positions.items()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef))
            and node.decorators
            and self._holds_target(node.decorators[0], node.decorators[-1])
        ]
        self._target_ranges.extend(decorated)

    def _index_threading(self, index: NodeIndex, fix: FunctionFix) -> None:
        """Merge the splits and redirects of every plan: two compiled functions may call one
        helper, and each passes the same values through it."""
        for split in fix.splits:
            node = index.definition(split.function)
            if node is None:
                continue
            merged = self.splits.setdefault(
                node, Split(split.function, split.impl_name, [], split.method_self,
                            split.module_level, split.indent)
            )  # fmt: skip
            merged.parameters.extend(p for p in split.parameters if p not in merged.parameters)
            for span, parameter in split.replaced:
                _put(self.replacements, index.expression(span), parameter)
        for redirect in fix.redirects:
            call = index.call(redirect.call)
            if call is None:
                continue
            callee, keywords = self.redirects.setdefault(call, (redirect.callee, []))
            keywords.extend(k for k in redirect.keywords if k not in keywords)

    def _holds_target(self, first: cst.CSTNode, last: cst.CSTNode) -> bool:
        start, end = self._positions[first][0], self._positions[last][1]
        return any(start <= a and b <= end for a, b in self._target_ranges)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node in self._targets:
            return True
        where = self._positions.get(node)
        if where is None:
            return True
        start, end = where
        return any(start <= first and last <= end for first, last in self._target_ranges)

    # No ``visit_<Node>_<attribute>`` methods here: skip libcst's lookup of them per child.
    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        return None

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        return None

    # -- reads inside the compiled function ----------------------------------------------------

    def _replace(self, original: cst.CSTNode, updated: cst.BaseExpression) -> cst.BaseExpression:
        parameter = self.replacements.get(original)
        if parameter is None:
            return updated
        return cst.Name(
            parameter, lpar=getattr(updated, "lpar", ()), rpar=getattr(updated, "rpar", ())
        )

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        raw = self.method_reads.get(original_node)
        if raw is not None:
            return updated_node.with_changes(attr=cst.Name(raw))
        return self._replace(original_node, updated_node)

    def leave_Subscript(
        self, original_node: cst.Subscript, updated_node: cst.Subscript
    ) -> cst.BaseExpression:
        return self._replace(original_node, updated_node)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.renames.get(original_node)
        return updated_node if new is None else updated_node.with_changes(value=new)

    # -- the compiled function -----------------------------------------------------------------

    def leave_Lambda(
        self, original_node: cst.Lambda, updated_node: cst.Lambda
    ) -> cst.BaseExpression:
        fix = self.functions.get(original_node)
        if fix is None:
            return updated_node
        return updated_node.with_changes(params=with_lifted(updated_node.params, fix))

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        split = self.splits.get(original_node)
        if split is not None:
            return self._split(original_node, updated_node, split)
        fix = self.functions.get(original_node)
        if fix is None:
            return updated_node
        updated_node = updated_node.with_changes(params=with_lifted(updated_node.params, fix))
        decorated = [site for site in fix.sites if site.form is Form.DECORATOR]
        if not decorated:
            if not has_wrapper(fix) and not fix.plain_wrapper:
                return updated_node
            # The wrappers carry the name's docstring; the raw function gets a name of its own.
            updated_node = without_docstring(updated_node)
            if fix.raw_name is not None:
                updated_node = updated_node.with_changes(name=cst.Name(fix.raw_name))
            if not fix.plain_wrapper or fix.raw_name is None:
                return updated_node
            # Uses that are not compiled call a plain wrapper, which reads the values then.
            method = fix.method_self
            plain = self.build.call_wrapper(
                original_node.name.value, original_node.params, original_node.returns,
                docstring_of(original_node), f"{method}.{fix.raw_name}" if method else fix.raw_name,
                drop_first=method is not None,
                lifted=[(lift.parameter, lift.value_code) for lift in fix.lifts],
                positional=fix.positional, indent=fix.indent, module_level=fix.def_module_level,
            )  # fmt: skip
            return cst.FlattenSentinel([updated_node, plain])
        site = decorated[0]
        above = fix.wrapper_decorators
        compiled_def = without_docstring(updated_node).with_changes(
            name=cst.Name(fix.compiled_name), decorators=updated_node.decorators[above:]
        )
        wrapper = self.build.wrapper(
            fix, site, original_node.name.value, original_node.params, original_node.returns,
            docstring_of(original_node),
        )  # fmt: skip
        wrapper = wrapper.with_changes(
            decorators=updated_node.decorators[:above],
            type_parameters=original_node.type_parameters,  # the signature may name them
        )
        self.wrappers.add(id(wrapper))
        return cst.FlattenSentinel([compiled_def, wrapper])

    def _split(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef, split: Split
    ) -> cst.FlattenSentinel[cst.BaseStatement]:
        """A helper the values pass through: its ``_impl`` takes them, and its name becomes a
        plain wrapper passing them as they are when it runs."""
        parameters = [(parameter, None) for parameter, _ in split.parameters]
        impl = without_docstring(updated_node).with_changes(
            name=cst.Name(split.impl_name),
            params=with_keyword_only(updated_node.params, parameters),
        )
        method = split.method_self
        wrapper = self.build.call_wrapper(
            original_node.name.value, original_node.params, original_node.returns,
            docstring_of(original_node),
            f"{method}.{split.impl_name}" if method else split.impl_name,
            drop_first=method is not None, lifted=split.parameters, positional=False,
            indent=split.indent, module_level=split.module_level,
        )  # fmt: skip
        return cst.FlattenSentinel([impl, wrapper])

    def leave_Decorator(
        self, original_node: cst.Decorator, updated_node: cst.Decorator
    ) -> cst.Decorator:
        entry = self.decorators.get(original_node)
        if entry is None:
            return updated_node
        fix, site = entry
        expr = updated_node.decorator
        if site.options:
            if not isinstance(expr, cst.Call):
                # ``@jax.pmap`` takes options only through ``functools.partial``.
                assert site.partial_name is not None
                partial = cst.parse_expression(site.partial_name)
                expr = cst.Call(func=partial, args=[cst.Arg(expr)])
            return updated_node.with_changes(decorator=with_options(expr, site.options))
        static = static_names(fix, site)
        if not static:
            return updated_node
        if isinstance(expr, cst.Call):
            return updated_node.with_changes(decorator=add_static_argnames(expr, static))
        call = cst.Call(func=expr, args=[static_arg(static)])
        return updated_node.with_changes(decorator=call)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        recursion = self.recursive_calls.get(original_node)
        if recursion is not None:
            target, own = recursion
            passed = [keyword(lift.parameter, lift.parameter) for lift in own.lifts]
            updated_node = updated_node.with_changes(
                func=cst.Name(target), args=[*updated_node.args, *passed]
            )
        redirect = self.redirects.get(original_node)
        if redirect is not None:
            callee, keywords = redirect
            func = updated_node.func
            if isinstance(func, cst.Name):
                func = func.with_changes(value=callee)
            elif isinstance(func, cst.Attribute):
                func = func.with_changes(attr=cst.Name(callee))
            passed = [keyword(name, value) for name, value in keywords]
            updated_node = updated_node.with_changes(func=func, args=[*updated_node.args, *passed])
        entry = self.compile_calls.get(original_node)
        if entry is not None:
            static = static_names(*entry)
            if static:
                updated_node = add_static_argnames(updated_node, static)
        options = self.option_calls.get(original_node)
        if options is not None and options.options:
            updated_node = with_options(updated_node, options.options)
        inline = self.inline_calls.get(original_node)
        if inline is not None:
            updated_node = updated_node.with_changes(
                args=[*updated_node.args, *lifted_arguments(*inline)]
            )
        passed_on = self.passed_calls.get(original_node)
        if passed_on is not None:
            # Bound before the statement (``leave_SimpleStatementLine``); handed on by name.
            self.passed_made[id(passed_on[1])] = updated_node
            name = passed_on[1].wrapper_name
            assert name is not None
            return cst.Name(name, lpar=updated_node.lpar, rpar=updated_node.rpar)
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        passed = self.passed_statements.get(original_node)
        if passed:
            return self._bind_passed(updated_node, passed)
        entry = self.assignments.get(original_node)
        if entry is None:
            return updated_node
        fix, site = entry
        assign = updated_node.body[0]
        assert isinstance(assign, (cst.Assign, cst.AnnAssign))
        target = cst.Name(site.compiled_name or fix.compiled_name)
        if isinstance(assign, cst.Assign):
            renamed: cst.BaseSmallStatement = assign.with_changes(
                targets=[cst.AssignTarget(target)]
            )
        else:
            renamed = assign.with_changes(target=target)
        assert site.bound_name is not None
        wrapper = self.build.site_wrapper(fix, site, site.bound_name)
        return cst.FlattenSentinel([updated_node.with_changes(body=[renamed]), wrapper])

    def _bind_passed(
        self,
        statement: cst.SimpleStatementLine,
        passed: list[tuple[FunctionFix, SitePlan]],
    ) -> cst.FlattenSentinel[cst.BaseStatement]:
        """Before a statement that hands a compiled object on: the compiled object and its
        wrapper, bound to names; the statement hands on the wrapper."""
        made: list[cst.BaseStatement] = []
        for fix, site in passed:
            call = self.passed_made.get(id(site))
            assert call is not None and site.compiled_name and site.wrapper_name
            target = cst.AssignTarget(cst.Name(site.compiled_name))
            assign = cst.SimpleStatementLine([cst.Assign([target], call)])
            if not made:
                assign = assign.with_changes(leading_lines=statement.leading_lines)
            made.extend([assign, self.build.site_wrapper(fix, site, site.wrapper_name)])
        return cst.FlattenSentinel([*made, statement.with_changes(leading_lines=())])

    # -- blank lines after an inserted wrapper --------------------------------------------------

    def _space_after_wrappers(
        self, body: Sequence[cst.BaseStatement], blank_lines: int
    ) -> list[cst.BaseStatement]:
        """Give the statement after an inserted wrapper the blank lines a definition wants."""
        spaced = list(body)
        for index in range(1, len(spaced)):
            statement = spaced[index]
            if id(spaced[index - 1]) not in self.wrappers:
                continue
            leading = list(getattr(statement, "leading_lines", ()))
            missing = blank_lines - sum(1 for _ in _takewhile_blank(leading))
            if missing > 0:
                blank = [cst.EmptyLine(indent=False)] * missing
                spaced[index] = statement.with_changes(leading_lines=[*blank, *leading])
        return spaced

    def leave_IndentedBlock(
        self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock
    ) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._space_after_wrappers(updated_node.body, 1))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._space_after_wrappers(updated_node.body, 2))


def _takewhile_blank(lines: Sequence[cst.EmptyLine]) -> Iterable[cst.EmptyLine]:
    for line in lines:
        if line.comment is not None:
            return
        yield line


_Value = TypeVar("_Value")


def _put(table: dict[cst.CSTNode, _Value], node: cst.CSTNode | None, value: _Value) -> None:
    if node is not None:
        table[node] = value
