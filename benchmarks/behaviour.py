"""Record everything the linter says about a set of folders, to show a change keeps behaviour.

    python benchmarks/behaviour.py record OUT.json DIR [DIR ...]
    python benchmarks/behaviour.py compare BEFORE.json AFTER.json

``record`` runs the installed command line over each folder: ``check --format json`` (findings,
messages, fixes and their edits) with all rules and with each rule alone, then ``diff`` and
``diff --unsafe-fixes`` on every file with a finding. ``compare`` prints each difference and
exits 1 when there is one. A refactoring is behaviour-preserving when the two records of the
fixtures, the generated programs and the ecosystem projects are equal.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

RULE_CODES = ("JC101", "JC102", "JC103", "JC104")
COMMAND = (sys.executable, "-m", "flake8_jax_closure")


def _run(arguments: list[str], folder: Path) -> str:
    """The command's output, with its messages on stderr (files that do not parse, exit 2)
    after a marker line, so that they are compared too."""
    done = subprocess.run(
        [*COMMAND, *arguments], cwd=folder, capture_output=True, text=True, check=False
    )
    if done.returncode not in (0, 1, 2) or "Traceback" in done.stderr:
        raise SystemExit(f"{' '.join(arguments)} in {folder} failed:\n{done.stderr}")
    return done.stdout if not done.stderr else f"{done.stdout}\n--- stderr\n{done.stderr}"


def _check(folder: Path, select: str) -> dict[str, Any]:
    arguments = ["check", "--format", "json", "--no-cache", "--exit-zero", "--select", select, "."]
    out, _, messages = _run(arguments, folder).partition("\n--- stderr\n")
    return {"findings": json.loads(out) if out.strip() else [], "stderr": messages}


def _files_with_findings(found: Any) -> list[str]:
    names = {item.get("filename") for item in found["findings"]}
    return sorted(name for name in names if name)


def record_folder(folder: Path, per_rule: bool) -> dict[str, Any]:
    everything = _check(folder, "JC")
    record: dict[str, Any] = {"check": everything}
    if per_rule:
        record["per_rule"] = {code: _check(folder, code) for code in RULE_CODES}
    files = _files_with_findings(everything)
    record["diff"] = {}
    record["diff_unsafe"] = {}
    for start in range(0, len(files), 200):  # keep each command line short
        batch = files[start : start + 200]
        record["diff"][start] = _run(["diff", "--exit-zero", *batch], folder)
        record["diff_unsafe"][start] = _run(
            ["diff", "--exit-zero", "--unsafe-fixes", *batch], folder
        )
    return record


def _differences(before: Any, after: Any, where: str) -> list[str]:
    if type(before) is not type(after):
        return [f"{where}: {before!r} -> {after!r}"[:400]]
    if isinstance(before, dict):
        out = []
        for key in sorted(set(before) | set(after), key=str):
            if key not in before or key not in after:
                out.append(f"{where}/{key}: only {'after' if key in after else 'before'}")
            else:
                out.extend(_differences(before[key], after[key], f"{where}/{key}"))
        return out
    if isinstance(before, list):
        if len(before) != len(after):
            return [f"{where}: {len(before)} items -> {len(after)}"]
        return [
            d
            for i, (b, a) in enumerate(zip(before, after, strict=True))
            for d in _differences(b, a, f"{where}[{i}]")
        ]
    return [] if before == after else [f"{where}: {before!r} -> {after!r}"[:400]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("folders", nargs="+", type=Path)
    rec.add_argument("--no-per-rule", action="store_true", help="skip the runs of each rule alone")
    cmp = sub.add_parser("compare")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "record":
        data = {
            folder.name: record_folder(folder.resolve(), not args.no_per_rule)
            for folder in args.folders
        }
        args.out.write_text(json.dumps(data, indent=1, sort_keys=True))
        return 0
    differences = _differences(
        json.loads(args.before.read_text()), json.loads(args.after.read_text()), ""
    )
    for line in differences[:200]:
        print(line)
    print(f"{len(differences)} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
