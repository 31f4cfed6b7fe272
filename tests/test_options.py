"""Each option is declared once: from its declaration come its flag, its configuration key and
check, its editor setting, and the field it fills; a new one flows through all of them."""

from __future__ import annotations

import argparse
import io
import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import pytest
from fixture_support import ROOT

from flake8_jax_closure import options
from flake8_jax_closure.cache import FindingsCache
from flake8_jax_closure.cli import main
from flake8_jax_closure.cli.arguments import build_parser, overrides_from_args
from flake8_jax_closure.config import (
    FileConfig,
    Overrides,
    Resolved,
    find_config,
    overrides_from,
    resolve,
)
from flake8_jax_closure.flake8_plugin import JaxClosureChecker
from flake8_jax_closure.option_kinds import Patterns, Selectors, Switch
from flake8_jax_closure.options import OPTIONS, Option, Place, Target
from flake8_jax_closure.settings import RunOptions, Settings

# Fields of ``Resolved`` that no option fills.
_RESOLVED_OWN = {"settings", "root", "config_path"}


def _example(option: Option[Any], place: Place) -> tuple[Any, Any]:
    """A value other than the default, as ``place`` writes it, and as it resolves."""
    kind = option.kind
    if isinstance(kind, Switch):
        given = not option.default
        return given, given
    if isinstance(kind, Patterns):
        if place is Place.FLAG:
            return "m.py:JC101", (("m.py", ("JC101",)),)
        return {"m.py": ["JC101"]}, (("m.py", ("JC101",)),)
    value = "JC101" if isinstance(kind, Selectors) else "mylib.fast_jit"
    if place is Place.EDITOR or place is Place.FILE:
        return [value], (value,)
    return value, (value,)


def _resolve_given(option: Option[Any], place: Place, folder: Path) -> Resolved:
    given, _ = _example(option, place)
    if place is Place.FLAG:
        argv = [option.flag] if isinstance(option.kind, Switch) else [option.flag, given]
        return resolve(
            FileConfig(), overrides_from_args(build_parser().parse_args(["check", *argv]))
        )
    if place is Place.EDITOR:
        camel = re.sub(r"-(.)", lambda m: m.group(1).upper(), option.name)
        return resolve(FileConfig(), overrides_from({camel: given}))
    if place is Place.FLAKE8:
        (folder / "setup.cfg").write_text(f"[flake8]\n{option.name} = {given}\n")
    else:
        value = repr(given).replace("True", "true").replace("False", "false")
        if isinstance(given, dict):
            value = "{" + ", ".join(f"{k!r} = {v!r}" for k, v in given.items()) + "}"
        text = f"[tool.flake8-jax-closure]\n{option.name} = {value}\n"
        (folder / "pyproject.toml").write_text(text)
    return resolve(find_config(folder))


_CASES = [(option, place) for option in OPTIONS for place in sorted(option.places, key=str)]


@pytest.mark.parametrize("option, place", _CASES, ids=[f"{o.name}-{p.value}" for o, p in _CASES])
def test_every_option_reaches_its_field_from_every_place(
    option: Option[Any], place: Place, tmp_path: Path
) -> None:
    resolved = _resolve_given(option, place, tmp_path)
    _, expected = _example(option, place)
    base = {o.name: o for o in OPTIONS}[option.extends or option.name]
    record: Any = resolved.settings if base.target is Target.SETTINGS else resolved
    value = getattr(record, base.field)
    if isinstance(value, frozenset):
        assert set(expected) <= value
    elif option.extends is not None:
        assert value[-len(expected) :] == expected  # added after the base's default
    else:
        assert value == expected
    if base.per_file is not None:
        ignored = resolved.settings_for(resolved.root / "m.py").ignore
        assert "JC101" in ignored


def test_every_field_has_its_declaration() -> None:
    """A field added to ``Settings`` or ``Resolved`` without an option (or the other way
    round) fails here, not silently."""
    declared = {o.field for o in OPTIONS if o.target is Target.SETTINGS}
    assert {f.name for f in fields(Settings)} == declared
    declared = {o.field for o in OPTIONS if o.target is Target.FILES}
    assert {f.name for f in fields(Resolved)} - _RESOLVED_OWN == declared
    for option in OPTIONS:
        assert (option.target is None) == (option.extends is not None), option.name


