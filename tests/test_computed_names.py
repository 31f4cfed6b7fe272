"""``getattr`` with a computed name: the names it may take. An f-string keeps its text, each
field any text; any other expression may be any name."""

from __future__ import annotations

import ast

import pytest

from flake8_jax_closure.analysis.facts.collector import _name_pattern
from flake8_jax_closure.analysis.facts.queries import Facts

MODULE = """class Agent:
    def dpm_act(self, x):
        return x

    def update_temp(self, t):
        self.temp = t

    def run(self, method, x):
        return getattr(self, {name})(x)
"""


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        ('f"{method}_act"', "*_act"),
        ('f"update_{name}"', "update_*"),
        ('f"{a}{b}"', "*"),
        ('f"{a}_{b}_fn"', "*_*_fn"),
        ('f"odd*{a}"', "odd[*]*"),  # a star of the text is no wildcard
        ('"update_" + name', "*"),
        ("name", "*"),
    ],
)
def test_the_pattern_of_a_computed_name(name: str, pattern: str) -> None:
    assert _name_pattern(ast.parse(name, mode="eval").body) == pattern


@pytest.mark.parametrize(
    ("name", "reaches"),
    [
        ('f"{method}_act"', {"dpm_act"}),
        ('f"update_{method}"', {"update_temp"}),
        ("method", {"dpm_act", "update_temp", "run"}),
    ],
)
def test_a_computed_name_reaches_the_methods_it_may_name(name: str, reaches: set[str]) -> None:
    source = MODULE.format(name=name)
    facts = Facts(ast.parse(source), source)
    found = {
        method
        for method in ("dpm_act", "update_temp", "run")
        if any(ref.computed for ref in facts.attribute_refs(method))
    }
    assert found == reaches


LOOPED = """class Agent:
    def dpm_act(self, x):
        return x

    def update_temp(self, t):
        self.temp = t

    def run(self, x):
{body}
"""
ANY = {"dpm_act", "update_temp", "run"}


@pytest.mark.parametrize(
    ("lines", "reaches"),
    [
        # A loop over literal strings: those names only.
        (["for name in ['dpm_act', 'run']:", "    getattr(self, name)(x)"], {"dpm_act", "run"}),
        (["for name in ('update_temp',):", "    getattr(self, name)(x)"], {"update_temp"}),
        # A local bound once to a literal, and read only by the loop.
        (["names = ['dpm_act']", "for name in names:", "    getattr(self, name)(x)"], {"dpm_act"}),
        (["names = ['dpm_act']", "return [getattr(self, n)(x) for n in names]"], {"dpm_act"}),
        (["return [getattr(self, n)(x) for n in {'run'}]"], {"run"}),
        # Anything may be added to the list, or the variable bound again: any name.
        (["names = ['run']", "names.append(x)", "for n in names:", "    getattr(self, n)(x)"], ANY),
        (["for name in ['run']:", "    name = name.upper()", "    getattr(self, name)(x)"], ANY),
        (["for name in ['dpm_act', x]:", "    getattr(self, name)(x)"], ANY),
        (["for name in self.names:", "    getattr(self, name)(x)"], ANY),
    ],
)
def test_a_name_from_a_loop_over_literal_strings_reaches_only_those(
    lines: list[str], reaches: set[str]
) -> None:
    source = LOOPED.format(body="\n".join(f"        {line}" for line in lines))
    facts = Facts(ast.parse(source), source)
    found = {
        method
        for method in ("dpm_act", "update_temp", "run")
        if any(ref.called and ref.base is not None for ref in facts.attribute_refs(method))
    }
    assert found == reaches
