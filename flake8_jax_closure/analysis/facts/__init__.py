"""Scope facts over the standard ``ast`` tree: where each name is bound, read and changed.

Python's real rules: parameters and locals shadow, class bodies are invisible to the functions
inside them, comprehensions and lambdas are their own scopes, ``global`` and ``nonlocal``
redirect bindings, ``x = f(x)`` reads before it binds.

- ``model``: the scope model (scopes, bindings, reads, in-place changes, attribute references);
- ``mutating``: the methods and functions that change an object in place;
- ``skeleton``: the statement walk that builds the scope tree and cuts the module into units;
- ``collector``: the expression visit that fills a unit's facts;
- ``queries``: ``Facts``, the questions, which visit units only where they need them.

Limits, stated first as LibCST does: names reached through ``exec``, ``globals()`` or star
imports are not seen; an object mutated through an alias (``w = weights; w[0] = 1``) or by a
function it is passed to is not seen; annotations are never treated as reads; code under
``if TYPE_CHECKING:`` never runs and is not read. Nothing is imported here: importers name the
module they need.
"""
