"""The graph layout: drawn as the page draws it, no edge crosses another or runs through a
node, on every preset. The graphs come from running the engine, never typed in."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.presets import PRESETS
from app.trace import Graph, GraphNode, layout, run_source

GEOMETRY = Path(__file__).resolve().parent.parent / "static" / "js" / "views" / "geometry.js"
SAMPLES = 48
Point = tuple[float, float]

EXTRA = {
    "chain": "a = 1.0\nb = a * 2\nc = b.tanh()\nd = c * c\ne = d.exp() + b\n",
    "fan-in": "a = 2.0\nb = 3.0\nc = 4.0\nd = 5.0\nloss = a * b + c * d + a\n",
    "diamond": "a = 0.5\nh = a * a\nu = h.sin()\nv = h.cos()\nw = u * v + h\n",
}
# Two-layer networks of 17-36 nodes: by hand (a normalised hidden layer, log-softmax by
# hand, a weight penalty), a Sequential with a penalty on every parameter, a custom Module
# with a residual add, and one nn.Linear called twice (its group cannot be one band).
NETWORKS = {
    "mlp-by-hand": """import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(8, 16)
y = (torch.arange(8) % 4).unsqueeze(1) == torch.arange(4)
W1 = torch.randn(16, 32, requires_grad=True)
b1 = torch.zeros(32, requires_grad=True)
W2 = torch.randn(32, 4, requires_grad=True)
b2 = torch.zeros(4, requires_grad=True)
h = torch.relu(x @ W1 + b1)
h = (h - h.mean(dim=0)) / (h.std(dim=0) + 1e-5)
logits = h @ W2 + b2
z = logits - logits.max(dim=1, keepdim=True).values
log_p = z - z.exp().sum(dim=1, keepdim=True).log()
nll = -(log_p * y).sum(dim=1).mean()
reg = 1e-3 * ((W1 ** 2).sum() + (W2 ** 2).sum())
loss = nll + reg
loss.backward()
""",
    "sequential-penalty": """import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 4))
x = torch.randn(8, 16)
y = torch.randint(0, 4, (8,))
out = model(x)
loss = nn.CrossEntropyLoss()(out, y) + 1e-3 * sum([(p ** 2).sum() for p in model.parameters()])
loss.backward()
""",
    "module-residual": """import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = h + torch.tanh(self.fc2(h))
        return self.out(h)


torch.manual_seed(0)
net = Net()
criterion = nn.CrossEntropyLoss()
x = torch.randn(5, 4)
y = torch.tensor([0, 2, 1, 1, 0])
loss = criterion(net(x), y)
loss.backward()
""",
    "module-twice": """import torch
