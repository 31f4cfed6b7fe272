"""Passing values to ``jax.pmap``: keyword arguments of a pmapped function are mapped over their
leading axis, so each lifted value is passed positionally, after the function's own parameters,
and broadcast to every device (``in_axes`` of None), or, when it must be a Python value, listed
in ``static_broadcasted_argnums``.

    @partial(jax.pmap, axis_name="i")         @partial(jax.pmap, axis_name="i", in_axes=(0, None))
    def step(x):                        ->    def _step_compiled(x, SCALE):
        return x * SCALE                          return x * SCALE

                                              def step(x):
                                                  return _step_compiled(x, SCALE)
"""

from __future__ import annotations

import ast

from ..analysis.facts.queries import Facts
from ..analysis.names import PARTIAL
from ..positions import SourceLines


class CannotMap(Exception):
    """The pmap options cannot take the lifted values; the message says why."""


def in_axes(call: ast.Call | None, source: SourceLines, positional: int, lifted: int) -> str:
    """The ``in_axes`` that maps the function's own arguments as before and broadcasts the
    ``lifted`` values after them."""
    given = _keyword(call, "in_axes")
    if given is None:
        axes = ["0"] * positional
    elif isinstance(given, ast.Constant) and (given.value is None or type(given.value) is int):
        axes = [source.segment(given)] * positional
    elif isinstance(given, (ast.Tuple, ast.List)) and not any(
        isinstance(e, ast.Starred) for e in given.elts
    ):
        axes = [source.segment(e) for e in given.elts]
        if len(axes) > positional:
            raise CannotMap(
                f"pmap's in_axes names {len(axes)} arguments, but the function takes {positional}"
            )
        # Arguments past the listed ones can only have been passed by keyword: mapped at 0.
        axes += ["0"] * (positional - len(axes))
    else:
        raise CannotMap(
            "pmap's in_axes is not written out as a number or a tuple; the lifted values' "
            "axes cannot be added to it"
        )
    return _tuple([*axes, *["None"] * lifted])


def static_argnums(call: ast.Call | None, source: SourceLines, added: list[int]) -> str:
    """``static_broadcasted_argnums`` with the static lifted values' positions added."""
    given = _keyword(call, "static_broadcasted_argnums")
    if given is None:
        known: list[str] = []
    elif isinstance(given, ast.Constant) and type(given.value) is int:
        known = [source.segment(given)]
    elif isinstance(given, (ast.Tuple, ast.List)) and all(
        isinstance(e, ast.Constant) and type(e.value) is int for e in given.elts
    ):
        known = [source.segment(e) for e in given.elts]
    else:
        raise CannotMap(
            "pmap's static_broadcasted_argnums is not written out; the static values' "
            "positions cannot be added to it"
        )
    return _tuple([*known, *(str(number) for number in added)])


def partial_spelling(facts: Facts) -> str | None:
    """How the module spells ``functools.partial`` (imported at its top level), if it does."""
    for statement in facts.tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module == "functools":
            for alias in statement.names:
                if alias.name == "partial":
                    name = alias.asname or alias.name
                    if _means_partial(facts, name):
                        return name
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == "functools":
                    name = alias.asname or alias.name
                    if facts.qualified_name(facts.module_scope, ast.Name(name)) == "functools":
                        return f"{name}.partial"
    return None


def _means_partial(facts: Facts, name: str) -> bool:
    return facts.qualified_name(facts.module_scope, ast.Name(name)) == PARTIAL


def _keyword(call: ast.Call | None, name: str) -> ast.expr | None:
    if call is None:
        return None
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return None


def _tuple(items: list[str]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
