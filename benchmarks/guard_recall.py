"""Guard recall on real code: run public JAX notebooks and scripts under the guard, and compare
the stale calls it sees with what the linter reports on the same files.

    python benchmarks/guard_recall.py prepare --dest DIR [--mirrors DIR]
    python benchmarks/guard_recall.py run --checkouts DIR [--tool CMD] [--only NAME ...]
        [--outcomes FILE] [--keep DIR] [--note TEXT] [--write]

``prepare`` exports each project of ``guard_recall/projects.txt`` at its pinned commit into
``DIR/owner+name`` (whole tree: notebooks read the data files beside them), from ``git clone`` of
GitHub or from mirrors ``MIRRORS/owner+name/repo`` (a bare git directory or a clone).

``run`` runs each listed file with ``JAX_PLATFORMS=cpu`` under ``CMD guard --mode warn`` (``CMD``
is ``flake8-jax-closure`` unless ``--tool`` says otherwise), with the file's timeout, environment
and arguments from the list. A script runs as it is, from its folder (or the listed ``cwd``). A
notebook's code cells become a script in a temporary folder (``convert_notebook``): IPython
magics and shell lines become ``pass``, cell magics other than ``%%time``, ``%%timeit`` and
``%%capture`` make their cell a comment, and nothing else is added, except that a cell tagged
``raises-exception`` (the tag with which documentation builds run cells meant to fail), or every
cell of a file listed with ``errors=continue``, is wrapped in ``try``/``except`` (a cell that
does not parse becomes a comment there), as a notebook run with errors allowed goes on; the
script runs from the notebook's folder. ``guard_recall/shims`` is first on ``PYTHONPATH``: its
``sitecustomize`` records every stale-capture warning as JSON (whatever filters the program
sets), gives notebooks' ``display`` and ``get_ipython``, and imports the listed shims
(``shim=NAME`` loads ``shims/shim_NAME.py``), which replace downloads with small synthetic data
or give removed JAX names their successors. ``--outcomes FILE`` keeps each file's outcome and
reuses it while the project's commit, the file's options and its shims' text are the same;
``--keep DIR`` keeps each run's stderr, converted script and recorded warnings.

Then ``CMD check --format json`` runs on the same files, and each stale call the guard saw is
matched with the default findings (``JC1xx``) of that file: the same compiled function or the
same line of the read, and the same captured name. The report (a Markdown table, to stdout, and
to ``guard_recall/results.md`` with ``--write``) gives per project the files run, how they ended,
the stale calls seen, which the linter found, and the default findings the guard did not
confirm, with the reasons kept in ``guard_recall/judgements.csv``.

The projects' sources are never committed: only the list, the commits, our shims and the
judgements.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent / "guard_recall"
PROJECTS = HERE / "projects.txt"
JUDGEMENTS = HERE / "judgements.csv"
RESULTS = HERE / "results.md"
SHIMS = HERE / "shims"
ECOSYSTEM = HERE.parent / "ecosystem" / "projects.txt"
DEFAULT_TIMEOUT = 180
JUDGEMENT_FIELDS = ("project", "path", "line", "code", "name", "kind", "verdict", "reason")


# -- the list ---------------------------------------------------------------------------------


@dataclass
class Entry:
    """One file to run: ``path [timeout=N] [cwd=DIR] [shim=NAME] [env:K=V] [arg=A]``."""

    path: str
    timeout: int = DEFAULT_TIMEOUT
    cwd: str | None = None
    shims: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)
    note: str = ""
    continue_on_errors: bool = False  # a notebook's cells: go on past a cell that raised
    paths: list[str] = field(default_factory=list)  # more folders on PYTHONPATH, from the root


@dataclass
class Project:
    name: str  # owner/name on GitHub
    commit: str
    entries: list[Entry] = field(default_factory=list)
    note: str = ""

    @property
    def folder(self) -> str:
        return self.name.replace("/", "+")


def read_projects(path: Path = PROJECTS) -> list[Project]:
    """``owner/name commit  # note`` opens a project; the indented lines after it are its files,
    each a path and options (shell words): ``timeout=N`` (seconds), ``cwd=DIR`` (from the
    project's root), ``shim=NAME``, ``env:NAME=VALUE``, ``arg=WORD`` (one argument, in order),
    ``errors=continue`` (a notebook: go on past a cell that raised or does not parse, as a run
    with errors allowed does), ``path=DIR`` (a folder of the project put on ``PYTHONPATH``:
    ``path=.`` for a package at the root, as if installed). ``#`` starts a comment, which is
    kept as the note of the project or file."""
    projects: list[Project] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        body, _, comment = line.partition("#")
        if not body.strip():
            continue
        note = comment.strip()
        words = shlex.split(body)
        if not line[0].isspace():
            if len(words) != 2:
                raise SystemExit(f"{path}:{number}: expected 'owner/name commit'")
            projects.append(Project(words[0], words[1], note=note))
            continue
        if not projects:
            raise SystemExit(f"{path}:{number}: a file before any project")
        entry = Entry(words[0], note=note)
        for option in words[1:]:
            key, sep, value = option.partition("=")
            if not sep:
                raise SystemExit(f"{path}:{number}: expected KEY=VALUE, got {option!r}")
            if key == "timeout":
                entry.timeout = int(value)
            elif key == "cwd":
                entry.cwd = value
            elif key == "shim":
                entry.shims.append(value)
            elif key == "arg":
                entry.args.append(value)
            elif key == "path":
                entry.paths.append(value)
            elif key == "errors" and value in ("continue", "stop"):
                entry.continue_on_errors = value == "continue"
            elif key.startswith("env:"):
                entry.env[key[4:]] = value
            else:
                raise SystemExit(f"{path}:{number}: unknown option {key!r}")
        projects[-1].entries.append(entry)
    return projects


def reserved(projects: Iterable[Project], ecosystem: Path = ECOSYSTEM) -> list[str]:
    """The projects of the list that the ecosystem check keeps for a held-out split other than
    the first (``held-out-2`` and later): never run here."""
    marked = {}
    for line in ecosystem.read_text(encoding="utf-8").splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) == 3 and re.fullmatch(r"held-out-\d+", fields[2]):
            marked[fields[0].lower()] = fields[2]
    return [p.name for p in projects if p.name.lower() in marked]


# -- prepare ----------------------------------------------------------------------------------


def _git_dir(project: Project, mirrors: Path | None, scratch: Path) -> Path:
    if mirrors is not None:
        git_dir = mirrors / project.folder / "repo"
        if not git_dir.is_dir():
            raise SystemExit(f"{project.name}: no mirror at {git_dir}")
        return git_dir / ".git" if (git_dir / ".git").is_dir() else git_dir
    url = f"https://github.com/{project.name}.git"
    subprocess.run(["git", "clone", "-q", "--bare", url, str(scratch)], check=True)
    return scratch


def _blobs(git_dir: Path, commit: str) -> Iterable[tuple[str, bytes]]:
    """(path, content) of every file at ``commit``; blobs missing from a partial mirror (large
    files) are skipped, and so are links and submodules."""
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    wanted = []
    for entry in listing.split(b"\0"):
        meta, _, raw_path = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob" and parts[0] != b"120000":
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


def prepare(projects: Iterable[Project], dest: Path, mirrors: Path | None) -> None:
    for project in projects:
        target = dest / project.folder
        if target.exists():
            print(f"{project.name}: already there", file=sys.stderr)
            continue
        partial = dest / f"{project.folder}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        with tempfile.TemporaryDirectory() as scratch:
            git_dir = _git_dir(project, mirrors, Path(scratch) / "clone")
            for name, data in _blobs(git_dir, project.commit):
                if ".." in Path(name).parts:
                    continue
                out = partial / name
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(data)
        partial.rename(target)
        print(f"{project.name}: exported {project.commit[:12]}", file=sys.stderr)


# -- notebooks --------------------------------------------------------------------------------

_TEXT_CELL_MAGICS = ("time", "timeit", "capture")


@dataclass
class Converted:
    """A notebook's code cells as one script; ``origin[i]`` is the (cell, line) of script line
    ``i + 1``, or None for a line the converter added."""

    text: str
    origin: list[tuple[int, int] | None]


def _scan(line: str, depth: int, quote: str | None) -> tuple[int, str | None]:
    """Bracket depth and open string quote after ``line``, from those before it."""
    index = 0
    while index < len(line):
        char = line[index]
        if quote is not None:
            if char == "\\":
                index += 2
                continue
            if line.startswith(quote, index):
                index += len(quote)
                quote = None
                continue
            index += 1
            continue
        if char == "#":
            break
        if char in "'\"":
            triple = line[index : index + 3]
            quote = triple if triple in ("'''", '"""') else char
            index += len(quote)
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        index += 1
    if quote is not None and len(quote) == 1:
        quote = None  # an unterminated one-line string: Python reports it, we go on
    return depth, quote


_ASSIGNED_SHELL = re.compile(r"^(\s*)([\w.,\s\[\]]+?)\s*=\s*[!%]")


def _python_line(line: str) -> str:
    """``pass`` for an IPython line (magic, shell, help), the line itself otherwise."""
    stripped = line.strip()
    indent = line[: len(line) - len(line.lstrip())]
    if stripped.startswith(("%", "!")) or (stripped.startswith("?") and len(stripped) > 1):
        return f"{indent}pass"
    if stripped.endswith("?") and not stripped.startswith("#") and "#" not in stripped:
        return f"{indent}pass"
    assigned = _ASSIGNED_SHELL.match(line)
    if assigned:
        return f"{assigned.group(1)}{assigned.group(2)} = None"
    return line


def _source(cell: dict[str, object]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _parses(cell_lines: list[str]) -> bool:
    depth, quote, lines = 0, None, []
    for text in cell_lines:
        if quote is None and depth == 0:
            text = _python_line(text)
        depth, quote = _scan(text, depth, quote)
        lines.append(text)
    try:
        compile("\n".join(lines) + "\n", "<cell>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def convert_notebook(raw: bytes | str, continue_on_errors: bool = False) -> Converted:
    """The code cells of a notebook, in order, as a script (see the module's docstring); with
    ``continue_on_errors``, every cell is wrapped in ``try``/``except`` (as a notebook run with
    errors allowed goes on past a cell that raised)."""
    cells = json.loads(raw).get("cells", [])
    lines: list[str] = []
    origin: list[tuple[int, int] | None] = []

    def add(text: str, where: tuple[int, int] | None) -> None:
        lines.append(text)
        origin.append(where)

    for number, cell in enumerate(cells, 1):
        if cell.get("cell_type") != "code":
            continue
        cell_lines = _source(cell).splitlines()
        if not cell_lines:
            continue
        metadata = cell.get("metadata") or {}
        tags = metadata.get("tags", []) if isinstance(metadata, dict) else []
        # Colab's form lines (``# @title``) may stand above a cell magic.
        start = next((i for i, text in enumerate(cell_lines)
                      if text.strip() and not text.lstrip().startswith("#")), 0)  # fmt: skip
        for offset, text in enumerate(cell_lines[:start], 1):
            add(text, (number, offset))
        first = cell_lines[start].strip()
        if first.startswith("%%"):
            magic = first[2:].split()[0] if first[2:].split() else ""
            if magic not in _TEXT_CELL_MAGICS:
                for offset, text in enumerate(cell_lines[start:], start + 1):
                    add(f"# {text}", (number, offset))
                add("", None)
                continue
            add("pass", (number, start + 1))
            start += 1
        tagged = "raises-exception" in tags
        wrap = tagged or continue_on_errors
        if continue_on_errors and not _parses(cell_lines[start:]):
            # Run alone, such a cell raises SyntaxError and the notebook goes on.
            for offset, text in enumerate(cell_lines[start:], start + 1):
                add(f"# {text}", (number, offset))
            add(f"print('cell {number} raised: SyntaxError', file=__import__('sys').stderr)", None)
            add("", None)
            continue
        if wrap:
            add("try:", None)
            add("    pass", None)
        depth, quote = 0, None
        for offset, text in enumerate(cell_lines[start:], start + 1):
            if quote is None and depth == 0:
                text = _python_line(text)
            inside_string = quote is not None
            depth, quote = _scan(text, depth, quote)
            add(text if inside_string or not wrap else f"    {text}", (number, offset))
        if wrap:
            how = " (as tagged)" if tagged else ""
            add("except Exception as error:", None)
            add(
                f"    print('cell {number} raised{how}:', type(error).__name__, str(error)[:80], "
                "file=__import__('sys').stderr)",
                None,
            )
        add("", None)
    return Converted("\n".join(lines) + "\n", origin)


# -- the guard's reports ----------------------------------------------------------------------

_STALE = re.compile(
    r"compiled function '(?P<function>[^']*)' \((?P<defined>[^()]*?):(?P<defline>\d+)\) "
    r"reused a trace that read (?P<value>.+?) \((?P<kind>[^,()]+), at (?P<where>[^()]+?):"
    r"(?P<line>\d+)\), which has changed since that trace: (?P<summary>[^\n]*)"
    r"(?:.*\n  (?P<code>JC\d+): )?",
    re.DOTALL,
)


@dataclass(frozen=True)
class Stale:
    """One stale call the guard warned about: the compiled function, the value, the read."""

    function: str  # qualified name
    value: str  # self.scale, CONFIG["clip"], lr
    kind: str
    path: str  # where the trace read it: the file (a notebook: nb.ipynb:cell N) ...
    line: int  # ... and the line (in that cell)
    summary: str  # old -> new
    code: str  # the rule the guard names
    call: str = ""  # where the stale call was made

    @property
    def root(self) -> str:
        """The captured name the linter reports: ``self.x`` for JC104, else the first name."""
        name = re.split(r"[.\[(]", self.value, maxsplit=1)[0]
        if name == "self":
            match = re.match(r"self\.(\w+)", self.value)
            return f"self.{match.group(1)}" if match else name
        return name


def parse_stale(message: str, cwd: Path, relocate: Relocate) -> Stale | None:
    match = _STALE.search(message)
    if match is None:
        return None
    where = relocate(_absolute(match["where"], cwd), int(match["line"]))
    return Stale(
        function=match["function"],
        value=match["value"],
        kind=match["kind"].removeprefix("an ").removeprefix("a "),
        path=where[0],
        line=where[1],
        summary=match["summary"].strip(),
        code=match["code"] or "",
    )


_ALSO = re.compile(
    r"^  also changed: (?P<value>.+?) \((?P<kind>[^,()]+), at (?P<where>[^()]+?):(?P<line>\d+)\): "
    r"(?P<summary>.*)$",
    re.MULTILINE,
)
_CODE_OF_KIND = {"closure variable": "JC101", "global": "JC102", "attribute of self": "JC104"}


def parse_stale_calls(message: str, cwd: Path, relocate: Relocate) -> list[Stale]:
    """The first value a stale-call warning names and those it adds (``also changed``; the
    guard names four at most, and then ``and N more``)."""
    first = parse_stale(message, cwd, relocate)
    if first is None:
        return []
    calls = [first]
    for match in _ALSO.finditer(message):
        kind = match["kind"].removeprefix("an ").removeprefix("a ")
        where = relocate(_absolute(match["where"], cwd), int(match["line"]))
        code = _CODE_OF_KIND.get(kind, "JC104" if match["value"].startswith("self.") else "JC103")
        calls.append(
            Stale(
                first.function,
                match["value"],
                kind,
                where[0],
                where[1],
                match["summary"].strip(),
                code,
            )  # fmt: skip
        )
    return calls


def _absolute(path: str, cwd: Path) -> str:
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(cwd, path))


class Relocate:
    """Maps a (file, line) of the run back to the project: a path relative to its root, and
    for a converted notebook ``nb.ipynb:cell N`` and the line in that cell."""

    def __init__(self, root: Path, scripts: dict[str, tuple[str, Converted]] | None = None):
        self.root = root
        self.scripts = scripts or {}

    def __call__(self, path: str, line: int) -> tuple[str, int]:
        converted = self.scripts.get(os.path.normpath(path))
        if converted is not None:
            notebook, script = converted
            where = script.origin[line - 1] if 0 < line <= len(script.origin) else None
            if where is None:
                return f"{notebook}:added", line
            return f"{notebook}:cell {where[0]}", where[1]
        try:
            relative = os.path.relpath(path, self.root)
        except ValueError:
            return path, line
        return (path if relative.startswith("..") else relative), line


def read_events(path: Path, cwd: Path, relocate: Relocate) -> list[Stale]:
    """The stale calls recorded by the shim, once each (function, value, read)."""
    seen: dict[tuple[str, str, str, int], Stale] = {}
    if not path.exists():
        return []
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(raw)
        except ValueError:
            continue  # a line cut short by the time-out
        call = relocate(entry["filename"], entry["lineno"])
        for stale in parse_stale_calls(entry["message"], cwd, relocate):
            stale = Stale(**{**stale.__dict__, "call": f"{call[0]}:{call[1]}"})
            seen.setdefault((stale.function, stale.value, stale.path, stale.line), stale)
    return list(seen.values())


# -- the linter's findings --------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    path: str  # relative to the project's root; nb.ipynb:cell N in a notebook
    line: int
    code: str
    name: str
    function: str
    message: str

    @property
    def default(self) -> bool:
        return self.code.startswith("JC1")


def _finding_name(item: dict[str, object]) -> str:
    name = str(item.get("name", ""))
    if item["code"] in ("JC104", "JC204") and "." not in name:
        match = re.search(r"reads '(\w+\.\w+)'", str(item["message"]))
        if match:
            return match.group(1)
    return name


def parse_findings(output: str) -> list[Finding]:
    found = []
    for item in json.loads(output):
        if not str(item["code"]).startswith(("JC1", "JC2", "E999")):
            continue  # E902 (not a Python notebook)
        path = os.path.normpath(item["filename"])
        if item.get("cell") is not None:
            path = f"{path}:cell {item['cell']}"
        found.append(
            Finding(
                path, int(item["line"]), item["code"], _finding_name(item),
                str(item.get("function") or ""), str(item["message"]),
            )
        )  # fmt: skip
    return found


def check_files(tool: Sequence[str], root: Path, paths: Sequence[str]) -> list[Finding]:
    """Default findings and API hazards (``JC2xx``) of the files."""
    command = [*tool, "check", "--format", "json", "--no-cache", "--exit-zero",
               "--extend-select", "JC2", *paths]  # fmt: skip
    completed = subprocess.run(command, cwd=root, capture_output=True, text=True)
    if completed.returncode not in (0, 2) or not completed.stdout.strip():
        raise SystemExit(f"{root}: the linter failed:\n{completed.stderr}")
    return parse_findings(completed.stdout)


# -- comparison -------------------------------------------------------------------------------


def _file(path: str) -> str:
    """``nb.ipynb`` of ``nb.ipynb:cell 3``."""
    return path.split(":cell ", 1)[0]


def _last_name(qualname: str) -> str:
    return qualname.rsplit(".", 1)[-1]


def _same_name(stale: Stale, finding: Finding) -> bool:
    root = stale.root
    return (
        finding.name == root
        or stale.value == finding.name
        or stale.value.startswith((finding.name + ".", finding.name + "["))
        or (finding.name == "self" and root.startswith("self"))
    )


def matches(stale: Stale, finding: Finding) -> bool:
    """The finding names this stale call: the same file and captured name, and the same read
    (line) or the same compiled function."""
    if _file(stale.path) != _file(finding.path) or not _same_name(stale, finding):
        return False
    same_read = stale.path == finding.path and stale.line == finding.line
    return same_read or (finding.function != "" and finding.function == _last_name(stale.function))


@dataclass
class Comparison:
    found: list[tuple[Stale, Finding]]  # stale calls with the default finding that names them
    hazard_only: list[tuple[Stale, Finding]]  # named by an API hazard only (off by default)
    missed: list[Stale]
    unconfirmed: list[Finding]  # default findings in files that ran, no stale call seen


def compare(stale: Sequence[Stale], findings: Sequence[Finding], ran: set[str]) -> Comparison:
    """``ran``: the files (relative paths) that ran; findings elsewhere are not judged here."""
    found, hazard_only, missed = [], [], []
    confirmed: set[Finding] = set()
    for call in stale:
        default = [f for f in findings if f.default and matches(call, f)]
        if default:
            found.append((call, default[0]))
            confirmed.update(default)
            continue
        hazards = [f for f in findings if f.code.startswith("JC2") and matches(call, f)]
        if hazards:
            hazard_only.append((call, hazards[0]))
        else:
            missed.append(call)
    unconfirmed = [f for f in findings if f.default and f not in confirmed and _file(f.path) in ran]
    return Comparison(found, hazard_only, missed, unconfirmed)


# -- running ----------------------------------------------------------------------------------


@dataclass
class Outcome:
    path: str
    status: str  # "ok", "timeout after N s", "exit N: last line of the error"
    seconds: float
    stale: list[Stale]


def _last_error(stderr: str, relocate: Relocate) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b", line):
            where = ""
            for previous in reversed(lines[: lines.index(line)]):
                frame = re.match(r'\s*File "([^"]+)", line (\d+)', previous)
                if frame:
                    path, number = relocate(frame.group(1), int(frame.group(2)))
                    where = f" at {path}:{number}"
                    break
            return f"{line.strip()[:160]}{where}"
    return lines[-1][:160] if lines else "no output"


def run_entry(
    tool: Sequence[str], project: Project, entry: Entry, root: Path, scratch: Path
) -> Outcome:
    source = root / entry.path
    events = scratch / "events.jsonl"
    events.unlink(missing_ok=True)
    scripts: dict[str, tuple[str, Converted]] = {}
    if entry.path.endswith(".ipynb"):
        converted = convert_notebook(source.read_bytes(), entry.continue_on_errors)
        target = scratch / (source.stem.replace(" ", "_") + "_converted.py")
        target.write_text(converted.text, encoding="utf-8")
        scripts[os.path.normpath(str(target))] = (entry.path, converted)
        cwd = root / (entry.cwd or os.path.dirname(entry.path))
        extra_path = [str(cwd)]
    else:
        target = source
        cwd = root / (entry.cwd or os.path.dirname(entry.path))
        extra_path = []
    extra_path += [str(root / folder) for folder in entry.paths]
    relocate = Relocate(root, scripts)
    env = dict(os.environ)
    env.update(
        JAX_PLATFORMS="cpu",
        MPLBACKEND="Agg",
        PYTHONPATH=os.pathsep.join([str(SHIMS), *extra_path, env.get("PYTHONPATH", "")]),
        GUARD_RECALL_EVENTS=str(events),
        GUARD_RECALL_SHIMS=",".join(entry.shims),
        PYTHONUNBUFFERED="1",
    )
    env.update(entry.env)
    command = [*tool, "guard", "--mode", "warn", str(target), *entry.args]
    start = time.monotonic()
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True,
    )  # fmt: skip
    try:
        _, stderr = process.communicate(timeout=entry.timeout)
        status = "ok" if process.returncode == 0 else None
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, stderr = process.communicate()
        status = f"timeout after {entry.timeout} s"
    seconds = time.monotonic() - start
    (scratch / "stderr.txt").write_text(stderr, encoding="utf-8")
    if status is None:
        status = f"exit {process.returncode}: {_last_error(stderr, relocate)}"
    raised = re.findall(r"^cell (\d+) raised:", stderr, re.MULTILINE)
    if raised:
        status += f" (cells that raised and were passed: {', '.join(raised)})"
    return Outcome(entry.path, status, seconds, read_events(events, cwd, relocate))


def outcome_key(project: Project, entry: Entry, shims: Path = SHIMS) -> str:
    """What a saved outcome was run with: the project, its commit, the file's options and the
    text of the shims it loaded."""
    options = {k: v for k, v in entry.__dict__.items() if k != "note"}
    texts = [(shims / f"shim_{name}.py") for name in entry.shims] + [shims / "sitecustomize.py"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in texts if p.exists())).hexdigest()
    return json.dumps([project.name, project.commit, options, digest[:16]], sort_keys=True)


