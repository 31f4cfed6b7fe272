"""Fixture discovery, inline expectations and snapshots shared by the tests."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from flake8_jax_closure.diagnostics import Finding
from flake8_jax_closure.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

_EXPECT = re.compile(r"#\s*error:\s*(?P<codes>JC\d+(?:\s*,\s*JC\d+)*)")
_OPTIONS = re.compile(r"^#\s*fixture-options:(?P<options>.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Fixture:
    path: Path

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")

    @property
    def is_verbatim(self) -> bool:
        """The seed program is kept exactly as the user wrote it: no inline marks there."""
        return self.name == "seed"

    @property
    def findings_path(self) -> Path:
        return self.path.with_suffix(".findings")

    @property
    def fixed_path(self) -> Path:
        return self.path.with_suffix(".fixed.py")

    def settings(self, **overrides: object) -> Settings:
        match = _OPTIONS.search(self.source)
        extra: list[str] = []
        if match:
            for option in shlex.split(match.group("options")):
                key, _, value = option.partition("=")
                if key == "--jax-compile-functions":
                    extra.extend(value.split(","))
        return Settings.with_extra_compile_functions(extra, **overrides)

    def marked(self) -> list[tuple[int, str]]:
        """(line, code) for every inline ``# error: JC101`` mark, in order."""
        marks: list[tuple[int, str]] = []
        for number, line in enumerate(self.source.splitlines(), start=1):
            match = _EXPECT.search(line)
            if match:
                marks.extend((number, code.strip()) for code in match.group("codes").split(","))
        return marks


def fixtures() -> list[Fixture]:
    return [
        Fixture(path)
        for path in sorted(FIXTURES.glob("*.py"))
        if not path.name.endswith(".fixed.py")
    ]


def render(findings: list[Finding]) -> str:
    """The snapshot: each finding, then its fix's safety or the reason it has none."""
    lines = []
    for f in findings:
        lines.append(f"{f.line}:{f.column + 1}: {f.text}\n")
        if f.fix is not None:
            lines.append(f"    fix ({f.fix.applicability.value}): {f.fix.description}\n")
        else:
            lines.append(f"    no fix: {f.no_fix_reason}\n")
    return "".join(lines)
