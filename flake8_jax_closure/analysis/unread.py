"""Values handed to a parameter the called function never reads.

``partial(loss, model, weights)`` of ``def loss(model, weights, params, batch)`` whose body
never names ``weights``: whatever ``weights`` holds when the trace runs, nothing the trace
computes depends on it, so no change of it reaches a compiled result. Only what the code shows
counts: a ``def`` of the module (or of another module of the project) bound once and
undecorated, in modules that bind nothing unseen (``globals()``, ``exec``, ``setattr``, a
function's ``__code__``) and never read a caller's frame (``inspect.stack()``, ``f_back``); an
argument that binds to a named parameter (not ``*args``/``**kwargs``), directly or through a
``partial`` called at once; and a body that never names the parameter, not even in a function
it defines, and never looks at its frame (``locals()``, ``vars()``, ``eval``,
``sys._getframe()``).
"""

from __future__ import annotations

import ast
import inspect
import re
import weakref
from collections.abc import Callable

from .facts.model import BindingKind, Scope
from .facts.queries import Facts
from .names import FUNCTION_TRANSFORMS, PARTIAL
from .unbindable import signature_of, star_imported

FunctionFinder = Callable[[str], "ast.FunctionDef | None"]

# Names through which a body can read a parameter without naming it: its frame's locals.
_FRAME_READERS = frozenset(
    {
        "locals", "vars", "eval", "exec", "currentframe", "_getframe", "getargvalues",
        "getouterframes", "getinnerframes", "f_locals", "f_back", "settrace", "setprofile",
    }
)  # fmt: skip
# Names through which a module can bind a name again, or give a function another body,
# without a statement that binds it: ``globals()["f"] = g``, ``exec("def f(...)")``,
# ``setattr(f, "__code__", ...)``, ``sys.modules[__name__].f = g``.
_REBINDING_CALLS = frozenset(
    {"globals", "vars", "exec", "eval", "compile", "setattr", "__import__"}
)
_FUNCTION_INTERNALS = frozenset(
    {"__code__", "__defaults__", "__kwdefaults__", "__dict__", "__globals__", "__setattr__",
     "modules"}
)  # fmt: skip
# Names through which a helper can read its caller's frame (``inspect.stack()[1].frame``).
_CALLER_FRAME_READERS = _FRAME_READERS | {"f_globals", "tb_frame"}
_rewritten: weakref.WeakKeyDictionary[ast.Module, bool] = weakref.WeakKeyDictionary()
# Every word ``_rewrites`` looks for: a text without one of them rewrites nothing.
_REWRITING_WORDS = re.compile(
    r"\b(?:%s)\b"
    % "|".join(sorted(_REBINDING_CALLS | _FUNCTION_INTERNALS | _CALLER_FRAME_READERS | {"stack"}))
)


def handed_unread(
    facts: Facts, scope: Scope, node: ast.expr, elsewhere: FunctionFinder | None
) -> bool:
    """Whether ``node`` (the expression holding the value) is only an argument of a call that
    binds it to a parameter its function never reads."""
    call = facts.parent(node)
    if isinstance(call, ast.keyword):
        call = facts.parent(call)  # ``loss(weights=w)``
    if not isinstance(call, ast.Call) or call.func is node:
        return False
    if star_imported(facts.tree) or rewrites_functions(facts.tree):
        return False  # any name may be bound again to another function, or body
    callee: ast.expr = call.func
    arguments = list(call.args)
    if facts.qualified_name(scope, callee) == PARTIAL:
        # ``partial(loss, w)`` keeps ``w`` in ``.args`` (a ``jax.tree_util.Partial`` even as a
        # leaf): only a partial called at once, directly or through transforms
        # (``jax.grad(partial(loss, w))(params)``), hands ``w`` to nothing but ``loss``.
        if not arguments or arguments[0] is node or not _called_at_once(facts, scope, call):
            return False
        callee, arguments = arguments[0], arguments[1:]
    function = _function_named(facts, scope, callee, elsewhere)
    if function is None:
        return False
    parameter = _parameter_bound(function, arguments, call.keywords, node)
    return parameter is not None and not _names(function, parameter)


