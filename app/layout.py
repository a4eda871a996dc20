"""A layered drawing of the backward graph, computed once per pass on the server.

Layer 0 holds the root; every node sits one layer below the deepest node that points at
it (longest path), so every edge points downwards. Within a layer, nodes are ordered by
the average position of their parents and then children (a few barycentre sweeps), which
removes crossings on small graphs like the presets. All of it is iterative.
"""

from __future__ import annotations

from engine.events import NodeInfo

SWEEPS = 4


def layout(root: int, nodes: tuple[NodeInfo, ...]) -> dict[int, tuple[int, float]]:
    """For every node id: (layer, position within the layer as 0..width-1)."""
    children = {n.id: [c for c in n.next_ids if c is not None] for n in nodes}
    layer = _longest_path_layers(root, children)
    layers: dict[int, list[int]] = {}
    for n in nodes:                       # walk order: root first, then as discovered
        layers.setdefault(layer[n.id], []).append(n.id)
    parents: dict[int, list[int]] = {n.id: [] for n in nodes}
    for n in nodes:
        for c in children[n.id]:
            parents[c].append(n.id)
    depth = max(layers) if layers else 0
    position = {i: float(k) for row in layers.values() for k, i in enumerate(row)}
    for _ in range(SWEEPS):
        for d in range(1, depth + 1):
            _reorder(layers[d], parents, position)
        for d in range(depth - 1, -1, -1):
            _reorder(layers[d], children, position)
    return {i: (layer[i], position[i]) for i in position}


def _longest_path_layers(root: int, children: dict[int, list[int]]) -> dict[int, int]:
    """Longest distance from the root, via a topological order (Kahn's algorithm)."""
    indegree = {i: 0 for i in children}
    for kids in children.values():
        for c in kids:
            indegree[c] += 1
    layer = dict.fromkeys(children, 0)
    ready = [root]
    while ready:
        i = ready.pop()
        for c in children[i]:
            layer[c] = max(layer[c], layer[i] + 1)
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    return layer


def _reorder(row: list[int], neighbours: dict[int, list[int]],
             position: dict[int, float]) -> None:
    def barycentre(i: int) -> float:
        near = neighbours[i]
        return sum(position[j] for j in near) / len(near) if near else position[i]

    row.sort(key=lambda i: (barycentre(i), position[i]))
    for k, i in enumerate(row):
        position[i] = float(k)
