"""Reads of an array's layout, and stores that keep it.

A trace reads an array's shape, dtype, rank and size as Python values (``len(self.weights)``,
``self.weights[i].shape``) and bakes them into the compiled program. A later change of the
array's contents reaches none of that; only a change of its layout would. Two stores keep the
layout by construction: an update by ``.at[...]`` of the array itself, and a reshape to the
array's own shape (``jnp.reshape(flat[a:b], self.weights[i].shape)``, one for each entry of
a list, in a loop over ``range(len(self.weights))``), which is how hand-written networks
unflatten a parameter vector into their layers.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from .facts.model import Mutation

LAYOUT_FIELDS = frozenset({"shape", "dtype", "ndim", "size"})
# A layout read: of the whole value or of one entry (``held[i]``), and which field (``len``
# for ``len(held)``).
LayoutRead = tuple[bool, str]
_SHAPE_FIELDS = ("len", "shape", "size", "ndim")
# ``.at[...]`` keeps everything; a reshape keeps the shape, not the dtype (it has the reshaped
# value's); a list of reshaped entries keeps each entry's shape, and its length when it is
# built for each entry of the old list.
_EVERYTHING = frozenset((entry, f) for entry in (False, True) for f in (*_SHAPE_FIELDS, "dtype"))
_SHAPE = frozenset((entry, f) for entry in (False, True) for f in _SHAPE_FIELDS)
_ENTRY_SHAPES = frozenset((True, f) for f in _SHAPE_FIELDS)
_AT_UPDATES = frozenset(
    {"set", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max", "apply"}
)
# How deep a store is followed through the methods that compute it.
_MAX_DEPTH = 3

Parent = Callable[[ast.AST], "ast.AST | None"]


def layout_read(parent: Parent, held: ast.expr) -> LayoutRead | None:
    """What of its layout ``held`` (the expression ``self.weights``) is read for, or None when
    it is read for more: ``len(held)`` is ``(False, "len")``, ``held.shape`` is ``(False,
    "shape")`` (or dtype, ndim, size), ``held[i].shape`` is ``(True, "shape")``."""
    above = parent(held)
    if isinstance(above, ast.Call):
        whole_length = (
            isinstance(above.func, ast.Name)
            and above.func.id == "len"
            and above.args == [held]
            and not above.keywords
        )
        return (False, "len") if whole_length else None
    if isinstance(above, ast.Subscript) and above.value is held:
        entry = parent(above)
        if isinstance(entry, ast.Attribute) and entry.value is above and _layout(entry):
            return (True, entry.attr)
        return None
    if isinstance(above, ast.Attribute) and above.value is held and _layout(above):
        return (False, above.attr)
    return None


def _layout(attribute: ast.Attribute) -> bool:
    return attribute.attr in LAYOUT_FIELDS and not isinstance(attribute.ctx, ast.Store)


def stored_by(mutation: Mutation) -> tuple[ast.expr, int | None] | None:
    """What the assignment ``mutation`` stores at its path, as ``stored_entry`` gives it:
    also for one target of several (``self.w, self.b = self.unflatten(params)``)."""
    if len(mutation.path) != 1 or not mutation.path[0].startswith("."):
        return None
    attribute = mutation.path[0][1:]
    targets = getattr(mutation.node, "targets", [])
    stored = next(
        (
            node
            for target in targets
            for node in ast.walk(target)
            if isinstance(node, ast.Attribute)
            and node.attr == attribute
            and isinstance(node.value, ast.Name)
            and node.value.id == mutation.name
        ),
        None,
    )
    return stored_entry(mutation.node, stored) if stored is not None else None


def stored_entry(statement: ast.AST, target: ast.expr) -> tuple[ast.expr, int | None] | None:
    """What ``statement`` stores in ``target``: ``(v, None)`` for ``target = v``, ``(v_i,
    None)`` for ``a, target = v_0, v_1``, and ``(f(x), 1)`` for ``a, target = f(x)`` (the
    second entry of what the call returns)."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    assigned = statement.targets[0]
    if assigned is target:
        return statement.value, None
    if not isinstance(assigned, (ast.Tuple, ast.List)):
        return None
    index = next((i for i, e in enumerate(assigned.elts) if e is target), None)
    if index is None or any(isinstance(e, ast.Starred) for e in assigned.elts):
        return None
    value = statement.value
    if isinstance(value, (ast.Tuple, ast.List)):
        if len(value.elts) != len(assigned.elts):
            return None
        return value.elts[index], None
    return value, index


