"""A layered drawing of the backward graph, computed once per pass on the server.

Layer 0 holds the root; every node sits one layer below the deepest node that points at
it (longest path), so every edge points downwards. An edge that skips layers gets a
placeholder ("dummy") in each layer it crosses, so that it keeps a lane of its own. The
order within each layer comes from barycentre sweeps plus adjacent swaps, keeping the
order with the fewest crossings; then each layer is placed as close as possible to its
neighbours (weighted least squares with minimum gaps, solved by pool-adjacent-violators).
All of it is iterative, so deep graphs work.

Coordinates: `layer` counts rows and `x` counts columns (a float, the smallest is 0). The
page draws each node NODE_WIDTH columns wide and NODE_HEIGHT rows tall, and each edge as
the cubic curve `edge_point` describes; tests/test_layout.py checks that, drawn this way,
no edge crosses another or runs through a node on any preset.
"""

from __future__ import annotations

import functools
import itertools
import random
from bisect import bisect_right
from collections.abc import Callable
from typing import Final

from engine.events import NodeInfo

NODE_WIDTH: Final = 0.8          # columns; static/js/views/geometry.js: NODE_W / COL
NODE_HEIGHT: Final = 0.55        # rows;    static/js/views/geometry.js: NODE_H / ROW
BEND: Final = 0.5                # rows over which an edge leaves and enters vertically (at most)
SWEEPS: Final = 8
DETAILED_LIMIT: Final = 600      # nodes + dummies; bigger graphs get `_quick_layout`
PLACEMENT_ROUNDS: Final = 40
RESTARTS: Final = 24             # random starting orders tried on graphs of up to RESTART_LIMIT
RESTART_LIMIT: Final = 80        # layout nodes (dummies included)
TRANSPOSE_LIMIT: Final = 200     # graphs up to this many layout nodes also get adjacent swaps
FINAL_ROUNDS: Final = 12
REAL_HALF: Final = 0.5           # columns: two nodes in a layer stay 1 column apart
LANE_HALF: Final = 0.12          # columns: two long edges in a layer stay 0.24 columns apart
CLEARANCE: Final = 0.1           # columns kept free between an edge and a node it passes
DUMMY_WEIGHT: Final = 2.0        # while settling, a long edge bends a little
REPAIR_ROUNDS: Final = 40
REPAIR_STEP: Final = 0.6
PINNED: Final = 200.0            # at the end, it stays where it is drawn


def edge_point(x1: float, layer1: int, x2: float, layer2: int, t: float) -> tuple[float, float]:
    """The point at t (0..1) of the edge from the bottom of one node to the top of another:
    a cubic Bezier that leaves and enters vertically. graph.js draws the same curve."""
    y1, y2 = layer1 + NODE_HEIGHT / 2, layer2 - NODE_HEIGHT / 2
    c = min(BEND, (y2 - y1) / 2)
    u = 1 - t
    a, b, d, e = u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t
    return (a * x1 + b * x1 + d * x2 + e * x2,
            a * y1 + b * (y1 + c) + d * (y2 - c) + e * y2)


def layout(root: int, nodes: list[NodeInfo]) -> list[tuple[int, float]]:
    """(layer, x) for each node, in the order of `nodes`.

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
        return _quick_layout(children, _longest_path_layers(index[root], children))
    return list(_layout_shape(index[root], tuple([tuple(kids) for kids in children])))


def clear_cache() -> None:
    """Forget every layout (so that a benchmark's run starts cold)."""
    _layout_shape.cache_clear()


@functools.lru_cache(maxsize=256)
def _layout_shape(root: int, shape: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, float], ...]:
    """The layout of a graph whose nodes are 0..n-1 and whose children are `shape[i]`."""
    lists = [list(kids) for kids in shape]
    layer = _longest_path_layers(root, lists)
    crossings = sum([layer[c] - layer[u] - 1 for u, kids in enumerate(shape) for c in kids])
    if len(shape) + crossings > DETAILED_LIMIT:
        return tuple(_quick_layout(lists, layer))
    children = dict(enumerate(lists))
    graph = _Layered(root, list(children), children, dict(enumerate(layer)))
    rows = graph.order()
    x = graph.place(rows)
    low = min(x.values(), default=0.0)
    return tuple((layer[i], round(x[i] - low, 4)) for i in range(len(shape)))


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


