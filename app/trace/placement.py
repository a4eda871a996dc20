"""Coordinates within the layers: each layer placed as close as possible to its
neighbours (weighted least squares with minimum gaps, solved by pool-adjacent-violators),
every long edge's lane where its curve is drawn, and a repair where a curve still runs
through a node."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Final

from app.trace.layered import NODE_WIDTH, TRANSPOSE_LIMIT, Layered

PLACEMENT_ROUNDS: Final = 40
FINAL_ROUNDS: Final = 12
CLEARANCE: Final = 0.1           # columns kept free between an edge and a node it passes
REAL_HALF: Final = 0.5           # columns: two nodes in a layer stay 1 column apart
LANE_HALF: Final = 0.12          # columns: two long edges in a layer stay 0.24 columns apart
DUMMY_WEIGHT: Final = 2.0        # while settling, a long edge bends a little
REPAIR_ROUNDS: Final = 40
REPAIR_STEP: Final = 0.6
PINNED: Final = 200.0            # at the end, it stays where it is drawn
COMPACT: Final = 0.1            # each node's pull to the drawing's centre, against its edges'
BAND_GAP: Final = 0.3            # columns added between neighbours of different bands


class Placed(Layered):
    """A layered graph that places its ordered rows."""

    def place(self, rows: list[list[int]]) -> dict[int, float]:
        """Settle, then keep every long edge's lane where its curve is drawn, then repair.

        Throughout, each real node is also pulled a little (COMPACT, as if by one more edge
        of that weight) towards the mean x of the real nodes. Without it a
        chain of additions draws as a staircase: each `+` one layer deeper and each other
        operand's subtree in columns of its own, so that the drawing grows by a subtree's
        width per term while no layer is that wide. The pull shears the staircase upright
        and lets subtrees of different layers share columns; the order, the gaps within a layer
        and the lanes of long edges are kept as before (and the repair still runs last).
        """
        x = {i: float(k) for row in rows for k, i in enumerate(row)}
        real = [i for row in rows for i in row if i not in self.dummy]
        small = len(self.layer) <= TRANSPOSE_LIMIT
        settle, final = (PLACEMENT_ROUNDS, FINAL_ROUNDS) if small else (8, 4)
        for round_ in range(settle):                      # settle towards the neighbours
            downwards = round_ % 2 == 0
            centre = self._centre(x, real)
            for row in (rows if downwards else rows[::-1]):
                self._place_row(row, x, self._pull(round_, downwards), False, centre)
        for _ in range(final):            # leaves under parents, parents over children,
            centre = self._centre(x, real)      # every long edge's lane kept where it is drawn
            for row in rows:
                self._place_row(row, x, lambda i: [] if self.down[i] else self.up[i], True,
                                centre)
            for row in rows[::-1]:
                self._place_row(row, x, lambda i: self.down[i], True, centre)
        for _ in range(final):            # then only make room where a lane moved
            before, centre = dict(x), self._centre(x, real)
            for row in rows:
                self._place_row(row, x, lambda i: [], True, centre)
            if max(abs(x[i] - before[i]) for i in x) < 1e-6:
                break
        self._repair(rows, x)
        return x

    def _centre(self, x: dict[int, float], real: list[int]) -> float:
        """The mean x of the real nodes: where `place` pulls every node towards."""
        total = 0.0
        for i in real:
            total += x[i]
        return total / len(real) if real else 0.0

    def _repair(self, rows: list[list[int]], x: dict[int, float]) -> None:
        """Where a long edge's curve still runs through a node, move the edge's ends and the
        node apart, then restore the gaps between the nodes of each layer."""
        real_rows = [[i for i in row if i not in self.dummy] for row in rows]
        position = {i: k for row in rows for k, i in enumerate(row)}
        for _ in range(REPAIR_ROUNDS if len(self.layer) <= TRANSPOSE_LIMIT else 6):
            moved = False
            for d in sorted(self.dummy):
                u, v = self.chain[d]
                for n in real_rows[self.layer[d]]:
                    push = self._overlap(d, n, x, position[n] > position[d])
                    if push:
                        x[u] += push
                        x[v] += push
                        x[n] -= push
                        moved = True
            if not moved:
                return
            for row in real_rows:
                _fit(row, [x[i] for i in row], [1.0] * len(row), [1.0] * (len(row) - 1), x)

    def _overlap(self, d: int, n: int, x: dict[int, float], right: bool) -> float:
        """How far (signed, scaled by REPAIR_STEP) the edge of dummy d must move away from
        node n to pass it with CLEARANCE to spare; 0 when it already does. The node stays
        on its side of the edge in the row's order (`right`): passing it on the other side
        would cross the node's own edges."""
        _, lo, hi = self._span(d, x)
        room = NODE_WIDTH / 2 + CLEARANCE
        if x[n] - room >= hi or x[n] + room <= lo:
            return 0.0
        if right:
            return -REPAIR_STEP * (hi + room - x[n])
        return REPAIR_STEP * (x[n] + room - lo)

    def _pull(self, round_: int, downwards: bool) -> Callable[[int], list[int]]:
        """Which neighbours a node moves towards in this round: first one side, then both."""
        if round_ % 4 == 3 or round_ >= PLACEMENT_ROUNDS // 2:
            return lambda i: self.up[i] + self.down[i]
        return lambda i: (self.up[i] if downwards else self.down[i]) or self.up[i] + self.down[i]

    def _place_row(self, row: list[int], x: dict[int, float],
                   near: Callable[[int], list[int]], exact: bool = True,
                   centre: float | None = None) -> None:
        """Place one row: each node as near as the gaps allow to the mean of its `near`
        neighbours (and, given a `centre`, to it with weight COMPACT), each dummy on its
        edge's lane."""
        pull = 0.0 if centre is None else COMPACT
        middle = 0.0 if centre is None else centre
        desired, weights, extents, bands = [], [], [], []
        for i in row:
            bands.append(None if self.groups is None or i in self.dummy else self.groups[i])
            if i in self.dummy:
                centre, left, right = self._lane(i, x, exact)
                desired.append(centre)
                extents.append((left, right))
                weights.append(PINNED if exact else DUMMY_WEIGHT)
            else:
                js = near(i)
                total = sum(x[j] for j in js) if js else x[i]
                count = len(js) if js else 1
                desired.append((total + pull * middle) / (count + pull))
                extents.append((REAL_HALF, REAL_HALF))
                weights.append(1.0)
        gaps = [a[1] + b[0] for a, b in itertools.pairwise(extents)]
        if self.groups is not None:
            for k, (a, b) in enumerate(itertools.pairwise(bands)):
                if a is not None and b is not None and a != b:
                    gaps[k] += BAND_GAP
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