def kept_layout(
    value: ast.expr,
    index: int | None,
    self_name: str,
    attribute: str,
    methods: Mapping[str, ast.AST],
    depth: int = 0,
) -> frozenset[LayoutRead]:
    """The layout reads of ``<self_name>.<attribute>`` that storing ``value`` there keeps
    (entry ``index`` of what ``value`` returns, when it is a call): all of them for
    ``self.w.at[i].set(v)``, the shape for a reshape to ``self.w.shape``, and for a call of
    one of the class's ``methods`` what each of its returns keeps."""
    if index is None:
        updated = updated_at(value)
        if updated is not None and is_own(updated, self_name, attribute):
            return _EVERYTHING
        if _reshaped_to(value, self_name, attribute, entry=None):
            return _SHAPE
    if depth >= _MAX_DEPTH or not isinstance(value, ast.Call):
        return frozenset()
    method = _own_method(value, self_name, methods)
    inner_self = _self_name(method) if method is not None else None
    if method is None or inner_self is None:
        return frozenset()
    returns = [node for node in ast.walk(method) if isinstance(node, ast.Return)]
    if not returns or any(_nested_return(method, r) for r in returns):
        return frozenset()
    kept = _EVERYTHING
    for statement in returns:
        returned = statement.value
        if index is not None:
            if not isinstance(returned, ast.Tuple) or index >= len(returned.elts):
                return frozenset()
            returned = returned.elts[index]
        if returned is None:
            return frozenset()
        if isinstance(returned, ast.Name):
            kept &= _list_of_reshapes(method, returned.id, inner_self, attribute)
        else:
            kept &= kept_layout(returned, None, inner_self, attribute, methods, depth + 1)
    return kept


def updated_at(value: ast.expr | None) -> ast.expr | None:
    """``x`` of ``x.at[i].set(v)`` (or ``.add``, ``.multiply``, ...): a new array of ``x``'s
    shape and dtype."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return None
    indexed = value.func.value
    if value.func.attr not in _AT_UPDATES or not isinstance(indexed, ast.Subscript):
        return None
    at = indexed.value
    return at.value if isinstance(at, ast.Attribute) and at.attr == "at" else None


def _reshaped_to(value: ast.expr, self_name: str, attribute: str, entry: str | None) -> bool:
    """``jnp.reshape(x, self.w.shape)`` or ``x.reshape(self.w.shape)``; with ``entry``, the
    shape is that of ``self.w[entry]``."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return False
    if value.func.attr != "reshape":
        return False
    shapes = [k.value for k in value.keywords if k.arg in ("shape", "newshape")]
    if isinstance(value.func.value, ast.Name) and value.func.value.id in ("jnp", "np", "numpy"):
        shapes += value.args[1:2]  # ``jnp.reshape(x, shape)``
    else:
        shapes += value.args[:1] if len(value.args) == 1 else []  # ``x.reshape(shape)``
    if len(shapes) != 1:
        return False
    shape = shapes[0]
    if not isinstance(shape, ast.Attribute) or shape.attr != "shape":
        return False
    held = shape.value
    if entry is None:
        return is_own(held, self_name, attribute)
    return (
        isinstance(held, ast.Subscript)
        and isinstance(held.slice, ast.Name)
        and held.slice.id == entry
        and is_own(held.value, self_name, attribute)
    )


def _list_of_reshapes(
    method: ast.AST, name: str, self_name: str, attribute: str
) -> frozenset[LayoutRead]:
    """In ``method``, ``name`` starts as ``[]`` and gets one entry for each pass of one loop
    over ``range(len(...))``, a reshape to the shape of ``self.<attribute>``'s entry of the
    pass: ``for i in range(len(self.w)): out.append(jnp.reshape(..., self.w[i].shape))``.
    Each entry keeps its shape; the length is kept when the loop runs over ``self.w``."""
    body = getattr(method, "body", [])
    starts = [
        s
        for s in body
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and s.targets[0].id == name
    ]
    if len(starts) != 1 or not (isinstance(starts[0].value, ast.List) and not starts[0].value.elts):
        return frozenset()
    loops = [s for s in body if isinstance(s, ast.For) and _over_range(s) is not None]
    uses = [
        node
        for node in ast.walk(method)
        if isinstance(node, ast.Name) and node.id == name and node is not starts[0].targets[0]
    ]
    if len(loops) != 1 or not isinstance(loops[0].target, ast.Name):
        return frozenset()
    loop, entry = loops[0], loops[0].target.id
    if any(
        isinstance(node, (ast.Continue, ast.Break, ast.Return, ast.Raise))
        for statement in loop.body
        for node in ast.walk(statement)
    ):
        return frozenset()  # a pass may skip its entry: the list can come out shorter
    appends = [
        s.value
        for s in loop.body
        if isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and isinstance(s.value.func, ast.Attribute)
        and s.value.func.attr == "append"
        and isinstance(s.value.func.value, ast.Name)
        and s.value.func.value.id == name
    ]
    if len(appends) != 1 or len(appends[0].args) != 1 or appends[0].keywords:
        return frozenset()
    # Besides the append, ``name`` may only be returned: no other change of the list.
    returned = [
        node
        for node in ast.walk(method)
        if isinstance(node, ast.Return) and node.value is not None
        for inner in ast.walk(node.value)
        if inner in uses
    ]
    if len(uses) != len(returned) + 1:
        return frozenset()
    if not _reshaped_to(appends[0].args[0], self_name, attribute, entry=entry):
        return frozenset()
    length = _over_range(loop)
    if length is not None and is_own(length, self_name, attribute):
        return _ENTRY_SHAPES | {(False, "len")}
    return _ENTRY_SHAPES


