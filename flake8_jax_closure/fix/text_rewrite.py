"""The common fix written straight as text from positions, without libcst (as ruff writes its
fixes): a decorated ``def``, compiled where it is defined, whose values become keyword-only
parameters.

    @jax.jit                                   @jax.jit
    def step(x, y):                            def _step_compiled(x, y, *, SCALE):
        return x * SCALE + y          ->           return x * SCALE + y


                                               def step(x, y):
                                                   return _step_compiled(x, y, SCALE=SCALE)

libcst costs a parse, a rendering and a rebuild of every node of the piece, and its import is
most of a short run; this costs one ``ast`` parse of the piece. It writes the bytes the libcst
rewrite writes, and applies only where it can be sure of that: one plan, one piece that is the
def itself, a signature on the ``def`` line without a trailing comma, ``**kwargs`` or spaces
inside its parentheses, and nothing but the def's name, its parameters, a docstring, the reads
the plan replaces and the decorator's ``static_argnames`` to change. Anything else returns None
and libcst rewrites the piece.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Iterable, Sequence

from ..analysis.compiled import Form
from ..positions import Span
from .lines import blank_after, indentation, is_indented, newline_of
from .model import FunctionFix, SitePlan, lifted_values, static_names, string_tuple
from .pieces import Piece

_DEF = re.compile(r"def[ \t]+(?P<name>[^\W\d]\w*)[ \t]*\(")
_NAME = re.compile(r"[^\W\d]\w*")
_ARROW = re.compile(r"[ \t]*->[ \t]*")
# What may follow the signature on the ``def`` line, and a statement on its last line.
_COLON_TO_END = re.compile(r"[ \t]*:[ \t]*(?:#[^\r\n]*)?(?:\r\n|\r|\n)")
_TO_END = re.compile(r"[ \t]*(?:#[^\r\n]*)?(?:\r\n|\r|\n)")
_AT = re.compile(r"[ \t]*@[ \t]*")

_Edit = tuple[int, int, str]  # start and end offsets in the piece's text, and the new text


def written_as_text(piece: Piece, lines: Sequence[str]) -> str | None:
    """The piece's new text, or None where only libcst can write it."""
    if len(piece.plans) != 1:
        return None
    plan = piece.plans[0]
    site = _decorator_site(plan)
    if site is None or plan.statements != {(piece.first, piece.last)}:
        return None
    piece_lines = lines[piece.first - 1 : piece.last]
    if not piece_lines[-1].endswith(("\n", "\r")) or any("\x0c" in line for line in piece_lines):
        return None
    return _Writer(piece, piece_lines, plan, site).text(lines)


def _decorator_site(plan: FunctionFix) -> SitePlan | None:
    """The one site of a plan of the form written here: a decorator without options to set,
    and nothing else the fix changes."""
    if (
        plan.is_lambda or plan.nested or plan.splits or plan.redirects or plan.recursive_calls
        or plan.renamed_reads or plan.raw_name is not None or plan.plain_wrapper
        or plan.positional or plan.wrapper_decorators or len(plan.sites) != 1
    ):  # fmt: skip
        return None
    site = plan.sites[0]
    if (
        site.form is not Form.DECORATOR or site.decorator_index is None or site.options
        or site.compile_call is not None or site.partial_positional or site.partial_keywords
        or site.receiver is not None or site.compiled_name is not None
        or site.wrapper_name is not None or site.passed_statement is not None
        or site.statement_line is not None or site.inline_call is not None
        or site.method_attribute is not None
    ):  # fmt: skip
        return None
    return site


