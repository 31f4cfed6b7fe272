"""The wrappers the rewrite writes: a def under the old name, with the old signature and
docstring, that calls the compiled object (or a split def's ``_impl``) and passes the values as
they are when it runs."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import libcst as cst

from ..analysis.compiled import Form
from .model import FunctionFix, SitePlan, lifted_values
from .parameters import forwarded_parts, left_open, without_first


class WrapperBuilder:
    """Writes wrappers in the style of the module they go into."""

    def __init__(
        self,
        module: cst.Module,
        originals: dict[int, cst.FunctionDef | cst.Lambda],
        made: set[int],
    ) -> None:
        self.module = module
        # The compiled functions of every piece: a wrapper made at ``g = jax.jit(f)`` copies
        # the signature of ``f``, which may sit in another piece.
        self.originals = originals
        # Every wrapper made (by id), to give the statement after it blank lines.
        self.made = made

    def site_wrapper(self, fix: FunctionFix, site: SitePlan, name: str) -> cst.FunctionDef:
        """The wrapper a compile site binds: the compiled function's signature, without what a
        partial binds or the ``self`` of a bound method."""
        function = self.originals[id(fix)]
        params = function.params
        returns = function.returns if isinstance(function, cst.FunctionDef) else None
        docstring = docstring_of(function) if isinstance(function, cst.FunctionDef) else None
        wrapper = self.wrapper(fix, site, name, params, returns, docstring)
        if isinstance(function, cst.FunctionDef):
            # The signature copied may name the function's type parameters (PEP 695).
            wrapper = wrapper.with_changes(type_parameters=function.type_parameters)
            self.made.add(id(wrapper))
        return wrapper

    def wrapper(
        self,
        fix: FunctionFix,
        site: SitePlan,
        name: str,
        params: cst.Parameters,
        returns: cst.Annotation | None,
        docstring: str | None,
    ) -> cst.FunctionDef:
        params = left_open(params, site.partial_positional, site.partial_keywords)
        target = site.compiled_name or fix.compiled_name
        drop_first = False
        if site.receiver is not None:
            # ``jax.jit(obj.method)``: ``self`` is bound; the values are read through ``obj``.
            params = without_first(params)
        elif fix.method_self is not None:
            # A method: the wrapper calls the compiled method through its own ``self``.
            drop_first, target = True, f"{fix.method_self}.{fix.compiled_name}"
        module_level = fix.module_level if site.module_level is None else site.module_level
        return self.call_wrapper(
            name, params, returns, docstring, target, drop_first=drop_first,
            lifted=lifted_values(fix, site), positional=fix.positional, indent=fix.indent,
            module_level=module_level,
        )  # fmt: skip

    def call_wrapper(
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
        given, keywords = forwarded_parts(params)
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
        module = self.module
        config = _parsing_config(module.encoding, module.default_indent, module.default_newline)
        wrapper = cst.parse_statement(source, config=config)
        blank = [cst.EmptyLine(indent=False)] * (2 if module_level else 1)
        assert isinstance(wrapper, cst.FunctionDef)
        # The body's own indentation, not the piece's (a nested piece sits under a header).
        body_block = wrapper.body.with_changes(indent=indent)
        wrapper = wrapper.with_changes(leading_lines=blank, body=body_block)
        self.made.add(id(wrapper))
        return wrapper


@lru_cache(maxsize=None)
def _parsing_config(encoding: str, indent: str, newline: str) -> cst.PartialParserConfig:
    """``Module.config_for_parsing``, made once per style: a fix makes a wrapper per compiled
    function, and each new config parses its Python versions again."""
    return cst.PartialParserConfig(
        encoding=encoding, default_indent=indent, default_newline=newline
    )


def has_wrapper(fix: FunctionFix) -> bool:
    """Whether the fix defines a public wrapper (the inline form passes values at the call)."""
    return any(site.form is not Form.INLINE for site in fix.sites)


def without_docstring(function: cst.FunctionDef) -> cst.FunctionDef:
    """The function without its docstring, which its public wrapper keeps."""
    if docstring_of(function) is None or not isinstance(function.body, cst.IndentedBlock):
        return function
    body = function.body.body
    rest = list(body[1:])
    if rest:
        first = rest[0]
        # The docstring's own comments and blank lines do not carry over.
        rest[0] = first.with_changes(leading_lines=())
    return function.with_changes(body=function.body.with_changes(body=rest))


def docstring_of(function: cst.FunctionDef | cst.Lambda) -> str | None:
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