from torch import nn
torch.manual_seed(0)
layer = nn.Linear(3, 3)
x = torch.randn(2, 3)
loss = layer(torch.tanh(layer(x))).sum()
loss.backward()
""",
}


def graphs(source: str) -> list[Graph]:
    trace = run_source(source)
    return [p.graph for p in trace.passes if p.graph is not None]


PROGRAMS = [(p.id, p.source) for p in PRESETS] + list(EXTRA.items()) + list(NETWORKS.items())
GRAPHS = [pytest.param(g, id=f"{name}-pass{k}")
          for name, source in PROGRAMS for k, g in enumerate(graphs(source))]


def edges(graph: Graph) -> list[tuple[GraphNode, GraphNode, list[Point]]]:
    """Every distinct edge as the polyline of its drawn curve (the two edges of `a * a`
    share their ends and are drawn side by side: one here)."""
    by_id = {n["id"]: n for n in graph.nodes}
    out = []
    for n in graph.nodes:
        for c in dict.fromkeys(i for i in n["next"] if i is not None):
            m = by_id[c]
            curve = [layout.edge_point(n["x"], n["layer"], m["x"], m["layer"], k / SAMPLES)
                     for k in range(SAMPLES + 1)]
            out.append((n, m, curve))
    return out


def _orient(a: Point, b: Point, c: Point) -> float:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _cross(p: Point, q: Point, r: Point, s: Point) -> bool:
    """Segments pq and rs cross properly (touching at an end does not count)."""
    d1, d2 = _orient(r, s, p), _orient(r, s, q)
    d3, d4 = _orient(p, q, r), _orient(p, q, s)
    return d1 * d2 < 0 and d3 * d4 < 0


def _polylines_cross(a: list[Point], b: list[Point], skip_a: set[int], skip_b: set[int]) -> bool:
    for i, j in itertools.product(range(len(a) - 1), range(len(b) - 1)):
        if i in skip_a or j in skip_b:
            continue
        if _cross(a[i], a[i + 1], b[j], b[j + 1]):
            return True
    return False


def _ends(curve_of: GraphNode, shared: GraphNode, is_source: bool) -> set[int]:
    """Segments next to a shared end: two edges from one node start at the same point."""
    return {0, 1} if is_source else {SAMPLES - 1, SAMPLES - 2}


def test_geometry_matches_the_page() -> None:
    text = GEOMETRY.read_text()
    value = {k: float(v) for k, v in re.findall(r"export const (\w+) = ([\d.]+);", text)}
    assert value["NODE_W"] / value["COL"] == pytest.approx(layout.NODE_WIDTH)
    assert value["NODE_H"] / value["ROW"] == pytest.approx(layout.NODE_HEIGHT)
    assert value["BEND"] == pytest.approx(layout.BEND)


@pytest.mark.parametrize("graph", GRAPHS)
def test_edges_point_down_and_nodes_do_not_overlap(graph: Graph) -> None:
    by_id = {n["id"]: n for n in graph.nodes}
    assert by_id[graph.root]["layer"] == 0
    for n in graph.nodes:
        for c in n["next"]:
            if c is not None:
                assert by_id[c]["layer"] > n["layer"]
    for a, b in itertools.combinations(graph.nodes, 2):
        if a["layer"] == b["layer"]:
            assert abs(a["x"] - b["x"]) >= 1.0 - 1e-9, (a["name"], b["name"])


@pytest.mark.parametrize("graph", GRAPHS)
def test_no_edge_crosses_another(graph: Graph) -> None:
    for (a1, a2, ca), (b1, b2, cb) in itertools.combinations(edges(graph), 2):
        skip_a: set[int] = set()
        skip_b: set[int] = set()
        if a1["id"] == b1["id"]:
            skip_a |= {0, 1}
            skip_b |= {0, 1}
        if a2["id"] == b2["id"]:
            skip_a |= {SAMPLES - 1, SAMPLES - 2}
            skip_b |= {SAMPLES - 1, SAMPLES - 2}
        if a2["id"] == b1["id"]:
            skip_a |= {SAMPLES - 1}
            skip_b |= {0}
        if a1["id"] == b2["id"]:
            skip_a |= {0}
            skip_b |= {SAMPLES - 1}
        assert not _polylines_cross(ca, cb, skip_a, skip_b), (
            f"{a1['name']}#{a1['seq']}->{a2['name']} crosses "
            f"{b1['name']}#{b1['seq']}->{b2['name']}")


@pytest.mark.parametrize("graph", GRAPHS)
def test_no_edge_runs_through_a_node(graph: Graph) -> None:
    half_w, half_h = layout.NODE_WIDTH / 2 + 0.02, layout.NODE_HEIGHT / 2 + 0.02
    for source, target, curve in edges(graph):
        for n in graph.nodes:
            if n["id"] in (source["id"], target["id"]):
                continue
            for px, py in curve:
                inside = abs(px - n["x"]) < half_w and abs(py - n["layer"]) < half_h
                assert not inside, (f"{source['name']}->{target['name']} runs through "
                                    f"{n['name']}#{n['seq']}")


def test_layout_is_deterministic_and_handles_deep_graphs() -> None:
    lines = ["a = 0.5"] + [f"h{k} = {'a' if k == 0 else f'h{k - 1}'} * 1.01"
                           for k in range(1500)]
    first, second = graphs("\n".join(lines) + "\n"), graphs("\n".join(lines) + "\n")
    places = [[(n["layer"], n["x"]) for n in g[0].nodes] for g in (first, second)]
    assert places[0] == places[1]
    assert max(n["layer"] for n in first[0].nodes) == 1500


def test_a_graph_too_big_to_draw_in_detail_gets_the_quick_layout() -> None:
    """Past DETAILED_LIMIT: longest-path layers, and each layer's nodes in columns 0, 1, 2 ...
    (ordered by barycentre sweeps), so nodes never overlap and edges point down."""
    from bench.programs import limits_for, realistic

    source = realistic(2000, seed=3)
    (graph,) = [p.graph for p in run_source(source, limits_for(source)).passes]
    assert graph is not None and len(graph.nodes) > layout.DETAILED_LIMIT
    by_id = {n["id"]: n for n in graph.nodes}
    rows: dict[int, list[float]] = {}
    for n in graph.nodes:
        rows.setdefault(n["layer"], []).append(n["x"])
        below = [by_id[c]["layer"] for c in n["next"] if c is not None]
        assert all(layer > n["layer"] for layer in below)
    assert sorted(rows) == list(range(len(rows)))
    for xs in rows.values():
        assert sorted(xs) == [float(k) for k in range(len(xs))]
    # Longest path: every node but the root sits one layer below its deepest parent.
    deepest: dict[int, int] = {}
    for n in graph.nodes:
        for c in n["next"]:
            if c is not None:
                deepest[c] = max(deepest.get(c, -1), n["layer"])
    assert all(by_id[i]["layer"] == d + 1 for i, d in deepest.items())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.25]), min_size=0, max_size=40))
def test_rows_sort_as_a_stable_sort_by_barycentre(keys: list[float]) -> None:
    """`_sort_by` (an insertion sort for short rows) orders as Python's stable sort does,
    ties included, so the quick layout's places do not depend on which sort ran."""
    row = list(range(len(keys)))[::-1]
    expected = sorted(row, key=keys.__getitem__)
    layout._sort_by(row, keys)
    assert row == expected