class _Layered:
    """The graph with a dummy in every layer that a long edge crosses."""

    def __init__(self, root: int, ids: list[int], children: dict[int, list[int]],
                 layer: dict[int, int]) -> None:
        self.root = root
        self.layer = dict(layer)
        self.down: dict[int, list[int]] = {i: [] for i in ids}
        self.up: dict[int, list[int]] = {i: [] for i in ids}
        self.dummy: set[int] = set()
        self.chain: dict[int, tuple[int, int]] = {}      # dummy -> (edge source, edge target)
        self.blend: dict[int, tuple[float, tuple[float, ...]]] = {}
        shapes: dict[tuple[int, int], tuple[float, tuple[float, ...]]] = {}
        fresh = max(ids, default=0) + 1
        for u in ids:
            for v in children[u]:
                prev = u
                for d in range(layer[u] + 1, layer[v]):
                    self._add(fresh, d)
                    self.chain[fresh] = (u, v)
                    shape = (layer[v] - layer[u], d - layer[u])
                    if shape not in shapes:
                        shapes[shape] = _blends(0, shape[0], shape[1])
                    self.blend[fresh] = shapes[shape]
                    self._link(prev, fresh)
                    prev, fresh = fresh, fresh + 1
                self._link(prev, v)

    def _add(self, i: int, layer: int) -> None:
        self.layer[i] = layer
        self.down[i], self.up[i] = [], []
        self.dummy.add(i)

    def _link(self, u: int, v: int) -> None:
        self.down[u].append(v)
        self.up[v].append(u)

    # -- order within layers ---------------------------------------------------------------

    def order(self) -> list[list[int]]:
        """The fewest crossings found by sweeping from several starting orders."""
        starts = [self._first_order(left_first=True), self._first_order(left_first=False)]
        if len(self.layer) <= RESTART_LIMIT:
            rng = random.Random(0)
            for _ in range(RESTARTS):
                rows = [r[:] for r in starts[0]]
                for r in rows:
                    rng.shuffle(r)
                starts.append(rows)
        best, best_crossings = starts[0], self.crossings(starts[0])
        for rows in starts:
            rows, crossings = self._sweep(rows)
            if crossings < best_crossings:
                best, best_crossings = rows, crossings
            if best_crossings == 0:
                break
        return best

    def _sweep(self, rows: list[list[int]]) -> tuple[list[list[int]], int]:
        best, best_crossings = [r[:] for r in rows], self.crossings(rows)
        for sweep in range(SWEEPS):
            if best_crossings == 0:
                break
            downwards = sweep % 2 == 0
            span = range(1, len(rows)) if downwards else range(len(rows) - 2, -1, -1)
            for d in span:
                near = self.up if downwards else self.down
                self._sort_by_barycentre(rows[d], near, rows[d - 1 if downwards else d + 1])
            if len(self.layer) <= TRANSPOSE_LIMIT:
                self._transpose(rows)
            crossings = self.crossings(rows)
            if crossings < best_crossings:
                best, best_crossings = [r[:] for r in rows], crossings
        return best, best_crossings

    def _first_order(self, left_first: bool) -> list[list[int]]:
        """Depth-first from the root, children in argument order: left operands left."""
        rows: list[list[int]] = [[] for _ in range(max(self.layer.values()) + 1)]
        seen = {self.root}
        stack = [self.root]
        while stack:
            i = stack.pop()
            rows[self.layer[i]].append(i)
            for c in (self.down[i][::-1] if left_first else self.down[i]):
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
        return rows

    @staticmethod
    def _sort_by_barycentre(row: list[int], near: dict[int, list[int]],
                            other: list[int]) -> None:
        where = {i: k for k, i in enumerate(other)}
        current = {i: k for k, i in enumerate(row)}

        def barycentre(i: int) -> float:
            ks = [where[j] for j in near[i]]
            return sum(ks) / len(ks) if ks else float(current[i])

        row.sort(key=lambda i: (barycentre(i), current[i]))

    def _transpose(self, rows: list[list[int]]) -> None:
        """Swap neighbours in a row wherever that lowers the crossings. Only the crossings
        between the two nodes' own edges change, so each swap is judged by those alone."""
        improved, rounds = True, 0
        while improved and rounds < 8:
            improved, rounds = False, rounds + 1
            for d, row in enumerate(rows):
                above = {i: k for k, i in enumerate(rows[d - 1])} if d > 0 else {}
                below = {i: k for k, i in enumerate(rows[d + 1])} if d + 1 < len(rows) else {}
                for k in range(len(row) - 1):
                    u, v = row[k], row[k + 1]
                    if self._swap_gain(u, v, above, below) > 0:
                        row[k], row[k + 1] = v, u
                        improved = True

    def _swap_gain(self, u: int, v: int, above: dict[int, int], below: dict[int, int]) -> int:
        """How many fewer crossings with v left of u than with u left of v: an edge of u
        and an edge of v cross when their other ends are in the opposite order (edges that
        share an end never cross)."""
        gain = 0
        for near, where in ((self.up, above), (self.down, below)):
            if not where:
                continue
            for a in near[u]:
                for b in near[v]:
                    if where[a] > where[b]:
                        gain += 1
                    elif where[a] < where[b]:
                        gain -= 1
        return gain

    def crossings(self, rows: list[list[int]]) -> int:
        return sum(self._between(rows[d], rows[d + 1]) for d in range(len(rows) - 1))

    def _between(self, upper: list[int], lower: list[int]) -> int:
        """Crossings between two adjacent layers: inversions among the edges' lower ends."""
        where = {i: k for k, i in enumerate(lower)}
        ends = [where[c] for u in upper for c in sorted(self.down[u], key=where.__getitem__)]
        seen: list[int] = []
        count = 0
        for e in ends:
            count += len(seen) - bisect_right(seen, e)
            seen.insert(bisect_right(seen, e), e)
        return count

    # -- coordinates -----------------------------------------------------------------------

    def place(self, rows: list[list[int]]) -> dict[int, float]:
        x = {i: float(k) for row in rows for k, i in enumerate(row)}
        small = len(self.layer) <= TRANSPOSE_LIMIT
        settle, final = (PLACEMENT_ROUNDS, FINAL_ROUNDS) if small else (8, 4)
        for round_ in range(settle):                      # settle towards the neighbours
            downwards = round_ % 2 == 0
            for row in (rows if downwards else rows[::-1]):
                self._place_row(row, x, self._pull(round_, downwards), exact=False)
        for _ in range(final):            # leaves under parents, parents over children,
            for row in rows:              # every long edge's lane kept where it is drawn
                self._place_row(row, x, lambda i: [] if self.down[i] else self.up[i])
            for row in rows[::-1]:
                self._place_row(row, x, lambda i: self.down[i])
        for _ in range(final):            # then only make room where a lane moved
            before = dict(x)
            for row in rows:
                self._place_row(row, x, lambda i: [])
            if max(abs(x[i] - before[i]) for i in x) < 1e-6:
                break
        self._repair(rows, x)
        return x

    def _repair(self, rows: list[list[int]], x: dict[int, float]) -> None:
        """Where a long edge's curve still runs through a node, move the edge's ends and the
        node apart, then restore the gaps between the nodes of each layer."""
        real_rows = [[i for i in row if i not in self.dummy] for row in rows]
        for _ in range(REPAIR_ROUNDS if len(self.layer) <= TRANSPOSE_LIMIT else 6):
            moved = False
            for d in sorted(self.dummy):
                u, v = self.chain[d]
                for n in real_rows[self.layer[d]]:
                    push = self._overlap(d, n, x)
                    if push:
                        x[u] += push
                        x[v] += push
                        x[n] -= push
                        moved = True
            if not moved:
                return
            for row in real_rows:
                _fit(row, [x[i] for i in row], [1.0] * len(row), [1.0] * (len(row) - 1), x)

    def _overlap(self, d: int, n: int, x: dict[int, float]) -> float:
        """How far (signed, scaled by REPAIR_STEP) the edge of dummy d must move away from
        node n to pass it with CLEARANCE to spare; 0 when it already does."""
        _, lo, hi = self._span(d, x)
        room = NODE_WIDTH / 2 + CLEARANCE
        if x[n] - room >= hi or x[n] + room <= lo:
            return 0.0
        if x[n] >= (lo + hi) / 2:
            return -REPAIR_STEP * (hi + room - x[n])
        return REPAIR_STEP * (x[n] + room - lo)


    def _pull(self, round_: int, downwards: bool) -> Callable[[int], list[int]]:
        """Which neighbours a node moves towards in this round: first one side, then both."""
        if round_ % 4 == 3 or round_ >= PLACEMENT_ROUNDS // 2:
            return lambda i: self.up[i] + self.down[i]
        return lambda i: (self.up[i] if downwards else self.down[i]) or self.up[i] + self.down[i]

    def _place_row(self, row: list[int], x: dict[int, float],
                   near: Callable[[int], list[int]], exact: bool = True) -> None:
        desired, weights, extents = [], [], []
        for i in row:
            if i in self.dummy:
                centre, left, right = self._lane(i, x, exact)
                desired.append(centre)
                extents.append((left, right))
                weights.append(PINNED if exact else DUMMY_WEIGHT)
            else:
                js = near(i)
                desired.append(sum(x[j] for j in js) / len(js) if js else x[i])
                extents.append((REAL_HALF, REAL_HALF))
                weights.append(1.0)
        gaps = [a[1] + b[0] for a, b in itertools.pairwise(extents)]
        _fit(row, desired, weights, gaps, x)

    def _lane(self, i: int, x: dict[int, float], exact: bool) -> tuple[float, float, float]:
        """Where the drawn curve of this dummy's edge crosses its layer, and how far it
        must stay from the centres of its neighbours in the layer (left, right)."""
        centre, lo, hi = self._span(i, x)
        if not exact:
            return centre, LANE_HALF, LANE_HALF
        room = NODE_WIDTH / 2 + CLEARANCE - REAL_HALF
        return centre, max(LANE_HALF, centre - lo + room), max(LANE_HALF, hi - centre + room)

    def _span(self, i: int, x: dict[int, float]) -> tuple[float, float, float]:
        """The x of dummy i's edge at the layer's centre, and its least and greatest x over
        the height of a node in that layer."""
        u, v = self.chain[i]
        x1, dx = x[u], x[v] - x[u]
        mid, band = self.blend[i]
        xs = [x1 + dx * h for h in band]
        return x1 + dx * mid, min(xs), max(xs)


