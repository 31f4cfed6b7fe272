"""The compiled function's signature under the fix: the defaults its wrapper passes on (which
JAX then traces), and under ``jax.pmap`` the positions the values are passed at (see
``mapped``)."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from ..analysis.compiled import CompiledFunction, Form
from ..analysis.facts.queries import Facts
from ..positions import SourceLines
from .lifts import Lifter
from .mapped import CannotMap, in_axes, partial_spelling, static_argnums
from .model import STATIC_BY_ITSELF, FunctionFix, NoFix, SitePlan
from .values import Kind, decide


def check_defaults(
    fix: FunctionFix,
    sites: list[CompiledFunction],
    facts: Facts,
    source: SourceLines,
    lifter: Lifter,
) -> None:
    """A wrapper passes every parameter on, defaults included, so JAX traces a default the
    compiled function never got as an argument: fine for numbers used as numbers, arrays and
    None; not for a function, a string, or a number JAX needs as a Python value."""
    if all(plan.form is Form.INLINE for plan in fix.sites):
        return  # the call passes only the values
    if any(site.transform in STATIC_BY_ITSELF for site in sites):
        return  # equinox makes every argument that is not an array static
    function = sites[0].function
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaulted = list(
        zip(
            positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True
        )
    )
    defaulted += [
        (argument, default)
        for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if default is not None
    ]
    if not defaulted:
        return
    static = _static_parameters(sites, [argument.arg for argument in positional])
    scope = facts.scope_of(function)
    assert scope.parent is not None
    for argument, default in defaulted:
        name = argument.arg
        kind = lifter.judge.kind(default, scope.parent, 0)
        if name in static or kind is Kind.NONE:
            continue
        reads = facts.reads_of(scope, name)
        decision = decide(
            name,
            {kind},
            lifter.judge.uses(r.node for r in reads if isinstance(r.node, ast.expr)),
            any(lifter.needs_concrete(r) for r in reads),
        )
        if decision.static or decision.unsafe is not None:
            fix.unsafe_reasons.append(
                f"the wrapper passes the default of '{name}' "
                f"({source.segment(default)}) as an argument, and JAX traces it; the "
                "compiled function may need it as a Python value"
            )


def plan_mapped(
    fix: FunctionFix, site: CompiledFunction, plan: SitePlan, facts: Facts, source: SourceLines
) -> None:
    """``jax.pmap``: the values are passed positionally, after the function's own
    parameters (see ``mapped``)."""
    function = site.function
    arguments = function.args
    if arguments.vararg is not None:
        raise NoFix(
            f"'{fix.name}' takes *{arguments.vararg.arg}; values passed positionally to "
            "jax.pmap cannot follow it"
        )
    if arguments.defaults:
        raise NoFix(
            f"'{fix.name}' has parameters with defaults; its wrapper would pass them to "
            "jax.pmap, which maps them over their leading axis"
        )
    if plan.partial_positional or plan.partial_keywords:
        raise NoFix("a partial under jax.pmap: the positions of the values cannot be known")
    if fix.recursive_calls:
        raise NoFix(f"'{fix.name}' calls itself under jax.pmap")
    positional = len(arguments.posonlyargs) + len(arguments.args)
    if plan.receiver is not None:
        positional -= 1  # ``self`` is bound in ``obj.method``
    options_call = site.transform_call
    static = [positional + i for i, lift in enumerate(fix.lifts) if lift.static]
    try:
        plan.options.append(("in_axes", in_axes(options_call, source, positional, len(fix.lifts))))
        if static:
            added = static_argnums(options_call, source, static)
            plan.options.append(("static_broadcasted_argnums", added))
    except CannotMap as reason:
        raise NoFix(str(reason)) from None
    if site.form is Form.DECORATOR and options_call is None:
        plan.partial_name = partial_spelling(facts)
        if plan.partial_name is None:
            raise NoFix(
                "a bare '@jax.pmap' takes options only through functools.partial, which "
                "the module does not import"
            )
    if site.form is Form.INLINE:
        outer = facts.parent(site.site)
        assert isinstance(outer, ast.Call)
        given = [a for a in outer.args if not isinstance(a, ast.Starred)]
        if outer.keywords or len(given) != len(outer.args) or len(given) != positional:
            raise NoFix(
                "the compiled object is called with keyword or unpacked arguments; the "
                "values cannot be passed after them"
            )


def _static_parameters(sites: Sequence[CompiledFunction], positional: list[str]) -> set[str]:
    """The parameters every compile site declares static (``static_argnames``, or
    ``static_argnums`` by position), as written out."""
    found: set[str] | None = None
    for site in sites:
        names: set[str] = set()
        call = site.transform_call
        for keyword in call.keywords if call is not None else ():
            value = keyword.value
            elements = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
            constants = [e.value for e in elements if isinstance(e, ast.Constant)]
            if keyword.arg == "static_argnames":
                names.update(c for c in constants if isinstance(c, str))
            elif keyword.arg == "static_argnums":
                names.update(
                    positional[c] for c in constants
                    if type(c) is int and -len(positional) <= c < len(positional)
                )  # fmt: skip
        found = names if found is None else found & names
    return found or set()
