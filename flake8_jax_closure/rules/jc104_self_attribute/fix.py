"""What JC104's fix does and refuses, beyond the fix every rule shares (``fix.plan``), for
compiled code that holds ``self`` and reads its attributes: a method compiled for one object
(``jax.jit(obj.method)``), a method compiled with ``self`` static, an attribute read through a
property.

A bound method is split in two, ``_<method>_impl`` taking the values and the method itself
passing them (for every other use of it); each compile call compiles the ``_impl`` of its object
behind a wrapper of its own, which reads the values through that object.
"""

from __future__ import annotations

import ast

from ...analysis.captures import StaleCapture
from ...analysis.compiled import CompiledFunction, Form
from ...analysis.facts.model import Scope
from ...analysis.facts.queries import Facts
from ...analysis.names import last_name
from ...analysis.receiver import method_self_name
from ...fix.model import FunctionFix, NoFix, SitePlan
from ...fix.names import Names
from ...positions import SourceLines

_PROPERTIES = frozenset({"property", "cached_property"})


def plan_bound_method(
    fix: FunctionFix, first: CompiledFunction, facts: Facts, names: Names
) -> None:
    """``jax.jit(obj.method)``: the method's ``_impl`` name; its plain wrapper keeps the method's
    own."""
    method = first.function
    if not isinstance(method, ast.FunctionDef):
        raise NoFix("async functions cannot be compiled")
    if method.decorator_list:
        raise NoFix(
            f"the method '{method.name}' is decorated; the values cannot be passed through "
            "its decorators"
        )
    cls = facts.scope_of(method).parent
    assert cls is not None
    fix.method_self = method_self_name(first.scope)
    fix.raw_name = names.fresh(f"_{method.name.strip('_')}_impl", cls)
    fix.plain_wrapper = True
    fix.def_module_level = False


def locate_bound_method(
    fix: FunctionFix,
    site: CompiledFunction,
    plan: SitePlan,
    facts: Facts,
    source: SourceLines,
    names: Names,
) -> None:
    """``jax.jit(obj.method)``: the object, through which this site's wrapper reads the
    values, and its own compiled object (another object's is another)."""
    assert isinstance(site.site, ast.Call)
    target = site.site.args[0]
    assert isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
    receiver = target.value.id
    plan.receiver = receiver
    plan.method_attribute = source.span(target)
    if site.bound_name is not None:
        wanted = f"_{site.bound_name.strip('_')}_compiled"
        plan.compiled_name = names.fresh(wanted, site.site_scope)
    if site.form is Form.INLINE:
        return
    owner = facts.resolve(site.site_scope, receiver)
    if len(facts.bindings_of(owner, receiver)) > 1:
        fix.unsafe_reasons.append(
            f"'{receiver}' is bound more than once; the wrapper reads the values through the "
            f"object '{receiver}' names when it is called, not the one compiled"
        )


def holds_self(capture: StaleCapture) -> bool:
    """Whether the compiled code holds ``self`` as a static argument or a bound method: its
    wrapper reads its own ``self``, or the object compiled for, not a name at the compile site."""
    return capture.static_self or capture.bound_method


def check_attribute_capture(capture: StaleCapture, facts: Facts) -> None:
    """A compiled function that changes the attribute it reads would not see its own change in
    a value passed in."""
    if capture.attribute is not None:
        compiled = capture.compiled.scope
        for mutation in facts.attribute_changes(capture.attribute):
            if mutation.scope.is_within(compiled) and mutation.name == capture.name:
                raise NoFix(
                    f"'{capture.compiled.name}' changes '{capture.name}.{capture.attribute}' "
                    "itself; a value passed in would not see that change"
                )


def property_read_refusal(helper: Scope, shown: str) -> str | None:
    """Why a value read through the property ``helper`` cannot be passed (a property takes no
    arguments), or None when ``helper`` is no property."""
    decorators: list[ast.expr] = getattr(helper.node, "decorator_list", [])
    if not any(last_name(d) in _PROPERTIES for d in decorators):
        return None
    return (
        f"'{shown}' is read through the property '{helper.name}'; pass it "
        "explicitly, register the class as a pytree, or move the compiled "
        "function out of the class"
    )
