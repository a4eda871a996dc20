"""Local derivatives the page can see: one node of a trace, its function around its input,
and the numbers its backward formula multiplies.

The program is run again (same source, same seed, so the same node ids) with the engine
asked to keep the wanted node and copies of its inputs as they were when it recorded
(`AutogradContext.keep_node_id`). That node's incoming and outgoing gradients are the
pop's own; the function's samples come from the engine's forward function of that node
class, and the local derivative from that class's own `apply` run on a fresh copy of the
op with a gradient of ones (the engine's backward, never a second formula that could
disagree). The fresh op must record the same node class, or nothing is shown.

Nodes whose output element depends on many input elements (addmm, sum, mean, softmax,
log_softmax) are shown as the sums they are: input element k's gradient is
Σ_j grad[j] × ∂out[j]/∂in[k], each ∂out[j]/∂in[k] read from that class's `apply` on a
one-hot gradient (then summed back to the input's shape by the engine's own
`validate_outputs`), so again no formula but the engine's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from app.language.events import PassStarted
from app.language.interpreter import Interpreter
from app.language.parse import SourceError, parse
from app.limits import DEFAULT_LIMITS, Limits
from app.trace.build import quiet_floats
from engine import AutogradContext
from engine import functions as ops
from engine.events import NodePopped
from engine.input_buffer import validate_outputs
from engine.node import Node
from engine.tensor import Tensor

SAMPLES = 81          # points on the plotted curve, the input's own in the middle
JACOBIAN_ROWS = 1024  # output elements a sum-of-products view applies the backward to
Forward = Callable[[list[Tensor], Node], Tensor]


def _param(node: Node, name: str) -> Any:
    """A number or string the node saved (`_saved_exponent`): never freed."""
    return node.saved[name].value


def _one(f: Callable[[Tensor], Tensor]) -> Forward:
    return lambda xs, node: f(xs[0])


UNARY: dict[str, tuple[str, Forward]] = {
    "TanhBackward0": ("tanh", _one(ops.tanh)), "SigmoidBackward0": ("sigmoid", _one(ops.sigmoid)),
    "ReluBackward0": ("relu", _one(ops.relu)), "ExpBackward0": ("exp", _one(ops.exp)),
    "LogBackward0": ("log", _one(ops.log)), "SinBackward0": ("sin", _one(ops.sin)),
    "CosBackward0": ("cos", _one(ops.cos)), "SqrtBackward0": ("sqrt", _one(ops.sqrt)),
    "AbsBackward0": ("abs", _one(ops.abs)), "TanBackward0": ("tan", _one(ops.tan)),
    "RsqrtBackward0": ("rsqrt", _one(ops.rsqrt)), "Expm1Backward0": ("expm1", _one(ops.expm1)),
    "Log1PBackward0": ("log1p", _one(ops.log1p)), "ErfBackward0": ("erf", _one(ops.erf)),
    "NegBackward0": ("neg", _one(ops.neg)), "SiluBackward0": ("silu", _one(ops.silu)),
    "PowBackward0": ("pow", lambda xs, n: ops.pow_scalar(xs[0], _param(n, "exponent"))),
    "GeluBackward0": ("gelu", lambda xs, n: ops.gelu(xs[0], _param(n, "approximate"))),
    "LeakyReluBackward0": ("leaky_relu", lambda xs, n: ops.leaky_relu(
        xs[0], _param(n, "negative_slope"))),
    "SoftplusBackward0": ("softplus", lambda xs, n: ops.softplus(
        xs[0], _param(n, "beta"), _param(n, "threshold"))),
    "EluBackward0": ("elu", lambda xs, n: ops.elu(xs[0], _param(n, "alpha"))),
    "ClampBackward1": ("clamp", lambda xs, n: ops.clamp(xs[0], _param(n, "min"),
                                                      _param(n, "max"))),
    "ClampMinBackward0": ("clamp_min", lambda xs, n: ops.clamp_min(xs[0], _param(n, "min"))),
    "ClampMaxBackward0": ("clamp_max", lambda xs, n: ops.clamp_max(xs[0], _param(n, "max"))),
    "ReciprocalBackward0": ("reciprocal", _one(ops.reciprocal)),
    # number ** tensor (pow.Scalar): the number is the saved `self`, the input the exponent
    "PowBackward2": ("pow", lambda xs, n: ops.pow_scalar_base(_param(n, "self"), xs[0])),
}
# Each input's gradient in derivatives.yaml's words; the numbers are the engine's.
BINARY: dict[str, tuple[str, Forward, tuple[str, str]]] = {
    "AddBackward0": ("add", lambda xs, n: ops.add(xs[0], xs[1]), ("grad", "grad")),
    "SubBackward0": ("sub", lambda xs, n: ops.sub(xs[0], xs[1]), ("grad", "-grad")),
    "MulBackward0": ("mul", lambda xs, n: ops.mul(xs[0], xs[1]), ("grad × other", "grad × self")),
    "DivBackward0": ("div", lambda xs, n: ops.div(xs[0], xs[1]),
                     ("grad / other", "-grad × self / other²")),
    "PowBackward1": ("pow", lambda xs, n: ops.pow(xs[0], xs[1]),
                     ("grad × exponent × self^(exponent − 1)", "grad × result × log(self)")),
    "MaximumBackward0": ("maximum", lambda xs, n: ops.maximum(xs[0], xs[1]),
                         ("grad where self > other, grad / 2 where self == other, else 0",
                          "grad where self < other, grad / 2 where self == other, else 0")),
    "MinimumBackward0": ("minimum", lambda xs, n: ops.minimum(xs[0], xs[1]),
                         ("grad where self < other, grad / 2 where self == other, else 0",
                          "grad where self > other, grad / 2 where self == other, else 0")),
}
MATRIX: dict[str, tuple[str, Forward, tuple[str, str]]] = {
    "MmBackward0": ("mm", lambda xs, n: ops.mm(xs[0], xs[1]), ("grad @ mat2ᵀ", "selfᵀ @ grad")),
    "MvBackward0": ("mv", lambda xs, n: ops.mv(xs[0], xs[1]), ("grad ⊗ vec", "selfᵀ @ grad")),
    "DotBackward0": ("dot", lambda xs, n: ops.dot(xs[0], xs[1]), ("grad × tensor", "grad × self")),
}
# Output element j's dependence on input element k, summed: Σ_j grad[j] × ∂out[j]/∂in[k].
JACOBIAN: dict[str, tuple[str, Forward, tuple[str, ...]]] = {
    "AddmmBackward0": ("addmm", lambda xs, n: ops.addmm(xs[0], xs[1], xs[2]),
                       ("grad × beta, summed to self's shape", "grad @ mat2ᵀ × alpha",
                        "mat1ᵀ @ grad × alpha")),
    "SumBackward0": ("sum", lambda xs, n: ops.sum(xs[0]), ("grad expanded to self's sizes",)),
    "SumBackward1": ("sum", lambda xs, n: ops.sum(xs[0], list(_param(n, "dim")),
                                                   _param(n, "keepdim")),
                     ("sum_backward: grad expanded over dim to self's sizes",)),
    "MeanBackward0": ("mean", lambda xs, n: ops.mean(xs[0]),
                      ("grad expanded to self's sizes / self.numel()",)),
    "MeanBackward1": ("mean", lambda xs, n: ops.mean(xs[0], list(_param(n, "dim")),
                                                     _param(n, "keepdim")),
                      ("mean_backward: grad expanded over dim / the elements reduced",)),
    "SoftmaxBackward0": ("softmax", lambda xs, n: ops.softmax(xs[0], _param(n, "dim")),
                         ("result × (grad − sum(grad × result, dim))",)),
    "LogSoftmaxBackward0": ("log_softmax", lambda xs, n: ops.log_softmax(xs[0], _param(n, "dim")),
                            ("grad − exp(result) × sum(grad, dim)",)),
}
PARAMS = ("exponent", "approximate", "negative_slope", "beta", "threshold", "alpha", "min",
          "max", "self", "dim", "keepdim")


class Plot(BaseModel):
    """The curve around the input and the tangent at it, as the page draws them."""

    x: float = Field(description="the input at the element")
    y: float = Field(description="the function's value there (the engine's forward)")
    slope: float = Field(description="the local derivative there (the engine's backward)")
    samples: list[tuple[float, float | None]] = Field(
        description=f"{SAMPLES} points (x, f(x)); null where f is not finite")
    tangent: tuple[tuple[float, float], tuple[float, float]]


class InputTerm(BaseModel):
    """One input of the node: its value, the local derivative, what the pop sent it."""

    edge: int
    to: int | None = Field(description="the node the gradient went to; null: no grad needed")
    formula: str
    value: float | None = Field(description="the input at the element")
    local: float | None = Field(description="∂output/∂input at the element")
    outgoing: float | None = Field(description="the gradient the pop sent, at the element")
    terms: list[tuple[float, float]] | None = Field(
        None, description="matrix products, or (grad[j], ∂out[j]/∂in) for a jacobian node: "
        "the pairs summed into `outgoing` (pairs whose second factor is 0 left out)")


class Derivative(BaseModel):
    """A node's local derivative at one element, for `GET /api/derivative`."""

    node: int
    name: str
    kind: Literal["unary", "elementwise", "matrix", "jacobian"]
    function: str
    params: dict[str, bool | int | float | str | list[int] | None]
    shape: list[int]
    element: int
    elements: int
    incoming: float | None = Field(description="the gradient the node received, at the element")
    inputs: list[InputTerm]
    plot: Plot | None
    note: str | None = None


