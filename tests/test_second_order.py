"""Second and third derivatives through the fused backward kernels (softmax, log_softmax,
gelu, silu, leaky_relu, softplus, elu, mse_loss, nll_loss, cross_entropy,
binary_cross_entropy_with_logits), against live PyTorch 2.13 and float64 finite differences.

Each case is an op applied to `x` (a few shapes, dims, values, reductions, weights,
ignore_index, pos_weight, targets that require grad). Its programs run through the lab's
own entry point (`run_source`) and, for the comparisons, in PyTorch
(tests/second_order_torch.py): every pass's pops (names and sequence numbers, so the nodes
each create_graph pass recorded), the final grads, `hessian`'s values and errors must
agree. Expected values come from PyTorch or from finite differences of the lab's own
first derivatives, never typed in.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any

import pytest

from app.trace import run_source
from tests.matching import close, differences

PRELUDE = "import torch\nimport torch.nn.functional as F\n"
X23 = "[[0.5, -1.2, 2.0], [0.3, -0.4, 1.1]]"
X4 = "[0.7, -1.5, 0.2, 2.5]"
X222 = "[[[0.5, -1.0], [2.0, 0.1]], [[-0.3, 0.8], [1.5, -2.2]]]"
WIDE = "[[-3.0, -0.6, 0.9], [1.7, 4.0, -2.5]]"
KINKS = "[0.0, 1.5, -0.0, -2.0]"      # elu's and leaky_relu's 0, softplus's 2 * 1.5 = 3
T23 = "t = torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.5, 1.0]]{dt}{rg})"
W3 = "w = torch.tensor([1.0, 2.0, 0.5]{dt})"
P3 = "p = torch.tensor([2.0, 1.0, 3.0]{dt})"
C2 = "c = torch.tensor([2, 0])"


@dataclass(frozen=True)
class Case:
    id: str
    x: str                      # x's values
    expr: str                   # the op applied to x (and to the setup's tensors)
    setup: tuple[str, ...] = ()  # lines making other tensors ({dt}: dtype, {rg}: t's grad)
    target: bool = False        # t requires grad: gradients are taken for [x, t]
    smooth: bool = True         # no kink at x, so finite differences apply


CASES = [
    Case("softmax-2d-dim1", X23, "torch.softmax(x, dim=1)"),
    Case("softmax-2d-dim0", X23, "F.softmax(x, dim=0)"),
    Case("softmax-1d", X4, "torch.softmax(x, dim=-1)"),
    Case("softmax-3d-dim1", X222, "torch.softmax(x, dim=1)"),
    Case("softmax-0d", "0.7", "torch.softmax(x, dim=0) * x"),
    Case("log_softmax-2d-dim1", X23, "torch.log_softmax(x, dim=1)"),
    Case("log_softmax-2d-dim-2", X23, "F.log_softmax(x, dim=-2)"),
    Case("log_softmax-1d", X4, "torch.log_softmax(x, dim=0)"),
    Case("log_softmax-3d-dim2", X222, "torch.log_softmax(x, dim=2)"),
    Case("log_softmax-0d", "0.7", "torch.log_softmax(x, dim=-1) + x * x"),
    Case("gelu-1d", X4, "F.gelu(x)"),
    Case("gelu-2d", WIDE, "F.gelu(x)"),
    Case("gelu-tanh-1d", X4, 'F.gelu(x, approximate="tanh")'),
    Case("gelu-tanh-2d", WIDE, 'F.gelu(x, approximate="tanh")'),
    Case("silu-1d", X4, "F.silu(x)"),
    Case("silu-2d", WIDE, "F.silu(x) * x"),
    Case("leaky_relu-default", X4, "F.leaky_relu(x)"),
    Case("leaky_relu-0.2", WIDE, "F.leaky_relu(x, 0.2) * x"),
    Case("leaky_relu-kinks", KINKS, "F.leaky_relu(x, 0.3) + 1.0", smooth=False),
    Case("softplus-default", X4, "F.softplus(x)"),
    Case("softplus-threshold", WIDE, "F.softplus(x, beta=2.0, threshold=3.0)"),
    Case("softplus-int-beta", X23, "F.softplus(x, beta=2)"),
    Case("softplus-kinks", KINKS, "F.softplus(x, beta=2, threshold=3)", smooth=False),
    Case("elu-default", X4, "F.elu(x)"),
    Case("elu-alpha", WIDE, "F.elu(x, alpha=1.5) * x"),
    Case("elu-kinks", KINKS, "F.elu(x, alpha=1.5) + 1.0", smooth=False),
    Case("mse-mean", X23, "F.mse_loss(x, t)", (T23,)),
    Case("mse-mean-target", X23, "F.mse_loss(x, t)", (T23,), target=True),
    Case("mse-sum-target", X23, "F.mse_loss(x * x, t, reduction='sum')", (T23,), target=True),
    Case("mse-none-target", X23, "F.mse_loss(x, t, reduction='none')", (T23,), target=True),
    Case("mse-1d", X4, "F.mse_loss(x.exp(), torch.tensor([1.0, 2.0, 0.5, 3.0]{dt}))"),
    Case("nll-mean-weight", X23, "F.nll_loss(torch.log_softmax(x, dim=1), c, weight=w)",
         (C2, W3)),
    Case("nll-sum-ignore", X23, "F.nll_loss(x * x, c, ignore_index=0, reduction='sum')",
         (C2,)),
    Case("nll-none", X23, "F.nll_loss(x * x, c, reduction='none')", (C2,)),
    Case("nll-1d", X4, "F.nll_loss(torch.log_softmax(x, dim=0), torch.tensor(2))"),
    Case("ce-mean", X23, "F.cross_entropy(x, c)", (C2,)),
    Case("ce-weight-ignore", X23, "F.cross_entropy(x, c, weight=w, ignore_index=0)",
         (C2, W3)),
    Case("ce-sum-weight", X23, "F.cross_entropy(x, c, weight=w, reduction='sum')", (C2, W3)),
    Case("ce-none", X23, "F.cross_entropy(x, c, reduction='none')", (C2,)),
    Case("bce-mean", X23, "F.binary_cross_entropy_with_logits(x, t)", (T23,)),
    Case("bce-sum-target", X23, "F.binary_cross_entropy_with_logits(x, t, reduction='sum')",
         (T23,), target=True),
    Case("bce-none-weight", X23,
         "F.binary_cross_entropy_with_logits(x, t, weight=w, reduction='none')", (T23, W3)),
    Case("bce-pos-weight", X23, "F.binary_cross_entropy_with_logits(x, t, pos_weight=p)",
         (T23, P3)),
    Case("bce-pos-weight-target", X23,
         "F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=p)", (T23, W3, P3),
         target=True),
    Case("bce-pos-weight-target-none", X23, "F.binary_cross_entropy_with_logits(x, t, "
         "pos_weight=p, reduction='none')", (T23, P3), target=True),
]
IDS = [c.id for c in CASES]
F64 = ", dtype=torch.float64"


def opening(case: Case, float64: bool, x_name: str = "x") -> str:
    dt = F64 if float64 else ""
    rg = ", requires_grad=True" if case.target else ""
    lines = [f"{x_name} = torch.tensor({case.x}{dt}, requires_grad=True)"]
    lines += [line.format(dt=dt, rg=rg) for line in case.setup]
    return PRELUDE + "\n".join(lines) + "\n"


def inputs(case: Case) -> tuple[str, int]:
    return ("[x, t]", 2) if case.target else ("[x]", 1)


def squares(name: str, n: int, power: bool = True) -> str:
    return " + ".join(f"({name}[{i}] * {name}[{i}]).sum()" if power else f"{name}[{i}].sum()"
                      for i in range(n))


def second_program(case: Case, float64: bool = False) -> str:
    """g = grad(sum(y²)) with create_graph, then backward of sum(g²): x.grad = 2 H g."""
    wrt, n = inputs(case)
    expr = case.expr.format(dt=F64 if float64 else "")
    return (opening(case, float64) + f"y = {expr}\n"
            f"g = torch.autograd.grad((y * y).sum(), {wrt}, create_graph=True)\n"
            f"({squares('g', n)}).backward()\n")


def third_program(case: Case) -> str:
    """Three create_graph passes, then a backward through the third derivative's graph:
    each pass's pops are the nodes (and sequence numbers) the pass before recorded."""
    wrt, n = inputs(case)
    return (opening(case, False) + f"y = {case.expr.format(dt='')}\n"
            f"g = torch.autograd.grad((y * y).sum(), {wrt}, create_graph=True)\n"
            f"h = torch.autograd.grad({squares('g', n)}, {wrt}, create_graph=True)\n"
            f"k = torch.autograd.grad({squares('h', n, False)}, {wrt}, create_graph=True)\n"
            f"({squares('k', n, False)}).backward()\n")


