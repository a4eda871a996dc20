"""The graph in layers, with a dummy in every layer that a long edge crosses, and the order
within each layer: barycentre sweeps from several starting orders plus adjacent swaps,
keeping the order with the fewest crossings (app/trace/layout.py tells the whole method).

The drawing's geometry is here too: each node is NODE_WIDTH columns wide and NODE_HEIGHT
rows tall, and each edge the cubic curve `edge_point` describes (static/js/views/
geometry.js draws the same).
"""

from __future__ import annotations

import random
from bisect import bisect_right
from typing import Final

NODE_WIDTH: Final = 0.8          # columns; static/js/views/geometry.js: NODE_W / COL
NODE_HEIGHT: Final = 0.55        # rows;    static/js/views/geometry.js: NODE_H / ROW
BEND: Final = 0.5                # rows over which an edge leaves and enters vertically (at most)
SWEEPS: Final = 8
RESTARTS: Final = 24             # random starting orders tried on graphs of up to RESTART_LIMIT
RESTART_LIMIT: Final = 80        # layout nodes (dummies included)
BANDED_RESTARTS: Final = 96      # more for a banded graph that still has crossings
BANDED_RESTART_LIMIT: Final = 300
TRANSPOSE_LIMIT: Final = 200     # graphs up to this many layout nodes also get adjacent swaps


def edge_point(x1: float, layer1: int, x2: float, layer2: int, t: float) -> tuple[float, float]:
    """The point at t (0..1) of the edge from the bottom of one node to the top of another:
    a cubic Bezier that leaves and enters vertically. graph.js draws the same curve."""
    y1, y2 = layer1 + NODE_HEIGHT / 2, layer2 - NODE_HEIGHT / 2
    c = min(BEND, (y2 - y1) / 2)
    u = 1 - t
    a, b, d, e = u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t
    return (a * x1 + b * x1 + d * x2 + e * x2,
            a * y1 + b * (y1 + c) + d * (y2 - c) + e * y2)


class Layered:
    """The graph with a dummy in every layer that a long edge crosses."""

    def __init__(self, root: int, ids: list[int], children: dict[int, list[int]],
                 layer: dict[int, int], chains: dict[int, tuple[int, ...]] | None = None) -> None:
        self.root = root
        self.groups = chains      # node -> its bands, outermost first (a dummy: its ends')
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
                    if chains is not None:      # a dummy: in the bands both ends are in
                        chains[fresh] = _common(chains[u], chains[v])
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
        """The fewest crossings found by sweeping from several starting orders. A banded
        graph's blocks make long edges (a weight penalty reaches into every layer), so one
        that still has crossings tries more random starts (BANDED_RESTARTS)."""
        starts = [self._first_order(left_first=True), self._first_order(left_first=False)]
        rng = random.Random(0)
        if len(self.layer) <= RESTART_LIMIT:
            starts += [self._shuffled(starts[0], rng) for _ in range(RESTARTS)]
        best, best_crossings = starts[0], self.crossings(starts[0])
        for rows in starts:
            best, best_crossings = self._better(rows, best, best_crossings)
            if best_crossings == 0:
                return best
        if self.groups is not None and len(self.layer) <= BANDED_RESTART_LIMIT:
            for _ in range(BANDED_RESTARTS):
                best, best_crossings = self._better(self._shuffled(starts[0], rng), best,
                                                    best_crossings)
                if best_crossings == 0:
                    break
        return best

    def _shuffled(self, rows: list[list[int]], rng: random.Random) -> list[list[int]]:
        out = [r[:] for r in rows]
        for r in out:
            rng.shuffle(r)
        return out

    def _better(self, rows: list[list[int]], best: list[list[int]],
                best_crossings: int) -> tuple[list[list[int]], int]:
        """Sweep from `rows`; the better of that and the best so far."""
        if self.groups is not None:
            for row in rows:
                self._keep_bands_together(row, {i: float(k) for k, i in enumerate(row)})
        rows, crossings = self._sweep(rows)
        return (rows, crossings) if crossings < best_crossings else (best, best_crossings)

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

    def _sort_by_barycentre(self, row: list[int], near: dict[int, list[int]],
                            other: list[int]) -> None:
        where = {i: k for k, i in enumerate(other)}
        current = {i: k for k, i in enumerate(row)}

        def barycentre(i: int) -> float:
            ks = [where[j] for j in near[i]]
            return sum(ks) / len(ks) if ks else float(current[i])

        row.sort(key=lambda i: (barycentre(i), current[i]))
        if self.groups is not None:
            self._keep_bands_together(row, {i: barycentre(i) for i in row})

    def _keep_bands_together(self, row: list[int], key: dict[int, float]) -> None:
        """Reorder a row (sorted by `key`) so that each band's nodes are neighbours: bands
        by the mean key of their nodes in the row, then nodes by their own, level by level.
        A long edge's lane may pass between them: a `Linear` draws best with the edge to
        the next layer straight down between its parameters."""
        groups = self.groups
        assert groups is not None
        position = {i: k for k, i in enumerate(row)}
        real = [i for i in row if i not in self.dummy]
        sums: dict[tuple[int, ...], list[float]] = {}
        for i in real:
            chain = groups[i]
            for d in range(1, len(chain) + 1):
                total = sums.setdefault(chain[:d], [0.0, 0])
                total[0] += key[i]
                total[1] += 1

        def rank(i: int) -> list[tuple[float, int, int]]:
            chain = groups[i]
            out = [(sums[chain[:d]][0] / sums[chain[:d]][1], 0, chain[d - 1])
                   for d in range(1, len(chain) + 1)]
            out.append((key[i], 1, position[i]))
            return out

        real.sort(key=rank)
        lanes = sorted((i for i in row if i in self.dummy), key=lambda i: (key[i], position[i]))
        row.clear()
        for i in real:
            while lanes and key[lanes[0]] < key[i]:
                row.append(lanes.pop(0))
            row.append(i)
        row.extend(lanes)

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
                    if (self.groups is not None and self.groups[u] != self.groups[v]
                            and u not in self.dummy and v not in self.dummy):
                        continue                  # a swap would split a band
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


def _common(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The bands two chains share, outermost first."""
    k = 0
    while k < len(a) and k < len(b) and a[k] == b[k]:
        k += 1
    return a[:k]


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