def save_outcomes(path: Path, outcomes: dict[str, Outcome]) -> None:
    data = {
        key: {**o.__dict__, "stale": [s.__dict__ for s in o.stale]} for key, o in outcomes.items()
    }
    path.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")


def load_outcomes(path: Path) -> dict[str, Outcome]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        key: Outcome(**{**item, "stale": [Stale(**s) for s in item["stale"]]})
        for key, item in data.items()
    }


# -- report -----------------------------------------------------------------------------------


def read_judgements(
    path: Path = JUDGEMENTS,
) -> dict[tuple[str, str, int, str, str], dict[str, str]]:
    """Reasons for default findings the guard did not confirm (``kind`` finding) and notes on
    stale calls the linter missed (``kind`` stale; ``code`` is the guard's rule, ``name`` the
    value), keyed by project, path, line, code and name."""
    if not path.exists():
        return {}
    with open(path, newline="", encoding="utf-8") as handle:
        return {
            (row["project"], row["path"], int(row["line"]), row["code"], row["name"]): row
            for row in csv.DictReader(handle)
        }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


@dataclass
class ProjectResult:
    project: Project
    outcomes: list[Outcome]
    comparison: Comparison
    unparsed: list[Finding] = field(default_factory=list)  # E999: files the linter skipped


Judgements = dict[tuple[str, str, int, str, str], dict[str, str]]