def _called_at_once(facts: Facts, scope: Scope, made: ast.Call) -> bool:
    """``made(...)``, or ``jax.grad(made)(...)`` through any transforms of the function."""
    current: ast.expr = made
    while True:
        holder = facts.parent(current)
        if not isinstance(holder, ast.Call):
            return False
        if holder.func is current:
            return True
        transform = facts.qualified_name(scope, holder.func)
        if transform not in FUNCTION_TRANSFORMS or transform == PARTIAL:
            return False
        if not holder.args or holder.args[0] is not current:
            return False
        current = holder


def text_rewrites_functions(text: str, tree: ast.Module) -> bool:
    """``rewrites_functions`` of the module parsed from ``text``, without looking at its tree
    when no word it looks for is written: most modules name none of them."""
    return _REWRITING_WORDS.search(text) is not None and rewrites_functions(tree)


def rewrites_functions(tree: ast.Module) -> bool:
    """Whether the module may bind a name or a function's body without a statement that
    shows it (see ``_REBINDING_CALLS``), or looks at a caller's frame anywhere: a helper of
    the function could read its parameter there."""
    found = _rewritten.get(tree)
    if found is None:
        found = any(_rewrites(node) for node in ast.walk(tree))
        _rewritten[tree] = found
    return found


def _rewrites(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _REBINDING_CALLS or node.id in _CALLER_FRAME_READERS
    if isinstance(node, ast.Attribute):
        if node.attr in _FUNCTION_INTERNALS or node.attr in _CALLER_FRAME_READERS:
            return True
        # ``inspect.stack()``; ``jnp.stack`` is an array function.
        return (
            node.attr == "stack"
            and isinstance(node.value, ast.Name)
            and (node.value.id == "inspect")
        )
    return False


def _function_named(
    facts: Facts, scope: Scope, callee: ast.expr, elsewhere: FunctionFinder | None
) -> ast.FunctionDef | None:
    """The undecorated ``def`` that ``callee`` names, bound once; one plain alias
    (``loss = mse_loss``) is followed."""
    for _ in range(2):
        if not isinstance(callee, ast.Name):
            return None
        owner = facts.resolve(scope, callee.id)
        bindings = facts.bindings_of(owner, callee.id)
        if len(bindings) != 1:
            return None
        binding = bindings[0]
        node = binding.node
        if binding.kind is BindingKind.DEF:
            if isinstance(node, ast.FunctionDef) and not node.decorator_list:
                return node
            return None
        if binding.kind is BindingKind.IMPORT and binding.imported and elsewhere is not None:
            return elsewhere(binding.imported)
        value = binding.value
        if binding.kind is not BindingKind.ASSIGN or not isinstance(value, ast.Name):
            return None
        callee, scope = value, owner
    return None


def _parameter_bound(
    function: ast.FunctionDef,
    arguments: list[ast.expr],
    keywords: list[ast.keyword],
    node: ast.expr,
) -> str | None:
    """The named parameter ``node`` binds to; None when it binds to ``*args``/``**kwargs``,
    the call unpacks anything, or the arguments cannot bind."""
    if any(isinstance(a, ast.Starred) for a in arguments) or any(k.arg is None for k in keywords):
        return None
    signature = signature_of(function.args)
    try:
        bound = signature.bind_partial(
            *arguments, **{k.arg: k.value for k in keywords if k.arg is not None}
        )
    except TypeError:
        return None
    for name, value in bound.arguments.items():
        if value is node:
            kind = signature.parameters[name].kind
            variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
            return None if kind in variadic else name
    return None


def _names(function: ast.FunctionDef, parameter: str) -> bool:
    """Whether the body names the parameter anywhere, or could read its own frame."""
    for statement in function.body:
        for inner in ast.walk(statement):
            if isinstance(inner, ast.Name) and (
                inner.id == parameter or inner.id in _FRAME_READERS
            ):
                return True
            if isinstance(inner, ast.Attribute) and inner.attr in _FRAME_READERS:
                return True
            if isinstance(inner, ast.arg) and inner.arg == parameter:
                return True  # a nested function's own parameter: kept simple, not judged
    return False
