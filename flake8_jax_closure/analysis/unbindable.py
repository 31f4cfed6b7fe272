"""Calls whose arguments cannot bind to the parameters of the function they call.

``step(w, batch=b, lr=0.1)`` of ``def step(w, batch)`` raises ``TypeError`` before JAX traces
anything (``jax.jit`` binds the arguments to the Python function's signature first): such a
call neither traces nor reuses a trace. Only what the code shows is judged: a call that
unpacks ``*args`` or ``**kwargs`` binds as far as we know. The binding itself is Python's own,
``inspect.Signature.bind``, on a signature built from the ``def``.
"""

from __future__ import annotations

import ast
import inspect
import weakref

from .compiled import CompiledFunction, Form

_ANY = object()  # an argument whose value does not matter to binding


def cannot_bind(site: CompiledFunction, call: ast.Call, method: bool) -> bool:
    """Whether ``call`` of the compiled object of ``site`` always raises ``TypeError`` for its
    arguments. ``method``: the call binds the object it is made on as the first parameter
    (``self.apply(x)`` of a compiled method or class attribute)."""
    return _plain_signature(site) and arguments_cannot_bind(site.function.args, call, method)


def arguments_cannot_bind(arguments: ast.arguments, call: ast.Call, method: bool = False) -> bool:
    """Whether ``call`` of a function with these parameters always raises ``TypeError`` for its
    arguments (a keyword it does not take, a value given twice, too many or too few), before
    the function's body runs. ``method``: the call binds the object as the first parameter."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return False
    signature = signature_of(arguments)
    positional = [_ANY] * (len(call.args) + (1 if method else 0))
    keywords = {k.arg: _ANY for k in call.keywords if k.arg is not None}
    try:
        signature.bind(*positional, **keywords)
    except TypeError:
        return True
    return False


def signature_of(arguments: ast.arguments) -> inspect.Signature:
    """The ``def``'s signature, defaults standing for themselves."""
    kind = inspect.Parameter
    ordered = [*arguments.posonlyargs, *arguments.args]
    first_default = len(ordered) - len(arguments.defaults)
    parameters = [
        kind(
            a.arg,
            kind.POSITIONAL_ONLY if i < len(arguments.posonlyargs) else kind.POSITIONAL_OR_KEYWORD,
            default=_ANY if i >= first_default else kind.empty,
        )
        for i, a in enumerate(ordered)
    ]
    if arguments.vararg is not None:
        parameters.append(kind(arguments.vararg.arg, kind.VAR_POSITIONAL))
    parameters += [
        kind(a.arg, kind.KEYWORD_ONLY, default=kind.empty if d is None else _ANY)
        for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    ]
    if arguments.kwarg is not None:
        parameters.append(kind(arguments.kwarg.arg, kind.VAR_KEYWORD))
    return inspect.Signature(parameters)


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


_star_imports: weakref.WeakKeyDictionary[ast.Module, bool] = weakref.WeakKeyDictionary()


def star_imported(tree: ast.Module) -> bool:
    """Whether the module runs ``from m import *``, which may bind any name again with a
    function of another signature (``render_image`` of another module after its own
    ``def``): what a call of a name binds to is then not the ``def`` the code shows."""
    found = _star_imports.get(tree)
    if found is None:
        found = any(
            isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)
            for node in ast.walk(tree)
        )
        _star_imports[tree] = found
    return found