class NoDerivative(Exception):
    """The request names no node the view can show (the route's 404)."""


def _number(v: Any) -> float | None:
    x = float(v)
    return x if math.isfinite(x) else None


def _array(v: Any) -> np.ndarray | None:
    if v is None:
        return None
    return np.asarray(v.data if isinstance(v, Tensor) else v)


def rerun(source: str, seed: int | None, pass_index: int, node_id: int,
          limits: Limits) -> tuple[Node, list[Tensor | None], NodePopped]:
    """Run the program again, keeping the node and its pop in that pass."""
    try:
        program = parse(source, limits)
    except SourceError as e:
        raise NoDerivative(f"the program is refused: {e.message}") from e
    state = {"passes": -1, "pending": False}
    pops: list[NodePopped] = []

    def emit(event: Any) -> None:
        if isinstance(event, PassStarted):
            state["pending"] = True
        elif isinstance(event, NodePopped) and event.ran:
            if state["pending"]:
                state["passes"] += 1
                state["pending"] = False
            if event.node == node_id and state["passes"] == pass_index and not pops:
                pops.append(event)

    interpreter = Interpreter(program, limits, emit)
    interpreter.ctx.replay_seed = seed
    interpreter.ctx.keep_node_id = node_id
    with quiet_floats():
        interpreter.run()
    kept = interpreter.ctx.kept
    if kept is None or not pops:
        raise NoDerivative(f"node {node_id} does not run in pass {pass_index}")
    return kept[0], kept[1], pops[0]


