"""Ecosystem check: run the linter over pinned real JAX projects and judge what it reports.

    python benchmarks/ecosystem.py prepare --dest DIR [--mirrors DIR] [--only NAME ...]
    python benchmarks/ecosystem.py run --checkouts DIR [--hazards] [--save FILE] [--baseline FILE]

``prepare`` exports every project of ``ecosystem/projects.txt`` at its pinned commit into
``DIR/owner+name`` (from ``git clone`` of GitHub, or from mirrors ``MIRRORS/owner+name/repo``, a
bare git directory or a clone holding ``.git``), keeping Python files and Jupyter notebooks as
they are: the linter reads notebooks itself, and they are where much JAX user code lives.

``run`` runs ``flake8-jax-closure check --format json`` on each project (with ``--hazards``, the
opt-in API hazards too: ``--extend-select JC2``), and compares the findings
with the judgements in ``ecosystem/judgements.csv`` (project, path, line, code, name, verdict,
reason; verdict ``real`` or ``false``; a finding in a notebook has the path ``nb.ipynb:cell 3``
and the line in that cell, as the linter's text output writes it). It prints a Markdown report:
files, lines and findings per project; precision over the judged findings, for default findings
and API hazards apart (overall, on each split of projects marked ``held-out`` in the list, which
were never looked at while the rules were built, and on the others); how many findings judged
real are still found, at default or as an API hazard, and which are not; the findings nobody has
judged yet (to be read and judged by hand); and with ``--baseline`` the findings that appeared or
vanished since a saved run.

The projects' sources are never committed: only the list, the commits and the judgements.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent / "ecosystem"
PROJECTS = HERE / "projects.txt"
JUDGEMENTS = HERE / "judgements.csv"
# Default findings and the opt-in API hazards, by code prefix.
TIERS = (("Default findings", "JC1"), ("API hazards", "JC2"))
JUDGEMENT_FIELDS = ("project", "path", "line", "code", "name", "verdict", "reason")


@dataclass(frozen=True)
class Project:
    name: str  # owner/name on GitHub
    commit: str
    # "" for a project the rules were built on; else the held-out split it belongs to
    # (``held-out``, ``held-out-2``, ...): a list frozen before the rules it measures changed.
    split: str = ""

    @property
    def held_out(self) -> bool:  # never looked at while the rules were built
        return bool(self.split)

    @property
    def folder(self) -> str:
        return self.name.replace("/", "+")


@dataclass(frozen=True)
class Found:
    project: str
    path: str
    line: int
    code: str
    name: str
    message: str

    @property
    def key(self) -> tuple[str, str, int, str, str]:
        return (self.project, self.path, self.line, self.code, self.name)


_SPLIT = re.compile(r"held-out(-\d+)?")


def read_projects(path: Path = PROJECTS) -> list[Project]:
    """``owner/name commit``, and a split after the commit (``held-out``, ``held-out-2``) for a
    project never looked at while the rules were built; ``#`` starts a comment."""
    projects = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) not in (2, 3) or not all(_SPLIT.fullmatch(f) for f in fields[2:]):
            raise SystemExit(f"{path}:{number}: expected 'owner/name commit [held-out[-N]]'")
        projects.append(Project(fields[0], fields[1], fields[2] if len(fields) == 3 else ""))
    return projects


# -- prepare ----------------------------------------------------------------------------------


def _sources(git_dir: Path, commit: str) -> Iterable[tuple[str, bytes]]:
    """(path, content) of every ``.py`` and ``.ipynb`` file at ``commit``; blobs missing from a
    partial mirror (large files) are skipped."""
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    wanted = []
    for entry in listing.split(b"\0"):
        meta, _, raw_path = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob" and raw_path.endswith((b".py", b".ipynb")):
            wanted.append((raw_path.decode("utf-8", "replace"), parts[2].decode()))
    batch = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        input="".join(f"{sha}\n" for _, sha in wanted).encode(),
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    position = 0
    for path, _ in wanted:
        header_end = batch.index(b"\n", position)
        header = batch[position:header_end].split()
        position = header_end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        yield path, batch[position : position + size]
        position += size + 1


def _git_dir(project: Project, mirrors: Path | None, scratch: Path) -> Path:
    if mirrors is not None:
        git_dir = mirrors / project.folder / "repo"
        if not git_dir.is_dir():
            raise SystemExit(f"{project.name}: no mirror at {git_dir}")
        return git_dir / ".git" if (git_dir / ".git").is_dir() else git_dir
    url = f"https://github.com/{project.name}.git"
    subprocess.run(["git", "clone", "-q", "--bare", url, str(scratch)], check=True)
    return scratch


