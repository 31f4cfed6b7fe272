"""The two data sets the Jraph tutorial downloads, as small synthetic graphs in the same format,
written where the tutorial reads them (``/tmp/mutag.pickle``, ``/tmp/cora.pickle``): MUTAG as 188
small graphs (7 node and 4 edge features, a 0/1 target), Cora as one graph of 300 nodes with 64
features. Random, so only the code paths are real."""

from __future__ import annotations

import pickle

import jraph
import numpy as np

_rng = np.random.default_rng(0)


def _graph(
    nodes: int, edges: int, node_features: int, edge_features: int | None
) -> jraph.GraphsTuple:
    senders = _rng.integers(0, nodes, size=edges).astype(np.int32)
    receivers = _rng.integers(0, nodes, size=edges).astype(np.int32)
    return jraph.GraphsTuple(
        nodes=_rng.random((nodes, node_features)).astype(np.float32),
        edges=None
        if edge_features is None
        else _rng.random((edges, edge_features)).astype(np.float32),
        senders=senders,
        receivers=receivers,
        n_node=np.array([nodes], dtype=np.int32),
        n_edge=np.array([edges], dtype=np.int32),
        globals=None,
    )


def _write() -> None:
    mutag = [
        {"input_graph": _graph(n, 2 * n, 7, 4), "target": np.array([int(_rng.integers(0, 2))])}
        for n in _rng.integers(10, 28, size=188)
    ]
    with open("/tmp/mutag.pickle", "wb") as handle:
        pickle.dump(mutag, handle)
    with open("/tmp/cora.pickle", "wb") as handle:
        pickle.dump([{"input_graph": _graph(300, 1200, 64, None), "target": None}], handle)


_write()
