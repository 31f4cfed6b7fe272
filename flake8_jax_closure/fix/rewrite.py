"""Apply fix plans with libcst, keeping every byte the plans do not change.

Only the statements a plan changes are parsed: each is cut from the source with its full lines
(nested statements keep their indentation, under an ``if True:`` line that is dropped again),
its nodes are found by the plan's positions through libcst's position metadata, and one
transformer pass rewrites it. Statements that touch or nest merge into one piece. Each piece
becomes one edit, given to every plan that changed it; a file's fixed text is the source with
all pieces replaced. Cost grows with what is fixed, not with the size of the file.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

import libcst as cst

from ..analysis.compiled import Form
from ..diagnostics import Edit
from ..positions import Span
from .model import STATIC_BY_ITSELF, FunctionFix, SitePlan, Split
from .node_positions import node_ranges

_HEADER = "if True:\n"
# Lines as Python counts them: ``str.splitlines`` also breaks at form feeds and other controls.
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


class RewriteError(Exception):
    """A piece of source cannot be parsed by libcst, or a planned node is not where the plan
    says."""


@contextmanager
def deep_recursion(limit: int = 20_000) -> Iterator[None]:
    """libcst walks trees recursively, several frames per nesting level; code nested a few
    hundred levels deep (which CPython accepts) needs more than the default 1,000 frames.
    Python-to-Python calls do not grow the C stack, so a higher limit is safe here."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


@dataclass
class _Piece:
    """Full source lines ``first``..``last`` rewritten together, and the plans that do."""

    first: int
    last: int
    plans: list[FunctionFix] = field(default_factory=list)
    module: cst.Module | None = None
    index: NodeIndex | None = None


