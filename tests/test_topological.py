"""The second scheduler (engine/topological.py, seed 000): its order as the seed defines
it, depth without recursion, and PyTorch's gradients on every recorded case.

The order is checked against a reference written here from the definition alone (reverse
DFS post-order over each node's `next`, first edge first, each node once), computed from
the trace's own graph, so the graph's ids and edges must mean what they mean under the
ready queue. Gradients are compared with what PyTorch recorded (tests/matching.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from app.trace import document_bytes, run_source
from app.trace.document import Graph, Pass, Trace
from engine import AutogradContext, run_backward, tensor
from engine.events import NodePopped
from engine.topological import topo_order
from tests.matching import ROOT, differences, grads_equal, load_corpora, printed_text, step_key

HAND_BUILT = {
    "diamond": "a = 2.0\nb = 3.0\nc = 4.0\nd = 5.0\nx = a * b\ny = c * d\n"
               "loss = (x + y) * x\n",
    "two_products": "a = 2.0\nb = 3.0\nc = 4.0\nd = 5.0\nloss = a * b + c * d\n",
    "two_depths": "a = 0.5\nb = 1.5\nh = a * b\nu = h.tanh()\nloss = u * h + h.exp()\n",
    "constant_edge": "w = 2.0\nx = torch.tensor(3.0)\nloss = (w * x) ** 2 + w\n",
    "vectors": "w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)\n"
               "b = torch.tensor(0.5, requires_grad=True)\n"
               "h = (w * b).tanh()\nloss = (h * w).sum() + (h + b).mean()\n",
    "two_outputs": "a = 2.0\nb = 3.0\ny1 = a * b\ny2 = (a + b).sin()\n"
                   "torch.autograd.backward([y1, y2])\n",
    "retained_twice": "a = 1.5\nb = 0.5\ny = a * b + a.exp()\n"
                      "y.backward(retain_graph=True)\ny.backward()\n",
}


def dfs_order(graph: Graph) -> list[int]:
    """Reverse post-order of a recursive DFS over `next` from the root (small graphs)."""
    nexts = {n["id"]: n["next"] for n in graph.nodes}
    seen: set[int] = set()
    post: list[int] = []

    def visit(node: int) -> None:
        seen.add(node)
        for child in nexts[node]:
            if child is not None and child not in seen:
                visit(child)
        post.append(node)

    visit(graph.root)
    return post[::-1]


def step_nodes(p: Pass) -> list[int]:
    return [s["node"] for s in p.steps]


def expected_order(p: Pass) -> list[int]:
    """The reference order, less a GraphRoot (several outputs), which is no step."""
    assert p.graph is not None
    order = dfs_order(p.graph)
    names = {n["id"]: n["name"] for n in p.graph.nodes}
    return [i for i in order if names[i] != "GraphRoot"]


def traced(source: str, scheduler: str) -> Trace:
    trace = run_source(source, scheduler=scheduler)  # type: ignore[arg-type]
    assert trace.error is None, trace.error
    assert trace.scheduler == scheduler
    return trace


@pytest.mark.parametrize("source", HAND_BUILT.values(), ids=HAND_BUILT.keys())
def test_steps_follow_the_reverse_dfs_post_order(source: str) -> None:
    topo, queue = traced(source, "topological"), traced(source, "ready_queue")
    assert len(topo.passes) == len(queue.passes) >= 1
    for t, q in zip(topo.passes, queue.passes, strict=True):
        assert step_nodes(t) == expected_order(t)
        assert t.graph == q.graph, "the same graph, ids and edges under both"
        assert Counter(step_nodes(t)) == Counter(step_nodes(q)), "the same nodes run"
    assert topo.grads == queue.grads


def test_the_orders_differ_somewhere() -> None:
    """The reference is not the ready queue's order in disguise."""
    differ = [name for name, source in HAND_BUILT.items()
              if step_nodes(traced(source, "topological").passes[0])
              != step_nodes(traced(source, "ready_queue").passes[0])]
    assert {"diamond", "two_products"} <= set(differ)


def test_autograd_grad_runs_only_what_leads_to_its_inputs() -> None:
    source = ("a = 2.0\nb = 3.0\nc = 0.5\nh = a * b\nloss = h * c + h.sin()\n"
              "g, = torch.autograd.grad(loss, [h])\nprint(g)\n")
    topo, queue = traced(source, "topological"), traced(source, "ready_queue")
    (t,), (q,) = topo.passes, queue.passes
    order = expected_order(t)
    assert step_nodes(t) == [i for i in order if i in set(step_nodes(t))]
    assert Counter(step_nodes(t)) == Counter(step_nodes(q))
    assert t.returned == q.returned and topo.printed == queue.printed


def test_a_hook_replaces_the_gradient_as_in_pytorch() -> None:
    source = ("a = 2.0\nb = 3.0\nh = a * b\nh.register_hook(lambda g: g * 10)\n"
              "loss = h * h + h\n")
    topo, queue = traced(source, "topological"), traced(source, "ready_queue")
    assert topo.grads == queue.grads
    assert [s.get("hooks") for s in topo.passes[0].steps if s.get("hooks")] == \
        [s.get("hooks") for s in queue.passes[0].steps if s.get("hooks")]


def test_create_graph_keeps_the_graph() -> None:
    """The seed: create_graph=True forces retain_graph; PyTorch frees it when told to."""
    source = ("a = 1.5\ny = a ** 3\ny.backward(create_graph=True, retain_graph=False)\n"
              "y.backward()\n")
    queue = run_source(source)
    assert queue.error is not None and "second time" in queue.error.message
    topo = traced(source, "topological")
    assert [p.steps[0]["released"] for p in topo.passes] == [[], ["self"]]
    assert topo.error is None


