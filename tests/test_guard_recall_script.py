"""The guard-recall benchmark's own logic on synthetic inputs: its list, the notebook converter,
the parsing of the guard's warnings and the linter's JSON, and the comparison of both."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from guard_recall import (  # noqa: E402
    Entry,
    Finding,
    Outcome,
    Project,
    ProjectResult,
    Relocate,
    compare,
    convert_notebook,
    load_outcomes,
    outcome_key,
    parse_findings,
    parse_stale,
    parse_stale_calls,
    read_events,
    read_projects,
    report,
    reserved,
    save_outcomes,
)


def _notebook(*cells: tuple[str, str] | tuple[str, str, list[str]]) -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": c[0],
                    "source": c[1],
                    "metadata": {"tags": c[2] if len(c) > 2 else []},
                }
                for c in cells
            ]
        }
    )


def test_the_list_reads_projects_and_their_files(tmp_path: Path) -> None:
    listing = tmp_path / "projects.txt"
    listing.write_text(
        "# comment\na/one 1111  # course notebooks\n  nb.ipynb\n"
        "  s/train.py timeout=60 shim=mnist env:EPOCHS=1 arg=--steps arg=3 cwd=s  # small\n",
        encoding="utf-8",
    )
    (project,) = read_projects(listing)
    assert (project.name, project.commit, project.note) == ("a/one", "1111", "course notebooks")
    assert project.entries == [
        Entry("nb.ipynb"),
        Entry("s/train.py", 60, "s", ["mnist"], {"EPOCHS": "1"}, ["--steps", "3"], "small"),
    ]


def test_the_converter_turns_ipython_lines_into_pass_and_keeps_positions() -> None:
    converted = convert_notebook(
        _notebook(
            ("markdown", "# title"),
            ("code", "!pip install jax\n%matplotlib inline\nimport jax\nfiles = !ls\njax.jit?"),
            ("code", "%%bash\necho hi"),
            ("code", "%%time\nx = (10\n% 3)\ns = '''\n!not shell\n'''"),
            ("code", "if True:\n    %timeit f(1)\n"),
        )
    )
    lines = converted.text.splitlines()
    assert lines[:5] == ["pass", "pass", "import jax", "files = None", "pass"]
    assert lines[6:8] == ["# %%bash", "# echo hi"]
    assert lines[9:15] == ["pass", "x = (10", "% 3)", "s = '''", "!not shell", "'''"]
    assert lines[16:18] == ["if True:", "    pass"]
    assert converted.origin[0] == (2, 1)
    assert converted.origin[11] == (4, 3)
    assert converted.origin[17] == (5, 2)
    compile(converted.text, "converted.py", "exec")


def test_a_cell_tagged_raises_exception_is_wrapped_and_the_others_are_not() -> None:
    converted = convert_notebook(
        _notebook(
            ("code", "x = 1"), ("code", "y = [1][3]\ns = '''\nkept\n'''", ["raises-exception"])
        )
    )
    namespace: dict[str, object] = {}
    exec(compile(converted.text, "converted.py", "exec"), namespace)  # noqa: S102
    assert namespace["x"] == 1 and "y" not in namespace
    assert "kept" in converted.text.splitlines()
    line = converted.text.splitlines().index("    y = [1][3]")
    assert converted.origin[line] == (2, 1)


MESSAGE = (
    "compiled function 'Model.step' (/tmp/x/nb_converted.py:3) reused a trace that read "
    'self.cfg["lr"] (an attribute of self, at /tmp/x/nb_converted.py:4), which has changed since '
    "that trace: float 0.1 -> float 0.01\n"
    '  JC104: pass self.cfg["lr"] to the compiled function as an argument; `flake8-jax-closure '
    "rule JC104` explains"
)


def _relocate(tmp_path: Path) -> Relocate:
    converted = convert_notebook(
        _notebook(("markdown", "m"), ("code", "import jax\nclass Model:\n  def step(self):\n    x"))
    )
    return Relocate(tmp_path, {"/tmp/x/nb_converted.py": ("d/nb.ipynb", converted)})


def test_a_stale_warning_is_parsed_and_placed_in_its_notebook_cell(tmp_path: Path) -> None:
    stale = parse_stale(MESSAGE, tmp_path, _relocate(tmp_path))
    assert stale is not None
    assert (stale.function, stale.value, stale.kind, stale.code) == (
        "Model.step",
        'self.cfg["lr"]',
        "attribute of self",
        "JC104",
    )
    assert (stale.path, stale.line, stale.root) == ("d/nb.ipynb:cell 2", 4, "self.cfg")
    assert stale.summary == "float 0.1 -> float 0.01"


def test_events_are_read_once_per_function_value_and_read(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    entry = {"message": MESSAGE, "filename": "/tmp/x/nb_converted.py", "lineno": 4}
    events.write_text(json.dumps(entry) + "\n" + json.dumps(entry) + "\n{cut", encoding="utf-8")
    (stale,) = read_events(events, tmp_path, _relocate(tmp_path))
    assert stale.call == "d/nb.ipynb:cell 2:4"


def _finding(path: str, line: int, code: str, name: str, function: str) -> Finding:
    return Finding(path, line, code, name, function, "")


def test_findings_are_parsed_from_the_linters_json() -> None:
    output = json.dumps([
        {"code": "JC104", "filename": "./d/nb.ipynb", "cell": 2, "line": 4, "name": "self",
         "function": "step", "message": "'step' (jax.jit) reads 'self.cfg', set ..."},
        {"code": "E902", "filename": "b.ipynb", "cell": None, "line": 1, "message": "not Python"},
    ])  # fmt: skip
    assert parse_findings(output) == [
        Finding(
            "d/nb.ipynb:cell 2",
            4,
            "JC104",
            "self.cfg",
            "step",
            "'step' (jax.jit) reads 'self.cfg', set ...",
        )  # fmt: skip
    ]


def test_a_stale_call_is_found_by_its_function_or_by_its_read(tmp_path: Path) -> None:
    stale = parse_stale(MESSAGE, tmp_path, _relocate(tmp_path))
    assert stale is not None
    by_function = _finding("d/nb.ipynb:cell 2", 9, "JC104", "self.cfg", "step")
    by_read = _finding("d/nb.ipynb:cell 2", 4, "JC104", "self.cfg", "other")
    other_name = _finding("d/nb.ipynb:cell 2", 4, "JC104", "self.lr", "step")
    hazard = _finding("d/nb.ipynb:cell 2", 4, "JC204", "self.cfg", "step")
    elsewhere = _finding("e.py", 3, "JC102", "G", "f")
    for finding in (by_function, by_read):
        result = compare([stale], [finding, elsewhere], {"d/nb.ipynb"})
        assert result.found == [(stale, finding)] and not result.missed
        assert result.unconfirmed == []
    result = compare([stale], [other_name, hazard, elsewhere], {"d/nb.ipynb", "e.py"})
    assert result.found == [] and result.hazard_only == [(stale, hazard)]
    assert result.unconfirmed == [other_name, elsewhere]
    result = compare([stale], [elsewhere], {"d/nb.ipynb"})
    assert result.missed == [stale] and result.unconfirmed == []


def test_the_report_names_missed_calls_and_the_reasons_of_unconfirmed_findings(
    tmp_path: Path,
) -> None:
    stale = parse_stale(MESSAGE, tmp_path, _relocate(tmp_path))
    assert stale is not None
    finding = _finding("e.py", 3, "JC102", "G", "f")
    project = Project("a/one", "1111222233334444")
    outcomes = [Outcome("d/nb.ipynb", "ok", 3.0, [stale]), Outcome("e.py", "ok", 1.0, [])]
    result = ProjectResult(project, outcomes, compare([stale], [finding], {"d/nb.ipynb", "e.py"}))
    judgements = {("a/one", "e.py", 3, "JC102", "G"): {"verdict": "not reached", "reason": "r"}}
    text = report([result], judgements)
    assert '`Model.step` `self.cfg["lr"]`: **missed**' in text
    assert "JC102 `G` in `f` at e.py:3 (not reached: r)" in text
    assert "1 stale calls seen by the guard, 0 of them default findings" in text


def test_with_errors_allowed_a_cell_that_does_not_parse_is_left_out_alone() -> None:
    notebook = _notebook(("code", "x = 1"), ("code", "y = # your code here"), ("code", "z = x"))
    converted = convert_notebook(notebook, continue_on_errors=True)
    namespace: dict[str, object] = {}
    exec(compile(converted.text, "converted.py", "exec"), namespace)  # noqa: S102
    assert namespace["z"] == 1 and "y" not in namespace
    assert "# y = # your code here" in converted.text.splitlines()


def test_no_project_of_the_list_is_kept_for_a_later_held_out_split(tmp_path: Path) -> None:
    assert reserved(read_projects()) == []
    ecosystem = tmp_path / "projects.txt"
    ecosystem.write_text("a/one 1 held-out\nb/two 2 held-out-2  # kept\nc/three 3\n", "utf-8")
    projects = [Project("a/one", "1"), Project("B/Two", "2"), Project("c/three", "3")]
    assert reserved(projects, ecosystem) == ["B/Two"]


def test_outcomes_saved_are_reused_only_for_the_same_commit_and_options(tmp_path: Path) -> None:
    stale = parse_stale(MESSAGE, tmp_path, _relocate(tmp_path))
    assert stale is not None
    project = Project("a/one", "1111")
    entry = Entry("d/nb.ipynb", timeout=60)
    saved = {outcome_key(project, entry): Outcome("d/nb.ipynb", "ok", 3.0, [stale])}
    save_outcomes(tmp_path / "o.json", saved)
    assert load_outcomes(tmp_path / "o.json") == saved
    assert outcome_key(project, Entry("d/nb.ipynb", timeout=60, note="x")) in saved
    assert outcome_key(project, Entry("d/nb.ipynb", timeout=90)) not in saved
    assert outcome_key(Project("a/one", "2222"), entry) not in saved


def test_a_file_the_linter_cannot_parse_is_named_in_the_report(tmp_path: Path) -> None:
    output = json.dumps([
        {"code": "E999", "filename": "d/nb.ipynb", "cell": 23, "line": 14,
         "message": "SyntaxError: invalid syntax"},
    ])  # fmt: skip
    (unparsed,) = parse_findings(output)
    assert not unparsed.default
    outcomes = [Outcome("d/nb.ipynb", "ok", 3.0, [])]
    comparison = compare([], [unparsed], {"d/nb.ipynb"})
    assert comparison.unconfirmed == []
    result = ProjectResult(Project("a/one", "1111"), outcomes, comparison, [unparsed])
    assert "**not parsed** by the linter: d/nb.ipynb:cell 23:14 (SyntaxError" in report(
        [result], {}
    )


def test_an_outcome_is_run_again_when_a_shim_it_loads_changes(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text("", "utf-8")
    (tmp_path / "shim_data.py").write_text("A = 1\n", "utf-8")
    project, entry = Project("a/one", "1111"), Entry("s.py", shims=["data"])
    before = outcome_key(project, entry, tmp_path)
    assert outcome_key(project, Entry("s.py"), tmp_path) != before
    (tmp_path / "shim_data.py").write_text("A = 2\n", "utf-8")
    assert outcome_key(project, entry, tmp_path) != before


def test_the_values_a_warning_adds_are_stale_calls_too(tmp_path: Path) -> None:
    message = (
        "compiled function 'sim.<locals>.step' (/p/ex.py:93) reused a trace that read eps2_x (a "
        "closure variable, at /p/ex.py:97), which has changed since that trace: Array f32[3] [0.0] "
        "-> Array f32[3] [1.0]\n"
        "  also changed: eps2_y (a closure variable, at /p/ex.py:97): Array f32[3] [0.0] -> "
        "Array f32[3] [2.0]\n"
        "  also changed: self.scale (an attribute of self, at /p/ex.py:98): 1 -> 2\n"
        "  JC101: make eps2_x an argument of the compiled function"
    )
    calls = parse_stale_calls(message, tmp_path, Relocate(Path("/p")))
    assert [(c.value, c.kind, c.path, c.line, c.code) for c in calls] == [
        ("eps2_x", "closure variable", "ex.py", 97, "JC101"),
        ("eps2_y", "closure variable", "ex.py", 97, "JC101"),
        ("self.scale", "attribute of self", "ex.py", 98, "JC104"),
    ]
    assert calls[1].summary == "Array f32[3] [0.0] -> Array f32[3] [2.0]"
    assert {c.function for c in calls} == {"sim.<locals>.step"}
