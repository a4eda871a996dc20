"""Local derivatives (app/trace/derivatives.py, POST /api/derivative): for every kind of
node the view explains, the numbers agree with the trace's own step (incoming × local =
outgoing, element by element; or the sum of products, for matrix and jacobian nodes), the
plot passes through the input, and the local derivatives (a jacobian node's partials)
equal live PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from app.trace import run_source
from app.trace.derivatives import (
    BINARY,
    JACOBIAN,
    JACOBIAN_ROWS,
    MATRIX,
    UNARY,
    Derivative,
    NoDerivative,
    derivative,
)

PRELUDE = ("import torch\nimport torch.nn.functional as F\n"
           "x = torch.tensor([0.5, 1.5, 2.0, -0.7], requires_grad=True)\n")
TAIL = "\nloss = (y * torch.tensor([1.0, -2.0, 3.0, 0.5])).sum()\nloss.backward()\n"
# One program per node class, each with a different incoming gradient per element.
UNARY_CASES = {
    "TanhBackward0": "torch.tanh(x)", "SigmoidBackward0": "torch.sigmoid(x)",
    "ReluBackward0": "torch.relu(x)", "ExpBackward0": "torch.exp(x)",
    "LogBackward0": "torch.log(x.abs())", "SinBackward0": "torch.sin(x)",
    "CosBackward0": "torch.cos(x)", "SqrtBackward0": "torch.sqrt(x * x)",
    "AbsBackward0": "torch.abs(x)", "TanBackward0": "torch.tan(x)",
    "RsqrtBackward0": "torch.rsqrt(x * x)", "Expm1Backward0": "torch.expm1(x)",
    "Log1PBackward0": "torch.log1p(x * x)", "ErfBackward0": "torch.erf(x)",
    "NegBackward0": "-x", "SiluBackward0": "F.silu(x)", "PowBackward0": "x ** 3",
    "GeluBackward0": "F.gelu(x, approximate='tanh')", "LeakyReluBackward0": "F.leaky_relu(x, 0.1)",
    "SoftplusBackward0": "F.softplus(x, beta=2.0)", "EluBackward0": "F.elu(x)",
    "ClampBackward1": "x.clamp(-0.5, 1.0)", "ClampMinBackward0": "x.clamp_min(0.2)",
    "ClampMaxBackward0": "torch.clamp_max(x, 1.0)", "ReciprocalBackward0": "x.reciprocal()",
    "PowBackward2": "2.5 ** x",
}
MORE_UNARY = ["x.abs() ** 0.5", "F.gelu(x)", "x.pow(-2)",
              "torch.clamp(x, min=0.2)", "F.softplus(x)"]
BINARY_CASES = {
    "AddBackward0": "x + z", "SubBackward0": "x - z", "MulBackward0": "x * z",
    "DivBackward0": "x / z", "PowBackward1": "x.abs() ** z",
    "MaximumBackward0": "torch.maximum(x, z)", "MinimumBackward0": "torch.minimum(x, z)",
}
MORE_BINARY = ["x * 2.5", "x / z[0]", "z - x", "torch.maximum(x, x)",
               "torch.minimum(x, torch.tensor([0.5, 0.0, 3.0, -0.7]))"]
JACOBIAN_PRELUDE = (
    "import torch\nimport torch.nn.functional as F\n"
    "a = torch.tensor([[0.5, 1.5, -2.0], [2.0, -0.7, 0.3]], requires_grad=True)\n"
    "w = torch.tensor([[1.0, 2.0, 0.5], [3.0, -4.0, 0.25]], requires_grad=True)\n"
    "b = torch.tensor([0.1, -0.2], requires_grad=True)\n")
JACOBIAN_TAIL = "\nloss = (torch.tanh(y) * 1.5).sum()\nloss.backward()\n"
# Each node class's program, and PyTorch's function of that node's inputs.
JACOBIAN_CASES: dict[str, tuple[str, Any]] = {
    "AddmmBackward0": ("F.linear(a, w, b)", lambda torch: torch.addmm),
    "SumBackward0": ("a.sum() * a", lambda torch: torch.sum),
    "SumBackward1": ("a.sum(1)", lambda torch: lambda t: t.sum(1)),
    "MeanBackward0": ("a.mean() * a", lambda torch: torch.mean),
    "MeanBackward1": ("a.mean(dim=0, keepdim=True)",
                      lambda torch: lambda t: t.mean(0, keepdim=True)),
    "SoftmaxBackward0": ("F.softmax(a, dim=1)", lambda torch: lambda t: torch.softmax(t, 1)),
    "LogSoftmaxBackward0": ("F.log_softmax(a, dim=0)",
                            lambda torch: lambda t: torch.log_softmax(t, 0)),
}
MORE_JACOBIAN = ["a @ w.t() + b", "a.sum((0, 1), keepdim=True)",
                 "F.cross_entropy(a, torch.tensor([2, 0]))", "torch.softmax(a * w, -1)",
                 "a.mean(1) * b"]
MATRIX_PROGRAM = ("import torch\na = torch.tensor([[0.5, 1.5], [2.0, -1.0]], requires_grad=True)\n"
                  "b = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)\n"
                  "v = torch.tensor([1.0, -2.0], requires_grad=True)\n"
                  "y = (a @ b).sum() + (a @ v * v).sum() + (v @ v) * 3.0\ny.backward()\n")


def _program(expr: str) -> str:
    z = "z = torch.tensor([2.0, -1.0, 0.5, 4.0], requires_grad=True)\n"
    return PRELUDE + z + f"y = {expr}" + TAIL


def _steps(source: str, names: set[str]) -> list[tuple[int, Any]]:
    trace = run_source(source)
    assert trace.error is None, trace.error
    found = [(p.index, s) for p in trace.passes for s in p.steps if s["name"] in names]
    assert found, f"no step of {names}"
    return found


def _flat(v: Any) -> np.ndarray:
    return np.asarray(v, dtype=np.float64).reshape(-1)


def _check_step(source: str, pass_index: int, step: dict[str, Any]) -> list[Derivative]:
    """Every element: the incoming and outgoing gradients are the step's, and
    incoming × local = outgoing within float32's rounding."""
    incoming = _flat(step["grad"])
    sent = {s["edge"]: _flat(s["value"]) for s in step["sent"]}
    seen = []
    for k in range(incoming.size):
        d = derivative(source, pass_index, step["node"], k)
        seen.append(d)
        assert d.name == step["name"] and d.incoming == incoming[k]
        for term in d.inputs:
            if term.edge not in sent or term.outgoing is None:
                continue
            assert term.outgoing == sent[term.edge][k]
            if term.local is not None:
                assert np.isclose(incoming[k] * term.local, term.outgoing, rtol=2e-6, atol=1e-7)
                if incoming[k] != 0:    # the slope is the step's gradient ratio
                    assert np.isclose(term.local, term.outgoing / incoming[k], rtol=2e-6)
    return seen