DEPTH = 100_000


def test_a_chain_of_depth_100000() -> None:
    ctx = AutogradContext(max_nodes=DEPTH + 10)
    ctx.scheduler = "topological"
    a = tensor(1.0, ctx, requires_grad=True)
    y = a
    for _ in range(DEPTH):
        y = y * 1.0
    assert y.grad_fn is not None
    order = topo_order(y.grad_fn)
    assert len(order) == DEPTH + 1 and order[0] is y.grad_fn
    assert [n.sequence_nr for n in order[:-1]] == list(range(DEPTH - 1, -1, -1))
    pops = [e for e in run_backward(y) if isinstance(e, NodePopped)]
    assert len(pops) == DEPTH + 1 and pops[-1].leaf is None and pops[-1].queue == []
    assert a.grad is not None and a.grad.tolist() == 1.0


CASES = load_corpora()
KNOWN = {   # as in test_conformance.py: where the lab differs from PyTorch under any order
    "lab-tutorials-0277-builtins_on_tensors": "recorded where PyTorch's log(float32(e)) "
        "was 1.0; the correctly rounded 0.99999994 here (Note [Float32 functions])",
    **{case: "printed float values differ in their last bits (test_conformance.py's KNOWN)"
       for case in ("lab-round10-01", "lab-round10-05", "lab-round10-06", "lab-round10-28",
                    "lab-round10-29", "lab-round10-30")},
}
REFUSED = {  # programs the lab refuses (test_conformance.py's KNOWN says why)
    "lab-tutorials-0288-pass_in_hook": "a backward() inside a tensor hook",
    "lab-round7-c094-gradient": "a complex number (a negative float to a fractional power)",
    "lab-round7-c115-reforward": "a complex number (a negative float to a fractional power)",
}

# A create_graph pass records nodes as it runs them, so their sequence numbers follow the
# order the engine runs in: under seed 000's topological order these number differently.
NUMBERED_BY_ORDER = {
    "lab-round8-s023-so4_matmul_1d2d": "the double backward of `x[0] @ (x.t() ** 2)` runs "
        "its nodes in another order here, so the nodes it records take other numbers",
}


def written_leaves(p: dict[str, Any]) -> set[str]:
    return {s["leaf"] for s in p["steps"] if s["name"].endswith("AccumulateGrad")}


@pytest.fixture(scope="module")
def documents() -> dict[str, Any]:
    return {c["id"]: orjson.loads(document_bytes(run_source(c["source"],
                                                            scheduler="topological")))
            for c in CASES}


@pytest.mark.parametrize("case", [
    pytest.param(c, id=c["id"], marks=[pytest.mark.xfail(
        strict=True, reason={**REFUSED, **NUMBERED_BY_ORDER}[c["id"]])]
        if c["id"] in REFUSED or c["id"] in NUMBERED_BY_ORDER else []) for c in CASES])
def test_pytorchs_gradients_on_every_recorded_case(case: dict[str, Any],
                                                   documents: dict[str, Any]) -> None:
    """Every public conformance case and the lab's corpus: the same error, the same nodes
    run in each pass, the same prints (as a multiset: hooks may print in another order)
    and the same gradients. A pass that ends in an error stops at another node here, so
    there only leaves written by neither order's steps before it must agree."""
    doc, want = documents[case["id"]], case["expected"]
    assert [d for d in differences(doc, want)
            if " steps:" not in d and not d.startswith(("grads[", "printed:"))] == []
    failed = bool(doc["passes"]) and bool(doc["passes"][-1]["steps"]) and \
        "error" in doc["passes"][-1]["steps"][-1]
    for got, recorded in zip(doc["passes"], want["passes"], strict=True):
        keys = Counter(step_key(s) for s in got["steps"])
        if not failed or got is not doc["passes"][-1]:
            assert keys == Counter(step_key(s) for s in recorded["steps"])
    if "printed" in want and case["id"] not in KNOWN:
        assert sorted(map(printed_text, doc["printed"])) == sorted(map(printed_text,
                                                                       want["printed"]))
    spared = set()
    if failed and doc["passes"]:
        spared = written_leaves(doc["passes"][-1]) ^ written_leaves(want["passes"][-1])
    for name in set(want["grads"]) | set(doc["grads"]):
        if name not in spared:
            assert grads_equal(doc["grads"].get(name), want["grads"].get(name)), name


def test_the_command_line_and_the_api_take_the_scheduler(tmp_path: Path,
                                                         app_client: Any) -> None:
    source = HAND_BUILT["diamond"]
    path = tmp_path / "diamond.py"
    path.write_text(source, encoding="utf-8")
    cli = Path(sys.executable).parent / "autograd-lab"
    if not cli.exists():
        pytest.skip(f"no autograd-lab command next to {sys.executable}")
    out = subprocess.run([str(cli), "trace", "--scheduler", "topological", str(path)],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    by_cli = json.loads(out)
    client = app_client()
    by_api = client.post("/api/trace", json={"source": source,
                                             "scheduler": "topological"}).json()
    default = client.post("/api/trace", json={"source": source}).json()
    assert by_cli == by_api and by_api["scheduler"] == "topological"
    assert default["scheduler"] == "ready_queue" and default["passes"] != by_api["passes"]
    stream = client.post("/api/trace/stream", json={"source": source,
                                                    "scheduler": "topological"}).text
    streamed = [json.loads(line[len("data: "):]) for line in stream.splitlines()
                if line.startswith("data: ") and '"node"' in line and '"sent"' in line]
    assert [s["node"] for s in streamed] == [s["node"] for s in by_api["passes"][0]["steps"]]
    refused = client.post("/api/trace", json={"source": source, "scheduler": "fifo"})
    assert refused.status_code == 422
