"""Apply fix plans with libcst, keeping every byte the plan does not change.

The plan names places by position (lines, character columns); one pass of libcst's position
metadata finds the nodes at those positions, and one transformer pass applies every plan. Edits
for editors and JSON are cut from the one rewritten module, hunk by hunk, and given to the fixes
whose lines they touch.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ..analysis.compiled import Form
from ..diagnostics import Edit
from ..positions import Span
from .plan import STATIC_BY_ITSELF, FunctionFix, Lift, SitePlan


class RewriteError(Exception):
    """The source cannot be parsed by libcst, or a planned node is not where the plan says."""


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


def parse(source: str) -> cst.Module:
    try:
        with deep_recursion():
            return cst.parse_module(source)
    except (cst.ParserSyntaxError, RecursionError) as error:
        raise RewriteError(str(error).strip().splitlines()[0]) from error


class NodeIndex:
    """The nodes a plan can name, by position."""

    _KINDS = (cst.FunctionDef, cst.Lambda, cst.Call, cst.Attribute, cst.Subscript)

    def __init__(self, module: cst.Module) -> None:
        with deep_recursion():
            positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        self._nodes: dict[tuple[str, Span], cst.CSTNode] = {}
        self._statements: dict[int, cst.SimpleStatementLine] = {}
        for node, where in positions.items():
            span = (where.start.line, where.start.column, where.end.line, where.end.column)
            if isinstance(node, self._KINDS):
                self._nodes.setdefault((type(node).__name__, span), node)
            elif isinstance(node, cst.SimpleStatementLine):
                self._statements.setdefault(where.start.line, node)
            if isinstance(node, cst.FunctionDef):
                self._nodes[("def", (span[0], span[1], 0, 0))] = node

    def _get(self, kind: str, span: Span) -> cst.CSTNode:
        node = self._nodes.get((kind, span))
        if node is None:
            raise RewriteError(f"no {kind} at {span}")
        return node

    def function(self, fix: FunctionFix) -> cst.FunctionDef | cst.Lambda:
        if fix.is_lambda:
            node = self._get("Lambda", fix.function)
        else:
            node = self._get("def", (fix.function[0], fix.function[1], 0, 0))
        assert isinstance(node, (cst.FunctionDef, cst.Lambda))
        return node

    def expression(self, span: Span) -> cst.CSTNode:
        for kind in ("Attribute", "Subscript"):
            node = self._nodes.get((kind, span))
            if node is not None:
                return node
        raise RewriteError(f"no attribute or subscript at {span}")

    def call(self, span: Span) -> cst.Call:
        node = self._get("Call", span)
        assert isinstance(node, cst.Call)
        return node

    def statement(self, line: int) -> cst.SimpleStatementLine:
        node = self._statements.get(line)
        if node is None or len(node.body) != 1:
            raise RewriteError(f"no single statement on line {line}")
        return node


class LiftTransformer(cst.CSTTransformer):
    """Applies function fixes to the module they were planned on."""

    def __init__(self, module: cst.Module, index: NodeIndex, fixes: Iterable[FunctionFix]) -> None:
        super().__init__()
        self.module = module
        self.functions: dict[cst.CSTNode, FunctionFix] = {}
        self.decorators: dict[cst.CSTNode, tuple[FunctionFix, SitePlan]] = {}
        self.compile_calls: dict[cst.CSTNode, tuple[FunctionFix, SitePlan]] = {}
        self.assignments: dict[cst.CSTNode, tuple[FunctionFix, SitePlan]] = {}
        self.inline_calls: dict[cst.CSTNode, FunctionFix] = {}
        self.replacements: dict[cst.CSTNode, str] = {}
        self.wrappers: set[int] = set()
        self.originals: dict[int, cst.FunctionDef | cst.Lambda] = {}
        for fix in fixes:
            function = index.function(fix)
            self.functions[function] = fix
            self.originals[id(fix)] = function
            for lift in fix.lifts:
                for span in lift.nodes:
                    self.replacements[index.expression(span)] = lift.parameter
            for site in fix.sites:
                if site.decorator_index is not None:
                    assert isinstance(function, cst.FunctionDef)
                    self.decorators[function.decorators[site.decorator_index]] = (fix, site)
                elif site.options_call is not None:
                    self.compile_calls[index.call(site.options_call)] = (fix, site)
                if site.compile_call is not None:
                    self.compile_calls.setdefault(index.call(site.compile_call), (fix, site))
                if site.statement_line is not None:
                    self.assignments[index.statement(site.statement_line)] = (fix, site)
                if site.inline_call is not None:
                    self.inline_calls[index.call(site.inline_call)] = fix

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
        return self._replace(original_node, updated_node)

    def leave_Subscript(
        self, original_node: cst.Subscript, updated_node: cst.Subscript
    ) -> cst.BaseExpression:
        return self._replace(original_node, updated_node)

    # -- the compiled function -----------------------------------------------------------------

    def leave_Lambda(
        self, original_node: cst.Lambda, updated_node: cst.Lambda
    ) -> cst.BaseExpression:
        fix = self.functions.get(original_node)
        if fix is None:
            return updated_node
        return updated_node.with_changes(params=_with_keyword_only(updated_node.params, fix.lifts))

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        fix = self.functions.get(original_node)
        if fix is None:
            return updated_node
        updated_node = updated_node.with_changes(
            params=_with_keyword_only(updated_node.params, fix.lifts)
        )
        decorated = [site for site in fix.sites if site.form is Form.DECORATOR]
        if not decorated:
            return updated_node
        site = decorated[0]
        compiled_def = updated_node.with_changes(name=cst.Name(fix.compiled_name))
        wrapper = self._wrapper(
            fix, site, original_node.name.value, original_node.params, original_node.returns,
            _docstring(original_node),
        )  # fmt: skip
        return cst.FlattenSentinel([compiled_def, wrapper])

    def leave_Decorator(
        self, original_node: cst.Decorator, updated_node: cst.Decorator
    ) -> cst.Decorator:
        entry = self.decorators.get(original_node)
        if entry is None:
            return updated_node
        fix, site = entry
        static = _static_names(fix, site)
        if not static:
            return updated_node
        expr = updated_node.decorator
        if isinstance(expr, cst.Call):
            return updated_node.with_changes(decorator=_add_static_argnames(expr, static))
        call = cst.Call(func=expr, args=[_static_arg(static)])
        return updated_node.with_changes(decorator=call)

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        entry = self.compile_calls.get(original_node)
        if entry is not None:
            static = _static_names(*entry)
            if static:
                updated_node = _add_static_argnames(updated_node, static)
        fix = self.inline_calls.get(original_node)
        if fix is not None:
            updated_node = updated_node.with_changes(
                args=[*updated_node.args, *_lifted_arguments(fix)]
            )
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        entry = self.assignments.get(original_node)
        if entry is None:
            return updated_node
        fix, site = entry
        assign = updated_node.body[0]
        assert isinstance(assign, (cst.Assign, cst.AnnAssign))
        target = cst.Name(fix.compiled_name)
        if isinstance(assign, cst.Assign):
            renamed: cst.BaseSmallStatement = assign.with_changes(
                targets=[cst.AssignTarget(target)]
            )
        else:
            renamed = assign.with_changes(target=target)
        function = self.originals[id(fix)]
        params = function.params
        returns = function.returns if isinstance(function, cst.FunctionDef) else None
        docstring = _docstring(function) if isinstance(function, cst.FunctionDef) else None
        assert site.bound_name is not None
        wrapper = self._wrapper(fix, site, site.bound_name, params, returns, docstring)
        return cst.FlattenSentinel([updated_node.with_changes(body=[renamed]), wrapper])

    def _wrapper(
        self,
        fix: FunctionFix,
        site: SitePlan,
        name: str,
        params: cst.Parameters,
        returns: cst.Annotation | None,
        docstring: str | None,
    ) -> cst.BaseStatement:
        code = self.module.code_for_node
        signature = code(params)
        annotation = f" -> {code(returns.annotation)}" if returns is not None else ""
        forwarded = _forwarded(params)
        target = fix.compiled_name
        if fix.method_self is not None:
            # A method: the wrapper calls the compiled method through its own ``self``.
            forwarded, target = forwarded[1:], f"{fix.method_self}.{fix.compiled_name}"
        arguments = ", ".join(
            [*forwarded, *(f"{lift.parameter}={lift.value_code}" for lift in fix.lifts)]
        )
        indent = self.module.default_indent
        body = f"{indent}{docstring}\n" if docstring else ""
        source = (
            f"def {name}({signature}){annotation}:\n{body}{indent}return {target}({arguments})\n"
        )
        wrapper = cst.parse_statement(source, config=self.module.config_for_parsing)
        blank = [cst.EmptyLine(indent=False)] * (2 if fix.module_level else 1)
        wrapper = wrapper.with_changes(leading_lines=blank)
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


def _with_keyword_only(params: cst.Parameters, lifts: Sequence[Lift]) -> cst.Parameters:
    existing = {
        p.name.value for p in (*params.params, *params.kwonly_params, *params.posonly_params)
    }
    added = [
        cst.Param(cst.Name(lift.parameter)) for lift in lifts if lift.parameter not in existing
    ]
    if not added:
        return params
    star_arg = params.star_arg
    if not isinstance(star_arg, (cst.Param, cst.ParamStar)):
        star_arg = cst.ParamStar()
    return params.with_changes(star_arg=star_arg, kwonly_params=[*params.kwonly_params, *added])


def _forwarded(params: cst.Parameters) -> list[str]:
    forwarded = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        forwarded.append(f"*{params.star_arg.name.value}")
    forwarded.extend(f"{p.name.value}={p.name.value}" for p in params.kwonly_params)
    if params.star_kwarg is not None:
        forwarded.append(f"**{params.star_kwarg.name.value}")
    return forwarded


def _lifted_arguments(fix: FunctionFix) -> list[cst.Arg]:
    return [
        cst.Arg(
            keyword=cst.Name(lift.parameter),
            value=cst.parse_expression(lift.value_code),
            equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""),
                whitespace_after=cst.SimpleWhitespace(""),
            ),
        )
        for lift in fix.lifts
    ]


def _static_names(fix: FunctionFix, site: SitePlan) -> list[str]:
    if site.transform in STATIC_BY_ITSELF:
        return []
    return [lift.parameter for lift in fix.lifts if lift.static]


def _static_arg(names: Sequence[str]) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name("static_argnames"),
        value=cst.parse_expression(_string_tuple(names)),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


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


def apply_fixes(module: cst.Module, fixes: Sequence[FunctionFix]) -> str:
    """The module with every fix applied, in one pass."""
    with deep_recursion():
        index = NodeIndex(module)
        return module.visit(LiftTransformer(module, index, fixes)).code


def edits_by_fix(
    before: str, after: str, fixes: Sequence[FunctionFix]
) -> dict[int, tuple[Edit, ...]]:
    """Line-granular edits turning ``before`` into ``after``, given to each fix (by ``id``)
    whose lines they touch or follow (a wrapper goes right after its function)."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    edits: dict[int, list[Edit]] = {id(fix): [] for fix in fixes}
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edit = Edit(i1 + 1, 0, i2 + 1, 0, "".join(new[j1:j2]))
        touched = set(range(i1 + 1, i2 + 1)) or {i1, i1 + 1}
        owners = [fix for fix in fixes if touched & _with_following_lines(fix.lines, 3)]
        for fix in owners or fixes:
            edits[id(fix)].append(edit)
    return {key: tuple(value) for key, value in edits.items()}


def _with_following_lines(lines: set[int], count: int) -> set[int]:
    last = max(lines, default=0)
    return lines | set(range(last + 1, last + 1 + count))