@pytest.mark.parametrize("name", sorted(UNARY_CASES))
def test_unary_slope_is_the_steps_ratio(name: str) -> None:
    source = _program(UNARY_CASES[name])
    for pass_index, step in _steps(source, {name}):
        for d in _check_step(source, pass_index, step):
            assert d.kind == "unary" and d.plot is not None
            term = d.inputs[0]
            assert d.plot.slope == term.local and d.plot.x == term.value
            assert d.plot.samples[len(d.plot.samples) // 2] == (d.plot.x, d.plot.y)
            (x0, y0), (x1, y1) = d.plot.tangent
            assert np.isclose((y1 - y0) / (x1 - x0), d.plot.slope, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("expr", MORE_UNARY + MORE_BINARY + list(BINARY_CASES.values()))
def test_more_spellings(expr: str) -> None:
    source = _program(expr)
    for pass_index, step in _steps(source, set(UNARY) | set(BINARY)):
        _check_step(source, pass_index, step)


def test_every_table_entry_is_tested() -> None:
    assert set(UNARY) == set(UNARY_CASES)
    assert set(BINARY) == set(BINARY_CASES)
    assert set(JACOBIAN) == set(JACOBIAN_CASES)
    names = {s["name"] for _, s in _steps(MATRIX_PROGRAM, set(MATRIX))}
    assert names == set(MATRIX)


def test_matrix_terms_sum_to_the_sent_gradient() -> None:
    for pass_index, step in _steps(MATRIX_PROGRAM, set(MATRIX)):
        sent = {s["edge"]: _flat(s["value"]) for s in step["sent"]}
        elements = max(v.size for v in sent.values())
        for k in range(elements):
            d = derivative(MATRIX_PROGRAM, pass_index, step["node"], k)
            assert d.kind == "matrix"
            for term in d.inputs:
                assert term.terms is not None and term.outgoing is not None
                j = min(k, sent[term.edge].size - 1)
                assert term.outgoing == sent[term.edge][j]
                assert np.isclose(sum(a * b for a, b in term.terms), term.outgoing, rtol=1e-6)


def _jacobian_steps(expr: str, names: set[str]) -> tuple[str, list[tuple[int, Any]]]:
    source = JACOBIAN_PRELUDE + f"y = {expr}" + JACOBIAN_TAIL
    return source, _steps(source, names)


def _jacobian_views(source: str, pass_index: int, step: dict[str, Any]
                    ) -> tuple[list[Derivative], dict[int, np.ndarray]]:
    """The view at every element of the node's largest input, and what the step sent."""
    sent = {s["edge"]: np.asarray(s["value"], dtype=np.float64) for s in step["sent"]}
    elements = max(v.size for v in sent.values())
    return [derivative(source, pass_index, step["node"], k) for k in range(elements)], sent


@pytest.mark.parametrize("expr", [e for e, _ in JACOBIAN_CASES.values()] + MORE_JACOBIAN)
def test_jacobian_products_sum_to_the_sent_gradient(expr: str) -> None:
    """Σ grad[j] × ∂out[j]/∂in[k] is what the pop sent to input k, for every input and
    element; the grad factors are the pop's incoming gradient."""
    source, steps = _jacobian_steps(expr, set(JACOBIAN))
    for pass_index, step in steps:
        incoming = sorted(_flat(step["grad"]).tolist())
        views, sent = _jacobian_views(source, pass_index, step)
        for k, d in enumerate(views):
            assert d.kind == "jacobian" and d.name == step["name"] and d.elements == len(views)
            for term in d.inputs:
                if term.edge not in sent:
                    continue
                flat = sent[term.edge].reshape(-1)
                assert term.terms is not None and term.outgoing is not None
                assert term.outgoing == flat[min(k, flat.size - 1)]
                assert all(g in incoming for g, _ in term.terms)
                total = sum(g * p for g, p in term.terms)
                assert np.isclose(total, term.outgoing, rtol=1e-5, atol=1e-6), (k, term)


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(JACOBIAN_CASES))
def test_jacobian_partials_are_pytorchs(name: str, torch: Any) -> None:
    """The partials ∂out[j]/∂in[k] the view multiplies by, against live PyTorch's Jacobian of
    the same function at the node's own inputs (rebuilt from the view's values)."""
    expr, make = JACOBIAN_CASES[name]
    f = make(torch)
    source, steps = _jacobian_steps(expr, {name})
    for pass_index, step in steps:
        views, sent = _jacobian_views(source, pass_index, step)
        shapes = [sent[i].shape for i in range(len(views[0].inputs))]
        inputs = tuple(torch.tensor(
            [views[k].inputs[i].value for k in range(int(np.prod(shape)))],
            dtype=torch.float32).reshape(shape) for i, shape in enumerate(shapes))
        jacobian = torch.autograd.functional.jacobian(f, inputs)
        rows = int(np.prod(np.shape(step["grad"])))
        g = _flat(step["grad"])
        for i, shape in enumerate(shapes):
            matrix = jacobian[i].reshape(rows, -1).numpy()
            for k in range(int(np.prod(shape))):
                term = views[k].inputs[i]
                assert term.terms is not None
                want = sorted((float(g[j]), float(matrix[j, k])) for j in range(rows)
                              if matrix[j, k] != 0)
                got = sorted(term.terms)
                assert len(got) == len(want), (i, k, got, want)
                assert np.allclose(got, want, rtol=2e-6, atol=1e-7), (i, k, got, want)


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(BINARY_CASES))
def test_elementwise_locals_are_pytorchs(name: str, torch: Any) -> None:
    """Each input's local derivative against live PyTorch's gradient of the op at the
    view's input values (ties of maximum and minimum included)."""
    ops = {"AddBackward0": torch.add, "SubBackward0": torch.sub, "MulBackward0": torch.mul,
           "DivBackward0": torch.div, "PowBackward1": torch.pow,
           "MaximumBackward0": torch.maximum, "MinimumBackward0": torch.minimum}
    ties = {"MaximumBackward0": ["torch.maximum(x, x)"], "MinimumBackward0": ["x.minimum(x)"]}
    for expr in [BINARY_CASES[name], *ties.get(name, [])]:
        source = _program(expr)
        for pass_index, step in _steps(source, {name}):
            for k in range(4):
                d = derivative(source, pass_index, step["node"], k)
                leaves = [torch.tensor([t.value], requires_grad=True) for t in d.inputs]
                grads = torch.autograd.grad(ops[name](*leaves).sum(), leaves)
                for term, want in zip(d.inputs, grads, strict=True):
                    if term.local is None:      # the tail's constant: no gradient computed
                        assert term.to is None
                        continue
                    assert np.isclose(term.local, want.item(), rtol=2e-6, atol=1e-7), (k, term)