def prepare(projects: Iterable[Project], dest: Path, mirrors: Path | None) -> None:
    for project in projects:
        target = dest / project.folder
        if target.exists():
            print(f"{project.name}: already there", file=sys.stderr)
            continue
        # Exported under another name first, so that an interrupted export is not taken for a
        # finished one by the next run.
        partial = dest / f"{project.folder}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        try:
            with tempfile.TemporaryDirectory() as scratch:
                git_dir = _git_dir(project, mirrors, Path(scratch) / "clone")
                _export(_sources(git_dir, project.commit), partial)
        except subprocess.CalledProcessError as error:
            shutil.rmtree(partial, ignore_errors=True)
            detail = error.stderr.decode(errors="replace").strip() if error.stderr else ""
            raise SystemExit(f"{project.name}: cannot export {project.commit}: {detail}") from None
        partial.mkdir(parents=True, exist_ok=True)  # a project without Python files
        # A work tree of its own, as a user's clone is: the linter takes the project's root
        # (its callers in other modules) and its ``.gitignore`` from there.
        subprocess.run(["git", "init", "-q", str(partial)], check=True)
        partial.rename(target)
        print(f"{project.name}: exported {project.commit[:12]}", file=sys.stderr)


def _export(sources: Iterable[tuple[str, bytes]], target: Path) -> None:
    for name, data in sources:
        if ".." in Path(name).parts:
            continue
        out = target / name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)


# -- run --------------------------------------------------------------------------------------


def count_code(folder: Path) -> tuple[int, int]:
    """Files, and their lines of code: a notebook's are those of its code cells."""
    files = lines = 0
    # A folder may be named like a module (``matmul.py/``): only files are counted.
    for path in folder.rglob("*.py"):
        if path.is_file():
            files += 1
            with open(path, "rb") as handle:
                lines += sum(1 for _ in handle)
    for path in folder.rglob("*.ipynb"):
        if path.is_file():
            files += 1
            lines += _notebook_lines(path.read_bytes())
    return files, lines


def _notebook_lines(raw: bytes) -> int:
    try:
        cells = json.loads(raw).get("cells", [])
        sources = [c.get("source", "") for c in cells if c.get("cell_type") == "code"]
    except (ValueError, AttributeError, TypeError):
        return 0  # not a notebook: the linter says so, and it has no lines of code
    return sum(len(("".join(s) if isinstance(s, list) else str(s)).splitlines()) for s in sources)


def check_project(
    tool: list[str], project: Project, folder: Path, hazards: bool = False
) -> list[Found]:
    selection = ["--extend-select", "JC2"] if hazards else []
    command = [*tool, "check", *selection, "--format", "json", "--no-cache", "--exit-zero", "."]
    completed = subprocess.run(command, cwd=folder, capture_output=True, text=True)
    if completed.returncode not in (0, 2) or not completed.stdout.strip():
        raise SystemExit(f"{project.name}: the linter failed:\n{completed.stderr}")
    found = []
    for item in json.loads(completed.stdout):
        if item["code"] in ("E999", "E902"):
            continue  # a file that does not parse, or a notebook of another language
        path = os.path.normpath(item["filename"])
        if item.get("cell") is not None:
            path = f"{path}:cell {item['cell']}"
        found.append(
            Found(project.name, path, item["line"], item["code"], _name(item), item["message"])
        )
    return found


def _name(item: dict[str, object]) -> str:
    """The captured name; for JC104, ``self.<attr>`` (0.1.0 reported only ``self``)."""
    name = str(item.get("name", ""))
    if item["code"] == "JC104" and "." not in name:
        match = re.search(r"reads '(\w+\.\w+)'", str(item["message"]))
        if match:
            return match.group(1)
    return name


def read_judgements(
    path: Path = JUDGEMENTS,
) -> dict[tuple[str, str, int, str, str], dict[str, str]]:
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as handle:
        return {
            (row["project"], row["path"], int(row["line"]), row["code"], row["name"]): row
            for row in csv.DictReader(handle)
        }