def _blends(layer1: int, layer2: int, layer: int) -> tuple[float, tuple[float, ...]]:
    """An edge's x is x1 + (x2 - x1) * blend, where blend depends only on the height: the
    blend at the centre of `layer` and at heights across a node there."""
    band = NODE_HEIGHT / 2 + 0.05
    heights = [layer - band + 2 * band * k / 8 for k in range(9)]
    return _blend(layer1, layer2, layer), tuple(_blend(layer1, layer2, y) for y in heights)


def _blend(layer1: int, layer2: int, y: float) -> float:
    lo, hi = 0.0, 1.0
    for _ in range(30):
        mid = (lo + hi) / 2
        if edge_point(0.0, layer1, 1.0, layer2, mid)[1] < y:
            lo = mid
        else:
            hi = mid
    return edge_point(0.0, layer1, 1.0, layer2, lo)[0]


def _fit(row: list[int], desired: list[float], weights: list[float], gaps: list[float],
         x: dict[int, float]) -> None:
    """x for `row` minimising sum w (x - desired)^2 with x[k+1] - x[k] >= gaps[k]: with
    offsets o (cumulative gaps), y = x - o must be non-decreasing: isotonic regression."""
    offsets = [0.0]
    for g in gaps:
        offsets.append(offsets[-1] + g)
    blocks: list[list[float]] = []                     # [weight, weighted sum, count]
    for d, w, o in zip(desired, weights, offsets, strict=True):
        blocks.append([w, w * (d - o), 1])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][0] > blocks[-1][1] / blocks[-1][0]:
            w2, s2, n2 = blocks.pop()
            blocks[-1][0] += w2
            blocks[-1][1] += s2
            blocks[-1][2] += n2
    k = 0
    for w, s, n in blocks:
        for _ in range(int(n)):
            x[row[k]] = s / w + offsets[k]
            k += 1
