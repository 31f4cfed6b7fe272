"""What ``fix`` makes of real findings: the share that gets a fix and a safe fix, by form, and
whether every fixed file parses, re-lints clean of the fixed findings and fixes again to itself.

    python benchmarks/fix_reach.py --checkouts DIR FINDINGS.json [--judgements CSV]

A finding counts as having a safe fix when ``fix`` applies one by itself, and as having a fix
when ``fix --unsafe-fixes`` applies one. ``FINDINGS.json`` is a saved ecosystem run
(``benchmarks/ecosystem.py run --save``): a list of findings with their project and path. The
files named there are checked again with the current analysis, in the checkouts that
``benchmarks/ecosystem.py prepare`` made. With ``--judgements`` (the ecosystem's
``judgements.csv``), a second table counts only the findings judged ``real``.
Prints Markdown tables. Nothing is written to the checkouts.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flake8_jax_closure.diagnostics import Applicability, Finding  # noqa: E402
from flake8_jax_closure.engine import (  # noqa: E402
    FixResult,
    SourceSyntaxError,
    check_source,
    fix_source,
)
from flake8_jax_closure.settings import Settings  # noqa: E402

# How a finding's compiled function reaches the value, by the words of its message and of its
# fix (or of the reason it has none); the first that matches names the form.
FORMS = (
    ("pmap", ("(jax.pmap", "filter_pmap", "pmap's", "@jax.pmap")),
    ("bound method", (", bound method)",)),
    ("through a helper or method", (" through '",)),
    ("passed on directly", ("passed on directly",)),
    ("also used plainly", ("also used without compilation",)),
)


@dataclass
class Outcome:
    project: str
    path: str
    finding: Finding
    form: str
    fix: str  # safe, unsafe, none
    reason: str  # the fix's reason, or why there is none


def form_of(finding: Finding) -> str:
    words = finding.message + " " + (finding.no_fix_reason or "")
    if finding.fix is not None:
        words += " " + finding.fix.description
    for form, markers in FORMS:
        if any(marker in words for marker in markers):
            return form
    return "read directly"


def _key(finding: Finding) -> tuple[str, str, str]:
    """A finding across a fix: the compiled function's name without the fix's affixes."""
    function = re.sub(r"^_+|_(?:compiled|impl)(?:_\d+)?$", "", finding.function)
    return (finding.code, function, finding.name)


def _check_fixed(source: str, fixed: list[tuple[str, str, str]], settings: Settings) -> list[str]:
    """What is wrong with a fixed file: it does not parse, a fixed finding remains, a finding
    appears that was not there, or fixing it again changes it."""
    problems = []
    try:
        compile(source, "<fixed>", "exec", dont_inherit=True)
    except SyntaxError as error:
        return [f"does not parse: {error}"]
    after = [_key(f) for f in check_source(source, settings)]
    remaining = sorted(set(fixed) & set(after))
    if remaining:
        problems.append(f"fixed findings remain: {remaining}")
    again: FixResult = fix_source(source, settings)
    if again.source != source:
        problems.append("fixing again changes it")
    return problems


def measure(checkouts: Path, files: list[tuple[str, str]]) -> tuple[list[Outcome], list[str]]:
    outcomes: list[Outcome] = []
    problems: list[str] = []
    for project, path in files:
        file = checkouts / project.replace("/", "+") / path
        try:
            source = file.read_text(encoding="utf-8")
            findings = check_source(source, Settings())
        except (OSError, UnicodeDecodeError, SourceSyntaxError) as error:
            problems.append(f"{project} {path}: cannot check: {error}")
            continue
        # What ``fix`` applies by itself, and what it offers with ``--unsafe-fixes``: without
        # it, a value whose passing would make a safe fix unsafe is left out of that fix.
        offered = check_source(source, Settings(unsafe_fixes=True))
        for finding, full in zip(findings, offered, strict=True):
            safe = finding.fix is not None and finding.fix.applicability is Applicability.SAFE
            fix = "safe" if safe else "unsafe" if full.fix is not None else "none"
            shown = finding if safe or full.fix is None else full
            reason = shown.fix.description if shown.fix else shown.no_fix_reason or ""
            outcomes.append(Outcome(project, path, finding, form_of(shown), fix, reason))
        for unsafe in (False, True):
            settings = Settings(unsafe_fixes=unsafe)
            result = fix_source(source, settings)
            label = "unsafe" if unsafe else "safe"
            before = {_key(f) for f in check_source(source, settings)}
            problems.extend(
                f"{project} {path} ({label} fixes): {problem}"
                for problem in _check_fixed(
                    result.source, [_key(f) for f in result.fixed], settings
                )  # fmt: skip
            )
            appeared = sorted({_key(f) for f in check_source(result.source, settings)} - before)
            if appeared:
                problems.append(f"{project} {path} ({label} fixes): findings appear: {appeared}")
    return outcomes, problems


def table(outcomes: list[Outcome]) -> str:
    rows: dict[str, Counter[str]] = {}
    for outcome in outcomes:
        row = rows.setdefault(outcome.form, Counter())
        row["findings"] += 1
        row[outcome.fix] += 1
    total: Counter[str] = Counter()
    lines = [
        "| form | findings | a fix | a safe fix | unsafe | none |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]

    def cells(row: Counter[str]) -> str:
        count = row["findings"]
        fixed = row["safe"] + row["unsafe"]
        return (
            f"{count} | {fixed} ({_share(fixed, count)}) | {row['safe']} "
            f"({_share(row['safe'], count)}) | {row['unsafe']} | {row['none']}"
        )

    for form in sorted(rows, key=lambda f: -rows[f]["findings"]):
        total.update(rows[form])
        lines.append(f"| {form} | {cells(rows[form])} |")
    lines.append(f"| **all** | {cells(total)} |")
    return "\n".join(lines)


def _share(part: int, whole: int) -> str:
    return f"{round(100 * part / whole)}%" if whole else "-"


def real_keys(judgements: Path) -> set[tuple[str, str, int, str, str]]:
    with judgements.open(encoding="utf-8", newline="") as handle:
        return {
            (row["project"], row["path"], int(row["line"]), row["code"], row["name"])
            for row in csv.DictReader(handle)
            if row["verdict"] == "real"
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("findings", type=Path, help="a saved ecosystem run (JSON)")
    parser.add_argument("--checkouts", type=Path, required=True)
    parser.add_argument("--judgements", type=Path, help="judgements.csv: also count real ones")
    args = parser.parse_args(argv)
    saved = json.loads(args.findings.read_text(encoding="utf-8"))
    files = sorted({(item["project"], item["path"]) for item in saved})
    outcomes, problems = measure(args.checkouts, files)
    print(f"{len(outcomes)} findings in {len(files)} files\n")
    print(table(outcomes))
    if args.judgements is not None:
        real = real_keys(args.judgements)
        judged = [
            o
            for o in outcomes
            if (o.project, o.path, o.finding.line, o.finding.code, o.finding.name) in real
        ]
        print(f"\nJudged real: {len(judged)} findings\n")
        print(table(judged))
    print("\n| project | path | line | finding | form | fix | reason |")
    print("| --- | --- | ---: | --- | --- | --- | --- |")
    for o in outcomes:
        finding = f"{o.finding.code} {o.finding.function}: {o.finding.name}"
        print(
            f"| {o.project} | {o.path} | {o.finding.line} | {finding} | {o.form} | {o.fix} "
            f"| {o.reason} |"
        )
    print("\nFixed files: " + ("; ".join(problems) if problems else "every one parses, "
          "re-lints clean of the fixed findings and fixes again to itself"))  # fmt: skip
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