class NodeIndex:
    """The nodes of one piece that a plan can name, by their position in the whole source."""

    _KINDS = (cst.FunctionDef, cst.Lambda, cst.Call, cst.Attribute, cst.Subscript, cst.Name)

    def __init__(self, module: cst.Module, line_offset: int) -> None:
        self.positions = positions = node_ranges(module)
        self._nodes: dict[tuple[str, Span], cst.CSTNode] = {}
        self._statements: dict[int, cst.SimpleStatementLine] = {}
        for node, ((start_line, start_column), (end_line, end_column)) in positions.items():
            span = (start_line + line_offset, start_column, end_line + line_offset, end_column)
            if isinstance(node, self._KINDS):
                self._nodes.setdefault((type(node).__name__, span), node)
            elif isinstance(node, cst.SimpleStatementLine):
                self._statements.setdefault(span[0], node)
            if isinstance(node, cst.FunctionDef):
                self._nodes[("def", (span[0], span[1], 0, 0))] = node

    def function(self, fix: FunctionFix) -> cst.FunctionDef | cst.Lambda | None:
        if fix.is_lambda:
            node = self._nodes.get(("Lambda", fix.function))
        else:
            node = self._nodes.get(("def", (fix.function[0], fix.function[1], 0, 0)))
        return node if isinstance(node, (cst.FunctionDef, cst.Lambda)) else None

    def definition(self, span: Span) -> cst.FunctionDef | None:
        node = self._nodes.get(("def", (span[0], span[1], 0, 0)))
        return node if isinstance(node, cst.FunctionDef) else None

    def expression(self, span: Span) -> cst.CSTNode | None:
        for kind in ("Attribute", "Subscript"):
            node = self._nodes.get((kind, span))
            if node is not None:
                return node
        return None

    def name(self, span: Span) -> cst.Name | None:
        node = self._nodes.get(("Name", span))
        return node if isinstance(node, cst.Name) else None

    def call(self, span: Span) -> cst.Call | None:
        node = self._nodes.get(("Call", span))
        return node if isinstance(node, cst.Call) else None

    def statement(self, line: int) -> cst.SimpleStatementLine | None:
        node = self._statements.get(line)
        return node if node is not None and len(node.body) == 1 else None


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
        self.module = module
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
        # The compiled functions of every piece: a wrapper made at ``g = jax.jit(f)`` copies
        # the signature of ``f``, which may sit in another piece.
        self.originals = originals
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
            if fix.raw_name is not None and (_has_wrapper(fix) or fix.plain_wrapper):
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
        return updated_node.with_changes(params=_with_lifted(updated_node.params, fix))

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        split = self.splits.get(original_node)
        if split is not None:
            return self._split(original_node, updated_node, split)
        fix = self.functions.get(original_node)
        if fix is None:
            return updated_node
        updated_node = updated_node.with_changes(params=_with_lifted(updated_node.params, fix))
        decorated = [site for site in fix.sites if site.form is Form.DECORATOR]
        if not decorated:
            if not _has_wrapper(fix) and not fix.plain_wrapper:
                return updated_node
            # The wrappers carry the name's docstring; the raw function gets a name of its own.
            updated_node = _without_docstring(updated_node)
            if fix.raw_name is not None:
                updated_node = updated_node.with_changes(name=cst.Name(fix.raw_name))
            if not fix.plain_wrapper or fix.raw_name is None:
                return updated_node
            # Uses that are not compiled call a plain wrapper, which reads the values then.
            method = fix.method_self
            plain = self._call_wrapper(
                original_node.name.value, original_node.params, original_node.returns,
                _docstring(original_node), f"{method}.{fix.raw_name}" if method else fix.raw_name,
                drop_first=method is not None,
                lifted=[(lift.parameter, lift.value_code) for lift in fix.lifts],
                positional=fix.positional, indent=fix.indent, module_level=fix.def_module_level,
            )  # fmt: skip
            return cst.FlattenSentinel([updated_node, plain])
        site = decorated[0]
        above = fix.wrapper_decorators
        compiled_def = _without_docstring(updated_node).with_changes(
            name=cst.Name(fix.compiled_name), decorators=updated_node.decorators[above:]
        )
        wrapper = self._wrapper(
            fix, site, original_node.name.value, original_node.params, original_node.returns,
            _docstring(original_node),
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
        impl = _without_docstring(updated_node).with_changes(
            name=cst.Name(split.impl_name),
            params=_with_keyword_only(updated_node.params, parameters),
        )
        method = split.method_self
        wrapper = self._call_wrapper(
            original_node.name.value, original_node.params, original_node.returns,
            _docstring(original_node), f"{method}.{split.impl_name}" if method else split.impl_name,
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
            return updated_node.with_changes(decorator=_with_options(expr, site.options))
        static = _static_names(fix, site)
        if not static:
            return updated_node
        if isinstance(expr, cst.Call):
            return updated_node.with_changes(decorator=_add_static_argnames(expr, static))
        call = cst.Call(func=expr, args=[_static_arg(static)])
        return updated_node.with_changes(decorator=call)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        recursion = self.recursive_calls.get(original_node)
        if recursion is not None:
            target, own = recursion
            passed = [_keyword(lift.parameter, lift.parameter) for lift in own.lifts]
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
            passed = [_keyword(name, value) for name, value in keywords]
            updated_node = updated_node.with_changes(func=func, args=[*updated_node.args, *passed])
        entry = self.compile_calls.get(original_node)
        if entry is not None:
            static = _static_names(*entry)
            if static:
                updated_node = _add_static_argnames(updated_node, static)
        options = self.option_calls.get(original_node)
        if options is not None and options.options:
            updated_node = _with_options(updated_node, options.options)
        inline = self.inline_calls.get(original_node)
        if inline is not None:
            updated_node = updated_node.with_changes(
                args=[*updated_node.args, *_lifted_arguments(*inline)]
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
        wrapper = self._site_wrapper(fix, site, site.bound_name)
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
            made.extend([assign, self._site_wrapper(fix, site, site.wrapper_name)])
        return cst.FlattenSentinel([*made, statement.with_changes(leading_lines=())])

    def _site_wrapper(self, fix: FunctionFix, site: SitePlan, name: str) -> cst.FunctionDef:
        """The wrapper a compile site binds: the compiled function's signature, without what a
        partial binds or the ``self`` of a bound method."""
        function = self.originals[id(fix)]
        params = function.params
        returns = function.returns if isinstance(function, cst.FunctionDef) else None
        docstring = _docstring(function) if isinstance(function, cst.FunctionDef) else None
        wrapper = self._wrapper(fix, site, name, params, returns, docstring)
        if isinstance(function, cst.FunctionDef):
            # The signature copied may name the function's type parameters (PEP 695).
            wrapper = wrapper.with_changes(type_parameters=function.type_parameters)
            self.wrappers.add(id(wrapper))
        return wrapper

    def _wrapper(
        self,
        fix: FunctionFix,
        site: SitePlan,
        name: str,
        params: cst.Parameters,
        returns: cst.Annotation | None,
        docstring: str | None,
    ) -> cst.FunctionDef:
        params = _left_open(params, site.partial_positional, site.partial_keywords)
        target = site.compiled_name or fix.compiled_name
        drop_first = False
        if site.receiver is not None:
            # ``jax.jit(obj.method)``: ``self`` is bound; the values are read through ``obj``.
            params = _without_first(params)
        elif fix.method_self is not None:
            # A method: the wrapper calls the compiled method through its own ``self``.
            drop_first, target = True, f"{fix.method_self}.{fix.compiled_name}"
        module_level = fix.module_level if site.module_level is None else site.module_level
        return self._call_wrapper(
            name, params, returns, docstring, target, drop_first=drop_first,
            lifted=_lifted_values(fix, site), positional=fix.positional, indent=fix.indent,
            module_level=module_level,
        )  # fmt: skip

    def _call_wrapper(
        self,
        name: str,
        params: cst.Parameters,
        returns: cst.Annotation | None,
        docstring: str | None,
        target: str,
        *,
        drop_first: bool,
        lifted: Sequence[tuple[str, str]],
        positional: bool,
        indent: str,
        module_level: bool,
    ) -> cst.FunctionDef:
        """``def name(params): return target(params..., values...)``."""
        code = self.module.code_for_node
        signature = code(params)
        annotation = f" -> {code(returns.annotation)}" if returns is not None else ""
        given, keywords = _forwarded_parts(params)
        if drop_first:
            given = given[1:]
        if positional:
            arguments = [*given, *(value for _, value in lifted), *keywords]
        else:
            arguments = [*given, *keywords, *(f"{p}={value}" for p, value in lifted)]
        body = f"{indent}{docstring}\n" if docstring else ""
        source = (
            f"def {name}({signature}){annotation}:\n{body}{indent}return {target}"
            f"({', '.join(arguments)})\n"
        )
        wrapper = cst.parse_statement(source, config=self.module.config_for_parsing)
        blank = [cst.EmptyLine(indent=False)] * (2 if module_level else 1)
        assert isinstance(wrapper, cst.FunctionDef)
        # The body's own indentation, not the piece's (a nested piece sits under a header).
        body_block = wrapper.body.with_changes(indent=indent)
        wrapper = wrapper.with_changes(leading_lines=blank, body=body_block)
        self.wrappers.add(id(wrapper))
        return wrapper

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


def _has_wrapper(fix: FunctionFix) -> bool:
    """Whether the fix defines a public wrapper (the inline form passes values at the call)."""
    return any(site.form is not Form.INLINE for site in fix.sites)


def _without_docstring(function: cst.FunctionDef) -> cst.FunctionDef:
    """The function without its docstring, which its public wrapper keeps."""
    if _docstring(function) is None or not isinstance(function.body, cst.IndentedBlock):
        return function
    body = function.body.body
    rest = list(body[1:])
    if rest:
        first = rest[0]
        # The docstring's own comments and blank lines do not carry over.
        rest[0] = first.with_changes(leading_lines=())
    return function.with_changes(body=function.body.with_changes(body=rest))


def _keyword(name: str, value: str) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=cst.parse_expression(value),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


def _left_open(params: cst.Parameters, positional: int, keywords: Sequence[str]) -> cst.Parameters:
    """The parameters a ``partial`` leaves open: the leading ``positional`` ones and the
    ``keywords`` are bound; positional parameters after a keyword-bound one can then only be
    given by keyword."""
    if not positional and not keywords:
        return params
    default = cst.MaybeSentinel.DEFAULT
    ordered = [p.with_changes(comma=default) for p in (*params.posonly_params, *params.params)]
    dropped = min(positional, len(ordered))
    posonly = ordered[dropped : len(params.posonly_params)]
    normal = ordered[max(dropped, len(params.posonly_params)) :]
    moved: list[cst.Param] = []
    for index, param in enumerate(normal):
        if param.name.value in keywords:
            moved = [p for p in normal[index:] if p.name.value not in keywords]
            normal = normal[:index]
            break
    kwonly = [
        p.with_changes(comma=default)
        for p in (*moved, *params.kwonly_params)
        if p.name.value not in keywords
    ]
    star_arg = params.star_arg
    if kwonly and not isinstance(star_arg, (cst.Param, cst.ParamStar)):
        star_arg = cst.ParamStar()
    if not kwonly and isinstance(star_arg, cst.ParamStar):
        star_arg = default
    return params.with_changes(
        posonly_params=posonly,
        posonly_ind=params.posonly_ind if posonly else default,
        params=normal,
        star_arg=star_arg,
        kwonly_params=kwonly,
    )


def _with_lifted(params: cst.Parameters, fix: FunctionFix) -> cst.Parameters:
    """The compiled function's parameters with the lifted values: keyword-only, or after its
    own positional parameters for a transform that maps keyword arguments."""
    lifted = [(lift.parameter, lift.annotation) for lift in fix.lifts]
    if fix.positional:
        return _with_positional(params, lifted)
    return _with_keyword_only(params, lifted)


def _new_params(
    params: cst.Parameters, lifted: Sequence[tuple[str, str | None]]
) -> list[cst.Param]:
    existing = {
        p.name.value for p in (*params.params, *params.kwonly_params, *params.posonly_params)
    }
    return [
        cst.Param(
            cst.Name(name),
            annotation=(
                cst.Annotation(cst.parse_expression(annotation)) if annotation is not None else None
            ),
        )
        for name, annotation in lifted
        if name not in existing
    ]


def _with_keyword_only(
    params: cst.Parameters, lifted: Sequence[tuple[str, str | None]]
) -> cst.Parameters:
    added = _new_params(params, lifted)
    if not added:
        return params
    star_arg = params.star_arg
    if not isinstance(star_arg, (cst.Param, cst.ParamStar)):
        star_arg = cst.ParamStar()
    return params.with_changes(star_arg=star_arg, kwonly_params=[*params.kwonly_params, *added])


def _with_positional(
    params: cst.Parameters, lifted: Sequence[tuple[str, str | None]]
) -> cst.Parameters:
    added = _new_params(params, lifted)
    if not added:
        return params
    own = [p.with_changes(comma=cst.MaybeSentinel.DEFAULT) for p in params.params]
    return params.with_changes(params=[*own, *added])


def _without_first(params: cst.Parameters) -> cst.Parameters:
    """The parameters of a method bound to its object: without ``self``."""
    if params.posonly_params:
        rest = params.posonly_params[1:]
        return params.with_changes(
            posonly_params=rest,
            posonly_ind=params.posonly_ind if rest else cst.MaybeSentinel.DEFAULT,
        )
    return params.with_changes(params=params.params[1:])


def _forwarded_parts(params: cst.Parameters) -> tuple[list[str], list[str]]:
    """The wrapper's parameters as arguments: those given by position (``*args`` included), and
    those given by keyword (``**kwargs`` included)."""
    given = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        given.append(f"*{params.star_arg.name.value}")
    keywords = [f"{p.name.value}={p.name.value}" for p in params.kwonly_params]
    if params.star_kwarg is not None:
        keywords.append(f"**{params.star_kwarg.name.value}")
    return given, keywords


def _lifted_values(fix: FunctionFix, site: SitePlan) -> list[tuple[str, str]]:
    """(parameter, what the site's wrapper passes): read through the object of a bound method
    instead of its ``self``."""
    values = []
    for lift in fix.lifts:
        value = lift.value_code
        if site.receiver is not None and fix.method_self is not None:
            value = site.receiver + value[len(fix.method_self) :]
        values.append((lift.parameter, value))
    return values


def _lifted_arguments(fix: FunctionFix, site: SitePlan) -> list[cst.Arg]:
    values = _lifted_values(fix, site)
    if fix.positional:
        return [cst.Arg(cst.parse_expression(value)) for _, value in values]
    return [_keyword(parameter, value) for parameter, value in values]


def _with_options(call: cst.Call, options: Sequence[tuple[str, str]]) -> cst.Call:
    """The call with each keyword set: replaced where given, added otherwise."""
    args = list(call.args)
    for name, value in options:
        for index, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == name:
                args[index] = arg.with_changes(value=cst.parse_expression(value))
                break
        else:
            if args:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            args.append(_keyword(name, value))
    return call.with_changes(args=args)


def _static_names(fix: FunctionFix, site: SitePlan) -> list[str]:
    if site.transform in STATIC_BY_ITSELF or fix.positional:
        return []  # equinox decides by itself; pmap's static values go by position
    return [lift.parameter for lift in fix.lifts if lift.static]


def _static_arg(names: Sequence[str]) -> cst.Arg:
    return _keyword("static_argnames", _string_tuple(names))


def _string_tuple(names: Sequence[str]) -> str:
    quoted = ", ".join(f'"{name}"' for name in names)
    return f"({quoted},)" if len(names) == 1 else f"({quoted})"


def _add_static_argnames(call: cst.Call, names: Sequence[str]) -> cst.Call:
    args = list(call.args)
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == "static_argnames":
            value = arg.value
            if isinstance(value, cst.SimpleString):
                merged = f"({value.value}, " + ", ".join(f'"{n}"' for n in names) + ")"
            elif isinstance(value, (cst.Tuple, cst.List)) and value.elements:
                inner = ", ".join(cst.Module([]).code_for_node(e.value) for e in value.elements)
                merged = f"({inner}, " + ", ".join(f'"{n}"' for n in names) + ")"
            else:
                merged = (
                    f"(*{cst.Module([]).code_for_node(value)}, "
                    + ", ".join(f'"{n}"' for n in names)
                    + ")"
                )
            args[index] = arg.with_changes(value=cst.parse_expression(merged))
            return call.with_changes(args=args)
    return call.with_changes(args=[*args, _static_arg(names)])


def _docstring(function: cst.FunctionDef | cst.Lambda) -> str | None:
    if not isinstance(function, cst.FunctionDef) or not isinstance(
        function.body, cst.IndentedBlock
    ):
        return None
    body = function.body.body
    if body and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1:
        statement = body[0].body[0]
        if isinstance(statement, cst.Expr) and isinstance(
            statement.value, (cst.SimpleString, cst.ConcatenatedString)
        ):
            return cst.Module([]).code_for_node(statement.value)
    return None


_Value = TypeVar("_Value")


def _put(table: dict[cst.CSTNode, _Value], node: cst.CSTNode | None, value: _Value) -> None:
    if node is not None:
        table[node] = value


@dataclass
class Rewrite:
    text: str  # the source with every plan applied
    edits: dict[int, tuple[Edit, ...]]  # id(plan) -> the edits it needs
    failed: dict[int, str]  # id(plan) -> why its pieces could not be rewritten


def rewrite(source: str, plans: Sequence[FunctionFix]) -> Rewrite:
    """Apply ``plans`` to ``source``: the new text, and each plan's edits."""
    lines = _LINES.findall(source)
    pieces = _pieces(plans)
    failed: dict[int, str] = {}
    originals: dict[int, cst.FunctionDef | cst.Lambda] = {}
    with deep_recursion():
        for piece in pieces:
            try:
                _parse(piece, lines)
            except RewriteError as error:
                failed.update((id(plan), str(error)) for plan in piece.plans)
                continue
            assert piece.index is not None
            for plan in piece.plans:
                function = piece.index.function(plan)
                if function is not None:
                    originals[id(plan)] = function
        failed.update(
            (id(plan), "the compiled function could not be found")
            for piece in pieces
            for plan in piece.plans
            if id(plan) not in originals and id(plan) not in failed
        )
        replaced: dict[int, str] = {}
        for piece in pieces:
            if piece.module is None or any(id(plan) in failed for plan in piece.plans):
                continue
            assert piece.index is not None
            transformer = LiftTransformer(piece.module, piece.index, piece.plans, originals)
            module = piece.module.visit(transformer)
            text = _unwrap(module.code, piece, lines)
            if _ends_with_wrapper(module, transformer):
                text += _blank_after(piece, lines)
            replaced[id(piece)] = text
    text_parts: list[str] = []
    edits: dict[int, list[Edit]] = {id(plan): [] for plan in plans}
    line = 1
    for piece in pieces:
        new = replaced.get(id(piece))
        if new is None or any(id(plan) in failed for plan in piece.plans):
            continue
        text_parts.extend(lines[line - 1 : piece.first - 1])
        text_parts.append(new)
        line = piece.last + 1
        edit = Edit(piece.first, 0, piece.last + 1, 0, new)
        for plan in piece.plans:
            edits[id(plan)].append(edit)
    text_parts.extend(lines[line - 1 :])
    return Rewrite(
        "".join(text_parts),
        {key: tuple(value) for key, value in edits.items() if key not in failed},
        failed,
    )


def _pieces(plans: Sequence[FunctionFix]) -> list[_Piece]:
    """Statements to rewrite, merged where they overlap, in source order."""
    spans = sorted({(first, last, id(plan)): plan for plan in plans
                    for first, last in plan.statements}.items())  # fmt: skip
    pieces: list[_Piece] = []
    for (first, last, _), plan in spans:
        if pieces and first <= pieces[-1].last:
            piece = pieces[-1]
            piece.last = max(piece.last, last)
        else:
            piece = _Piece(first, last)
            pieces.append(piece)
        if all(p is not plan for p in piece.plans):
            piece.plans.append(plan)
    return pieces


def _parse(piece: _Piece, lines: list[str]) -> None:
    text = "".join(lines[piece.first - 1 : piece.last])
    header = _HEADER if text[:1] in (" ", "\t") else ""
    try:
        piece.module = cst.parse_module(header + text)
    except (cst.ParserSyntaxError, RecursionError) as error:
        raise RewriteError(f"lines {piece.first}-{piece.last} cannot be rewritten") from error
    offset = piece.first - 1 - (1 if header else 0)
    piece.index = NodeIndex(piece.module, offset)


def _unwrap(code: str, piece: _Piece, lines: list[str]) -> str:
    original = "".join(lines[piece.first - 1 : piece.last])
    if original[:1] in (" ", "\t"):
        code = code[len(_HEADER) :]
    return code


def _ends_with_wrapper(module: cst.Module, transformer: LiftTransformer) -> bool:
    body: Sequence[cst.BaseStatement | cst.BaseSmallStatement] = module.body
    if len(body) == 1 and isinstance(body[0], cst.If) and not body[0].leading_lines:
        inner = body[0].body
        if isinstance(inner, cst.IndentedBlock):
            body = inner.body
    return bool(body) and id(body[-1]) in transformer.wrappers


def _blank_after(piece: _Piece, lines: list[str]) -> str:
    """Blank lines a definition wants after an inserted wrapper, when the next statement at the
    same level follows too closely."""
    wanted = 1 if lines[piece.first - 1][:1] in (" ", "\t") else 2
    indent = _indentation(lines[piece.first - 1])
    blank = 0
    for line in lines[piece.last :]:
        if line.strip():
            if _indentation(line) != indent:
                return ""
            return "\n" * max(0, wanted - blank)
        blank += 1
    return ""


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
