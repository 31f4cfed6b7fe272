"""The common fixes written straight as text from positions, without libcst (as ruff writes its
fixes): a ``def`` compiled by its decorator or by ``name = jax.jit(f)``, whose values become
keyword-only parameters.

    @jax.jit                                   @jax.jit
    def step(x, y):                            def _step_compiled(x, y, *, SCALE):
        return x * SCALE + y          ->           return x * SCALE + y


                                               def step(x, y):
                                                   return _step_compiled(x, y, SCALE=SCALE)

    def step(x, y): ...                        def _step_impl(x, y, *, SCALE): ...
    fast = jax.jit(step)              ->       _step_compiled = jax.jit(_step_impl)


                                               def fast(x, y):
                                                   return _step_compiled(x, y, SCALE=SCALE)

libcst costs a parse, a rendering and a rebuild of every node of a piece, and its import is
most of a short run; this costs one ``ast`` parse of each piece. It writes the bytes the libcst
rewrite writes, and applies only where it can be sure of that: each piece is one statement of
one plan; the signature is on the ``def`` line, without a trailing comma, ``**kwargs`` or
spaces inside its parentheses; a call it adds to is on one line; and nothing but the names, the
parameters, a docstring, the reads the plan replaces and ``static_argnames`` change. Anything
else returns None, and libcst rewrites the plan's pieces.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..analysis.compiled import Form
from .lines import blank_after, indentation, newline_of
from .model import FunctionFix, SitePlan, lifted_values, static_names, string_tuple
from .pieces import Piece
from .text_pieces import TO_END, Edit, PieceText, applied

_DEF = re.compile(r"def[ \t]+(?P<name>[^\W\d]\w*)[ \t]*\(")
_ARROW = re.compile(r"[ \t]*->[ \t]*")
_COLON_TO_END = re.compile(r"[ \t]*:[ \t]*(?:#[^\r\n]*)?(?:\r\n|\r|\n)")
_AT = re.compile(r"[ \t]*@[ \t]*")


def written_as_text(pieces: Sequence[Piece], lines: Sequence[str]) -> dict[int, str]:
    """The new text of the pieces written as text, by id(piece): all of a plan's pieces or
    none of them (libcst's wrapper at ``g = jax.jit(f)`` reads the def in another piece)."""
    own: dict[int, tuple[FunctionFix, list[Piece]]] = {}
    shared: set[int] = set()
    for piece in pieces:
        for plan in piece.plans:
            own.setdefault(id(plan), (plan, []))[1].append(piece)
            if len(piece.plans) > 1:
                shared.add(id(plan))
    written: dict[int, str] = {}
    for key, (plan, plan_pieces) in own.items():
        spans = {(piece.first, piece.last) for piece in plan_pieces}
        if key in shared or spans != plan.statements:
            continue
        texts = _written(plan, sorted(plan_pieces, key=lambda p: p.first), lines)
        if texts is not None:
            written.update(texts)
    return written


def _written(plan: FunctionFix, pieces: list[Piece], lines: Sequence[str]) -> dict[int, str] | None:
    site = _plain_site(plan)
    if site is None:
        return None
    if site.form is Form.DECORATOR and len(pieces) == 1:
        text = _decorated(PieceText(pieces[0], lines), plan, site, lines)
        return None if text is None else {id(pieces[0]): text}
    if site.form is Form.ASSIGNED and len(pieces) == 2:
        return _assigned(pieces, plan, site, lines)
    return None


def _plain_site(plan: FunctionFix) -> SitePlan | None:
    """The one site of a plan of a form written here, with nothing else the fix changes."""
    if (
        plan.is_lambda or plan.nested or plan.splits or plan.redirects or plan.recursive_calls
        or plan.plain_wrapper or plan.positional or plan.wrapper_decorators
        or len(plan.sites) != 1
    ):  # fmt: skip
        return None
    site = plan.sites[0]
    if (
        site.options or site.partial_positional or site.partial_keywords
        or site.receiver is not None or site.compiled_name is not None
        or site.wrapper_name is not None or site.passed_statement is not None
        or site.inline_call is not None or site.method_attribute is not None
    ):  # fmt: skip
        return None
    decorated = (
        site.form is Form.DECORATOR and site.decorator_index is not None
        and site.compile_call is None and site.statement_line is None
        and plan.raw_name is None and not plan.renamed_reads
    )  # fmt: skip
    assigned = (
        site.form is Form.ASSIGNED and site.statement_line is not None
        and site.compile_call is not None and site.bound_name is not None
        and site.options_call in (None, site.compile_call)
        and plan.raw_name is not None and plan.method_self is None
    )  # fmt: skip
    return site if decorated or assigned else None


# -- the two forms ------------------------------------------------------------------------------


def _decorated(
    text: PieceText, plan: FunctionFix, site: SitePlan, lines: Sequence[str]
) -> str | None:
    """``@jax.jit def f``: the def renamed and given the values; its wrapper after it."""
    node = _function(text, plan)
    if node is None or site.decorator_index is None:
        return None
    if site.decorator_index >= len(node.decorator_list):
        return None
    function = _def_edits(text, node, plan, plan.compiled_name)
    static = _static_in_decorator(text, node.decorator_list[site.decorator_index], plan, site)
    if function is None or static is None:
        return None
    new = applied(text.source, [*function.edits, *static])
    if new is None:
        return None
    target, given = plan.compiled_name, function.given
    if plan.method_self is not None:
        given, target = given[1:], f"{plan.method_self}.{plan.compiled_name}"
    outer = indentation(text.line(node.lineno))
    wrapper = _wrapper(function, function.name, target, given, plan, site, outer, text)
    return new + wrapper + blank_after(text.piece.first, text.piece.last, lines)


def _assigned(
    pieces: list[Piece], plan: FunctionFix, site: SitePlan, lines: Sequence[str]
) -> dict[int, str] | None:
    """``g = jax.jit(f)``: ``f`` renamed and given the values; the compiled object bound to
    its own name, and ``g`` a wrapper after it."""
    # The def may come after the assignment (compiled in a function defined above it).
    pieces = sorted(pieces, key=lambda piece: not piece.first <= plan.function[0] <= piece.last)
    definition, assignment = (PieceText(piece, lines) for piece in pieces)
    node = _function(definition, plan)
    if node is None:
        return None
    assert plan.raw_name is not None and site.bound_name is not None
    function = _def_edits(definition, node, plan, plan.raw_name)
    if function is None:
        return None
    renamed = applied(definition.source, function.edits)
    statement = assignment.statement()
    if renamed is None or not isinstance(statement, (ast.Assign, ast.AnnAssign)):
        return None
    site_edits = _site_edits(assignment, statement, plan, site)
    if site_edits is None:
        return None
    bound = applied(assignment.source, site_edits)
    if bound is None:
        return None
    outer = indentation(assignment.line(statement.lineno))
    wrapper = _wrapper(
        function, site.bound_name, plan.compiled_name, function.given, plan, site, outer,
        assignment,
    )  # fmt: skip
    after = blank_after(assignment.piece.first, assignment.piece.last, lines)
    return {id(definition.piece): renamed, id(assignment.piece): bound + wrapper + after}


def _site_edits(
    text: PieceText, statement: ast.Assign | ast.AnnAssign, plan: FunctionFix, site: SitePlan
) -> list[Edit] | None:
    """The assignment's edits: its target the compiled object's name, the def's old name in
    the compile call the new one, and the static values named to the call."""
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    call = statement.value
    if (
        len(targets) != 1 or not isinstance(targets[0], ast.Name) or not text.alone(statement)
        or not isinstance(call, ast.Call) or text.span(call) != site.compile_call
        or text.span(statement)[0] != site.statement_line
    ):  # fmt: skip
        return None
    assert plan.raw_name is not None
    edits: list[Edit] = [(text.start(targets[0]), text.end(targets[0]), plan.compiled_name)]
    names = {text.span(name): name for name in _names(call)}
    for span in plan.renamed_reads:
        read = names.get(span)
        if read is None:
            return None
        edits.append((text.start(read), text.end(read), plan.raw_name))
    static = static_names(plan, site)
    if static:
        added = text.keyword_added(call, "static_argnames", string_tuple(static))
        if added is None:
            return None
        edits.append(added)
    return edits


def _names(node: ast.AST) -> Iterable[ast.Name]:
    return (inner for inner in ast.walk(node) if isinstance(inner, ast.Name))


# -- the def ------------------------------------------------------------------------------------


@dataclass
class _Def:
    """The def's edits, and what its wrapper copies from it."""

    edits: list[Edit]
    name: str  # as the source spells it
    signature: str  # the parameters' text
    returns: str | None
    docstring: str | None
    given: list[str]  # the parameters passed on by position (``*args`` too)
    keywords: list[str]  # and by keyword


def _function(text: PieceText, plan: FunctionFix) -> ast.FunctionDef | None:
    node = text.statement()
    if not isinstance(node, ast.FunctionDef) or getattr(node, "type_params", None):
        return None
    return node if text.span(node)[:2] == plan.function[:2] else None


def _def_edits(
    text: PieceText, node: ast.FunctionDef, plan: FunctionFix, new_name: str
) -> _Def | None:
    """The def renamed, given the values as keyword-only parameters, without its docstring
    (its wrapper keeps it), and with the reads the plan replaces replaced."""
    args = node.args
    if args.kwarg is not None:
        return None
    line = text.line(node.lineno)
    match = _DEF.match(line, text.column(node.lineno, node.col_offset))
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
    returns_node = node.returns
    header = [*parts, *([returns_node] if returns_node else [])]
    if any(text.lines_of(part) != (node.lineno, node.lineno) for part in header):
        return None  # the signature spans lines: libcst keeps its layout
    opened = match.end()
    closed = max((text.end(part) - text.offset(node.lineno, 0) for part in parts), default=opened)
    if line[closed : closed + 1] != ")" or line[opened : opened + 1] in (" ", "\t"):
        return None  # a trailing comma, a ``/`` last, spaces inside the parentheses
    returns = None
    rest = closed + 1
    if returns_node is not None:
        start = text.column(node.lineno, returns_node.col_offset)
        if not _ARROW.fullmatch(line, rest, start):
            return None  # a parenthesized annotation
        rest = text.column(node.lineno, returns_node.end_col_offset)  # type: ignore[arg-type]
        returns = line[start:rest]
    inserted = _parameters(text, args, own, plan)
    docstring = _docstring(text, node)
    replaced = _replaced_reads(text, node, plan)
    if not _COLON_TO_END.fullmatch(line, rest) or None in (inserted, docstring, replaced):
        return None
    assert inserted is not None and docstring is not None and replaced is not None
    at = text.offset(node.lineno, 0)
    edits: list[Edit] = [(at + match.start("name"), at + match.end("name"), new_name)]
    if inserted:
        edits.append((at + closed, at + closed, inserted))
    given = [text.spelled(arg) for arg in (*args.posonlyargs, *args.args)]
    if args.vararg is not None:
        given.append(f"*{text.spelled(args.vararg)}")
    keywords = [f"{name}={name}" for name in map(text.spelled, args.kwonlyargs)]
    doc_text, removal = docstring
    return _Def(
        [*edits, *removal, *replaced], match["name"], line[opened:closed], returns, doc_text,
        given, keywords,
    )  # fmt: skip


def _parameters(
    text: PieceText, args: ast.arguments, own: Sequence[ast.arg], plan: FunctionFix
) -> str | None:
    """What the def's parameters gain: the lifted values, keyword-only."""
    existing = {text.spelled(arg) for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    added = []
    for lift in plan.lifts:
        if lift.parameter in existing:
            continue
        annotation = lift.annotation
        if annotation is not None and (
            annotation != annotation.strip() or any(c in annotation for c in "\r\n")
        ):
            return None
        added.append(lift.parameter if annotation is None else f"{lift.parameter}: {annotation}")
    if not added:
        return ""
    star = "" if args.vararg is not None or args.kwonlyargs else "*, "
    return (", " if own else "") + star + ", ".join(added)


def _docstring(text: PieceText, node: ast.FunctionDef) -> tuple[str | None, list[Edit]] | None:
    """The docstring's text, and the edit that removes it with the lines up to the next
    statement. None where libcst might see it otherwise, or the body starts on the def line."""
    first = node.body[0]
    if first.lineno <= node.lineno:
        return None
    if not isinstance(first, ast.Expr):
        return (None, [])
    value = first.value
    if isinstance(value, ast.JoinedStr) or (
        isinstance(value, ast.Constant) and isinstance(value.value, bytes)
    ):
        return None  # maybe a docstring to libcst (concatenated, or bytes), not to ``ast``
    if not isinstance(value, ast.Constant) or not isinstance(value.value, str):
        return (None, [])
    if text.span(first) != text.span(value) or len(node.body) < 2:
        return None  # parenthesized, or the only statement
    if not TO_END.match(text.source, text.end(first)):
        return None  # another statement on its line
    following = node.body[1]
    starts = [following.lineno, *(d.lineno for d in _decorators(following))]
    removed = (text.offset(node.lineno + 1, 0), text.offset(min(starts), 0), "")
    return (text.segment(value), [removed])


def _decorators(node: ast.stmt) -> Iterable[ast.expr]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.decorator_list
    return ()


def _replaced_reads(text: PieceText, node: ast.FunctionDef, plan: FunctionFix) -> list[Edit] | None:
    """The attribute and subscript reads the plan replaces by their parameter."""
    wanted = {span: lift.parameter for lift in plan.lifts for span in lift.nodes}
    if not wanted:
        return []
    found: dict[tuple[int, int, int, int], ast.AST] = {}
    for inner in ast.walk(node):
        if isinstance(inner, (ast.Attribute, ast.Subscript)):
            found.setdefault(text.span(inner), inner)
    edits: list[Edit] = []
    for span, parameter in wanted.items():
        read = found.get(span)
        if read is None or read.lineno <= node.lineno:  # type: ignore[attr-defined]
            return None
        edits.append((text.start(read), text.end(read), parameter))
    return edits


def _static_in_decorator(
    text: PieceText, decorator: ast.expr, plan: FunctionFix, site: SitePlan
) -> list[Edit] | None:
    """The static values named to the decorator: ``@jax.jit`` becomes
    ``@jax.jit(static_argnames=(...))``, and ``@partial(jax.jit, ...)`` gains the keyword."""
    names = static_names(plan, site)
    if not names:
        return []
    if decorator.lineno != decorator.end_lineno:
        return None
    line = text.line(decorator.lineno)
    start = text.column(decorator.lineno, decorator.col_offset)
    if not _AT.fullmatch(line, 0, start) or not TO_END.match(text.source, text.end(decorator)):
        return None  # parenthesized, or more on the line
    if not isinstance(decorator, ast.Call):
        keyword = f"(static_argnames={string_tuple(names)})"
        return [(text.end(decorator), text.end(decorator), keyword)]
    added = text.keyword_added(decorator, "static_argnames", string_tuple(names))
    return None if added is None else [added]


# -- the wrapper --------------------------------------------------------------------------------


def _wrapper(
    function: _Def,
    name: str,
    target: str,
    given: Sequence[str],
    plan: FunctionFix,
    site: SitePlan,
    outer: str,
    text: PieceText,
) -> str:
    """``def name(signature): return target(arguments..., values...)``, after the statement
    that binds the compiled object."""
    values = [f"{parameter}={value}" for parameter, value in lifted_values(plan, site)]
    module_level = plan.module_level if site.module_level is None else site.module_level
    newline = newline_of(text.lines[0])
    inner = outer + plan.indent
    annotation = f" -> {function.returns}" if function.returns is not None else ""
    wrapper = newline * (2 if module_level else 1)
    wrapper += f"{outer}def {name}({function.signature}){annotation}:{newline}"
    if function.docstring is not None:
        wrapper += f"{inner}{function.docstring}{newline}"
    arguments = ", ".join([*given, *function.keywords, *values])
    return wrapper + f"{inner}return {target}({arguments}){newline}"
