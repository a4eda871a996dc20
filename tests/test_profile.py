"""The profiler's timeline (app/trace/profile.py): the reference's event list for the
neuron, and live PyTorch's for more programs (tests/profile_torch.py records them)."""

from __future__ import annotations

from typing import Any

import pytest

from app.trace import run_source
from engine.functions import profiled
from tests.profile_torch import MARK, profile

NEURON = """import torch
w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
# profile
y = torch.tanh(w * x + b)
y.backward()
"""

EV = "autograd::engine::evaluate_function: "
ACC = "torch::autograd::AccumulateGrad"
# ../shared/reference/pytorch-autograd.md §12, observed on PyTorch 2.13: (depth, name, seq)
REFERENCE_NEURON = [
    (0, "aten::mul", 0), (0, "aten::add", 1), (0, "aten::tanh", 2), (0, "aten::ones_like", -1),
    (0, EV + "TanhBackward0", 2), (1, "TanhBackward0", 2), (2, "aten::tanh_backward", -1),
    (0, EV + "AddBackward0", 1), (1, "AddBackward0", 1),
    (0, EV + ACC, -1), (1, ACC, -1), (2, "aten::new_empty_strided", -1), (2, "aten::copy_", -1),
    (0, EV + "MulBackward0", 0), (1, "MulBackward0", 0), (2, "aten::mul", -1),
    (2, "aten::mul", -1),
    (0, EV + ACC, -1), (1, ACC, -1), (2, "aten::detach", -1),
    (0, EV + ACC, -1), (1, ACC, -1), (2, "aten::detach", -1),
]


def lab(source: str) -> list[tuple[int, str, int]]:
    trace = run_source(source)
    assert trace.error is None, trace.error
    return [(e["depth"], e["name"], e["seq"]) for e in trace.profile]


def test_neuron_matches_the_reference() -> None:
    assert lab(NEURON) == REFERENCE_NEURON


def test_events_link_to_nodes_steps_and_parents() -> None:
    trace = run_source(NEURON)
    graph = trace.passes[0].graph
    assert graph is not None
    names = {n["id"]: n["name"] for n in graph.nodes}
    steps = trace.passes[0].steps
    for e in trace.profile:
        assert e["pass"] == 0
        if e["parent"] is not None:
            parent = trace.profile[e["parent"]]
            assert parent["depth"] == e["depth"] - 1 and parent["index"] < e["index"]
        if e["kind"] == "backward":
            assert e["step"] is not None and e["node"] == steps[e["step"] - 1]["node"]
        elif e["node"] is not None:
            assert profiled.FORWARD[names[e["node"]]] == e["name"]


def test_one_mul_when_only_one_input_needs_grad() -> None:
    events = lab(NEURON.replace("x = torch.tensor(2.0, requires_grad=True)",
                                "x = torch.tensor(2.0)"))
    inside_mul = [n for d, n, _ in events if d == 2][1:]      # after tanh_backward
    assert inside_mul.count("aten::mul") == 1


def test_unrecorded_node_is_marked_unknown() -> None:
    trace = run_source("import torch\na = torch.tensor([[1.0, 2.0]], requires_grad=True)\n"
                       "y = (a.t() @ a).sum()\ny.backward()\n")   # MmBackward0: by strides
    forward, _, inner = [e for e in trace.profile if "MmBackward0" in e["name"]]
    assert not forward["known"] and not inner["known"]
    assert not any(e["parent"] == inner["index"] for e in trace.profile)


def test_summarized_passes_keep_no_timeline() -> None:
    from app.limits import Limits

    source = ("import torch\nw = torch.tensor(1.0, requires_grad=True)\n"
              "for i in range(3):\n    (w * 2).backward()\n")
    trace = run_source(source, Limits(max_full_passes=2))
    assert sorted({e["pass"] for e in trace.profile}) == [0, 1]