def hessian_program(case: Case, create_graph: bool) -> str:
    """`torch.autograd.functional.hessian` of sum(y²), printed (and, with create_graph, a
    backward through it)."""
    tail = ", create_graph=True)\nH.sum().backward()\n" if create_graph else ")\n"
    return (opening(case, False) + "def f(x):\n"
            f"    y = {case.expr.format(dt='')}\n    return (y * y).sum()\n"
            f"H = torch.autograd.functional.hessian(f, x{tail}print(H.tolist())\n")


def numbers(printed: list[str]) -> list[float]:
    flat: list[float] = []
    stack: list[Any] = [ast.literal_eval(line) for line in reversed(printed)]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        else:
            flat.append(float(item))
    return flat


def lab(source: str) -> dict[str, Any]:
    return run_source(source).model_dump(mode="json")


def lab_graph(graph: dict[str, Any]) -> dict[str, list[str | None]]:
    """A pass's graph as the recorder writes it: `Name#seq` (`AccumulateGrad(leaf)`) to the
    keys of its next functions, in order."""
    keys = {n["id"]: (f"AccumulateGrad({n['leaf']})" if n["name"] == "AccumulateGrad"
                      else f"{n['name']}#{n['seq']}") for n in graph["nodes"]}
    return {keys[n["id"]]: [None if i is None else keys[i] for i in n["next"]]
            for n in graph["nodes"]}


