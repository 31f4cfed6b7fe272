"""Arguments the rewrite adds to calls: the lifted values a wrapper or an inline call passes,
``static_argnames`` for static values, and the options a compile transform needs."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from .model import FunctionFix, SitePlan, lifted_values, string_tuple


def keyword(name: str, value: str) -> cst.Arg:
    """``name=value``, without spaces."""
    return cst.Arg(
        keyword=cst.Name(name),
        value=cst.parse_expression(value),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


def lifted_arguments(fix: FunctionFix, site: SitePlan) -> list[cst.Arg]:
    values = lifted_values(fix, site)
    if fix.positional:
        return [cst.Arg(cst.parse_expression(value)) for _, value in values]
    return [keyword(parameter, value) for parameter, value in values]


def with_options(call: cst.Call, options: Sequence[tuple[str, str]]) -> cst.Call:
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
            args.append(keyword(name, value))
    return call.with_changes(args=args)


def static_arg(names: Sequence[str]) -> cst.Arg:
    return keyword("static_argnames", string_tuple(names))


def add_static_argnames(call: cst.Call, names: Sequence[str]) -> cst.Call:
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
    return call.with_changes(args=[*args, static_arg(names)])
