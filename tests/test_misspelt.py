"""A misspelt attribute of ``self`` read by every run of a method: its trace never finishes.
Only a read every run reaches, of a name nothing can give the object, close to one the class
stores, counts."""

from __future__ import annotations

import ast

import pytest

from flake8_jax_closure.analysis.misspelt import misspelt_attribute

CLASS = """{decorator}class Agent{bases}:
    def __init__(self):
        self.critic_params = 1.0

    def loss(self, s):
        {body}
{elsewhere}"""


def _misspelt(body: str, bases: str = "", decorator: str = "", elsewhere: str = "") -> str | None:
    source = CLASS.format(body=body, bases=bases, decorator=decorator, elsewhere=elsewhere)
    tree = ast.parse(source)
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    method = next(
        node for node in cls.body if isinstance(node, ast.FunctionDef) and node.name == "loss"
    )
    return misspelt_attribute(tree, method, cls)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("return s * self.ciritc_params", "ciritc_params"),
        ("x = s + 1\n        return x * self.critic_param", "critic_param"),
        ("return s * self.critic_params", None),  # stored: no misspelling
        ("return s * self.bias", None),  # close to nothing stored: a caller may set it
        ("if s:\n            return self.ciritc_params\n        return s", None),
        ("return s and self.ciritc_params", None),  # the second operand may not run
        ("return self.ciritc_params if s else s", None),
        ("return [self.ciritc_params for _ in s]", None),
        ("return lambda: self.ciritc_params", None),
        ("try:\n            pass\n        except Exception:\n            pass\n"
         "        return self.ciritc_params", None),  # after a ``try``: not looked at
        ("return s\n        return self.ciritc_params", None),  # after the ``return``
    ],
)  # fmt: skip
def test_reads_every_run_reaches(body: str, expected: str | None) -> None:
    assert _misspelt(body) == expected


@pytest.mark.parametrize(
    ("bases", "decorator", "elsewhere"),
    [
        ("(Base)", "", ""),  # a base class may give it
        ("", "@dataclass\n", ""),
        ("", "", "agent = Agent()\nagent.ciritc_params = 2.0\n"),
        ("", "", "setattr(Agent(), key, 2.0)\n"),
        ("", "", "print(vars(Agent()))\n"),
        ("", "", "Agent().__dict__.update(x=1)\n"),
        ("", "", "print(getattr(Agent(), 'ciritc_params', 0.0))\n"),
    ],
)
def test_what_may_give_the_object_the_name(bases: str, decorator: str, elsewhere: str) -> None:
    assert _misspelt("return s * self.ciritc_params", bases, decorator, elsewhere) is None


@pytest.mark.parametrize(
    "class_body",
    [
        "    if flag:\n        ciritc_params = 1.0\n",
        "    try:\n        ciritc_params = load()\n    except OSError:\n        pass\n",
        "    for ciritc_params in (1.0,):\n        pass\n",
        "    from math import tau as ciritc_params\n",
        "    locals().update(defaults)\n",
    ],
    ids=["if", "try", "for", "import", "locals"],
)
def test_a_class_body_binds_the_name_wherever_it_stands(class_body: str) -> None:
    source = CLASS.format(
        body="return s * self.ciritc_params", bases="", decorator="", elsewhere=""
    ).replace("class Agent:\n", "class Agent:\n" + class_body)
    tree = ast.parse(source)
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef))
    method = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "loss")
    assert misspelt_attribute(tree, method, cls) is None


@pytest.mark.parametrize(
    "elsewhere",
    [
        "object.__setattr__(Agent(), key, 2.0)\n",
        "store = partial(setattr, Agent())\n",
        "print(globals())\n",
        "settings = SimpleNamespace(ciritc_params=2.0)\n",
    ],
    ids=["object-setattr", "held-setattr", "globals", "keyword"],
)
def test_names_that_may_set_attributes_without_a_call_of_setattr(elsewhere: str) -> None:
    assert _misspelt("return s * self.ciritc_params", elsewhere=elsewhere) is None
