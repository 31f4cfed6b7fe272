"""Fixture discovery, headers, inline expectations and snapshots shared by the tests.

Fixtures live in one folder per rule (``fixtures/JC101/``) and run with only that rule
selected; ``fixtures/combined/`` holds the programs about how rules work together, each naming
its rules. Every fixture opens with a header of ``# key: value`` comment lines:

    # expect: findings          required: ``findings`` or ``none``
    # rules: JC101, JC102       required in combined/, refused in a rule's folder
    # options: --jax-compile-functions=mylib.fast_jit
    # verbatim: why             a program kept as its author wrote it: no inline marks

The header ends at the first line that is not such a comment. Beside the fixture,
``*.findings`` is its findings snapshot and ``*.fixed.py`` its output of ``fix --unsafe-fixes``.

A notebook fixture (``*.ipynb``, in a rule's folder as any fixture) opens its first code cell
with the header; its snapshot is ``*.nbfindings`` (positions in cells, as the command line
prints them: the ``*.findings`` of the Python fixtures are also flake8's answers, and flake8
does not read notebooks) and its fixed output ``*.fixed.ipynb``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from flake8_jax_closure.diagnostics import Finding
from flake8_jax_closure.files import read_source
from flake8_jax_closure.notebook.cells import CellMap
from flake8_jax_closure.notebook.reader import Notebook, read_notebook
from flake8_jax_closure.rules import RULES, hazard_code
from flake8_jax_closure.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
COMBINED = "combined"
RULE_CODES = tuple(rule.code for rule in RULES)

_EXPECT = re.compile(r"#\s*error:\s*(?P<codes>JC\d+(?:\s*,\s*JC\d+)*)")
# A header line: a lowercase key (``fixture-options`` too, to name it as unknown).
_HEADER_LINE = re.compile(r"#\s*(?P<key>[a-z][a-z-]*):\s*(?P<value>.*?)\s*")
_KEYS = ("expect", "rules", "options", "verbatim")


class FixtureHeaderError(ValueError):
    """A fixture whose header is missing, malformed or contradicts its folder."""


@dataclass(frozen=True)
class FixtureHeader:
    expects_findings: bool
    rules: tuple[str, ...]
    compile_functions: tuple[str, ...] = ()
    verbatim: bool = False


def parse_header(source: str, folder: str, where: str) -> FixtureHeader:
    """The header of a fixture in ``folder``; ``where`` names the file in error messages."""
    values: dict[str, str] = {}
    for number, line in enumerate(source.splitlines(), start=1):
        match = _HEADER_LINE.fullmatch(line)
        if not match:
            break
        key, value = match.group("key"), match.group("value")
        if key not in _KEYS:
            raise FixtureHeaderError(
                f"{where}:{number}: unknown key '{key}'; keys: {', '.join(_KEYS)}"
            )
        if key in values:
            raise FixtureHeaderError(f"{where}:{number}: '{key}' given twice")
        if not value:
            raise FixtureHeaderError(f"{where}:{number}: '{key}' has no value")
        values[key] = value
    expect = values.get("expect")
    if expect not in ("findings", "none"):
        raise FixtureHeaderError(
            f"{where}:1: the header must start with '# expect: findings' or '# expect: none'"
            + (f", not {expect!r}" if expect else "")
        )
    return FixtureHeader(
        expects_findings=expect == "findings",
        rules=_rules(values.get("rules"), folder, where),
        compile_functions=_compile_functions(values.get("options", ""), where),
        verbatim="verbatim" in values,
    )


def _rules(listed: str | None, folder: str, where: str) -> tuple[str, ...]:
    if folder != COMBINED:
        if listed is not None:
            raise FixtureHeaderError(
                f"{where}: 'rules' belongs in {COMBINED}/; a fixture in {folder}/ runs {folder}"
            )
        if folder not in RULE_CODES:
            raise FixtureHeaderError(f"{where}: {folder}/ is neither a rule nor {COMBINED}/")
        return (folder,)
    if listed is None:
        raise FixtureHeaderError(f"{where}: a fixture in {COMBINED}/ names its rules ('# rules:')")
    rules = tuple(code.strip() for code in listed.split(","))
    unknown = [code for code in rules if code not in RULE_CODES]
    if unknown or len(rules) < 2:
        raise FixtureHeaderError(
            f"{where}: 'rules' must list two or more of {', '.join(RULE_CODES)}, not {listed!r}"
        )
    return rules


def _compile_functions(options: str, where: str) -> tuple[str, ...]:
    functions: list[str] = []
    for option in shlex.split(options):
        key, _, value = option.partition("=")
        if key != "--jax-compile-functions" or not value:
            raise FixtureHeaderError(f"{where}: unknown option {option!r} in 'options'")
        functions.extend(value.split(","))
    return tuple(functions)


@dataclass(frozen=True)
class Fixture:
    path: Path
    header: FixtureHeader

    @classmethod
    def load(cls, path: Path) -> Fixture:
        where = str(path.relative_to(ROOT))
        source = module_text(path)
        return cls(path, parse_header(source, path.parent.name, where))

    @property
    def is_notebook(self) -> bool:
        return self.path.suffix == ".ipynb"

    @property
    def notebook(self) -> Notebook:
        return read_notebook(read_source(str(self.path)))

    @property
    def name(self) -> str:
        """Folder and stem, ``JC101/seed``: unique, and the test id."""
        return f"{self.path.parent.name}/{self.path.stem}"

    @property
    def source(self) -> str:
        """The program: a notebook's module of code cells (its lines are the module's)."""
        return module_text(self.path)

    @property
    def expects_findings(self) -> bool:
        return self.header.expects_findings

    @property
    def is_verbatim(self) -> bool:
        """A program kept as its author wrote it carries no inline marks."""
        return self.header.verbatim

    @property
    def rules(self) -> tuple[str, ...]:
        return self.header.rules

    @property
    def findings_path(self) -> Path:
        return self.path.with_suffix(".nbfindings" if self.is_notebook else ".findings")

    @property
    def fixed_path(self) -> Path:
        return self.path.with_suffix(".fixed.ipynb" if self.is_notebook else ".fixed.py")

    def settings(self, **overrides: object) -> Settings:
        """Only the fixture's rules selected (each with its API hazards), with the compile
        functions its header adds."""
        overrides.setdefault("select", (*self.rules, *(hazard_code(r) for r in self.rules)))
        return Settings.with_extra_compile_functions(self.header.compile_functions, **overrides)

    def marked(self) -> list[tuple[int, str]]:
        """(line, code) for every inline ``# error: JC101`` mark, in order."""
        marks: list[tuple[int, str]] = []
        for number, line in enumerate(self.source.splitlines(), start=1):
            match = _EXPECT.search(line)
            if match:
                marks.extend((number, code.strip()) for code in match.group("codes").split(","))
        return marks


