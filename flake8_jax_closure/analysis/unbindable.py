"""Calls whose arguments cannot bind to the compiled function's parameters.

``step(w, batch=b, lr=0.1)`` of ``def step(w, batch)`` raises ``TypeError`` before JAX traces
anything (``jax.jit`` binds the arguments to the Python function's signature first): such a
call neither traces nor reuses a trace. Only what the code shows is judged: a call that
unpacks ``*args`` or ``**kwargs``, or a function that takes them, binds as far as we know.
"""

from __future__ import annotations

import ast

from .compiled import CompiledFunction, Form


def cannot_bind(site: CompiledFunction, call: ast.Call, method: bool) -> bool:
    """Whether ``call`` of the compiled object of ``site`` always raises ``TypeError`` for its
    arguments. ``method``: the call binds the object it is made on as the first parameter
    (``self.apply(x)`` of a compiled method or class attribute)."""
    if not _plain_signature(site):
        return False
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return False
    arguments = site.function.args
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    if method:
        if not positional:
            return False
        positional = positional[1:]
    by_keyword = {a.arg for a in arguments.args if a.arg in positional} | {
        a.arg for a in arguments.kwonlyargs
    }
    if len(call.args) > len(positional) and arguments.vararg is None:
        return True
    filled = set(positional[: len(call.args)])
    for keyword in call.keywords:
        assert keyword.arg is not None
        if keyword.arg in filled:
            return True  # ``got multiple values for argument``
        if keyword.arg not in by_keyword and arguments.kwarg is None:
            return True  # ``got an unexpected keyword argument``
        filled.add(keyword.arg)
    required = positional[: len(positional) - len(arguments.defaults)]
    required_keywords = [
        a.arg
        for a, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if default is None
    ]
    return any(name not in filled for name in (*required, *required_keywords))


def _plain_signature(site: CompiledFunction) -> bool:
    """The compiled object takes the Python function's own arguments: a ``def`` or lambda
    compiled as it is (decorated by the compile transform alone, or ``jax.jit(name)``), not
    through ``partial``, ``vmap`` or another decorator that may change what it takes."""
    function = site.function
    if site.form is Form.DECORATOR:
        decorators = getattr(function, "decorator_list", [])
        return len(decorators) == 1
    call = site.site
    if not isinstance(call, ast.Call) or not call.args:
        return False
    argument = call.args[0]
    if isinstance(function, ast.Lambda):
        return argument is function
    return (
        isinstance(argument, ast.Name)
        and argument.id == getattr(function, "name", None)
        and not getattr(function, "decorator_list", [])
    )
