"""Options that change what the analysis reports, passed explicitly to every run."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .analysis.names import COMPILE_FUNCTIONS


@dataclass(frozen=True)
class Settings:
    compile_functions: frozenset[str] = COMPILE_FUNCTIONS
    select: tuple[str, ...] = ("JC",)
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool = False
    exclude: tuple[str, ...] = field(default=())
    # Visit statements only where a question needs them (see ``analysis.facts``). Visiting
    # every statement first must never change a finding (tests and the benchmark check that).
    lazy: bool = True
    # Compute each fix's text edits (JSON, SARIF, editors); other outputs only need its safety.
    with_edits: bool = True

    @classmethod
    def with_extra_compile_functions(cls, extra: Iterable[str], **kwargs: object) -> Settings:
        names = frozenset(name.strip() for name in extra if name.strip())
        return cls(compile_functions=COMPILE_FUNCTIONS | names, **kwargs)  # type: ignore[arg-type]

    def is_selected(self, code: str) -> bool:
        """Longest matching prefix wins between ``select`` and ``ignore``, as in flake8."""
        selected = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        ignored = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return selected > ignored