def test_defaults_are_the_declared_ones() -> None:
    resolved = resolve(FileConfig())
    assert resolved.settings == Settings()
    assert resolved.exclude == options.DEFAULT_EXCLUDE
    assert (resolved.force_exclude, resolved.respect_gitignore) == (False, True)


def test_unknown_key_lists_the_declared_keys(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-jax-closure]\nselct = []\n")
    (tmp_path / "m.py").write_text("x = 1\n")
    err = io.StringIO()
    assert main(["check", str(tmp_path / "m.py")], stdout=io.StringIO(), stderr=err) == 2
    keys = ", ".join(o.name for o in OPTIONS if Place.FILE in o.places)
    assert keys == (
        "select, extend-select, ignore, extend-ignore, jax-compile-functions, exclude, "
        "extend-exclude, unsafe-fixes, force-exclude, respect-gitignore, per-file-ignores"
    )
    assert f"unknown key 'selct' (known: {keys})" in err.getvalue()


def test_the_readme_shows_every_configuration_key() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    example = readme.split("[tool.flake8-jax-closure]\n", 1)[1].split("```", 1)[0]
    for option in OPTIONS:
        if Place.FILE in option.places:
            assert re.search(rf"^(\[tool\.flake8-jax-closure\.)?{option.name}\b", example, re.M)


def test_flake8_gets_the_options_declared_for_it() -> None:
    added: list[str] = []

    ignored: list[str] = []

    class Manager:
        def add_option(self, flag: str, **kwargs: Any) -> None:
            added.append(flag)

        def extend_default_ignore(self, codes: list[str]) -> None:
            ignored.extend(codes)

    JaxClosureChecker.add_options(Manager())
    assert added == [o.flag for o in OPTIONS if Place.FLAKE8 in o.places]
    assert ignored == ["JC2"]  # API hazards are opt-in under flake8 too


@dataclass(frozen=True)
class _SettingsWithAnotherOption(Settings):
    fast_mode: bool = False


def test_a_new_option_flows_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Declaring an option (and its field) is all it takes: flag, key, editor setting, the
    settings per file, the cache key."""
    new = Option("fast-mode", Switch(), False, "analyse faster", options.ANALYSIS)
    monkeypatch.setattr(options, "OPTIONS", (*OPTIONS, new))
    monkeypatch.setattr(options, "Settings", _SettingsWithAnotherOption)

    args = build_parser().parse_args(["check", "--fast-mode", "--per-file-ignores", "m.py:JC1"])
    flagged = resolve(FileConfig(), overrides_from_args(args))
    per_file = flagged.settings_for(Path("m.py").absolute())
    assert per_file.ignore == ("JC1",)
    assert per_file == replace(flagged.settings, ignore=("JC1",))
    assert per_file.fast_mode is True

    (tmp_path / "pyproject.toml").write_text("[tool.flake8-jax-closure]\nfast-mode = true\n")
    assert resolve(find_config(tmp_path)).settings.fast_mode is True
    editor = resolve(FileConfig(), overrides_from({"fastMode": True}))
    assert editor.settings.fast_mode is True

    cache = FindingsCache(tmp_path)
    off = resolve(FileConfig()).settings
    assert cache.key(b"", off, RunOptions()) != cache.key(b"", flagged.settings, RunOptions())


def test_cache_key_follows_every_run_option(tmp_path: Path) -> None:
    cache = FindingsCache(tmp_path)
    keys = {
        cache.key(b"x = 1\n", Settings(), run)
        for run in (RunOptions(), RunOptions(lazy=False), RunOptions(with_edits=False))
    }
    assert len(keys) == 3


@pytest.mark.parametrize(
    "editor",
    [{"select": "JC101"}, {"unsafeFixes": "yes"}, {"perFileIgnores": ["m.py"]}, {"nope": 1}],
)
def test_editor_values_of_the_wrong_kind_are_left_out(editor: dict[str, Any]) -> None:
    assert overrides_from(editor) == Overrides()


def test_flag_errors_name_the_flag_once(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["check", "--per-file-ignores", ":JC101"])
    assert "argument --per-file-ignores: ':JC101' has no file pattern" in capsys.readouterr().err
    namespace = argparse.Namespace(select=None, unsafe_fixes=None)
    assert overrides_from_args(namespace) == Overrides()