def _fresh(node: Node, inputs: list[Tensor | None], forward: Forward,
           shape: tuple[int, ...] | None = None) -> tuple[Tensor, list[Tensor]]:
    """The op again, in a context of its own, on copies of the node's inputs (broadcast to
    `shape` for an elementwise op, so each element has its own partial derivative)."""
    ctx = AutogradContext()
    leaves: list[Tensor] = []
    for t, edge in zip(inputs, node.next_edges, strict=True):
        assert t is not None
        data = t.data if shape is None or t.is_wrapped_number else np.broadcast_to(
            t.data, shape).copy()
        leaves.append(Tensor(data, ctx, requires_grad=edge is not None,
                             is_wrapped_number=t.is_wrapped_number))
    out = forward(leaves, node)
    if out.grad_fn is None or out.grad_fn.name != node.name:
        raise NoDerivative(f"{node.name}: the op recorded again is not the same node")
    return out, leaves


def _local(out: Tensor) -> list[np.ndarray | None]:
    """The node class's own backward with a gradient of ones, as the engine applies it
    (grad mode off)."""
    assert out.grad_fn is not None
    ctx = out.ctx
    ctx.grad_mode = False
    grads = out.grad_fn.apply([Tensor(np.ones_like(out.data), ctx)])
    ctx.grad_mode = True
    return [_array(g) for g in grads]


def _at(a: np.ndarray | None, k: int) -> float | None:
    if a is None:
        return None
    return _number(a.reshape(-1)[min(k, a.size - 1)])


def _sent(pop: NodePopped, edge: int) -> np.ndarray | None:
    for s in pop.sent:
        if s.edge == edge:
            return _array(s.value)
    return None