def report(results: Sequence[ProjectResult], judgements: Judgements) -> str:
    out = io.StringIO()
    totals = {
        "files": 0,
        "ok": 0,
        "passed": 0,
        "timeout": 0,
        "stale": 0,
        "found": 0,
        "hazard": 0,
        "missed": 0,
        "unc": 0,
    }
    out.write(
        "| project | files run | ran ok / failed why | stale calls the guard saw | found by the "
        "linter (default) | default findings not confirmed |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
    )
    for result in results:
        project, comparison = result.project, result.comparison
        files = "<br>".join(f"`{o.path}` ({o.seconds:.0f} s)" for o in result.outcomes)
        statuses = "<br>".join(_cell(f"{o.path.rsplit('/', 1)[-1]}: {o.status}")
                               for o in result.outcomes)  # fmt: skip
        stale = [s for o in result.outcomes for s in o.stale]
        seen = "<br>".join(_cell(f"`{s.function}` reads `{s.value}` ({s.code}, {s.path}:{s.line})")
                           for s in stale) or "none"  # fmt: skip
        found_lines = [f"`{s.function}` `{s.value}`: {f.code} at {f.path}:{f.line}"
                       for s, f in comparison.found]  # fmt: skip
        found_lines += [f"`{s.function}` `{s.value}`: only API hazard {f.code} at {f.path}:{f.line}"
                        for s, f in comparison.hazard_only]  # fmt: skip
        found_lines += [f"`{s.function}` `{s.value}`: **missed**" for s in comparison.missed]
        found_lines += [
            f"**not parsed** by the linter: {f.path}:{f.line} ({f.message[:60]})"
            for f in result.unparsed
        ]
        unconfirmed = []
        for f in comparison.unconfirmed:
            row = judgements.get((project.name, f.path, f.line, f.code, f.name), {})
            reason = f"{row['verdict']}: {row['reason']}" if row else "unjudged"
            unconfirmed.append(
                f"{f.code} `{f.name}` in `{f.function}` at {f.path}:{f.line} ({reason})"
            )
        out.write(
            f"| {project.name} `{project.commit[:10]}` | {files} | {statuses} | {seen} | "
            f"{_cell('<br>'.join(found_lines)) or '-'} | "
            f"{_cell('<br>'.join(unconfirmed)) or 'none'} |\n"
        )
        totals["files"] += len(result.outcomes)
        totals["ok"] += sum(o.status == "ok" for o in result.outcomes)
        totals["passed"] += sum(o.status.startswith("ok (") for o in result.outcomes)
        totals["timeout"] += sum(o.status.startswith("timeout") for o in result.outcomes)
        totals["stale"] += len(stale)
        totals["found"] += len(comparison.found)
        totals["hazard"] += len(comparison.hazard_only)
        totals["missed"] += len(comparison.missed)
        totals["unc"] += len(comparison.unconfirmed)
    recall = f"{totals['found'] / totals['stale']:.0%}" if totals["stale"] else "n/a"
    failed = totals["files"] - totals["ok"] - totals["passed"] - totals["timeout"]
    out.write(
        f"\n{len(results)} projects, {totals['files']} files run: {totals['ok']} to the end, "
        f"{totals['passed']} to the end past cells that raised, {totals['timeout']} stopped at "
        f"their time limit, {failed} failed; "
        f"{totals['stale']} stale calls seen by the guard, {totals['found']} of them default "
        f"findings (recall {recall}), {totals['hazard']} API hazards only, {totals['missed']} "
        f"missed; {totals['unc']} default findings in files that ran not confirmed by the guard.\n"
    )
    missed = [(r.project, s) for r in results for s in r.comparison.missed]
    if missed:
        out.write("\nStale calls the linter did not report at default:\n")
        for project, s in missed:
            row = judgements.get((project.name, s.path, s.line, s.code, s.value), {})
            note = f" ({row['verdict']}: {row['reason']})" if row else ""
            out.write(
                f"- {project.name} {s.path}:{s.line} `{s.function}` reads `{s.value}` ({s.kind}, "
                f"{s.code}): {s.summary}; stale call at {s.call}{note}\n"
            )
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    prep = commands.add_parser("prepare", help="export the pinned projects")
    prep.add_argument("--dest", type=Path, required=True)
    prep.add_argument("--mirrors", type=Path, help="bare mirrors: MIRRORS/owner+name/repo")
    prep.add_argument("--only", nargs="*", help="owner/name of the projects to export")
    run = commands.add_parser("run", help="run the files under the guard and compare")
    run.add_argument("--checkouts", type=Path, required=True)
    run.add_argument("--tool", default="flake8-jax-closure", help="command (split on spaces)")
    run.add_argument("--only", nargs="*", help="owner/name of the projects to run")
    run.add_argument("--write", action="store_true", help=f"write the report to {RESULTS}")
    run.add_argument("--keep", type=Path, help="keep each run's stderr and events here")
    run.add_argument("--note", default="", help="a line for the report's head (the versions)")
    run.add_argument(
        "--outcomes",
        type=Path,
        help="JSON of each file's outcome: read to skip files already run with the same "
        "project, commit and options, then written with this run's",
    )
    args = parser.parse_args(argv)
    projects = read_projects()
    if reserved(projects):
        raise SystemExit(
            f"kept for a held-out split, not to be run: {', '.join(reserved(projects))}"
        )
    if args.only:
        projects = [p for p in projects if p.name in args.only]
    if args.command == "prepare":
        prepare(projects, args.dest, args.mirrors)
        return 0
    tool = args.tool.split()
    saved = load_outcomes(args.outcomes) if args.outcomes and args.outcomes.exists() else {}
    results = []
    for project in projects:
        root = (args.checkouts / project.folder).resolve()
        outcomes = []
        for entry in project.entries:
            key = outcome_key(project, entry)
            if key in saved:
                outcomes.append(saved[key])
                continue
            with tempfile.TemporaryDirectory(prefix="guard-recall-") as scratch:
                outcome = run_entry(tool, project, entry, root, Path(scratch))
                if args.keep:
                    keep = args.keep / project.folder / entry.path.replace("/", "+")
                    keep.mkdir(parents=True, exist_ok=True)
                    for name in os.listdir(scratch):
                        shutil.copy(Path(scratch) / name, keep / name)
            print(f"{project.name} {entry.path}: {outcome.status} ({outcome.seconds:.0f} s, "
                  f"{len(outcome.stale)} stale)", file=sys.stderr)  # fmt: skip
            outcomes.append(outcome)
            saved[key] = outcome
            if args.outcomes:
                save_outcomes(args.outcomes, saved)
        findings = check_files(tool, root, [e.path for e in project.entries])
        ran = {o.path for o in outcomes}
        stale = [s for o in outcomes for s in o.stale]
        unparsed = [f for f in findings if f.code == "E999"]
        results.append(ProjectResult(project, outcomes, compare(stale, findings, ran), unparsed))
    text = report(results, read_judgements())
    sys.stdout.write(text)
    if args.write:
        RESULTS.write_text(
            "# Guard recall on real code\n\nWritten by `python benchmarks/guard_recall.py run "
            "--checkouts DIR --write`.\n\n" + (f"{args.note}\n\n" if args.note else "") + text,
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
