"""A layered drawing of the backward graph, computed once per pass on the server.

Layer 0 holds the root; every node sits one layer below the deepest node that points at
it (longest path), so every edge points downwards. An edge that skips layers gets a
placeholder ("dummy") in each layer it crosses, so that it keeps a lane of its own. The
order within each layer comes from barycentre sweeps plus adjacent swaps, keeping the
order with the fewest crossings; then each layer is placed as close as possible to its
neighbours (weighted least squares with minimum gaps, solved by pool-adjacent-violators),
each node also pulled a little towards the drawing's centre so that a long sum is not drawn
as a staircase wider than any of its layers (placement.COMPACT). All of it is iterative,
so deep graphs work. The order is app/trace/layered.py's, the coordinates
app/trace/placement.py's; this module decides which to use and caches them.

A network's layers are bands (app/trace/bands.py): each module, or each `x @ W + b` outside
any, gets rows of its own, and its nodes stay side by side in every row they share with
others, a little apart from them (BAND_GAP), so that its band covers no other node.

Coordinates: `layer` counts rows and `x` counts columns (a float, the smallest is 0). The
page draws each node NODE_WIDTH columns wide and NODE_HEIGHT rows tall, and each edge as
the cubic curve `edge_point` describes; tests/test_layout.py checks that, drawn this way,
no edge crosses another or runs through a node on any preset.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final

from app.trace.bands import Grouping, band_table, banded_layers, find_groups
from app.trace.document import Band
from app.trace.layered import BEND, NODE_HEIGHT, NODE_WIDTH, edge_point
from app.trace.placement import Placed
from engine.events import NodeInfo

__all__ = ["BEND", "DETAILED_LIMIT", "NODE_HEIGHT", "NODE_WIDTH", "Drawing", "clear_cache",
           "edge_point", "layout"]

DETAILED_LIMIT: Final = 600      # nodes + dummies; bigger graphs get `_quick_layout`


@dataclass(slots=True)
class Drawing:
    """Where each node goes, and the bands: `bands.band_table`'s rows, and each node's
    innermost band (its id) or None."""

    places: list[tuple[int, float]]
    bands: list[Band]
    band_of: list[str | None]


def layout(root: int, nodes: list[NodeInfo]) -> Drawing:
    """(layer, x) for each node, in the order of `nodes`, and the network's bands.

    A drawing depends only on the graph's shape, so a small graph's is cached by shape:
    the presets and every program with the same structure (whatever its values) are laid
    out once. A graph too big to draw edge by edge is not remembered: it is laid out in
    linear time, and a cache of such shapes would hold on to a lot of memory.
    """
    index = {n.id: k for k, n in enumerate(nodes)}
    children: list[list[int]] = []
    for n in nodes:
        kids: list[int] = []            # each child once (`a * a` has two edges to a)
        for c in n.next_ids:
            if c is not None:
                k = index[c]
                if k not in kids:
                    kids.append(k)
        children.append(kids)
    if len(children) > DETAILED_LIMIT:
        places = _quick_layout(children, _longest_path_layers(index[root], children))
        return Drawing(places, [], [None] * len(nodes))
    grouping = find_groups(nodes, children)
    shape = tuple([tuple(kids) for kids in children])
    if grouping is None:
        return Drawing(list(_layout_shape(index[root], shape)), [], [None] * len(nodes))
    placed, member, parents = _banded_shape(index[root], shape, tuple(grouping.member),
                                            tuple(grouping.parents))
    grouping.member, grouping.parents = list(member), list(parents)
    places = list(placed)
    return Drawing(places, band_table(grouping, nodes, places),
                   [grouping.keys[g] if g >= 0 else None for g in member])


def clear_cache() -> None:
    """Forget every layout (so that a benchmark's run starts cold)."""
    _layout_shape.cache_clear()
    _banded_shape.cache_clear()


@functools.lru_cache(maxsize=256)
def _banded_shape(root: int, shape: tuple[tuple[int, ...], ...], member: tuple[int, ...],
                  parents: tuple[int, ...]) -> tuple[tuple[tuple[int, float], ...],
                                                     tuple[int, ...], tuple[int, ...]]:
    """`_layout_shape` with bands: the places, and the groups as they are after any that
    could not be one block were dissolved (bands.banded_layers)."""
    grouping = Grouping([""] * len(parents), [""] * len(parents), list(parents), list(member))
    lists = [list(kids) for kids in shape]
    layer = banded_layers(root, lists, grouping)
    dummies = sum([layer[c] - layer[u] - 1 for u, kids in enumerate(shape) for c in kids])
    if len(shape) + dummies > DETAILED_LIMIT:         # too big to keep bands apart: none
        plain = _layout_shape(root, shape)
        return plain, (-1,) * len(shape), tuple(parents)
    chains = {i: grouping.chain(i) for i in range(len(shape))}
    places = _detailed(root, lists, layer, chains)
    return places, tuple(grouping.member), tuple(grouping.parents)


@functools.lru_cache(maxsize=256)
def _layout_shape(root: int, shape: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, float], ...]:
    """The layout of a graph whose nodes are 0..n-1 and whose children are `shape[i]`."""
    lists = [list(kids) for kids in shape]
    layer = _longest_path_layers(root, lists)
    crossings = sum([layer[c] - layer[u] - 1 for u, kids in enumerate(shape) for c in kids])
    if len(shape) + crossings > DETAILED_LIMIT:
        return tuple(_quick_layout(lists, layer))
    return _detailed(root, lists, layer, None)