def fixture_paths() -> list[Path]:
    """Every fixture program, in its folder's order; snapshots (``*.fixed.py``) left out."""
    return [path for path in sorted(FIXTURES.glob("*/*.py")) if not path.name.endswith(".fixed.py")]


def fixtures() -> list[Fixture]:
    return [Fixture.load(path) for path in fixture_paths()]


def module_text(path: Path) -> str:
    if path.suffix == ".ipynb":
        return read_notebook(read_source(str(path))).module
    return path.read_text(encoding="utf-8")


def notebook_fixtures() -> list[Fixture]:
    """Every notebook fixture; fixed outputs (``*.fixed.ipynb``) left out."""
    paths = sorted(FIXTURES.glob("*/*.ipynb"))
    return [Fixture.load(path) for path in paths if not path.name.endswith(".fixed.ipynb")]


def render(findings: list[Finding], cells: CellMap | None = None) -> str:
    """The snapshot: each finding, then its fix's safety or the reason it has none; in a
    notebook (``cells``), positions, messages and reasons name cells."""
    lines = []
    for f in findings:
        if cells is None:
            lines.append(f"{f.line}:{f.column + 1}: {f.text}\n")
        else:
            cell, line = cells.locate(f.line)
            message = cells.message(f.message, has_witness=bool(f.witness))
            lines.append(f"cell {cell}:{line}:{f.column + 1}: {f.code} {message}\n")
        words = (lambda text: text) if cells is None else cells.text
        if f.fix is not None:
            lines.append(f"    fix ({f.fix.applicability.value}): {words(f.fix.description)}\n")
        else:
            lines.append(f"    no fix: {words(str(f.no_fix_reason))}\n")
    return "".join(lines)
