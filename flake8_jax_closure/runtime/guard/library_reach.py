"""Whether everything an object holds is library code or plain data: a bounded walk.

A bind of a custom JVP call (``jax.nn.softplus``, ``relu``, ``logaddexp``) is handed the
functions it may call, wrapped by JAX (``linear_util.WrappedFun``) with what they close over,
and a jaxpr keeps such a function in its equation. When everything reachable from them is
library code or data of a known kind, no code of the program's own can run where JAX calls
them. The walk knows a short list of kinds (functions with their closures and defaults,
partials, methods, containers, JAX's function wrappers and the holders they keep values in,
pytree structures of builtin containers, arrays, abstract values, jaxprs, JAX's own traces) and
answers no for any other object, for a class or function of the program's own, and past
``BUDGET`` objects: another JAX only makes it answer no more often.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any

from .library import is_library_module, is_user_code

BUDGET = 256
_PLAIN = (type(None), bool, int, float, complex, str, bytes, range, slice, type(Ellipsis))
_BUILTIN_NODES = (tuple, list, dict, type(None))


def class_codes(klass: type) -> Iterator[types.CodeType]:
    """The code of the methods of ``klass`` and of the classes it derives from."""
    for owner in klass.__mro__:
        for member in vars(owner).values():
            if isinstance(member, types.FunctionType):
                yield member.__code__


def class_runs_user_code(klass: type) -> bool:
    """Whether a method of ``klass`` or of a class it derives from is the program's code."""
    return any(is_user_code(code) for code in class_codes(klass))


class LibraryReach:
    """``only_library`` for the objects JAX hands its binds and keeps in its equations;
    ``inert_jaxpr`` says whether a jaxpr met on the way is inert (see ``binds``)."""

    def __init__(self, inert_jaxpr: Callable[[Any], bool]) -> None:
        import jax
        import numpy as np
        from jax._src import core, linear_util, util
        from jax._src.interpreters import batching

        self.inert_jaxpr = inert_jaxpr
        self.wrapped_function = linear_util.WrappedFun
        # JAX's holders of values, whose slots are walked: the stores of a function's
        # auxiliary output, an axis of vmap, a value kept in a cache key.
        self.holders = (
            linear_util.Store,
            linear_util.EqualStore,
            batching.AxisData,
            util.Unhashable,
            util.Hashable,
        )
        self.structure = jax.tree_util.PyTreeDef
        self.jaxprs = (core.Jaxpr, core.ClosedJaxpr)
        self.traces = core.Trace
        self.data = (
            *_PLAIN,
            np.dtype,
            np.generic,
            np.ndarray,
            jax.Array,
            core.AbstractValue,
            core.TraceTag,  # which trace a transformation unpacks
            linear_util.EmptyStoreValue,  # what a store holds before it is set
        )
        self._library_classes: dict[type, bool] = {}

    def only_library(self, value: Any) -> bool:
        pending, seen, budget = [value], set(), BUDGET
        while pending:
            item = pending.pop()
            if id(item) in seen:
                continue
            seen.add(id(item))
            budget -= 1
            held = self._held(item) if budget >= 0 else None
            if held is None:
                return False
            pending.extend(held)
        return True

    def _held(self, item: Any) -> Iterable[Any] | None:
        """What ``item`` holds that the walk goes on to, or None when it may run user code
        (or is of a kind the walk does not know)."""
        if isinstance(item, self.data) or type(item) is object:  # object(): a sentinel
            return ()
        if isinstance(item, type):
            return () if self._library_class(item) else None
        if isinstance(item, types.FunctionType):
            if is_user_code(item.__code__):
                return None
            defaults = (*(item.__defaults__ or ()), *(item.__kwdefaults__ or {}).values())
            return [*_cell_contents(item), *defaults]
        if isinstance(item, types.MethodType):
            return [item.__func__, item.__self__]
        if isinstance(item, types.BuiltinFunctionType):
            return [item.__self__]
        if isinstance(item, types.ModuleType):
            return () if is_library_module(item) else None
        if isinstance(item, partial):
            return [item.func, *item.args, *item.keywords.values()]
        if isinstance(item, (tuple, list, set, frozenset)):
            return list(item)
        if isinstance(item, dict):
            return [*item.keys(), *item.values()]
        if isinstance(item, self.wrapped_function):
            return [getattr(item, name) for name in self.wrapped_function.__slots__]
        if isinstance(item, self.holders):
            return [getattr(item, name, None) for name in type(item).__slots__]
        if isinstance(item, self.structure):
            return () if _builtin_nodes(item) else None
        if isinstance(item, self.jaxprs):
            return () if self.inert_jaxpr(item) else None
        if isinstance(item, self.traces):
            return () if self._library_class(type(item)) else None
        return None

    def _library_class(self, klass: type) -> bool:
        known = self._library_classes.get(klass)
        if known is None:
            known = self._library_classes[klass] = not class_runs_user_code(klass)
        return known


def _cell_contents(function: types.FunctionType) -> list[Any]:
    contents = []
    for cell in function.__closure__ or ():
        try:
            contents.append(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    return contents


def _builtin_nodes(structure: Any) -> bool:
    """Every node of the pytree structure is a tuple, list, dict or None: flattening and
    unflattening it runs no code of the program's own."""
    pending, budget = [structure], BUDGET
    while pending and budget:
        node = pending.pop()
        budget -= 1
        data = node.node_data()
        if data is not None and data[0] not in _BUILTIN_NODES:
            return False
        pending.extend(node.children())
    return not pending
