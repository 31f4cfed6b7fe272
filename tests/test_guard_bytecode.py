"""The paths a code object reads, from its bytecode (no JAX needed)."""

from __future__ import annotations

from types import CodeType
from typing import Any

from flake8_jax_closure.runtime.guard.bytecode import code_reads
from flake8_jax_closure.runtime.guard.library import is_library_file, is_user_code

CONFIG: dict[str, Any] = {}
np: Any = None
settings: Any = None
lr = helper = weights = TABLE = WEIGHTS = ws = 0


def sample(self: Any, x: Any) -> Any:
    a = CONFIG["clip"] + self.mul * lr
    self.n += 1
    self.m = 3
    CONFIG["z"] = 2
    y = settings.LR.value[0]
    z = self.cfg.get("a")
    w = np.sin(x)
    t = TABLE[1, 2] + WEIGHTS[-1]
    return helper(x) * weights + self.helper(x) + a + y + z + w + t


def _reads(code: CodeType) -> list[tuple[str, str, tuple[Any, ...], int, bool]]:
    first = code.co_firstlineno
    return [
        (r.root_kind, r.root, r.steps, (r.line or first) - first, r.method)
        for r in code_reads(code).reads
    ]


def test_paths_read_with_their_lines() -> None:
    assert _reads(sample.__code__) == [
        ("global", "CONFIG", (("item", "clip"),), 1, False),
        ("local", "self", (("attr", "mul"),), 1, False),
        ("global", "lr", (), 1, False),
        ("global", "settings", (("attr", "LR"), ("attr", "value"), ("item", 0)), 5, False),
        ("local", "self", (("attr", "cfg"),), 6, True),  # the object whose method is called
        ("global", "np", (), 7, True),
        ("global", "TABLE", (("item", (1, 2)),), 8, False),
        ("global", "WEIGHTS", (("item", -1),), 8, False),
        ("global", "helper", (), 9, False),
        ("global", "weights", (), 9, False),
        ("local", "self", (), 9, True),
    ]


def test_paths_the_code_stores_to_are_its_own_state() -> None:
    facts = code_reads(sample.__code__)
    assert facts.stores == {
        ("global", "CONFIG", (("item", "z"),)),
        ("local", "self", (("attr", "m"),)),
        ("local", "self", (("attr", "n"),)),  # an augmented assignment stores too
    }
    # ``self.n += 1`` reads self.n before storing it: the trace depends on the value read.
    first = sample.__code__.co_firstlineno
    own = [
        (r.root, r.steps, line - first) for line, reads in facts.own_reads.items() for r in reads
    ]
    assert own == [("self", (("attr", "n"),), 2)]
    assert facts.stores_by_line[first + 2] == {("local", "self", (("attr", "n"),))}


def test_augmented_assignments_to_items_store_and_read() -> None:
    def bump(x: Any) -> Any:
        CONFIG["k"] += 1
        return x

    facts = code_reads(bump.__code__)
    assert facts.stores == {("global", "CONFIG", (("item", "k"),))}
    assert [r.steps for reads in facts.own_reads.values() for r in reads] == [(("item", "k"),)]


def test_closure_variables_and_comprehensions() -> None:
    scale = 2.0

    def inner(values: Any) -> Any:
        return [v * scale for v in values] + [ws]

    reads = _reads(inner.__code__)
    # Python 3.12 inlines the comprehension; 3.11 runs it as its own code object.
    nested = [c for c in inner.__code__.co_consts if isinstance(c, CodeType)]
    roots = {(r[0], r[1]) for r in reads} | {(r[0], r[1]) for c in nested for r in _reads(c)}
    assert ("free", "scale") in roots
    assert ("global", "ws", (), 1, False) in reads


def test_user_code_and_library_code() -> None:
    assert is_user_code(sample.__code__)
    import json

    assert not is_user_code(json.dumps.__code__)
    assert is_library_file("<frozen importlib._bootstrap>")
    assert not is_library_file("<ipython-input-3-abc>")
    assert is_library_file("<flake8-jax-closure guard>")  # the guard's own checks
    namespace: dict[str, Any] = {}
    exec("from dataclasses import dataclass\n@dataclass\nclass A:\n    x: int\n", namespace)
    assert not is_user_code(namespace["A"].__init__.__code__)  # written by dataclasses
    # Written by equinox for each module class (run at every flatten and unflatten), by attrs.
    for name in (
        "<generated_flatten_Linear>",
        "<generated_flatten_with_keys_Linear>",
        "<generated_unflatten_Linear>",
        "<attrs generated init mypkg.Config>",
    ):
        assert is_library_file(name), name