def graph_differences(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> list[str]:
    diffs = []
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        mine, theirs = lab_graph(g["graph"]), w["graph"]
        for key in sorted(set(mine) | set(theirs)):
            if mine.get(key) != theirs.get(key):
                diffs.append(f"pass {i} graph {key}: expected {theirs.get(key)}, "
                             f"got {mine.get(key)}")
    return diffs


def agree(source: str, leaves: tuple[str, ...]) -> None:
    """The lab's document against PyTorch's: passes exactly (their pops and each node's
    next functions), grads and printed numbers within float32's tolerance
    (tests/matching.py), the same error."""
    from tests.second_order_torch import record

    want, got = record(source, leaves), lab(source)
    printed_want, printed_got = numbers(want.pop("printed")), numbers(got.get("printed") or [])
    got["grads"] = {k: v for k, v in got["grads"].items() if k in leaves}
    diffs = differences(got, want) + graph_differences(got["passes"], want["passes"])
    if len(printed_got) != len(printed_want) or not all(
            close(a, b) for a, b in zip(printed_got, printed_want, strict=True)):
        diffs.append(f"printed: expected {printed_want}, got {printed_got}")
    assert not diffs, source + "\n" + "\n".join(diffs)


@pytest.mark.torch
@pytest.mark.parametrize("float64", [False, True], ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_second_derivative_matches_pytorch(case: Case, float64: bool, torch: Any) -> None:
    agree(second_program(case, float64), ("x", "t"))


@pytest.mark.torch
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_third_order_graph_matches_pytorch(case: Case, torch: Any) -> None:
    agree(third_program(case), ("x", "t"))


@pytest.mark.torch
@pytest.mark.parametrize("create_graph", [False, True], ids=["values", "create_graph"])
@pytest.mark.parametrize("case", [c for c in CASES if not c.target],
                         ids=[c.id for c in CASES if not c.target])
def test_hessian_matches_pytorch(case: Case, create_graph: bool, torch: Any) -> None:
    agree(hessian_program(case, create_graph), ("x",))


def finite_difference_program(case: Case) -> str:
    """In float64: H u and the third derivative along u, u, analytic (two and three
    create_graph passes) and as central differences of the lab's own lower derivatives."""
    return (opening(case, True)
            + "u = torch.linspace(-1.0, 1.5, x.numel(), dtype=torch.float64).reshape(x.shape)\n"
            "def first(x):\n"
            f"    y = {case.expr.format(dt=F64)}\n"
            "    return torch.autograd.grad((y * y).sum(), x, create_graph=True)[0]\n"
            "def second(x):\n"
            "    return torch.autograd.grad((first(x) * u).sum(), x, create_graph=True)[0]\n"
            "hu = second(x)\n"
            "(hu * u).sum().backward()\n"
            "xp = (x + 1e-6 * u).detach().requires_grad_()\n"
            "xm = (x - 1e-6 * u).detach().requires_grad_()\n"
            "print(hu.tolist())\n"
            "print(((first(xp) - first(xm)) / 2e-6).tolist())\n"
            "print(x.grad.tolist())\n"
            "print(((second(xp) - second(xm)) / 2e-6).tolist())\n")


@pytest.mark.parametrize("case", [c for c in CASES if c.smooth],
                         ids=[c.id for c in CASES if c.smooth])
def test_second_and_third_derivatives_are_finite_differences(case: Case) -> None:
    """No torch needed: each formula is the derivative of the one below it."""
    source = finite_difference_program(case)
    trace = run_source(source)
    assert trace.error is None, (source, trace.error)
    printed = [numbers([line]) for line in trace.printed or []]
    assert len(printed) == 4, (source, trace.printed)
    for analytic, estimate in ((printed[0], printed[1]), (printed[2], printed[3])):
        assert len(analytic) == len(estimate)
        for a, e in zip(analytic, estimate, strict=True):
            assert math.isfinite(a) and abs(a - e) <= 1e-6 * (1 + abs(e)), (source, a, e)


UNNEEDED_BRANCH = PRELUDE + """\
x = torch.tensor([[0.5, -1.2, 2.0], [0.3, -0.4, 1.1]], requires_grad=True)
w = torch.tensor([[1.5, 2.0, -1.0], [0.5, 1.0, 2.0]], requires_grad=True)
y = (torch.softmax(x, dim=1) * w).sum()
g, = torch.autograd.grad(y, x, create_graph=True)
g.sum().backward()
"""


@pytest.mark.torch
def test_grad_skips_branches_that_lead_to_no_input(torch: Any) -> None:
    agree(UNNEEDED_BRANCH, ("x", "w"))
