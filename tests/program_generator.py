"""Programs that do have findings: every combination of where the captured value lives, how
the function is compiled, what kind of value it is and how it changes. Each program is runnable
(its ``__main__`` block calls, changes, calls) and knows the one finding it must produce and the
fix it must get.
"""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    initial: str
    changed: str
    use: str  # the compiled function's expression, with {v} for the captured value


KINDS = (
    Kind("float", "1.0", "2.0", "x * {v}"),
    Kind("array", "jnp.ones(3)", "jnp.full(3, 2.0)", "x + {v}"),
    Kind("dtype", "jnp.float32", "jnp.int32", "x.astype({v})"),
    Kind("function", "jnp.sin", "jnp.cos", "{v}(x)"),
    Kind("string", '"sum"', '"max"', 'jnp.sum(x) if {v} == "sum" else jnp.max(x)'),
    Kind("shape", "3", "5", "jnp.zeros({v}) + x[0]"),
)
KIND_NAMES = tuple(kind.name for kind in KINDS)

# How the function is compiled: the definition (with {body} for the returned expression) and
# the name the program calls.
FORMS = {
    "decorator": ("@jax.jit\ndef f(x):\n    return {body}\n", "f"),
    "partial": ("@partial(jax.jit, donate_argnums=())\ndef f(x):\n    return {body}\n", "f"),
    "alias": ("@compile_\ndef f(x):\n    return {body}\n", "f"),
    "assigned": ("def f(x):\n    return {body}\n\n\nfast = jax.jit(f)\n", "fast"),
    "rebound": ("def f(x):\n    return {body}\n\n\nf = jax.jit(f)\n", "f"),
    "lambda": ("f = jax.jit(lambda x: {body})\n", "f"),
    # Forms the fix reaches in other ways: pmap takes the values positionally; a helper called
    # by the compiled function reads the value; the function is also used plainly; the
    # compiled object is handed on without a name.
    "pmap": (
        "@jax.pmap\ndef g(x):\n    return {body}\n\n\ndef f(x):\n    return g(x[None])[0]\n",
        "f",
    ),
    "helper": ("def h(x):\n    return {body}\n\n\n@jax.jit\ndef f(x):\n    return h(x)\n", "f"),
    "plain": ("def g(x):\n    return {body}\n\n\nf = jax.jit(g)\nplain = g\n", "f"),
    "passed": (
        "def g(x):\n    return {body}\n\n\ndef make():\n    return jax.jit(g)\n\n\nf = make()\n",
        "f",
    ),
}
# The forms above that are generated with a setter only: the other changes add nothing to them.
SETTER_ONLY = ("pmap", "helper", "plain", "passed")
SCOPES = ("global", "closure")
# setter: a function with ``global``/``nonlocal`` rebinds it; loop: the code that calls the
# compiled function rebinds it in the loop; item: a dict entry changed in place.
CHANGES = ("setter", "loop", "item")


@dataclass(frozen=True)
class Program:
    scope: str
    form: str
    kind: str
    change: str
    source: str
    code: str  # the finding's rule
    name: str  # the captured name the finding reports

    @property
    def label(self) -> str:
        return f"{self.scope}-{self.form}-{self.kind}-{self.change}"


def _prelude() -> str:
    return (
        "from functools import partial\n\nimport jax\nimport jax.numpy as jnp\n"
        "from jax import jit as compile_\n\n"
    )


def build(scope: str, form: str, kind_name: str, change: str) -> Program:
    kind = next(k for k in KINDS if k.name == kind_name)
    if change == "item":
        read, initial = 'STATE["v"]', f'{{"v": {kind.initial}}}'
        name, code = "STATE", "JC103"
    else:
        read, initial, name = "VALUE", kind.initial, "VALUE"
        code = "JC102" if scope == "global" else "JC101"
    definition, called = FORMS[form]
    definition = definition.format(body=kind.use.format(v=read))
    show = "out = {call}(x)\nprint(out.dtype, out.tolist())\n".format(call=called)
    if change == "item":
        setter = 'def change(value):\n    STATE["v"] = value\n'
    else:
        declaration = "global" if scope == "global" else "nonlocal"
        setter = f"def change(value):\n    {declaration} VALUE\n    VALUE = value\n"
    if change == "loop":
        steps = f"for value in ({kind.initial}, {kind.changed}):\n    VALUE = value\n"
        steps += textwrap.indent(show, "    ")
    else:
        steps = show + f"change({kind.changed})\n" + show
    if scope == "global":
        body = f"{name} = {initial}\n\n\n{definition}\n\n{setter}\n\n"
        if change == "loop":
            body = f"{name} = {initial}\n\n\n{definition}\n\n"
        main = 'if __name__ == "__main__":\n    x = jnp.arange(3.0)\n' + textwrap.indent(
            steps, "    "
        )
        source = _prelude() + "\n" + body + main
    else:
        inner = f"{name} = {initial}\n\n\n{definition}\n"
        if change == "loop":
            inner += "\nx = jnp.arange(3.0)\n" + steps
        else:
            inner += f"\n{setter}\nreturn {called}, change\n"
        build_function = "def build():\n" + textwrap.indent(inner, "    ")
        if change == "loop":
            main = 'if __name__ == "__main__":\n    build()\n'
        else:
            main = (
                'if __name__ == "__main__":\n    x = jnp.arange(3.0)\n'
                f"    {called}, change = build()\n" + textwrap.indent(steps, "    ")
            )
        source = _prelude() + "\n" + build_function + "\n\n" + main
    return Program(scope, form, kind_name, change, source, code, name)


def programs() -> Iterator[Program]:
    """Every combination that is a valid program."""
    for scope, form, kind, change in itertools.product(SCOPES, FORMS, KIND_NAMES, CHANGES):
        if change == "item" and scope == "closure":
            continue  # a dict entry of a closure is the same fact as a global's (JC103)
        if form in SETTER_ONLY and change != "setter":
            continue
        yield build(scope, form, kind, change)