def test_refusals() -> None:
    source = _program("torch.tanh(x)")
    (pass_index, step), = _steps(source, {"TanhBackward0"})
    with pytest.raises(NoDerivative, match="outside"):
        derivative(source, pass_index, step["node"], 4)
    with pytest.raises(NoDerivative, match="does not run"):
        derivative(source, 1, step["node"])
    (_, acc), = _steps(source, {"AccumulateGrad"})[:1]
    with pytest.raises(NoDerivative, match="no local-derivative view"):
        derivative(source, 0, acc["node"])
    side = int(JACOBIAN_ROWS ** 0.5) + 1         # a softmax past the rows the view applies
    big = (f"import torch\nx = torch.ones({side}, {side}, requires_grad=True)\n"
           "y = (torch.softmax(x, 1) * x).sum()\ny.backward()\n")
    (pass_index, step), = _steps(big, {"SoftmaxBackward0"})
    with pytest.raises(NoDerivative, match=f"at most {JACOBIAN_ROWS}"):
        derivative(big, pass_index, step["node"])


def test_route_answers_and_caches(app_client: Any) -> None:
    client = app_client()
    source = _program("torch.sin(x)")
    (pass_index, step), = _steps(source, {"SinBackward0"})
    body = {"source": source, "pass": pass_index, "node": step["node"], "element": 2}
    first = client.post("/api/derivative", json=body)
    assert first.status_code == 200
    assert first.json() == derivative(source, pass_index, step["node"], 2).model_dump(mode="json")
    assert client.post("/api/derivative", json=body).json() == first.json()
    missing = client.post("/api/derivative", json={**body, "node": 999})
    assert missing.status_code == 404 and "does not run" in missing.json()["detail"]
    assert client.post("/api/derivative", json={**body, "element": -1}).status_code == 422