def report(
    projects: list[Project],
    sizes: dict[str, tuple[int, int]],
    found: list[Found],
    judgements: dict[tuple[str, str, int, str, str], dict[str, str]],
    baseline: list[Found] | None,
) -> str:
    out = ["| project | files | lines | findings | real | false | unjudged |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    totals = [0, 0, 0, 0, 0, 0]
    for project in projects:
        mine = [f for f in found if f.project == project.name]
        verdicts = [judgements.get(f.key, {}).get("verdict") for f in mine]
        row = [*sizes[project.name], len(mine), verdicts.count("real"), verdicts.count("false"),
               verdicts.count(None)]  # fmt: skip
        totals = [a + b for a, b in zip(totals, row, strict=True)]
        marker = f" ({project.split})" if project.held_out else ""
        out.append(f"| {project.name}{marker} | " + " | ".join(f"{n:,}" for n in row) + " |")
    out.append("| **all** | " + " | ".join(f"{n:,}" for n in totals) + " |")
    out.append("")
    # Precision on each held-out split is the figure that says how the rules generalise; default
    # findings and the opt-in API hazards are measured apart, as users meet them apart.
    split_of = {p.name: p.split for p in projects}
    for tier, prefix in TIERS:
        mine = [f for f in found if f.code.startswith(prefix)]
        if not mine:
            continue
        out.append(f"\n{tier} ({prefix}):")
        out.append(_precision("all projects", mine, judgements))
        for split in sorted({p.split for p in projects if p.split}):
            on_split = [f for f in mine if split_of.get(f.project) == split]
            out.append(_precision(f"{split} projects", on_split, judgements))
        on_built_on = [f for f in mine if not split_of.get(f.project)]
        out.append(_precision("projects the rules were built on", on_built_on, judgements))
    unjudged = [f for f in found if f.key not in judgements]
    if unjudged:
        out.append("\nUnjudged findings (read the code, then add a row to judgements.csv):")
        out.extend(f"- {f.project} {f.path}:{f.line} {f.code} {f.message}" for f in unjudged)
    current = {f.key for f in found}
    checked = {p.name for p in projects}
    real = [(key, row) for key, row in judgements.items()
            if row["verdict"] == "real" and key[0] in checked]  # fmt: skip
    # A real default finding that a rule now reports as an API hazard (or the reverse) is still
    # found: the same project, path, line and name under the other tier's code.
    moved = [row for key, row in real if key not in current and _other_tier(key) in current]
    missing = [row for key, row in real
               if key not in current and _other_tier(key) not in current]  # fmt: skip
    out.append(
        f"\nReal findings judged so far: {len(real)}; still found {len(real) - len(missing)}"
        f" ({len(moved)} of them under the other tier's code)"
    )
    if missing:
        out.append("\nReal findings no longer found:")
        out.extend(f"- {r['project']} {r['path']}:{r['line']} {r['code']} {r['name']}"
                   for r in missing)  # fmt: skip
    if baseline is not None:
        before = {f.key: f for f in baseline}
        appeared = [f for f in found if f.key not in before]
        vanished = [f for key, f in before.items() if key not in current]
        out.append(f"\nAgainst the baseline: {len(appeared)} appeared, {len(vanished)} vanished")
        for label, items in (("appeared", appeared), ("vanished", vanished)):
            for f in items:
                verdict = judgements.get(f.key, {}).get("verdict", "unjudged")
                out.append(f"- {label} ({verdict}): {f.project} {f.path}:{f.line} {f.code} "
                           f"'{f.name}'")  # fmt: skip
    return "\n".join(out) + "\n"


def _other_tier(key: tuple[str, str, int, str, str]) -> tuple[str, str, int, str, str]:
    """JC102 and JC202 are one capture, reported by default or as an API hazard."""
    project, path, line, code, name = key
    tier = {"1": "2", "2": "1"}.get(code[2:3], code[2:3])
    return (project, path, line, f"{code[:2]}{tier}{code[3:]}", name)


def _precision(
    label: str,
    found: list[Found],
    judgements: dict[tuple[str, str, int, str, str], dict[str, str]],
) -> str:
    verdicts = [judgements.get(f.key, {}).get("verdict") for f in found]
    real, false = verdicts.count("real"), verdicts.count("false")
    precision = f"{real / (real + false):.0%}" if real + false else "n/a"
    return f"Precision on {label}: {precision} ({real} real, {false} false alarms)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    prep = commands.add_parser("prepare", help="export the pinned projects")
    prep.add_argument("--dest", type=Path, required=True)
    prep.add_argument("--mirrors", type=Path, help="bare mirrors: MIRRORS/owner+name/repo")
    prep.add_argument("--only", nargs="*", help="owner/name of the projects to export")
    run = commands.add_parser("run", help="check the projects and compare with the judgements")
    run.add_argument("--checkouts", type=Path, required=True)
    run.add_argument(
        "--tool", default="flake8-jax-closure", help="command to run (split on spaces)"
    )
    run.add_argument("--save", type=Path, help="write the findings as JSON, for a later baseline")
    run.add_argument("--baseline", type=Path, help="findings saved by an earlier --save")
    run.add_argument("--only", nargs="*", help="owner/name of the projects to check")
    run.add_argument(
        "--hazards", action="store_true", help="also report the opt-in API hazards (JC2)"
    )
    args = parser.parse_args(argv)
    projects = read_projects()
    if args.only:
        projects = [p for p in projects if p.name in args.only]
    if args.command == "prepare":
        prepare(projects, args.dest, args.mirrors)
        return 0
    found: list[Found] = []
    sizes: dict[str, tuple[int, int]] = {}
    for project in projects:
        folder = args.checkouts / project.folder
        sizes[project.name] = count_code(folder)
        found.extend(check_project(args.tool.split(), project, folder, args.hazards))
    if args.save:
        args.save.write_text(json.dumps([f.__dict__ for f in found], indent=1), encoding="utf-8")
    baseline = None
    if args.baseline:
        baseline = [Found(**item) for item in json.loads(args.baseline.read_text("utf-8"))]
    sys.stdout.write(report(projects, sizes, found, read_judgements(), baseline))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
