"""Jupyter notebooks: the fixture notebooks' findings and fixes, the untouched bytes, the outputs
that name cells, IPython's syntax, executed order, and the notebooks refused."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from fixture_support import FIXTURES, Fixture, notebook_fixtures, render

from flake8_jax_closure.cli import main
from flake8_jax_closure.cli.per_file import fix_file
from flake8_jax_closure.engine import check_source
from flake8_jax_closure.files import decode
from flake8_jax_closure.notebook.fixing import _problem
from flake8_jax_closure.notebook.magics import mask_cell
from flake8_jax_closure.notebook.reader import read_notebook
from flake8_jax_closure.notebook.writer import source_spans
from flake8_jax_closure.settings import RunOptions, Settings

NOTEBOOKS = notebook_fixtures()
GLOBAL = FIXTURES / "JC102" / "notebook_global.ipynb"


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def notebook(*cells: tuple[str, object], **top: object) -> str:
    """A notebook as nbformat writes one (indent 1, sorted keys, a final newline)."""
    data: dict[str, object] = {
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": source}
            | ({"execution_count": None, "outputs": []} if kind == "code" else {})
            for kind, source in cells
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    data.update(top)
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def outside_sources(text: str) -> list[str]:
    """The document's text between the cells' ``source`` values."""
    pieces, position = [], 0
    for start, end in sorted(source_spans(text).values()):
        pieces.append(text[position:start])
        position = end
    return [*pieces, text[position:]]


# -- the fixture notebooks --------------------------------------------------------------------


def test_every_rule_has_a_notebook_with_findings() -> None:
    assert {f.rules for f in NOTEBOOKS if f.expects_findings} == {
        ("JC101",),
        ("JC102",),
        ("JC103",),
        ("JC104",),
    }
    assert any(not f.expects_findings for f in NOTEBOOKS)


@pytest.mark.parametrize("fixture", NOTEBOOKS, ids=lambda f: f.name)
def test_findings_match_snapshot_and_marks(
    fixture: Fixture, request: pytest.FixtureRequest
) -> None:
    notebook = fixture.notebook
    found = check_source(fixture.source, fixture.settings(), lines_not_run=notebook.lines_not_run)
    actual = render(found, notebook.cell_map)
    if request.config.getoption("--update-snapshots"):
        fixture.findings_path.write_text(actual, encoding="utf-8")
    assert actual == fixture.findings_path.read_text(encoding="utf-8")
    assert [(f.line, f.code) for f in found] == fixture.marked()
    assert bool(found) == fixture.expects_findings


@pytest.mark.parametrize("fixture", NOTEBOOKS, ids=lambda f: f.name)
def test_fix_changes_only_the_fixed_cells_and_is_idempotent(
    fixture: Fixture, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    path = tmp_path / fixture.path.name
    shutil.copyfile(fixture.path, path)
    settings = fixture.settings(unsafe_fixes=True)
    result = fix_file(str(path), settings, RunOptions())
    assert result.error is None and result.syntax_error is None
    fixed = path.read_text(encoding="utf-8")
    if not fixture.expects_findings:
        assert fixed == fixture.path.read_text(encoding="utf-8")
        return
    if request.config.getoption("--update-snapshots"):
        fixture.fixed_path.write_text(fixed, encoding="utf-8")
    assert fixed == fixture.fixed_path.read_text(encoding="utf-8")
    original = fixture.path.read_text(encoding="utf-8")
    # Outputs, metadata, counts, key order, indentation and the final newline, byte for byte.
    assert outside_sources(fixed) == outside_sources(original)
    changed = [
        index
        for index, (old, new) in enumerate(
            zip(json.loads(original)["cells"], json.loads(fixed)["cells"], strict=True)
        )
        if old != new
    ]
    assert changed and len(changed) < len(json.loads(original)["cells"])
    again = fix_file(str(path), settings, RunOptions())
    assert again.fixed == 0 and again.new_text is None
    assert path.read_text(encoding="utf-8") == fixed
    assert check_source(read_notebook(decode(fixed.encode(), str(path))).module, settings) == []


def test_text_json_github_and_sarif_name_the_cell(tmp_path: Path) -> None:
    code, out, _ = run("check", "--no-cache", str(GLOBAL))
    assert code == 1
    assert out.startswith(
        f"{GLOBAL}:cell 3:3:16: JC102 [*] 'scaled' (jax.jit) reads global 'SCALE', rebound in "
        "cell 6 at line 1 at module level; compiled calls keep the value from the first trace: "
        "traced in cell 4 at line 1, changed in cell 6 at line 1, reused in cell 6 at line 2\n"
    )
    (entry,) = json.loads(run("check", "--no-cache", "--format", "json", str(GLOBAL))[1])
    assert (entry["cell"], entry["line"], entry["column"]) == (3, 3, 16)
    assert [(s["cell"], s["line"], s["role"]) for s in entry["witness"]] == [
        (4, 1, "trace"),
        (6, 1, "change"),
        (6, 2, "reuse"),
    ]
    (edit,) = entry["fix"]["edits"]
    assert (edit["start"]["cell"], edit["start"]["line"]) == (3, 1)
    assert (edit["end"]["cell"], edit["end"]["line"]) == (3, 4)
    github = run("check", "--no-cache", "--format", "github", str(GLOBAL))[1]
    assert github.startswith(
        f"::warning file={GLOBAL},line=1,col=1,endLine=1,endColumn=1,title=JC102::"
        "cell 3:3:16: JC102 'scaled'"
    )
    sarif = json.loads(run("check", "--no-cache", "--format", "sarif", str(GLOBAL))[1])
    (result,) = sarif["runs"][0]["results"]
    assert result["message"]["text"].startswith("cell 3:3:16: JC102 ")
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region["properties"] == {"cell": 3, "line": 3, "column": 16}
    steps = result["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["message"]["text"] for s in steps] == [
        "traced in cell 4 at line 1",
        "changed in cell 6 at line 1",
        "reused in cell 6 at line 2",
    ]
    assert "fixes" not in result  # SARIF replaces regions of files, not of cells


def test_a_python_file_has_no_cell_in_json(tmp_path: Path) -> None:
    (entry,) = json.loads(
        run("check", "--no-cache", "--format", "json", str(FIXTURES / "JC101" / "seed.py"))[1]
    )
    assert entry["cell"] is None and {s["cell"] for s in entry["witness"]} == {None}


def test_diff_shows_each_changed_cell(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    shutil.copyfile(GLOBAL, path)
    code, out, err = run("diff", str(path))
    assert code == 1 and "would fix 1 finding" in err
    assert out.startswith(f"--- {path}:cell 3\n+++ {path}:cell 3\n@@ -1,3 +1,7 @@\n @jax.jit\n")
    assert "+    return _scaled_compiled(x, SCALE=SCALE)\n" in out
    assert path.read_bytes() == GLOBAL.read_bytes()


def test_executed_order_is_said() -> None:
    code, out, _ = run(
        "check", "--no-cache", str(FIXTURES / "JC102" / "notebook_executed_order.ipynb")
    )
    assert code == 1
    assert out.splitlines()[0].endswith(
        "traced in cell 3 at line 1, changed in cell 5 at line 1, reused in cell 4 at line 1, "
        "in executed order"
    )


def test_in_file_order_the_same_cells_are_clean() -> None:
    raw = (FIXTURES / "JC102" / "notebook_executed_order.ipynb").read_text(encoding="utf-8")
    data = json.loads(raw)
    for cell in data["cells"]:
        cell.pop("execution_count", None)
    in_order = read_notebook(decode(json.dumps(data).encode(), "nb.ipynb"))
    assert not in_order.cell_map.executed_order
    assert check_source(in_order.module, Settings()) == []


@pytest.mark.parametrize("counts", [(0, 0, 0, 0), (1, 2, 0, 0), (1, 0, 0, 2)])
def test_a_count_of_zero_is_no_run(counts: tuple[int, ...]) -> None:
    """Jupyter numbers runs from 1; some tools save 0 for a cell that did not run. Read as a
    run, 0 would put those cells first (``def model`` of a later cell before the calls)."""
    raw = (FIXTURES / "JC102" / "notebook_executed_order.ipynb").read_text(encoding="utf-8")
    data = json.loads(raw)
    code_cells = [cell for cell in data["cells"] if cell["cell_type"] == "code"]
    for cell, count in zip(code_cells, counts, strict=True):
        cell["execution_count"] = count
    in_order = read_notebook(decode(json.dumps(data).encode(), "nb.ipynb"))
    assert not in_order.cell_map.executed_order
    assert check_source(in_order.module, Settings()) == []


def test_folders_are_walked_for_notebooks_and_exclusion_applies(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    shutil.copyfile(GLOBAL, tmp_path / "pkg" / "nb.ipynb")
    shutil.copyfile(GLOBAL, tmp_path / "pkg" / "skipped.ipynb")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    shutil.copyfile(GLOBAL, tmp_path / ".ipynb_checkpoints" / "nb-checkpoint.ipynb")
    code, out, _ = run("check", "--no-cache", "--extend-exclude", "skipped.ipynb", str(tmp_path))
    assert code == 1
    assert [line.split(":cell")[0] for line in out.splitlines()[:-1]] == [
        str(tmp_path / "pkg" / "nb.ipynb")
    ]


def test_cached_findings_still_name_cells(tmp_path: Path) -> None:
    first = run("check", str(GLOBAL))
    assert first == run("check", str(GLOBAL))
    assert ":cell 3:3:16: " in first[1]


def test_fix_from_stdin_prints_the_fixed_notebook() -> None:
    raw = GLOBAL.read_text(encoding="utf-8")
    code, out, _ = run("fix", "--stdin-filename", "nb.ipynb", "-", stdin=raw)
    assert code == 0
    assert out == (FIXTURES / "JC102" / "notebook_global.fixed.ipynb").read_text(encoding="utf-8")


# -- forms the writer keeps -------------------------------------------------------------------

STALE_CELLS = (
    ("code", "import jax\nSCALE = 1.0\n\n@jax.jit\ndef f(x):\n    return x * SCALE"),
    ("code", "f(1.0)\nSCALE = 2.0\nf(1.0)"),
)


@pytest.mark.parametrize(
    "dump",
    [
        lambda data: json.dumps(data, indent=2, ensure_ascii=True),
        lambda data: json.dumps(data),
        lambda data: json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False),
        lambda data: json.dumps(data, indent=1).replace("\n", "\r\n") + "\r\n",
    ],
    ids=["indent 2, ASCII, no final newline", "one line", "nbformat", "CRLF"],
)
def test_fix_keeps_the_files_own_layout(tmp_path: Path, dump: object) -> None:
    data = json.loads(notebook(*STALE_CELLS))
    data["metadata"]["note"] = "résumé \u2603"
    data["cells"][0]["source"] = STALE_CELLS[0][1].splitlines(keepends=True)
    data["cells"][1]["source"] = "f(1.0)\nSCALE = 2.0\nf(1.0)\n"  # one string, kept so
    text = dump(data)  # type: ignore[operator]
    path = tmp_path / "nb.ipynb"
    path.write_bytes(text.encode("utf-8"))
    code, _, _ = run("fix", str(path))
    fixed = path.read_bytes().decode("utf-8")
    assert code == 0 and fixed != text
    assert outside_sources(fixed) == outside_sources(text)
    cells = json.loads(fixed)["cells"]
    assert isinstance(cells[0]["source"], list) and "_f_compiled" in "".join(cells[0]["source"])
    assert cells[1]["source"] == "f(1.0)\nSCALE = 2.0\nf(1.0)\n"
    assert run("fix", str(path))[0] == 0 and path.read_bytes().decode("utf-8") == fixed
    if "\r\n" in text:
        assert "\n" not in fixed.replace("\r\n", "")


def test_a_fix_that_would_rewrite_a_magic_is_declined(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    cells = (
        (
            "code",
            "import jax\nSCALE = 1.0\n\n@jax.jit\ndef f(x):\n    %time y = 1\n    return x * SCALE",
        ),
        STALE_CELLS[1],
    )
    path.write_text(notebook(*cells), encoding="utf-8")
    before = path.read_bytes()
    code, out, err = run("fix", "--show-source", str(path))
    assert code == 1 and "fixed 0 findings, 1 remaining" in err
    assert "no fix: the fix would rewrite an IPython magic or shell line of cell 1" in out
    assert path.read_bytes() == before


def test_an_edit_across_two_cells_is_named() -> None:
    text = notebook(("code", "a = 1\nb = 2"), ("markdown", "x"), ("code", "c = 3"))
    nb = read_notebook(decode(text.encode(), "nb.ipynb"))
    assert _problem(nb.cells, 2, 3) == (
        "the fix's edits span cells 1 and 3 of the notebook; a cell takes back its own lines only"
    )
    assert _problem(nb.cells, 1, 2) is None and _problem(nb.cells, 3, 2) is None


# -- IPython's syntax -------------------------------------------------------------------------

CELLS_WITH_MAGICS = [
    "import os\n%matplotlib inline\n!pip install -q x\nfiles = !ls\nfor i in range(2):\n"
    "    %time print(i)\nos.path?\n??os\ny = (1\n% 2)\ns = '''\n!not a shell line\n'''\n"
    "%run a \\\n   b\n",
    "%%bash\necho hi\n",
    "%%time\nz = 1\n!ls\n",
    "try:\n    import tinygp\nexcept ImportError:\n    %pip install -q tinygp\n",
]


@pytest.mark.parametrize("cell", CELLS_WITH_MAGICS)
def test_masked_lines_are_the_lines_ipython_transforms(cell: str) -> None:
    transformer = pytest.importorskip("IPython.core.inputtransformer2").TransformerManager()
    lines = cell.splitlines(keepends=True)
    masked_lines, masked = mask_cell(lines)
    assert len(masked_lines) == len(lines)
    compile("".join(masked_lines), "cell", "exec")
    transformed = transformer.transform_cell(cell).splitlines()
    if len(transformed) == 1 and "run_cell_magic" in transformed[0]:
        if "'time'" in transformed[0]:
            assert masked == {0, 2} and masked_lines[1] == "z = 1\n"
        else:
            assert masked == set(range(len(lines)))
        return
    # Lines IPython leaves alone are Python, and kept; the lines it rewrites are masked.
    kept = {i for i, line in enumerate(lines) if line.rstrip("\n") in transformed}
    assert kept == set(range(len(lines))) - masked


def test_a_timed_statement_is_analysed(tmp_path: Path) -> None:
    """``%time f(x)`` runs ``f(x)``: its calls trace and reuse, with positions in the cell."""
    path = tmp_path / "timed.ipynb"
    cells = (
        ("code", "import jax\nSCALE = 1.0\n\n@jax.jit\ndef f(x):\n    return x * SCALE"),
        ("code", "%time y = f(1.0)\nSCALE = 2.0\n%time y = f(1.0)"),
    )
    path.write_text(notebook(*cells), encoding="utf-8")
    code, out, _ = run("check", "--no-cache", "--format", "json", str(path))
    (finding,) = json.loads(out)
    assert code == 1 and finding["code"] == "JC102"
    steps = [(s["role"], s["cell"], s["line"]) for s in finding["witness"]]
    assert steps == [("trace", 2, 1), ("change", 2, 2), ("reuse", 2, 3)]
    calls = [s["column"] for s in finding["witness"] if s["role"] != "change"]
    assert calls == [11, 11]  # the calls' own columns, after `%time`, 1-based
    masked_lines, masked = mask_cell(["%time y = f(1.0)\n"])
    assert masked_lines == ["if 1: y = f(1.0)\n"] and masked == {0}


def test_a_cell_magic_below_form_comments_is_masked(tmp_path: Path) -> None:
    """Colab puts form lines (``# @title``) above a cell magic; the cell is still not Python,
    and the rest of the notebook is checked."""
    masked_lines, masked = mask_cell(["# @title Maths\n", "%%latex\n", "\\frac{1}{2}\n"])
    assert masked_lines == ["# @title Maths\n", "pass\n", "pass\n"] and masked == {1, 2}
    path = tmp_path / "colab.ipynb"
    path.write_text(
        notebook(STALE_CELLS[0], ("code", "# @title Maths\n%%latex\n\\frac{1}{2}"), STALE_CELLS[1]),
        encoding="utf-8",
    )
    code, out, _ = run("check", "--no-cache", "--format", "json", str(path))
    assert code == 1 and [f["code"] for f in json.loads(out)] == ["JC102"]


def test_an_assignment_from_a_magic_keeps_its_target() -> None:
    masked_lines, _ = mask_cell(["    files, n = !ls\n"])
    assert masked_lines == ["    files, n = None\n"]


# -- what is refused ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not a notebook: invalid JSON: Expecting property name enclosed in"),
        ("[1]", "not a notebook: the JSON is not an object"),
        (json.dumps({"nbformat": 3, "worksheets": []}), "nbformat 3 is not supported, only 4"),
        (json.dumps({"nbformat": 4}), "not a notebook: no 'cells' list"),
        (json.dumps({"cells": []}), "not a notebook: no 'nbformat' version"),
        (
            notebook(metadata={"kernelspec": {"language": "julia"}}),
            "not a Python notebook (its kernel's language is 'julia')",
        ),
        (
            notebook(metadata={"language_info": {"name": "R"}}),
            "not a Python notebook (its kernel's language is 'R')",
        ),
        (notebook(("code", 3)), "cell 1: 'source' is neither a string nor a list of strings"),
        (
            notebook(("code", ["a", 1])),
            "cell 1: 'source' is neither a string nor a list of strings",
        ),
    ],
)
@pytest.mark.parametrize("command", ["check", "fix", "diff"])
def test_a_bad_notebook_gets_one_line_and_exit_2(
    tmp_path: Path, text: str, message: str, command: str
) -> None:
    path = tmp_path / "bad.ipynb"
    path.write_text(text, encoding="utf-8")
    code, out, err = run(command, "--no-cache", str(path))
    assert code == 2
    (line,) = [line for line in err.splitlines() if not line.startswith(("fixed", "would fix"))]
    assert line.startswith(f"{path}: {message}")
    assert "Traceback" not in err and path.read_text(encoding="utf-8") == text
    if command == "check":
        (entry,) = json.loads(run("check", "--no-cache", "--format", "json", str(path))[1])
        assert entry["code"] == "E902" and entry["message"].startswith(message)


@pytest.mark.parametrize("command", ["check", "fix", "diff"])
def test_a_folder_walk_skips_notebooks_of_other_languages(tmp_path: Path, command: str) -> None:
    """As ruff does: found in a folder, an R or Julia notebook is not ours to check; named on
    the command line it is refused (the test above)."""
    other = notebook(("code", "x <- 1\n"), metadata={"kernelspec": {"language": "R"}})
    (tmp_path / "analysis.ipynb").write_text(other, encoding="utf-8")
    stale = notebook(*STALE_CELLS)
    (tmp_path / "train.ipynb").write_text(stale, encoding="utf-8")
    code, out, err = run(command, "--no-cache", str(tmp_path))
    assert "analysis.ipynb" not in out + err
    assert (tmp_path / "analysis.ipynb").read_text(encoding="utf-8") == other
    if command == "fix":
        assert code == 0 and (tmp_path / "train.ipynb").read_text(encoding="utf-8") != stale
    else:  # the Python notebook's finding, or its diff
        assert code == 1 and "train.ipynb" in out


def test_a_notebook_without_code_is_clean(tmp_path: Path) -> None:
    path = tmp_path / "notes.ipynb"
    path.write_text(notebook(("markdown", "# Notes")), encoding="utf-8")
    assert run("check", "--no-cache", str(path))[0] == 0
    assert run("fix", str(path))[0] == 0


def test_a_syntax_error_names_its_cell(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    text = notebook(("code", "import jax\n"), ("markdown", "x"), ("code", "x = jax.jit(\n"))
    path.write_text(text, encoding="utf-8")
    code, _, err = run("fix", str(path))
    assert code == 2 and err.startswith(f"{path}:cell 3:1:")
    assert "syntax error" in err and path.read_text(encoding="utf-8") == text


def test_the_benchmarks_notebook_is_the_same_code_as_its_python_file() -> None:
    """``benchmarks/run.py`` times the two side by side; they must hold the same module."""
    import sys

    sys.path.insert(0, str(FIXTURES.parent / "benchmarks"))
    from run import notebook_cells, notebook_of

    cells = notebook_cells(9)
    read = read_notebook(decode(notebook_of(cells).encode(), "cells.ipynb"))
    assert read.module == "".join(cells) and len(read.cells) == 9
    found = check_source(read.module, Settings())
    assert [f.code for f in found] == ["JC102"] * 2  # blocks 0 and 4 of 8
