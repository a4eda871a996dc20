"""The graph layout: drawn as the page draws it, no edge crosses another or runs through a
node, on every preset. The graphs come from running the engine, never typed in."""

from __future__ import annotations

import itertools
import re
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


def graphs(source: str) -> list[Graph]:
    trace = run_source(source)
    return [p.graph for p in trace.passes if p.graph is not None]


PROGRAMS = [(p.id, p.source) for p in PRESETS] + list(EXTRA.items())
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
