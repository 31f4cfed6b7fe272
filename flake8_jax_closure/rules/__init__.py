"""One module (or package) per rule code. Each exports:

- ``CODE`` and ``SUMMARY``; the docstring is the rule's documentation;
- ``detect(module, owners)``: the stale captures it looks for in a module's facts. Rules that share
  a detection name the same function, which runs once for all of them;
- ``OWNERS``: where the variables it reports live (globals, variables of enclosing functions), so
  that a shared detection skips what no selected rule reports;
- ``check(capture)``: the finding, when the capture is this rule's;
- ``RUNTIME_ADVICE``: what the runtime guard advises when it sees such a value change.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..analysis.timing import in_running_code
from ..diagnostics import Finding
from . import (
    jc101_closure_rebound,
    jc102_global_rebound,
    jc103_mutated_in_place,
    jc104_self_attribute,
    jc900_analysis_failed,
)
from ._common import hazard_code

if TYPE_CHECKING:
    from ..analysis.captures import Owner, StaleCapture
    from ..analysis.facts.model import Scope
    from ..analysis.pipeline import ModuleFacts
    from ..analysis.project import ProjectView


@dataclass(frozen=True)
class Rule:
    code: str
    summary: str
    detect: Callable[[ModuleFacts, frozenset[Owner]], Iterable[StaleCapture]]
    owners: frozenset[Owner]
    check: Callable[[StaleCapture], Finding | None]


_MODULES = (
    jc101_closure_rebound,
    jc102_global_rebound,
    jc103_mutated_in_place,
    jc104_self_attribute,
)
RULES: tuple[Rule, ...] = tuple(
    Rule(module.CODE, module.SUMMARY, module.detect, module.OWNERS, module.check)
    for module in _MODULES
)

ANALYSIS_FAILED = jc900_analysis_failed.CODE
# Each rule's API hazards, off by default: the code, and the rule's code.
HAZARDS: dict[str, str] = {hazard_code(rule.code): rule.code for rule in RULES}
CODES: tuple[str, ...] = (*(rule.code for rule in RULES), *HAZARDS, ANALYSIS_FAILED)
# Every code the linter reports, with its documentation (JC900 is no rule of the analysis).
_DOCUMENTED = (*_MODULES, jc900_analysis_failed)
_OWN_SUMMARIES = {module.CODE: module.SUMMARY for module in _DOCUMENTED}
# Short names, as ruff gives its rules: the module's name without the code.
_OWN_NAMES = {
    module.CODE: module.__name__.rsplit(".", 1)[1].split("_", 1)[1].replace("_", "-")
    for module in _DOCUMENTED
}
# In the order of CODES; an API hazard is named and summarised after its rule.
SUMMARIES: dict[str, str] = {
    code: _OWN_SUMMARIES.get(code)
    or f"API hazard of {HAZARDS[code]}: {_OWN_SUMMARIES[HAZARDS[code]]}, by outside callers only"
    for code in CODES
}
NAMES: dict[str, str] = {
    code: _OWN_NAMES.get(code) or f"{_OWN_NAMES[HAZARDS[code]]}-api-hazard" for code in CODES
}


def selected_findings(
    module: ModuleFacts,
    is_selected: Callable[[str], bool],
    project: ProjectView | None = None,
) -> list[tuple[StaleCapture, Finding]]:
    """The findings of the selected rules, each with its capture, in the order of the rules'
    detections. A detection runs once, for the rules that share it, and only when one of them is
    selected; a capture belongs to the first of those rules that claims it, and is kept when that
    rule is selected."""
    found: list[tuple[StaleCapture, Finding]] = []
    failing = module.graph.failing

    def called_elsewhere(function: Scope) -> bool:
        return project is not None and project.called_elsewhere(function.qualified_name())

    for detect in dict.fromkeys(rule.detect for rule in RULES):
        sharing = [rule for rule in RULES if rule.detect is detect]
        owners = frozenset().union(
            *(r.owners for r in sharing if is_selected(r.code) or is_selected(hazard_code(r.code)))
        )
        if not owners:
            continue
        for capture in detect(module, owners):
            if failing is not None and failing.trace_never_finishes(capture.compiled):
                continue  # every trace raises: no compiled call returns, nothing is cached
            # A witness in a function nothing shows running is an API hazard of that function.
            path = in_running_code(module.graph, capture.path, called_elsewhere)
            if path is not capture.path:
                capture = dataclasses.replace(capture, path=path)
            if project is not None and not capture.path.witnessed:
                # Another module of the project may take the path outside callers could.
                witnessed = project.promoted(capture.path)
                if witnessed is not None:
                    capture = dataclasses.replace(capture, path=witnessed)
            for rule in sharing:
                finding = rule.check(capture)
                if finding is not None:
                    if is_selected(finding.code):
                        found.append((capture, finding))
                    break
    return found


def runtime_advice(code: str, name: str) -> str:
    """What to do about ``name`` when the guard sees it change under a compiled function
    (JC103's advice for a value no rule names)."""
    module = next((m for m in _MODULES if m.CODE == code), jc103_mutated_in_place)
    return str(module.RUNTIME_ADVICE).format(name=name)


def rule_documentation(code: str) -> str | None:
    """The rule's documentation, from its module: what it does, why it is bad, an example,
    what to use instead, and the safety of its fix."""
    if code in HAZARDS:
        return _hazard_documentation(code, HAZARDS[code])
    for module in _DOCUMENTED:
        if module.CODE == code:
            doc = inspect.getdoc(module) or ""
            title, _, body = doc.partition("\n")
            return f"{title}\n\n{body.strip()}\n"
    return None


def _hazard_documentation(code: str, rule: str) -> str:
    """An API hazard's page: the rule's, with what makes it a hazard rather than a finding."""
    example = (rule_documentation(rule) or "").split("\nExample\n", 1)[1].split("\nUse instead")[0]
    return f"""{code}: API hazard of {rule}, off by default

What it does
    Reports what {rule} reports when the project's own code shows no stale path: no compiled
    call that traces, then the change, then a later compiled call of the same object, in code
    that runs. Only a caller outside the project can make it stale, through the entry points
    the finding names (a public setter and the compiled function, called in that order), or
    code the compiled object is handed to. It also reports a stale path the code shows
    inside a function that nothing in the project runs (a ``main()`` no code calls, a
    library's ``train()``): one run of it by an outside caller is stale, and the message
    shows that path (``a run of it is stale: traced at line 24, ...``); and a loop whose
    passes slice the compiled call's arguments to lengths of their own from what the
    function is given, which an outside caller may give two passes alike (``with values that
    give two passes of the loop at line 21 arguments of the same shapes``). Off by default: turn
    it on with ``--extend-select JC2`` (or ``extend-select = ["JC2"]`` in the configuration),
    as a library whose users call those entry points may want.

Why is this bad
    A caller that runs the entry points in that order gets compiled results computed with the
    old value, as {rule} explains; nothing in the project does so today.

Example
{example.rstrip()}

Use instead
    As for {rule}: pass the value as an argument of the compiled function.

Fix safety
    As for {rule}: the same fix, with the same safety.
"""


_SECTIONS = ("What it does", "Why is this bad", "Example", "Use instead", "Fix safety")


def rule_markdown(code: str) -> str | None:
    """The rule's page (``docs/rules/<code>.md``), from the same docstring: the sections as
    headings, the example as a Python block."""
    text = rule_documentation(code)
    if text is None:
        return None
    text = text.replace("``", "`")  # reStructuredText literals, as Markdown writes them
    title, _, body = text.partition("\n")
    out = [f"# {title}\n"]
    section: str | None = None
    block: list[str] = []

    def flush() -> None:
        if section is None:
            return
        lines = [line[4:] if line.startswith("    ") else line for line in block]
        content = "\n".join(lines).strip("\n")
        out.append(f"\n## {section}\n\n")
        if section == "Example":
            out.append(f"```python\n{content}\n```\n")
        else:
            out.append(" ".join(content.split()) + "\n")

    for line in body.splitlines():
        if line in _SECTIONS:
            flush()
            section, block = line, []
        else:
            block.append(line)
    flush()
    return "".join(out)
