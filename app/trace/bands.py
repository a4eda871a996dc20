"""The network's layers in the graph's drawing: groups of nodes drawn as bands.

A group is a module whose forward recorded the nodes (`model.0`, `net.fc1`; a module's
parameters' AccumulateGrad nodes carry it too), nested as the paths are (`model` holds
`model.0`), or, where no module recorded them, a layer read from the structure: a matrix
product with the parameters it multiplies and the bias added to it (`x @ W1 + b1`).

Each group gets rows of its own: within its parent, a group is one block that sits below
every block that points into it (longest path, the blocks' heights as weights), so a
band never shares a row with a node that points into it or that it points into. A group
that the graph enters twice (a module called twice, with a step in between) cannot be
one block; it is dissolved into its parent, as if it were not there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from app.trace.document import Band
from engine.events import NodeInfo

ACCUMULATE: Final = "AccumulateGrad"
PRODUCTS: Final = frozenset({"MmBackward0", "AddmmBackward0", "MvBackward0"})
# Nodes between a product and its weight that only change the weight's view.
THROUGH: Final = frozenset({"TBackward0", "TransposeBackward0", "PermuteBackward0",
                            "ViewBackward0", "ReshapeAliasBackward0", "UnsafeViewBackward0"})
BIAS_ADD: Final = "AddBackward0"


@dataclass(slots=True)
class Grouping:
    """Groups 0..k-1: their keys, kinds ("module", "layer") and parents (-1: none), and
    each node's innermost group (-1: none)."""

    keys: list[str]
    kinds: list[str]
    parents: list[int]
    member: list[int]

    def chain(self, i: int) -> tuple[int, ...]:
        """Node i's groups, outermost first."""
        out: list[int] = []
        g = self.member[i]
        while g >= 0:
            out.append(g)
            g = self.parents[g]
        return tuple(out[::-1])


def find_groups(nodes: list[NodeInfo], children: list[list[int]]) -> Grouping | None:
    """The modules that recorded the nodes, else the layers the structure shows; None
    when there are neither."""
    grouping = Grouping([], [], [], [-1] * len(nodes))
    index: dict[str, int] = {}
    for i, n in enumerate(nodes):
        if n.scope:
            grouping.member[i] = _module_group(n.scope, grouping, index)
    _structural_layers(nodes, children, grouping, index)
    return grouping if grouping.keys else None


def _module_group(path: str, grouping: Grouping, index: dict[str, int]) -> int:
    """The group of a module path, made with its enclosing modules' groups as needed."""
    parent = -1
    parts = path.split(".")
    for k in range(1, len(parts) + 1):
        key = ".".join(parts[:k])
        if key not in index:
            index[key] = len(grouping.keys)
            grouping.keys.append(key)
            grouping.kinds.append("module")
            grouping.parents.append(parent)
        parent = index[key]
    return parent


def _structural_layers(nodes: list[NodeInfo], children: list[list[int]], grouping: Grouping,
                       index: dict[str, int]) -> None:
    """`x @ W + b` outside any module: the product, the AccumulateGrad of each parameter it
    multiplies (through a transpose or a view), and an add of a bias right above it."""
    parents: list[list[int]] = [[] for _ in nodes]
    for u, kids in enumerate(children):
        for c in kids:
            parents[c].append(u)

    def only_from(c: int, u: int) -> bool:
        return grouping.member[c] < 0 and parents[c] == [u]

    for p, n in enumerate(nodes):
        if n.name not in PRODUCTS or grouping.member[p] >= 0:
            continue
        members, leaves = [p], []
        for c in children[p]:
            if nodes[c].name == ACCUMULATE and only_from(c, p):
                members.append(c)
                leaves.append(c)
            elif nodes[c].name in THROUGH and only_from(c, p) and len(children[c]) == 1:
                (a,) = children[c]
                if nodes[a].name == ACCUMULATE and only_from(a, c):
                    members += [c, a]
                    leaves.append(a)
        if len(parents[p]) == 1 and nodes[parents[p][0]].name == BIAS_ADD:
            add = parents[p][0]
            others = [c for c in children[add] if c != p]
            if (grouping.member[add] < 0 and len(others) == 1
                    and nodes[others[0]].name == ACCUMULATE and only_from(others[0], add)):
                members += [add, others[0]]
                leaves.append(others[0])
        if not leaves:
            continue
        key = ", ".join(str(nodes[a].leaf) for a in leaves)
        while key in index:
            key += "'"
        index[key] = len(grouping.keys)
        grouping.keys.append(key)
        grouping.kinds.append("layer")
        grouping.parents.append(-1)
        for m in members:
            grouping.member[m] = index[key]