def test_a_seeded_program_replays_its_numbers() -> None:
    source = "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.exp(x).sum()\n"
    source += "y.backward()\n"
    trace = run_source(source)
    (step,) = [s for s in trace.passes[0].steps if s["name"] == "ExpBackward0"]
    assert trace.seed is not None
    d = derivative(source, 0, step["node"], 1, seed=trace.seed)
    assert d.inputs[0].outgoing == _flat(step["sent"][0]["value"])[1]


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(UNARY_CASES))
def test_local_derivative_is_pytorchs(name: str, torch: Any) -> None:
    """The slope at each element against live PyTorch's gradient of the same expression."""
    source = _program(UNARY_CASES[name])
    f = _torch_function(name, torch)
    (pass_index, step), = _steps(source, {name})
    for k in range(4):
        d = derivative(source, pass_index, step["node"], k)
        term = d.inputs[0]
        assert term.value is not None and term.local is not None
        leaf = torch.tensor([term.value], requires_grad=True)     # the node's own input
        y = f(leaf)
        (g,) = torch.autograd.grad(y.sum(), leaf)
        assert np.isclose(term.local, g.item(), rtol=2e-6, atol=1e-7), (k, term.value)
        assert d.plot is not None and np.isclose(d.plot.y, y.item(), rtol=2e-6, atol=1e-7)


def _torch_function(name: str, torch: Any) -> Any:
    """PyTorch's function of each case's node (its input taken as it arrives)."""
    nn_f = torch.nn.functional
    special = {
        "NegBackward0": torch.neg, "SiluBackward0": nn_f.silu,
        "PowBackward0": lambda t: t ** 3,
        "GeluBackward0": lambda t: nn_f.gelu(t, approximate="tanh"),
        "LeakyReluBackward0": lambda t: nn_f.leaky_relu(t, 0.1),
        "SoftplusBackward0": lambda t: nn_f.softplus(t, beta=2.0),
        "EluBackward0": nn_f.elu, "ClampBackward1": lambda t: t.clamp(-0.5, 1.0),
        "ClampMinBackward0": lambda t: t.clamp_min(0.2),
        "ClampMaxBackward0": lambda t: t.clamp_max(1.0),
        "PowBackward2": lambda t: 2.5 ** t,
        "Log1PBackward0": torch.log1p, "Expm1Backward0": torch.expm1,
    }
    if name in special:
        return special[name]
    return getattr(torch, name.removesuffix("Backward0").lower())
