"""Whether a function of another module of the project only calls a function it is given.

``rendering = render_image(partial(render_fast, params), rays)``, where ``render_image`` is
defined in another module of the project as ``for chunk in rays: out.append(render_fn(chunk))``:
the call runs ``render_fast`` before it returns and keeps nothing of it, so the result is data,
not a wrapper of the compiled object. Without the definition, the result may be a wrapper
(``summary.wrap(fn)``) and each of its later uses a call of the object.

Only what the body shows counts: every mention of the parameter is a call of it, in the body
itself (not in a nested function or class that could outlive the call), and the parameter is
never bound again, declared ``global``/``nonlocal``, nor the body a generator's (a generator
runs its body only when iterated, after the call returns).
"""

from __future__ import annotations

import ast

# Code that may run after the call returns: a nested function or class, a generator expression.
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.GeneratorExp)
_LAZY = (ast.Yield, ast.YieldFrom, ast.Await)


def receiving_parameter(
    definition: ast.FunctionDef, call: ast.Call, argument: ast.AST
) -> str | None:
    """The parameter of ``definition`` that ``argument`` of ``call`` binds to; None when a
    starred argument comes before it or it lands in ``*args`` or ``**kwargs``."""
    arguments = definition.args
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    for index, given in enumerate(call.args):
        if isinstance(given, ast.Starred):
            return None
        if given is argument:
            return positional[index] if index < len(positional) else None
    keyword = next((k.arg for k in call.keywords if k.value is argument), None)
    named = positional[len(arguments.posonlyargs) :] + [a.arg for a in arguments.kwonlyargs]
    return keyword if keyword in named else None


def only_calls(definition: ast.FunctionDef, parameter: str) -> bool:
    """Whether the body calls ``parameter`` and does nothing else with it."""
    called = False
    pending: list[ast.AST] = list(definition.body)
    while pending:
        node = pending.pop()
        if isinstance(node, _LAZY):
            return False
        if isinstance(node, (ast.Global, ast.Nonlocal)) and parameter in node.names:
            return False
        if isinstance(node, _NESTED):
            if _mentions(node, parameter):
                return False
            continue
        if isinstance(node, ast.Call) and _is_name(node.func, parameter):
            called = True
            pending.extend(node.args)
            pending.extend(k.value for k in node.keywords)
            continue
        if _is_name(node, parameter):
            return False  # stored, returned, handed on or looked at: not only called
        pending.extend(ast.iter_child_nodes(node))
    return called


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _mentions(node: ast.AST, name: str) -> bool:
    return any(_is_name(inner, name) for inner in ast.walk(node))