def banded_layers(root: int, children: list[list[int]], grouping: Grouping) -> list[int]:
    """Each node's layer, every group in rows of its own. Groups that cannot be one block
    are dissolved (in `grouping` itself) until every level's blocks form a DAG."""
    while True:
        placed = _try_layers(root, children, grouping)
        if isinstance(placed, list):
            return placed
        for g in placed:                            # the blocks in a cycle: dissolve them
            _dissolve(grouping, g)


def _dissolve(grouping: Grouping, g: int) -> None:
    up = grouping.parents[g]
    grouping.member = [up if m == g else m for m in grouping.member]
    grouping.parents = [up if p == g else p for p in grouping.parents]
    grouping.parents[g] = -2                        # gone: no node or group refers to it


def _try_layers(root: int, children: list[list[int]], grouping: Grouping) -> list[int] | set[int]:
    """The layers, or the groups that sit in a cycle of blocks at some level."""
    n, k = len(children), len(grouping.keys)
    chains = [grouping.chain(i) for i in range(n)]
    depth = [0] * k
    for g in range(k):
        p = grouping.parents[g]
        while p >= 0:
            depth[g] += 1
            p = grouping.parents[p]
    height = [1] * (n + k)                          # items: node i, group g as n + g
    top = [0] * (n + k)                             # an item's row within its level
    live = [g for g in range(k) if grouping.parents[g] != -2]
    for level in [*sorted(live, key=lambda g: -depth[g]), -1]:
        d = depth[level] + 1 if level >= 0 else 0

        def item(i: int, d: int = d) -> int:
            return i if len(chains[i]) <= d else n + chains[i][d]

        inside = range(n) if level < 0 else [i for i in range(n) if level in chains[i]]
        edges = [(item(u), item(v)) for u in inside for v in children[u]
                 if level < 0 or level in chains[v]]
        items = {item(i) for i in inside}
        stuck = _longest_path(items, [(a, b) for a, b in edges if a != b], height, top)
        if stuck:
            return {x - n for x in stuck if x >= n}
        if level >= 0:
            height[n + level] = max(top[x] + height[x] for x in items)
    layer = [0] * n
    for i in range(n):
        row = 0
        for d in range(len(chains[i])):
            row += top[n + chains[i][d]]
        layer[i] = row + top[i]
    return layer


def _longest_path(items: set[int], edges: list[tuple[int, int]], height: list[int],
                  top: list[int]) -> set[int]:
    """top[b] >= top[a] + height[a] for every edge, as small as can be (Kahn's order);
    the items left in a cycle, if any."""
    out: dict[int, list[int]] = {x: [] for x in items}
    indegree = dict.fromkeys(items, 0)
    for a, b in edges:
        out[a].append(b)
        indegree[b] += 1
    for x in items:
        top[x] = 0
    ready = [x for x in items if indegree[x] == 0]
    while ready:
        a = ready.pop()
        below = top[a] + height[a]
        for b in out[a]:
            top[b] = max(top[b], below)
            indegree[b] -= 1
            if indegree[b] == 0:
                ready.append(b)
    return {x for x, d in indegree.items() if d > 0}


def band_table(grouping: Grouping, nodes: list[NodeInfo],
               places: list[tuple[int, float]]) -> list[Band]:
    """Each group that holds a node: its rows (top, bottom), the x of its outermost nodes
    (left, right), its depth and parent, and the parameters (leaves) inside it."""
    k = len(grouping.keys)
    spans: dict[int, list[float]] = {}
    params: dict[int, list[str]] = {g: [] for g in range(k)}
    for i, (layer, x) in enumerate(places):
        for g in grouping.chain(i):
            span = spans.setdefault(g, [layer, layer, x, x])
            span[0], span[1] = min(span[0], layer), max(span[1], layer)
            span[2], span[3] = min(span[2], x), max(span[3], x)
            leaf = nodes[i].leaf
            if nodes[i].name == ACCUMULATE and leaf is not None:
                params[g].append(leaf)
    table: list[Band] = []
    for g in sorted(spans, key=lambda g: (len(_ancestors(grouping, g)), g)):
        up = grouping.parents[g]
        top, bottom, left, right = spans[g]
        kind: Literal["module", "layer"] = "module" if grouping.kinds[g] == "module" else "layer"
        table.append({"id": grouping.keys[g], "kind": kind,
                      "parent": grouping.keys[up] if up >= 0 else None,
                      "depth": len(_ancestors(grouping, g)),
                      "top": int(top), "bottom": int(bottom), "left": left, "right": right,
                      "params": params[g]})
    return table


def _ancestors(grouping: Grouping, g: int) -> list[int]:
    out = []
    p = grouping.parents[g]
    while p >= 0:
        out.append(p)
        p = grouping.parents[p]
    return out
