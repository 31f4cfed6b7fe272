"""The fix plan's data: what the rewrite changes for one compiled function, named by position.

The planner (``plan``) fills a ``FunctionFix``; ``rewrite`` applies it with libcst.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..analysis.compiled import Form
from ..analysis.facts.model import Scope
from ..diagnostics import Applicability
from ..positions import Span

# Of the transforms that map keyword arguments, the compile transforms whose fix passes the
# values positionally (see ``mapped``).
POSITIONAL_TRANSFORMS = frozenset({"jax.pmap"})
# Transforms without ``static_argnames``; equinox treats every non-array argument as static.
STATIC_BY_ITSELF = frozenset({"equinox.filter_jit"})


class NoFix(Exception):
    """The function cannot be fixed safely by lifting; the message says why."""


@dataclass
class Lift:
    name: str
    path: tuple[str, ...]
    parameter: str
    value_code: str  # what the wrapper passes, read where the compiled object was made
    nodes: list[Span]  # reads in the compiled function replaced by the parameter
    static: bool = False
    # The declared annotation of the value (``SCALE: float = 2.0``), kept on the parameter.
    annotation: str | None = None


@dataclass
class SitePlan:
    """One place where the compiled object is made."""

    form: Form
    transform: str
    bound_name: str | None
    # A decorator (its index in the function's decorators), or the compile call.
    decorator_index: int | None = None
    compile_call: Span | None = None
    # The call carrying options (``jax.jit(f, static_argnums=...)``, ``partial(jax.jit, ...)``).
    options_call: Span | None = None
    # ``g = jax.jit(f)``: the statement's first line; ``jax.jit(f)(x)``: the outer call.
    statement_line: int | None = None
    inline_call: Span | None = None
    # ``jax.jit(partial(f, 1.0, b=2))``: how many leading positional parameters and which
    # keywords the partial binds; the wrapper takes only the rest.
    partial_positional: int = 0
    partial_keywords: tuple[str, ...] = ()
    # Options the fix sets on the options call (``in_axes`` of ``jax.pmap``), and for a bare
    # ``@jax.pmap``, the spelling of ``functools.partial`` that gives it options.
    options: list[tuple[str, str]] = field(default_factory=list)
    partial_name: str | None = None
    # This site's own compiled object and wrapper, where they are not the function's (a bound
    # method compiled for one object, a compiled object passed on directly).
    compiled_name: str | None = None
    wrapper_name: str | None = None
    module_level: bool | None = None
    # ``jax.jit(obj.method)``: the receiver, through which the wrapper reads the values, and the
    # method's attribute in the compile call, renamed to the method's raw name.
    receiver: str | None = None
    method_attribute: Span | None = None
    # Passed on directly (``return jax.jit(f)``): the first line of the statement before which
    # the compiled object and its wrapper are bound, and the compile call is the wrapper's name.
    passed_statement: int | None = None


@dataclass
class Split:
    """A def split in two (see ``helpers``): ``impl_name`` takes the values as keyword-only
    parameters, and the def's own name becomes a plain wrapper that passes them as they are when
    it runs."""

    function: Span  # the def, from its ``def`` keyword
    impl_name: str
    parameters: list[tuple[str, str]]  # (parameter, what the plain wrapper passes)
    method_self: str | None = None
    module_level: bool = False
    indent: str = "    "
    # Attribute and subscript reads in the def replaced by a parameter.
    replaced: list[tuple[Span, str]] = field(default_factory=list)
    name: str = ""  # the def's own name, kept by its plain wrapper


@dataclass
class Redirect:
    """A call of a split def: to its ``_impl``, passing the values on by keyword."""

    call: Span
    callee: str
    keywords: list[tuple[str, str]]


@dataclass(eq=False)
class FunctionFix:
    """The fix of one compiled function, shared by its findings (one object, compared by
    identity)."""

    name: str  # the compiled function's name, kept by the wrapper
    is_lambda: bool
    function: Span  # the def (from ``def``) or the lambda
    lifts: list[Lift]
    compiled_name: str
    sites: list[SitePlan]
    module_level: bool  # blank lines around the wrapper: two at module level, one inside
    unsafe_reasons: list[str] = field(default_factory=list)
    # Captured values that cannot be lifted, with the reason: (name, attribute) -> reason.
    declined: dict[tuple[str, str | None], str] = field(default_factory=dict)
    # For a compiled method: the name of ``self``, through which the wrapper calls it.
    method_self: str | None = None
    # The statements the fix rewrites, as full-line spans (first line, last line).
    statements: set[tuple[int, int]] = field(default_factory=set)
    # One level of indentation as the function writes it (for the wrapper's body).
    indent: str = "    "
    # Compiled by call (``g = jax.jit(f)``): the def's new name, so that plain calls of the old
    # name cannot reach the function that now needs the lifted values; and the reads of the old
    # name that the compile calls make.
    raw_name: str | None = None
    renamed_reads: list[Span] = field(default_factory=list)
    # Calls of the function by itself, redirected to this name with the lifted values passed on.
    recursive_calls: list[tuple[Span, str]] = field(default_factory=list)
    # ``@register`` above ``@jax.jit``: how many decorators stay on the public wrapper.
    wrapper_decorators: int = 0
    # Why each lifted value is traced or static (the fix's reason when it is safe).
    explanations: list[str] = field(default_factory=list)
    # Lifted values are passed positionally: ``jax.pmap`` maps keyword arguments.
    positional: bool = False
    # The raw function keeps a plain wrapper under its old name (with ``method_self``, a method
    # of the class), for the uses that are not compiled: they read the values when they run.
    plain_wrapper: bool = False
    # Whether the function's ``def`` is at module level (blank lines around its plain wrapper).
    def_module_level: bool = False
    # Helpers the values are passed through (see ``helpers``), and the calls redirected to them.
    splits: list[Split] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    # The fixes of the compiled functions it calls that read the values (see ``splits``): this
    # fix calls their compiled functions, so it applies them too.
    nested: list[FunctionFix] = field(default_factory=list)

    def carried(self) -> list[FunctionFix]:
        """This fix and every fix it carries, directly or not, each once."""
        found: list[FunctionFix] = []
        pending: list[FunctionFix] = [self]
        while pending:
            current = pending.pop(0)
            if all(current is not known for known in found):
                found.append(current)
                pending.extend(current.nested)
        return found

    @property
    def applicability(self) -> Applicability:
        return Applicability.UNSAFE if self.unsafe_reasons else Applicability.SAFE

    @property
    def introduced_names(self) -> tuple[str, ...]:
        """The names the fix writes into the module: the compiled function's new name, the def's
        new name when compiled by call, a site's own compiled object and wrapper, and the
        ``_impl`` of each helper the values are passed through."""
        names = [
            self.compiled_name,
            self.raw_name,
            *(name for site in self.sites for name in (site.compiled_name, site.wrapper_name)),
            *(split.impl_name for split in self.splits),
            *(name for inner in self.nested for name in inner.introduced_names),
        ]
        return tuple(dict.fromkeys(name for name in names if name))

    @property
    def description(self) -> str:
        names = ", ".join(f"'{lift.value_code}'" for lift in self.lifts)
        text = f"pass {names} to the compiled function on every call"
        if self.splits or self.nested:
            helpers = ", ".join(
                [f"'{split.name}()'" for split in self.splits]
                + [f"the compiled '{inner.name}()'" for inner in self.nested]
            )
            text += f", and on to {helpers}"
        if self.unsafe_reasons:
            return f"{text} (unsafe: {'; '.join(dict.fromkeys(self.unsafe_reasons))})"
        return f"{text} ({'; '.join(dict.fromkeys(self.explanations))})"


def static_names(fix: FunctionFix, site: SitePlan) -> list[str]:
    """The lifted values a site marks static."""
    if site.transform in STATIC_BY_ITSELF or fix.positional:
        return []  # equinox decides by itself; pmap's static values go by position
    return [lift.parameter for lift in fix.lifts if lift.static]


def lifted_values(fix: FunctionFix, site: SitePlan) -> list[tuple[str, str]]:
    """(parameter, what the site's wrapper passes): read through the object of a bound method
    instead of its ``self``."""
    values = []
    for lift in fix.lifts:
        value = lift.value_code
        if site.receiver is not None and fix.method_self is not None:
            value = site.receiver + value[len(fix.method_self) :]
        values.append((lift.parameter, value))
    return values


def string_tuple(names: Sequence[str]) -> str:
    """The names as a tuple of strings, as ``static_argnames`` takes them."""
    quoted = ", ".join(f'"{name}"' for name in names)
    return f"({quoted},)" if len(names) == 1 else f"({quoted})"


# What a capture reads: (id(owner), name, None) for a variable, and (id(class), "", attribute)
# for an attribute of the class's objects (see ``splits.variable_of``).
Variable = tuple[int, str, str | None]


@dataclass(frozen=True)
class HelperParameter:
    """A parameter of a split helper: one path of one value, and what its plain wrapper
    passes."""

    variable: Variable
    path: tuple[str, ...]
    name: str
    value: str
    owner: Scope
    root: str  # the variable's name (``self`` of some method, for an attribute)


def with_carried(plans: Sequence[FunctionFix]) -> list[FunctionFix]:
    """``plans`` and the fixes they carry (``FunctionFix.nested``), each once, in order: a fix
    applied without the fixes it carries would call functions that do not exist."""
    return list({id(carried): carried for plan in plans for carried in plan.carried()}.values())
