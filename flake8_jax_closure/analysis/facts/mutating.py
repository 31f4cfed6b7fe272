"""What changes an object in place: the list, dict, set and NumPy methods and functions that
write into their receiver or their first argument."""

from __future__ import annotations

# Methods that change their receiver in place. Those that return None only count as a whole
# statement (``d.update(x)``): ``state = tx.update(g, s)`` is optax, not dict.update.
MUTATING_METHODS_RETURNING_NONE = frozenset(
    {
        "append", "extend", "insert", "remove", "clear", "update", "sort", "reverse",
        "add", "discard", "difference_update", "intersection_update",
        "symmetric_difference_update", "appendleft", "extendleft", "rotate",
        "fill", "resize", "put", "itemset", "setfield", "__setitem__", "__delitem__",
        "shuffle",
    }
)  # fmt: skip
MUTATING_METHODS_RETURNING_VALUE = frozenset({"pop", "popitem", "setdefault", "popleft"})
# Functions that write into their first argument, by the modules that define them.
IN_PLACE_FUNCTIONS: dict[str, frozenset[str]] = {
    "copyto": frozenset({"numpy"}),
    "put": frozenset({"numpy"}),
    "place": frozenset({"numpy"}),
    "putmask": frozenset({"numpy"}),
    "fill_diagonal": frozenset({"numpy"}),
    # ``random.shuffle(x)``, ``np.random.shuffle(x)``, ``rng.shuffle(x)``: any receiver.
    "shuffle": frozenset(),
}
