"""Parameter lists the rewrite builds from a function's own: with the lifted values added,
without what a ``partial`` or a bound method binds, and as the arguments a wrapper passes on."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from .model import FunctionFix


def left_open(params: cst.Parameters, positional: int, keywords: Sequence[str]) -> cst.Parameters:
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


def with_lifted(params: cst.Parameters, fix: FunctionFix) -> cst.Parameters:
    """The compiled function's parameters with the lifted values: keyword-only, or after its
    own positional parameters for a transform that maps keyword arguments."""
    lifted = [(lift.parameter, lift.annotation) for lift in fix.lifts]
    if fix.positional:
        return _with_positional(params, lifted)
    return with_keyword_only(params, lifted)


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


def with_keyword_only(
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


def without_first(params: cst.Parameters) -> cst.Parameters:
    """The parameters of a method bound to its object: without ``self``."""
    if params.posonly_params:
        rest = params.posonly_params[1:]
        return params.with_changes(
            posonly_params=rest,
            posonly_ind=params.posonly_ind if rest else cst.MaybeSentinel.DEFAULT,
        )
    return params.with_changes(params=params.params[1:])


def forwarded_parts(params: cst.Parameters) -> tuple[list[str], list[str]]:
    """The wrapper's parameters as arguments: those given by position (``*args`` included), and
    those given by keyword (``**kwargs`` included)."""
    given = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        given.append(f"*{params.star_arg.name.value}")
    keywords = [f"{p.name.value}={p.name.value}" for p in params.kwonly_params]
    if params.star_kwarg is not None:
        keywords.append(f"**{params.star_kwarg.name.value}")
    return given, keywords