def _over_range(loop: ast.For) -> ast.expr | None:
    """``x`` of ``for i in range(len(x)):`` (a loop with no ``else``)."""
    over = loop.iter
    if not (
        isinstance(over, ast.Call)
        and isinstance(over.func, ast.Name)
        and over.func.id == "range"
        and len(over.args) == 1
        and not over.keywords
        and not loop.orelse
    ):
        return None
    length = over.args[0]
    if (
        isinstance(length, ast.Call)
        and isinstance(length.func, ast.Name)
        and length.func.id == "len"
        and len(length.args) == 1
    ):
        return length.args[0]
    return None


def _own_method(call: ast.Call, self_name: str, methods: Mapping[str, ast.AST]) -> ast.AST | None:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if func.value.id == self_name:
            return methods.get(func.attr)
    return None


def _self_name(method: ast.AST) -> str | None:
    arguments = getattr(method, "args", None)
    positional = [*arguments.posonlyargs, *arguments.args] if arguments is not None else []
    return positional[0].arg if positional else None


def _nested_return(method: ast.AST, statement: ast.Return) -> bool:
    """A ``return`` of a function defined inside ``method``: not what ``method`` returns."""
    for node in ast.walk(method):
        if node is not method and isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
        ):
            if any(inner is statement for inner in ast.walk(node)):
                return True
    return False


def is_own(node: ast.AST, self_name: str, attribute: str) -> bool:
    """``self.attribute``: the attribute of the object ``self_name`` names."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attribute
        and isinstance(node.value, ast.Name)
        and node.value.id == self_name
    )


def returns_from_arguments(method: ast.AST, index: int) -> bool:
    """Entry ``index`` of every tuple ``method`` returns is computed from its parameters
    (other than ``self``): an expression naming one, or a local list whose every entry
    does (``weights.append(jnp.reshape(params[a:b], ...))``)."""
    arguments = getattr(method, "args", None)
    if arguments is None:
        return False
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    given = set(names[1:])
    returns = [node for node in ast.walk(method) if isinstance(node, ast.Return)]
    if not returns or any(_nested_return(method, r) for r in returns):
        return False
    for statement in returns:
        returned = statement.value
        if not isinstance(returned, ast.Tuple) or index >= len(returned.elts):
            return False
        entry = returned.elts[index]
        if isinstance(entry, ast.Name) and entry.id not in given:
            if not _built_from(method, entry.id, given):
                return False
        elif not _names_any(entry, given):
            return False
    return True


def _built_from(method: ast.AST, name: str, given: set[str]) -> bool:
    """Every value stored in the local ``name`` (assigned, or appended to a list first
    assigned ``[]``) names one of ``given``."""
    values: list[ast.expr] = []
    for node in ast.walk(method):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            if not (isinstance(node.value, ast.List) and not node.value.elts):
                values.append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and (
            isinstance(node.target, ast.Name) and node.target.id == name
        ):
            return False
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
        ):
            if node.func.attr != "append" or len(node.args) != 1:
                return False
            values.append(node.args[0])
    return bool(values) and all(_names_any(value, given) for value in values)


def _names_any(expression: ast.expr, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(expression))


# NumPy writes these into the array's own memory: its shape, dtype, rank and size stay.
_WRITES_INTO_ENTRIES = frozenset({"fill", "put", "itemset"})
_ARRAY_LAYOUT_STEPS = frozenset(f".{name}" for name in LAYOUT_FIELDS)


def keeps_array_layout(mutation: Mutation, paths: list[tuple[str, ...]]) -> bool:
    """Whether ``mutation`` writes into an array's entries (``held[i] = v``, ``held[i] += v``,
    ``held.fill(v)``) and every path in ``paths`` it reaches reads only that array's layout
    (``held.shape[0]``): a trace that read the layout baked in a Python number the write
    cannot change."""
    if not _writes_entries(mutation.node):
        return False
    depth = len(mutation.path)
    reached = [p for p in paths if p[:depth] == mutation.path[: len(p)]]
    return bool(reached) and all(
        len(p) > depth and p[depth] in _ARRAY_LAYOUT_STEPS for p in reached
    )


def _writes_entries(node: ast.AST) -> bool:
    if isinstance(node, ast.Assign):
        return all(isinstance(target, ast.Subscript) for target in node.targets)
    if isinstance(node, ast.AugAssign):
        return isinstance(node.target, ast.Subscript)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _WRITES_INTO_ENTRIES
    )