def _plot(node: Node, x0: np.ndarray, forward: Forward, k: int, slope: float) -> Plot:
    """f sampled in the input's dtype around its element k, and the tangent there."""
    x = x0.reshape(-1)[k]
    half = max(2.0, 0.5 * abs(float(x)))
    xs = np.linspace(float(x) - half, float(x) + half, SAMPLES).astype(x0.dtype)
    xs[SAMPLES // 2] = x
    ctx = AutogradContext()
    ctx.grad_mode = False
    ys = forward([Tensor(xs, ctx)], node).data
    y = float(ys[SAMPLES // 2])
    ends = (float(xs[0]), float(xs[-1]))
    return Plot(x=float(x), y=y, slope=slope,
                samples=[(float(a), _number(b)) for a, b in zip(xs, ys, strict=True)],
                tangent=((ends[0], y + slope * (ends[0] - float(x))),
                         (ends[1], y + slope * (ends[1] - float(x)))))


def local_derivative(node: Node, inputs: list[Tensor | None], pop: NodePopped,
                     element: int) -> Derivative:
    """The view of one node at one element of its output (the incoming gradient's)."""
    incoming = _array(pop.grad)
    shape = tuple(incoming.shape) if incoming is not None else ()
    size = max(1, int(np.prod(shape)))
    if node.name in MATRIX or node.name in JACOBIAN:   # an element of the inputs' gradients
        size = max(t.data.size for t in inputs if t is not None)
    if not 0 <= element < size:
        raise NoDerivative(f"element {element} is outside the node's {size} elements")
    params = {p: _param_json(_param(node, p)) for p in PARAMS if p in node.saved
              and not node.saved[p].is_tensor}
    base = {"node": node.id, "name": node.name, "params": params, "shape": list(shape),
            "element": element, "elements": size, "incoming": _at(incoming, element)}
    if node.name in UNARY:
        function, forward = UNARY[node.name]
        out, _ = _fresh(node, inputs, forward)
        local = _local(out)[0]
        assert local is not None and inputs[0] is not None
        slope = _at(local, element)
        term = InputTerm(edge=0, to=_to(node, 0), formula=f"grad × {function}′(x)",
                         value=_at(inputs[0].data, element), local=slope,
                         outgoing=_at(_sent(pop, 0), element))
        plot = None if slope is None else _plot(node, inputs[0].data, forward, element, slope)
        return Derivative(kind="unary", function=function, inputs=[term], plot=plot, **base)
    if node.name in BINARY:
        return _elementwise(node, inputs, pop, element, shape, base)
    if node.name in MATRIX:
        return _matrix(node, inputs, pop, element, base)
    if node.name in JACOBIAN:
        return _jacobian(node, inputs, pop, element, base)
    raise NoDerivative(f"{node.name} has no local-derivative view")


def _param_json(v: Any) -> Any:
    """A saved parameter as JSON says it: reduced dims (a tuple) as a list."""
    return list(v) if isinstance(v, tuple) else v


def _to(node: Node, i: int) -> int | None:
    edge = node.next_edges[i]
    return None if edge is None else edge.function.id


def _elementwise(node: Node, inputs: list[Tensor | None], pop: NodePopped, k: int,
                 shape: tuple[int, ...], base: dict[str, Any]) -> Derivative:
    function, forward, formulas = BINARY[node.name]
    out, leaves = _fresh(node, inputs, forward, shape)
    local = _local(out)
    terms = []
    broadcast = False
    for i, leaf in enumerate(leaves):
        sent = _sent(pop, i)
        broadcast |= sent is not None and tuple(sent.shape) != shape
        terms.append(InputTerm(
            edge=i, to=_to(node, i), formula=formulas[i], value=_at(leaf.data, k),
            local=_at(local[i], k) if local[i] is not None else None,
            outgoing=_at(sent, k) if sent is not None and sent.shape == shape else None))
    note = ("an input was broadcast: its gradient is these products summed over the "
            "broadcast dimensions" if broadcast else None)
    return Derivative(kind="elementwise", function=function, inputs=terms, plot=None,
                      note=note, **base)


def _matrix(node: Node, inputs: list[Tensor | None], pop: NodePopped, k: int,
            base: dict[str, Any]) -> Derivative:
    """mm, mv, dot: each input's gradient element as the sum of products it is."""
    function, _, formulas = MATRIX[node.name]
    a, b = (t.data for t in inputs if t is not None)
    g = _array(pop.grad)
    assert g is not None
    terms: list[InputTerm] = []
    for i in (0, 1):
        sent = _sent(pop, i)
        value = (a, b)[i]
        j = min(k, value.size - 1)
        idx = np.unravel_index(j, value.shape)
        pairs = _pairs(function, i, idx, a, b, g)
        terms.append(InputTerm(edge=i, to=_to(node, i), formula=formulas[i],
                               value=_number(value[idx]), local=None,
                               outgoing=None if sent is None else _number(sent[idx]),
                               terms=pairs))
    return Derivative(kind="matrix", function=function, inputs=terms, plot=None, **base)


def _jacobian(node: Node, inputs: list[Tensor | None], pop: NodePopped, k: int,
              base: dict[str, Any]) -> Derivative:
    """Each input's gradient at element k as Σ_j grad[j] × ∂out[j]/∂in[k], the partials
    being the node class's own backward applied to the one-hot gradient e_j."""
    function, forward, formulas = JACOBIAN[node.name]
    out, leaves = _fresh(node, inputs, forward)
    rows = out.data.size
    if rows > JACOBIAN_ROWS:
        raise NoDerivative(f"{node.name} has {rows} output elements; the view shows nodes "
                           f"with at most {JACOBIAN_ROWS}")
    g = _array(pop.grad)
    assert g is not None and out.grad_fn is not None
    ctx = out.ctx
    ctx.grad_mode = False
    partials: list[list[np.ndarray | None]] = []
    try:
        for j in range(rows):
            onehot = np.zeros(rows, dtype=out.data.dtype)
            onehot[j] = 1
            grads = out.grad_fn.apply([Tensor(onehot.reshape(out.data.shape), ctx)])
            partials.append([_array(t) for t in validate_outputs(out.grad_fn, grads)])
    finally:
        ctx.grad_mode = True
    flat_g = g.reshape(-1)
    terms: list[InputTerm] = []
    for i, leaf in enumerate(leaves):
        j = min(k, leaf.data.size - 1)
        sent = _sent(pop, i)
        pairs = None
        if node.next_edges[i] is not None:
            pairs = []
            for r, row in enumerate(partials):
                partial = row[i]
                if partial is not None and partial.reshape(-1)[j] != 0:
                    pairs.append((float(flat_g[r]), float(partial.reshape(-1)[j])))
        terms.append(InputTerm(edge=i, to=_to(node, i), formula=formulas[i],
                               value=_at(leaf.data, j), local=None,
                               outgoing=None if sent is None else _at(sent, j), terms=pairs))
    note = ("each product is grad[j] × ∂out[j]/∂in at this element, summed over the output "
            "elements j it reaches (∂out[j]/∂in: the node's backward on a one-hot gradient)")
    return Derivative(kind="jacobian", function=function, inputs=terms, plot=None, note=note,
                      **base)


def _pairs(function: str, i: int, idx: tuple[Any, ...], a: np.ndarray, b: np.ndarray,
           g: np.ndarray) -> list[tuple[float, float]]:
    """The products that input i's gradient at idx sums (grad's factor first)."""
    if function == "dot":
        return [(float(g), float((b, a)[i][idx]))]
    if function == "mv":
        return ([(float(g[idx[0]]), float(b[idx[1]]))] if i == 0 else
                [(float(g[r]), float(a[r, idx[0]])) for r in range(a.shape[0])])
    if i == 0:       # grad @ mat2ᵀ: row idx[0] of grad with row idx[1] of mat2
        return [(float(g[idx[0], c]), float(b[idx[1], c])) for c in range(b.shape[1])]
    return [(float(g[r, idx[1]]), float(a[r, idx[0]])) for r in range(a.shape[0])]


def derivative(source: str, pass_index: int, node_id: int, element: int = 0,
               seed: int | None = None, limits: Limits = DEFAULT_LIMITS) -> Derivative:
    """The one way in: the view of node `node_id` popped in pass `pass_index`."""
    node, inputs, pop = rerun(source, seed, pass_index, node_id, limits)
    if any(t is None for t in inputs):
        raise NoDerivative(f"{node.name} has an input the view cannot show")
    with quiet_floats():        # samples outside the function's domain are nan, not warnings
        return local_derivative(node, inputs, pop, element)