# -- a network's layers as bands ----------------------------------------------------------------

BAND_MARGIN = 0.1        # columns: the page draws a band this far (at most) beyond its nodes
BANDED = [pytest.param(g, id=f"{name}-pass{k}") for name, source in PROGRAMS
          for k, g in enumerate(graphs(source)) if g.bands]


def members(graph: Graph, band: str) -> list[GraphNode]:
    """The nodes drawn in a band: its own, and those of the bands inside it."""
    parent = {b["id"]: b["parent"] for b in graph.bands}

    def inside(b: str | None) -> bool:
        while b is not None:
            if b == band:
                return True
            b = parent[b]
        return False

    return [n for n in graph.nodes if inside(n["band"])]


def test_the_networks_have_bands() -> None:
    named = {name: [b["id"] for g in graphs(source) for b in g.bands] for name, source in PROGRAMS}
    assert named["sequential"] == ["model", "model.2", "model.1", "model.0"]
    assert named["custom-module"] == ["net", "net.fc2", "net.fc1"]
    assert named["two-layer-mlp"] == ["W2, b2", "W1, b1"]
    assert named["module-twice"] == [], "a module called twice is no one block"


@pytest.mark.parametrize("graph", BANDED)
def test_a_band_is_its_nodes_rows_and_covers_no_other_node(graph: Graph) -> None:
    """Its rows and columns are its nodes' extent; a band inside another lies inside it;
    every node in its rows that is not its own stays outside it, with the margin the page
    draws; and the loss reads down to the weights: a band's rows hold only its nodes."""
    ids = {b["id"] for b in graph.bands}
    by_id = {b["id"]: b for b in graph.bands}
    for band in graph.bands:
        own = members(graph, band["id"])
        assert own, band["id"]
        assert band["top"] == min(n["layer"] for n in own)
        assert band["bottom"] == max(n["layer"] for n in own)
        assert band["left"] == min(n["x"] for n in own)
        assert band["right"] == max(n["x"] for n in own)
        assert band["params"] == [n["leaf"] for n in own if n["name"] == "AccumulateGrad"]
        if band["parent"] is not None:
            outer = by_id[band["parent"]]
            assert outer["top"] <= band["top"] and band["bottom"] <= outer["bottom"]
            assert outer["depth"] == band["depth"] - 1
        mine = {n["id"] for n in own}
        reach = layout.NODE_WIDTH + BAND_MARGIN
        for n in graph.nodes:
            if n["id"] not in mine and band["top"] <= n["layer"] <= band["bottom"]:
                assert not band["left"] - reach < n["x"] < band["right"] + reach, (
                    f"{n['name']}#{n['seq']} is inside band {band['id']}")
    assert all(n["band"] is None or n["band"] in ids for n in graph.nodes)