PROGRAMS = {
    "add shares the seed: both leaves copy": "y = a + b\ny.backward()\n",
    "sub: the first input takes the seed": "y = a - b\ny.backward()\n",
    "unary chain": "y = (a / b).exp().log().sin().cos().sigmoid().relu().sqrt().abs()\n"
                   "y.backward()\n",
    "buffers and a second backward": "y = a * a\ny.backward(retain_graph=True)\n"
                                     "y.backward()\n",
    "numbers, rsub, pow, div": "y = (-(a / b)) + (b / a) + (2 - a) + (a - 2) + (b ** a) + "
                               "a ** b + (a + 1)\ny.backward()\n",
    "autograd.grad captures": "y = a * b\ng = torch.autograd.grad(y, [a, b])\n",
    "a leaf as the output": "a.backward()\n",
    "vectors: pow, sum, mean, select": "y = (v ** 2).sum() + v.mean() - 2 * v[0]\n"
                                       "y.backward()\n",
    "expanded gradients meet": "y = v.sum() + (v * 2).sum()\ny.backward()\n",
    "broadcast sums back": "y = (m + b * v).sum() + (m * a).sum()\ny.backward()\n",
}
LEAVES = """import torch
a = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(2.0, requires_grad=True)
v = torch.tensor([1.0, 2.0], requires_grad=True)
m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
"""


@pytest.mark.torch
@pytest.mark.parametrize("body", PROGRAMS.values(), ids=list(PROGRAMS))
def test_timeline_equals_live_torch(torch: Any, body: str) -> None:
    source = LEAVES + MARK + body
    assert lab(source) == profile(source)


# A network's forward ops are composites the lab does not record (`aten::linear` holds the
# t and addmm that make TBackward0 and AddmmBackward0; `aten::cross_entropy_loss` holds
# log_softmax and nll_loss), so for these only the backward events are compared.
NETWORK = {
    "F.linear and a sum": "y = F.linear(x, W, bias).sum()\ny.backward()\n",
    "mse_loss of a linear layer": "y = F.mse_loss(F.linear(x, W, bias), torch.ones(2, 2))\n"
                                  "y.backward()\n",
    "cross_entropy": "y = F.cross_entropy(m, t)\ny.backward()\n",
    "softmax, dot, mv": "y = (m @ v).sum() + v.dot(v) + torch.softmax(m, dim=1).sum()\n"
                        "y.backward()\n",
    "views, clone, reciprocal, 2 ** v": "y = (m[:, 1:] * 2).sum() + m.view(4).unsqueeze(0)"
                                        ".sum() + (1 / v).sum() + v.clone().sum() + "
                                        "(2 ** v).sum()\ny.backward()\n",
}
NETWORK_LEAVES = LEAVES + """import torch.nn.functional as F
torch.manual_seed(0)
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
W = torch.randn(2, 3, requires_grad=True)
bias = torch.randn(2, requires_grad=True)
t = torch.tensor([0, 1])
"""


def backward_events(events: list[tuple[int, str, int]]) -> list[tuple[int, str, int]]:
    first = next(i for i, (d, name, _) in enumerate(events)
                 if d == 0 and name.startswith(EV))
    return events[first:]


@pytest.mark.torch
@pytest.mark.parametrize("body", NETWORK.values(), ids=list(NETWORK))
def test_network_backward_events_equal_live_torch(torch: Any, body: str) -> None:
    source = NETWORK_LEAVES + MARK + body
    assert backward_events(lab(source)) == backward_events(profile(source))


def test_a_pass_too_big_to_read_keeps_no_timeline_but_its_call_path() -> None:
    from app.trace.profile import MAX_STEPS

    source = ("x = torch.tensor(1.0, requires_grad=True)\ny = x\n"
              f"for i in range({MAX_STEPS}):\n    y = y * 1.0\ny.backward()\n")
    trace = run_source(source)
    assert len(trace.passes[0].steps) > MAX_STEPS and trace.profile == []
    assert trace.callpath[-1]["phase"] == ".grad"