def _detailed(root: int, lists: list[list[int]], layer: list[int],
              chains: dict[int, tuple[int, ...]] | None) -> tuple[tuple[int, float], ...]:
    """Order and place the rows, edge by edge; `chains` keeps each band's nodes together."""
    children = dict(enumerate(lists))
    graph = Placed(root, list(children), children, dict(enumerate(layer)), chains)
    rows = graph.order()
    x = graph.place(rows)
    low = min(x.values(), default=0.0)
    return tuple((layer[i], round(x[i] - low, 4)) for i in range(len(lists)))


def _quick_layout(children: list[list[int]], layer: list[int]) -> list[tuple[int, float]]:
    """For graphs too big to draw edge by edge: real nodes only, ordered by two
    barycentre sweeps (down, then up), in time linear in the edges (and a sort per row)."""
    n = len(children)
    depth = max(layer, default=0)
    rows: list[list[int]] = [[] for _ in range(depth + 1)]
    for i in range(n):                   # the walk's order: root first
        rows[layer[i]].append(i)
    parents: list[list[int]] = [[] for _ in range(n)]
    for u, kids in enumerate(children):
        for c in kids:
            parents[c].append(u)
    x = [0.0] * n
    for row in rows:
        for k, i in enumerate(row):
            x[i] = float(k)
    barycentre = [0.0] * n
    sweeps: list[tuple[range, list[list[int]]]] = [
        (range(1, depth + 1), parents), (range(depth - 1, -1, -1), children)]
    for order, near in sweeps:
        for d in order:
            row = rows[d]
            if len(row) < 2:             # a node alone in its layer stays at 0
                continue
            for i in row:
                ns = near[i]
                if ns:
                    total = 0.0
                    for j in ns:
                        total += x[j]
                    barycentre[i] = total / float(len(ns))
                else:
                    barycentre[i] = x[i]
            _sort_by(row, barycentre)
            for k, i in enumerate(row):
                x[i] = float(k)
    return [(layer[i], x[i]) for i in range(n)]


def _sort_by(row: list[int], key: list[float]) -> None:
    """`row.sort(key=key.__getitem__)`: a stable sort, so any stable sort gives the same
    order; rows are mostly a handful of nodes, which an insertion sort orders without a
    call per comparison."""
    if len(row) > 16:
        row.sort(key=key.__getitem__)
        return
    for k in range(1, len(row)):
        i = row[k]
        ki = key[i]
        j = k - 1
        while j >= 0 and key[row[j]] > ki:
            row[j + 1] = row[j]
            j -= 1
        row[j + 1] = i


def _longest_path_layers(root: int, children: list[list[int]]) -> list[int]:
    """Longest distance from the root, via a topological order (Kahn's algorithm)."""
    indegree = [0] * len(children)
    for kids in children:
        for c in kids:
            indegree[c] += 1
    layer = [0] * len(children)
    ready = [root]
    while ready:
        i = ready.pop()
        below = layer[i] + 1
        for c in children[i]:
            if layer[c] < below:
                layer[c] = below
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    return layer