class _Writer:
    """One piece: its text, its ``ast`` and the edits the plan makes to it."""

    def __init__(
        self, piece: Piece, piece_lines: Sequence[str], plan: FunctionFix, site: SitePlan
    ) -> None:
        self.piece, self.lines, self.plan, self.site = piece, piece_lines, plan, site
        self.source = "".join(piece_lines)
        # A nested piece parses under a header line, as libcst's does.
        self.header = 1 if is_indented(piece_lines[0]) else 0
        self.starts = [0]
        for line in piece_lines:
            self.starts.append(self.starts[-1] + len(line))

    # -- positions ------------------------------------------------------------------------------

    def line(self, ast_line: int) -> str:
        """A line of the piece, by its ``ast`` number."""
        return self.lines[ast_line - 1 - self.header]

    def column(self, ast_line: int, byte_column: int) -> int:
        """A column in characters (``ast`` counts UTF-8 bytes)."""
        text = self.line(ast_line)
        if text.isascii():
            return byte_column
        return len(text.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))

    def offset(self, ast_line: int, byte_column: int) -> int:
        return self.starts[ast_line - 1 - self.header] + self.column(ast_line, byte_column)

    def span(self, node: ast.AST) -> Span:
        """The node's span in the whole source, as the plan names positions."""
        shift = self.piece.first - 1 - self.header
        start_line: int = node.lineno  # type: ignore[attr-defined]
        end_line: int = node.end_lineno  # type: ignore[attr-defined]
        return (
            start_line + shift,
            self.column(start_line, node.col_offset),  # type: ignore[attr-defined]
            end_line + shift,
            self.column(end_line, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def spelled(self, arg: ast.arg) -> str:
        """A parameter's name as the source spells it (``ast`` gives its NFKC form)."""
        line = self.line(arg.lineno)
        match = _NAME.match(line, self.column(arg.lineno, arg.col_offset))
        assert match is not None
        return match.group()

    def segment(self, node: ast.AST) -> str:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return self.source[start:end]

    # -- the piece ------------------------------------------------------------------------------

    def function(self) -> ast.FunctionDef | None:
        try:
            tree = ast.parse("if True:\n" * self.header + self.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        body = tree.body
        if self.header:
            if len(body) != 1 or not isinstance(body[0], ast.If):
                return None
            body = body[0].body
        if len(body) != 1 or not isinstance(body[0], ast.FunctionDef):
            return None
        node = body[0]
        if getattr(node, "type_params", None) or self.span(node)[:2] != self.plan.function[:2]:
            return None
        assert self.site.decorator_index is not None
        return node if self.site.decorator_index < len(node.decorator_list) else None

    def text(self, lines: Sequence[str]) -> str | None:
        node = self.function()
        if node is None:
            return None
        header = self._signature(node)
        docstring = self._docstring(node)
        replaced = self._replaced_reads(node)
        static = self._static_names(node)
        if header is None or docstring is None or replaced is None or static is None:
            return None
        edits, name, signature, returns = header
        text, removal = docstring
        edits.extend((*removal, *replaced, *static))
        new = _applied(self.source, edits)
        if new is None:
            return None
        return (
            new
            + self._wrapper(node, name, signature, returns, text)
            + blank_after(self.piece.first, self.piece.last, lines)
        )

    def _signature(self, node: ast.FunctionDef) -> tuple[list[_Edit], str, str, str | None] | None:
        """The edits of the ``def`` line (the compiled name, the new parameters), and the
        def's name, its parameters' text and its return annotation, for the wrapper."""
        args = node.args
        if args.kwarg is not None:
            return None
        line = self.line(node.lineno)
        match = _DEF.match(line, self.column(node.lineno, node.col_offset))
        if match is None or unicodedata.normalize("NFKC", match["name"]) != node.name:
            return None
        own = [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []),
               *args.kwonlyargs]  # fmt: skip
        parts: list[ast.AST] = [
            *own,
            *(arg.annotation for arg in own if arg.annotation is not None),
            *args.defaults,
            *(default for default in args.kw_defaults if default is not None),
        ]
        if node.returns is not None:
            parts.append(node.returns)
        if any(part.lineno != node.lineno or part.end_lineno != node.lineno for part in parts):  # type: ignore[attr-defined]
            return None  # the signature spans lines: libcst keeps its layout
        opened = match.end()
        ends = [self.column(node.lineno, p.end_col_offset) for p in parts if p is not node.returns]  # type: ignore[attr-defined]
        closed = max(ends) if ends else opened
        if line[closed : closed + 1] != ")" or line[opened : opened + 1] in (" ", "\t"):
            return None  # a trailing comma, a ``/`` last, spaces inside the parentheses
        returns = None
        rest = closed + 1
        if node.returns is not None:
            start = self.column(node.lineno, node.returns.col_offset)
            if not _ARROW.fullmatch(line, rest, start):
                return None  # a parenthesized annotation
            rest = self.column(node.lineno, node.returns.end_col_offset)  # type: ignore[arg-type]
            returns = line[start:rest]
        if not _COLON_TO_END.fullmatch(line, rest):
            return None
        inserted = self._parameters(args, own)
        if inserted is None:
            return None
        at = self.offset(node.lineno, 0)
        edits: list[_Edit] = [
            (at + match.start("name"), at + match.end("name"), self.plan.compiled_name)
        ]
        if inserted:
            edits.append((at + closed, at + closed, inserted))
        return edits, match["name"], line[opened:closed], returns

    def _parameters(self, args: ast.arguments, own: Sequence[ast.arg]) -> str | None:
        """What the compiled def's parameters gain: the lifted values, keyword-only."""
        existing = {self.spelled(arg) for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        added = []
        for lift in self.plan.lifts:
            if lift.parameter in existing:
                continue
            annotation = lift.annotation
            if annotation is not None and (annotation != annotation.strip() or
                                           any(c in annotation for c in "\r\n")):  # fmt: skip
                return None
            added.append(
                lift.parameter if annotation is None else f"{lift.parameter}: {annotation}"
            )
        if not added:
            return ""
        star = "" if args.vararg is not None or args.kwonlyargs else "*, "
        return (", " if own else "") + star + ", ".join(added)

    def _docstring(self, node: ast.FunctionDef) -> tuple[str | None, list[_Edit]] | None:
        """The docstring's text, and the edit that removes it with the lines up to the next
        statement; the wrapper keeps it. None where libcst might see it otherwise."""
        first = node.body[0]
        if first.lineno <= node.lineno:
            return None  # a body on the ``def`` line
        if not isinstance(first, ast.Expr):
            return (None, [])
        value = first.value
        if isinstance(value, ast.JoinedStr) or (
            isinstance(value, ast.Constant) and isinstance(value.value, bytes)
        ):
            return None  # maybe a docstring to libcst (concatenated, or bytes), not to ``ast``
        if not isinstance(value, ast.Constant) or not isinstance(value.value, str):
            return (None, [])
        if self.span(first) != self.span(value) or len(node.body) < 2:
            return None  # parenthesized, or the only statement
        end = self.offset(first.end_lineno, first.end_col_offset)  # type: ignore[arg-type]
        if not _TO_END.match(self.source, end):
            return None  # another statement on its line
        following = node.body[1]
        starts = [following.lineno, *(d.lineno for d in _decorators(following))]
        removed = (self.offset(node.lineno + 1, 0), self.offset(min(starts), 0), "")
        return (self.segment(value), [removed])

    def _static_names(self, node: ast.FunctionDef) -> list[_Edit] | None:
        """The static values named to the compile transform: ``@jax.jit`` becomes
        ``@jax.jit(static_argnames=(...))``, and ``@partial(jax.jit, ...)`` gains the keyword."""
        names = static_names(self.plan, self.site)
        if not names:
            return []
        assert self.site.decorator_index is not None
        decorator = node.decorator_list[self.site.decorator_index]
        if decorator.lineno != decorator.end_lineno:
            return None
        line = self.line(decorator.lineno)
        start = self.column(decorator.lineno, decorator.col_offset)
        end = self.column(decorator.lineno, decorator.end_col_offset)  # type: ignore[arg-type]
        if not _AT.fullmatch(line, 0, start) or not _TO_END.fullmatch(line, end):
            return None  # parenthesized, or more on the line
        keyword = f"static_argnames={string_tuple(names)}"
        at = self.offset(decorator.lineno, 0)
        if not isinstance(decorator, ast.Call):
            return [(at + end, at + end, f"({keyword})")]
        arguments: list[ast.AST] = [*decorator.args, *decorator.keywords]
        if any(k.arg == "static_argnames" for k in decorator.keywords) or any(
            isinstance(a, ast.GeneratorExp) for a in decorator.args
        ):
            return None  # merged with the names given: libcst
        if arguments:
            last = max(self.column(decorator.lineno, a.end_col_offset) for a in arguments)  # type: ignore[attr-defined]
            keyword = f", {keyword}"
        else:
            last = self.column(decorator.lineno, decorator.func.end_col_offset) + 1  # type: ignore[arg-type]
            if line[last - 1 : last] != "(":
                return None
        if last != end - 1:
            return None  # a trailing comma, or spaces before the parenthesis
        return [(at + last, at + last, keyword)]

    def _replaced_reads(self, node: ast.FunctionDef) -> list[_Edit] | None:
        """The attribute and subscript reads the plan replaces by their parameter."""
        wanted = {span: lift.parameter for lift in self.plan.lifts for span in lift.nodes}
        if not wanted:
            return []
        found: dict[Span, ast.AST] = {}
        for inner in ast.walk(node):
            if isinstance(inner, (ast.Attribute, ast.Subscript)):
                found.setdefault(self.span(inner), inner)
        edits: list[_Edit] = []
        for span, parameter in wanted.items():
            read = found.get(span)
            if read is None or read.lineno <= node.lineno:  # type: ignore[attr-defined]
                return None
            start = self.offset(read.lineno, read.col_offset)  # type: ignore[attr-defined]
            end = self.offset(read.end_lineno, read.end_col_offset)  # type: ignore[attr-defined]
            edits.append((start, end, parameter))
        return edits

    def _wrapper(
        self,
        node: ast.FunctionDef,
        name: str,
        signature: str,
        returns: str | None,
        docstring: str | None,
    ) -> str:
        """``def name(signature): return compiled(arguments..., values...)``, after the def."""
        plan, args = self.plan, node.args
        given = [self.spelled(arg) for arg in (*args.posonlyargs, *args.args)]
        if args.vararg is not None:
            given.append(f"*{self.spelled(args.vararg)}")
        keywords = [f"{name}={name}" for name in map(self.spelled, args.kwonlyargs)]
        target = plan.compiled_name
        if plan.method_self is not None:
            given, target = given[1:], f"{plan.method_self}.{plan.compiled_name}"
        values = [f"{parameter}={value}" for parameter, value in lifted_values(plan, self.site)]
        module_level = (
            plan.module_level if self.site.module_level is None else self.site.module_level
        )
        newline = newline_of(self.lines[0])
        outer = indentation(self.line(node.lineno))
        inner = outer + plan.indent
        annotation = f" -> {returns}" if returns is not None else ""
        text = newline * (2 if module_level else 1)
        text += f"{outer}def {name}({signature}){annotation}:{newline}"
        if docstring is not None:
            text += f"{inner}{docstring}{newline}"
        arguments = ", ".join([*given, *keywords, *values])
        return text + f"{inner}return {target}({arguments}){newline}"


def _decorators(node: ast.stmt) -> Iterable[ast.expr]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.decorator_list
    return ()


def _applied(source: str, edits: Sequence[_Edit]) -> str | None:
    """``source`` with the edits made; None when two overlap."""
    ordered = sorted(edits)
    for (_, end, _), (start, _, _) in zip(ordered, ordered[1:], strict=False):
        if start < end:
            return None
    parts: list[str] = []
    at = 0
    for start, end, new in ordered:
        parts.extend((source[at:start], new))
        at = end
    parts.append(source[at:])
    return "".join(parts)