# -- width: a wide graph drawn no wider than it needs ---------------------------------------------

def width_ratio(graph: Graph) -> float:
    """The columns the drawing spans (a node is drawn one column wide) over the node count
    of its widest layer: 1.0 when the widest layer sets the width, more where a staircase
    of layers, each offset from the one above, does."""
    xs = [n["x"] for n in graph.nodes]
    per_layer: dict[int, int] = {}
    for n in graph.nodes:
        per_layer[n["layer"]] = per_layer.get(n["layer"], 0) + 1
    return (max(xs) - min(xs) + 1.0) / max(per_layer.values())


def term_sum(terms: int) -> str:
    """`loss = a0 + a1 + ...`: a chain of AddBackward0, each one layer deeper."""
    leaves = [f"a{k} = {0.1 * (k + 1):.1f}" for k in range(terms)]
    return "\n".join([*leaves, "loss = " + " + ".join(f"a{k}" for k in range(terms)),
                      "loss.backward()"]) + "\n"


def scalar_network(hidden: int) -> str:
    """One hidden layer of `hidden` tanh units on two inputs, in shorthand, its output the
    sum of `v * h` (tests/browser/test_graph_view.py draws the 7-unit one: 78 nodes)."""
    lines = ["x1 = torch.tensor(0.5)", "x2 = torch.tensor(-1.0)"]
    for j in range(hidden):
        lines += [f"w{j}a = {0.35 - 0.08 * j:.2f}", f"w{j}b = {0.2 + 0.05 * j:.2f}",
                  f"b{j} = {0.1 * (j % 3) - 0.1:.2f}", f"v{j} = {0.4 - 0.15 * j:.2f}"]
    lines += [f"h{j} = torch.tanh(w{j}a * x1 + w{j}b * x2 + b{j})" for j in range(hidden)]
    lines.append("out = " + " + ".join(f"v{j} * h{j}" for j in range(hidden)))
    lines.append("loss = (out - 1.0) ** 2")
    return "\n".join(lines) + "\n"


def only_graph(source: str) -> Graph:
    from bench.programs import limits_for

    (graph,) = [p.graph for p in run_source(source, limits_for(source)).passes
                if p.graph is not None]
    return graph


PRESET_GRAPHS = [pytest.param(g, id=f"{p.id}-pass{k}")
                 for p in PRESETS for k, g in enumerate(graphs(p.source))]


@pytest.mark.parametrize("graph", PRESET_GRAPHS)
def test_no_preset_is_drawn_much_wider_than_its_widest_layer(graph: Graph) -> None:
    assert width_ratio(graph) <= 1.75


def _realistic(n: int) -> str:
    from bench.programs import realistic

    return realistic(n)


# (program, the most columns per node of the widest layer); the layout before the centre
# pull (app/trace/placement.py, COMPACT) drew these 4.98, 1.39, 2.24, 3.86, 4.08 and 1.0.
WIDE: dict[str, tuple[Callable[[], str], float]] = {
    "sum-of-16": (lambda: term_sum(16), 1.5),
    "network-7": (lambda: scalar_network(7), 1.15),
    "network-12": (lambda: scalar_network(12), 1.2),
    "mlp-by-hand": (lambda: NETWORKS["mlp-by-hand"], 1.6),
    "sequential-penalty": (lambda: NETWORKS["sequential-penalty"], 3.0),
    "realistic-300": (lambda: _realistic(300), 1.0),     # the quick layout: rows side by side
}


@pytest.mark.parametrize("name", list(WIDE))
def test_a_wide_graph_is_not_drawn_as_a_staircase(name: str) -> None:
    make, bound = WIDE[name]
    graph = only_graph(make())
    assert width_ratio(graph) <= bound


@pytest.mark.parametrize("hidden", [7, 12])
def test_a_wide_network_keeps_edges_and_nodes_apart(hidden: int) -> None:
    """The compacted drawing of the wide networks keeps the preset invariants."""
    graph = only_graph(scalar_network(hidden))
    test_edges_point_down_and_nodes_do_not_overlap(graph)
    test_no_edge_crosses_another(graph)
    test_no_edge_runs_through_a_node(graph)
