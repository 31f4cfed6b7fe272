"""Pieces every rule's message uses."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..diagnostics import Finding

if TYPE_CHECKING:
    from ..analysis.captures import StaleCapture
    from ..analysis.facts.model import Mutation, Scope, Site
    from ..analysis.timing import StalePath
    from ..diagnostics import WitnessStep

STALE = "compiled calls keep the value from the first trace"
# An API hazard's code: the rule's, in the hundreds above (JC102 -> JC202), off by default.
HAZARD_OFFSET = 100


def hazard_code(code: str) -> str:
    """The code of a rule's API hazards: ``JC202`` for ``JC102``."""
    return f"JC{int(code[2:]) + HAZARD_OFFSET}"


def where(site: Site) -> str:
    function = site.scope.enclosing_function_name()
    return f"in '{function}'" if function else "at module level"


def changed(site: Mutation | None, elsewhere: WitnessStep | None, verb: str = "changed") -> str:
    """``changed at line 24 in 'set_lr' (attribute assigned)``; for a change another file of
    the project makes, ``changed in train.py at line 10 (attribute assigned)``, or ``changed
    in train.py at line 12 by 'set_lr()'``."""
    if site is not None:
        return f"{verb} at line {site.line} {where(site)} ({site.description})"
    assert elsewhere is not None
    how = "(attribute assigned)" if elsewhere.via is None else f"by '{elsewhere.via}()'"
    return f"{verb} in {elsewhere.path} at line {elsewhere.line} {how}"


def finding(capture: StaleCapture, code: str, message: str) -> Finding:
    """The finding at the first read (columns in UTF-8 bytes, as ``ast`` counts them; the
    engine converts them to characters)."""
    read = capture.first_read
    (line, column), (end_line, end_column) = read.start, read.end
    change = capture.rebinding or capture.mutation
    path = capture.path
    if path.witnessed:
        witness = path.steps
        message += ": " + ", ".join(step.clause for step in witness)
        entry_points: tuple[str, ...] = ()
    else:
        code, witness = hazard_code(code), ()
        entry_points = _entry_points(path)
        message += f"; {_hazard(path)}"
    return Finding(
        code=code,
        message=message,
        line=line,
        column=column,
        end_line=end_line,
        end_column=end_column,
        function=capture.compiled.name,
        name=capture.name if capture.attribute is None else f"{capture.name}.{capture.attribute}",
        change_line=change.line if change is not None else None,
        witness=witness,
        entry_points=entry_points,
    )


def _entry_points(path: StalePath) -> tuple[str, ...]:
    """The functions through which outside code can order a change between two calls."""
    return tuple(dict.fromkeys(s.qualified_name() for s in (*path.changers, *path.callers)))


def _hazard(path: StalePath) -> str:
    """What an API hazard depends on: the entry points outside code would call, or where the
    object is handed to code the project does not show."""
    changers = _names(path.changers)
    callers = _names(path.callers)
    outside = "API hazard: stale if a caller outside the project runs"
    if path.reshaped is not None:
        line = path.reshaped.lineno  # type: ignore[attr-defined]
        return (
            f"{outside} {changers} with values that give two passes of the loop at line {line} "
            "arguments of the same shapes"
        )
    if path.inside:
        # Nothing in the project runs the function the path is in; one run takes it.
        return f"API hazard: nothing in the project runs {changers}; a run of it is stale: " + (
            ", ".join(step.clause for step in path.inside)
        )
    if changers and changers == callers:
        return f"{outside} {changers} more than once"
    if changers and callers:
        return f"{outside} {changers} between calls of {callers}"
    if changers:
        return f"{outside} {changers} between compiled calls"
    if callers:
        return f"{outside} {callers} before and after the change"
    lines = sorted({event.at[0] for event in path.handed_on})
    where = f" at line {lines[0]}" if lines else ""
    return f"API hazard: stale if the code it is handed to{where} calls it around the change"


def _names(scopes: tuple[Scope, ...]) -> str:
    shown = ", ".join(f"'{scope.qualified_name()}()'" for scope in scopes[:3])
    return shown + (f" and {len(scopes) - 3} more" if len(scopes) > 3 else "")


def subject(capture: StaleCapture) -> str:
    return f"'{capture.compiled.name}' ({capture.compiled.transform})"


def through(capture: StaleCapture) -> str:
    """`` through 'l2()'`` when the value is read inside a plain function the compiled one
    calls."""
    return f" through '{capture.read_through}'" if capture.read_through else ""


def shown(capture: StaleCapture) -> str:
    """The name as read: ``Defaults.EPS`` for an attribute of a class or a module, or of an
    object a method changes through ``self``; else the name."""
    paths = {read.path for read in capture.reads}
    # Changed by a method of the object's class (``self.lr = ...``): the attribute it changes.
    through_self = capture.mutation is not None and capture.mutation.name != capture.name
    if (capture.class_attribute or through_self) and len(paths) == 1:
        (path,) = paths
        return capture.name + "".join(path)
    return capture.name
