"""Fix outcomes by form: what ``fix`` and ``verify`` make of every runnable stale program.

    python benchmarks/fix_outcomes.py [--verify]

The programs are the runnable fixtures (``fixtures/*/*.py`` with a ``__main__`` block) and the
generated programs of ``tests/program_generator.py``. Each runs compiled and under
``jax.disable_jit()``, before and after ``fix`` (safe fixes only, then with ``--unsafe-fixes``):
a program is *consistent* when its compiled output equals its eager output and the eager output
is the original's. With ``--verify``, ``flake8-jax-closure verify`` runs on each fixture too
(the generated programs are many; the table counts them by form). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from program_generator import programs  # noqa: E402

from flake8_jax_closure.engine import check_source, fix_source  # noqa: E402
from flake8_jax_closure.settings import Settings  # noqa: E402

SKIPPED = ("seed_solution2", "seed_solution3", "verify_")  # failing on purpose, see their headers


def runnable_fixtures() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted((ROOT / "fixtures").glob("*/*.py")):
        if path.name.endswith(".fixed.py") or path.stem.startswith(SKIPPED):
            continue
        source = path.read_text(encoding="utf-8")
        if "__name__ ==" in source and check_source(source, Settings()):
            label = f"{path.parent.name}_{path.stem}"  # JC102_runnable_learning_rate
            found.append((f"fixture {label}", label, source))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verify", action="store_true", help="also run verify on each fixture")
    args = parser.parse_args()
    cases = runnable_fixtures() + [(f"generated {p.form}", p.label, p.source) for p in programs()]
    # verify runs every fixture and, of the generated programs, one per form and scope.
    verified = {label for form, label, _ in cases if form.startswith("fixture")}
    verified |= {p.label for p in programs() if p.kind == "float" and p.change == "setter"}
    with tempfile.TemporaryDirectory() as folder:
        paths: dict[str, dict[str, Path]] = {}
        for _, label, source in cases:
            variants = {
                "original": source,
                "safe": fix_source(source, Settings()).source,
                "unsafe": fix_source(source, Settings(unsafe_fixes=True)).source,
            }
            paths[label] = {}
            for variant, text in variants.items():
                path = Path(folder) / f"{label.replace('-', '_')}_{variant}.py"
                path.write_text(text, encoding="utf-8")
                paths[label][variant] = path
        listing = Path(folder) / "paths.json"
        listing.write_text(json.dumps([str(p) for v in paths.values() for p in v.values()]))
        completed = subprocess.run(
            [sys.executable, str(ROOT / "tests" / "run_programs.py"), str(listing)],
            capture_output=True,
            text=True,
            env={**os.environ, "JAX_PLATFORMS": "cpu"},
            check=True,
        )
        outputs = json.loads(completed.stdout)
        table: dict[str, Counter[str]] = defaultdict(Counter)
        for form, label, _ in cases:
            row = table[form]
            row["programs"] += 1
            compiled, eager = outputs[str(paths[label]["original"])]
            row["stale before"] += compiled != eager
            for variant in ("safe", "unsafe"):
                fixed_compiled, fixed_eager = outputs[str(paths[label][variant])]
                row[f"{variant}: consistent"] += fixed_compiled == fixed_eager == eager
            if args.verify and label in verified:
                row["verified"] += 1
                report = subprocess.run(
                    [sys.executable, "-m", "flake8_jax_closure", "verify", "--format", "json",
                     "--unsafe-fixes", str(paths[label]["original"])],
                    capture_output=True, text=True,
                )  # fmt: skip
                verdicts = [f["verdict"] for f in json.loads(report.stdout)["findings"]]
                row["confirmed"] += bool(verdicts) and all(v == "confirmed" for v in verdicts)
    columns = ["programs", "stale before", "safe: consistent", "unsafe: consistent"]
    header = [*columns, "verify: confirmed"] if args.verify else columns
    print("| form | " + " | ".join(header) + " |")
    print("| --- |" + " ---: |" * len(header))
    totals: Counter[str] = Counter()

    def cells(row: Counter[str]) -> list[str]:
        values = [str(row[c]) for c in columns]
        if args.verify:
            values.append(f"{row['confirmed']} of {row['verified']}" if row["verified"] else "-")
        return values

    for form in sorted(table):
        totals.update(table[form])
        print(f"| {form} | " + " | ".join(cells(table[form])) + " |")
    print("| **all** | " + " | ".join(cells(totals)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
