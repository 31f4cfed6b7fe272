"""One module per rule code. Each exports ``CODE``, ``SUMMARY`` and ``check(capture)``."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..diagnostics import Finding
from . import (
    jc101_closure_rebound,
    jc102_global_rebound,
    jc103_mutated_in_place,
    jc104_self_attribute,
)

if TYPE_CHECKING:
    from ..analysis.captures import StaleCapture


@dataclass(frozen=True)
class Rule:
    code: str
    summary: str
    check: Callable[[StaleCapture], Finding | None]


_MODULES = (
    jc101_closure_rebound,
    jc102_global_rebound,
    jc103_mutated_in_place,
    jc104_self_attribute,
)
RULES: tuple[Rule, ...] = tuple(
    Rule(module.CODE, module.SUMMARY, module.check) for module in _MODULES
)

ANALYSIS_FAILED = "JC900"
CODES: tuple[str, ...] = (*(rule.code for rule in RULES), ANALYSIS_FAILED)


def rule_documentation(code: str) -> str | None:
    """The rule's documentation, from its module: what it does, why it is bad, an example,
    what to use instead, and the safety of its fix."""
    for module in _MODULES:
        if module.CODE == code:
            doc = inspect.getdoc(module) or ""
            title, _, body = doc.partition("\n")
            return f"{title}\n\n{body.strip()}\n"
    return None
