"""Each backward node: its formula, its name and edges, what it saves and when it frees it.

Formulas are checked against analytic derivatives and central finite differences in
float64; names, next_functions and saved values against the reference's table (§1);
freeing against §1/§2; accumulation and create_graph against §3/§6. Expected values
come from calculus or from the reference, never from the engine.
"""

from __future__ import annotations

import gc
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from app.trace import run_source
from engine import UINT64_MAX, AutogradContext, Tensor, TorchError, dtypes, functions, tensor
from engine import run_backward as backward
from engine.errors import FREED_GRAPH
from engine.events import NodePopped
from engine.node import Node

# -- formulas -----------------------------------------------------------------------------

def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


UNARY: dict[str, tuple[Callable[[float], float], list[float]]] = {
    # name: (derivative, points)
    "tanh": (lambda x: 1 - math.tanh(x) ** 2, [-2.0, -0.3, 0.0, 0.7, 1.9]),
    "exp": (math.exp, [-2.0, 0.0, 0.5, 2.5]),
    "log": (lambda x: 1 / x, [0.1, 0.5, 1.0, 3.0]),
    "sin": (math.cos, [-2.0, 0.0, 0.7, 3.0]),
    "cos": (lambda x: -math.sin(x), [-2.0, 0.0, 0.7, 3.0]),
    "sigmoid": (lambda x: sigmoid(x) * (1 - sigmoid(x)), [-3.0, 0.0, 0.4, 2.0]),
    "relu": (lambda x: 1.0 if x > 0 else 0.0, [-1.5, -0.1, 0.2, 2.0]),
    "sqrt": (lambda x: 0.5 / math.sqrt(x), [0.25, 1.0, 2.0, 9.0]),
    "abs": (lambda x: math.copysign(1.0, x), [-2.0, -0.5, 0.5, 3.0]),
}


def grad_of(source: str) -> dict[str, Any]:
    trace = run_source(source)
    assert trace.error is None, (source, trace.error)
    return trace.grads


def f32(x: float) -> float:
    return float(np.float32(x))


@pytest.mark.parametrize("spelling", ["torch.{f}(a)", "a.{f}()"])
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_gradient_is_the_derivative(name: str, spelling: str) -> None:
    derivative, points = UNARY[name]
    for x in points:
        call = spelling.format(f=name)
        got = grad_of(f"a = {x!r}\ny = {call}\n")["a"]
        assert got == pytest.approx(derivative(f32(x)), rel=2e-6, abs=1e-7), (name, x)


BINARY: list[tuple[str, Callable[[float, float], tuple[float, float]]]] = [
    ("a + b", lambda a, b: (1.0, 1.0)),
    ("a - b", lambda a, b: (1.0, -1.0)),
    ("a * b", lambda a, b: (b, a)),
    ("a / b", lambda a, b: (1 / b, -a / b**2)),
    ("a ** b", lambda a, b: (b * a ** (b - 1), a**b * math.log(a))),
    ("-a * b", lambda a, b: (-b, -a)),
]


@pytest.mark.parametrize(("expr", "derivatives"), BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize(("a", "b"), [(1.5, 2.0), (0.7, -1.25), (3.0, 0.5)])
def test_binary_gradients_are_the_partial_derivatives(
        expr: str, derivatives: Callable[[float, float], tuple[float, float]], a: float,
        b: float) -> None:
    grads = grad_of(f"a = {a!r}\nb = {b!r}\ny = {expr}\n")
    da, db = derivatives(a, b)
    assert grads["a"] == pytest.approx(da, rel=2e-6)
    assert grads["b"] == pytest.approx(db, rel=2e-6)


NUMBER_FORMS: list[tuple[str, Callable[[float], float]]] = [
    ("2 + a", lambda a: 1.0), ("a + 2", lambda a: 1.0), ("a - 2", lambda a: 1.0),
    ("2 - a", lambda a: -1.0), ("3 * a", lambda a: 3.0), ("a * 2.5", lambda a: 2.5),
    ("a / 4", lambda a: 0.25), ("2 / a", lambda a: -2 / a**2), ("2 ** a", lambda a: 2**a *
                                                                 math.log(2)),
    ("a ** 2", lambda a: 2 * a), ("a ** 3", lambda a: 3 * a**2),
    ("a ** 0.5", lambda a: 0.5 / math.sqrt(a)), ("a ** -1", lambda a: -1 / a**2),
    ("a ** -2", lambda a: -2 / a**3), ("a ** 1.5", lambda a: 1.5 * math.sqrt(a)),
    ("a ** 0", lambda a: 0.0), ("-a", lambda a: -1.0), ("+a", lambda a: 1.0),
    ("a.sum()", lambda a: 1.0), ("a.mean()", lambda a: 1.0),
]


@pytest.mark.parametrize(("expr", "derivative"), NUMBER_FORMS, ids=[n[0] for n in NUMBER_FORMS])
@pytest.mark.parametrize("a", [0.5, 1.5, 3.0])
def test_numbers_on_either_side(expr: str, derivative: Callable[[float], float],
                                a: float) -> None:
    assert grad_of(f"a = {a!r}\ny = {expr}\n")["a"] == pytest.approx(derivative(a), rel=2e-6)


def central_difference(f: Callable[..., float], args: list[float], i: int,
                       h: float = 1e-6) -> float:
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


COMPOSITES: list[tuple[str, Callable[..., float], list[float]]] = [
    ("(a * b).sin() + (a / b).exp() * a",
     lambda a, b: math.sin(a * b) + math.exp(a / b) * a, [0.7, -1.3]),
    ("torch.tanh(a * b + 1) ** 2 - b.sigmoid()",
     lambda a, b: math.tanh(a * b + 1) ** 2 - sigmoid(b), [0.3, 0.9]),
    ("(a * a + b).sqrt().log() / (1 + b.abs())",
     lambda a, b: math.log(math.sqrt(a * a + b)) / (1 + abs(b)), [1.2, 0.4]),
    ("2 ** (a - b) * (3 - a) / b ** 2",
     lambda a, b: 2 ** (a - b) * (3 - a) / b**2, [0.8, 1.7]),
    ("(a * b).cos() * (a + b).relu() - a ** b",
     lambda a, b: math.cos(a * b) * max(a + b, 0) - a**b, [1.1, 0.6]),
]


@pytest.mark.parametrize(("expr", "f", "at"), COMPOSITES, ids=[c[0] for c in COMPOSITES])
def test_composites_match_central_differences(expr: str, f: Callable[..., float],
                                              at: list[float]) -> None:
    grads = grad_of(f"a = {at[0]!r}\nb = {at[1]!r}\ny = {expr}\n")
    for i, name in enumerate("ab"):
        assert grads[name] == pytest.approx(central_difference(f, at, i), rel=1e-4, abs=1e-5)


def test_broadcast_gradients_sum_back_to_each_shape() -> None:
    """§11: y = (x * w + b).sum() with x [2,3], b [3], w 0-d."""
    grads = grad_of("x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)\n"
                    "b = torch.tensor([10.0, 20.0, 30.0], requires_grad=True)\nw = 2.0\n"
                    "y = (x * w + b).sum()\n")
    assert grads == {"x": [[2.0] * 3] * 2, "b": [2.0] * 3, "w": 21.0}


def test_mean_and_gradient_argument() -> None:
    """§11: v.mean() over 4 elements gives 0.25 each; gradient=[1,0,0,1] on v*2 gives
    [2,0,0,2]."""
    assert grad_of("v = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)\n"
                   "y = v.mean()\n") == {"v": [0.25] * 4}
    assert grad_of("v = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)\ny = v * 2\n"
                   "y.backward(gradient=torch.tensor([1.0, 0.0, 0.0, 1.0]))\n") == {
        "v": [2.0, 0.0, 0.0, 2.0]}


DOMAIN_EDGES = {"a = 0.0\ny = a.sqrt()\n": {"a": "inf"},
                "a = 0.0\ny = a.log()\n": {"a": "inf"},
                "a = 0.0\ny = 1 / a\n": {"a": "-inf"},
                "a = 0.0\ny = a.abs()\n": {"a": 0.0},
                "a = 0.0\ny = a.relu()\n": {"a": 0.0},
                "a = 0.0\ny = a ** 0\n": {"a": 0.0},
                "a = 0.0\ny = a ** a\n": {"a": 0.0},
                "a = -1.0\ny = a.log()\n": {"a": -1.0},
                # log(-1) is nan: b.grad = log(a) is nan, a.grad = b / a is not
                "a = -1.0\nb = 2.0\ny = a.log() * b\n": {"a": -2.0, "b": "nan"}}


@pytest.mark.parametrize(("source", "grads"), DOMAIN_EDGES.items())
def test_domain_edges_are_values_not_errors(source: str, grads: dict[str, Any]) -> None:
    """§5: at 0, sqrt gives grad inf, log inf, 1/a -inf; abs, relu, a**0 and a**a give 0;
    log(-1) gives nan. Nothing raises."""
    assert grad_of(source) == grads


def test_run_source_lets_no_float_warning_escape() -> None:
    """inf and nan are values, as in PyTorch: a run prints no numpy RuntimeWarning (under
    -W error such a warning would become an internal error)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for source, grads in DOMAIN_EDGES.items():
            assert grad_of(source) == grads


# -- names, edges and saved values (reference §1) -----------------------------------------

class Run:
    """Leaves and no-grad tensors of one engine run, built through the engine's API."""

    def __init__(self) -> None:
        self.ctx = AutogradContext()

    def leaf(self, value: Any) -> Tensor:
        return tensor(value, self.ctx, requires_grad=True)

    def const(self, value: Any) -> Tensor:
        return tensor(value, self.ctx)


def node_of(t: Any) -> Node:
    assert isinstance(t, Tensor) and t.grad_fn is not None
    return t.grad_fn


def edges(node: Node) -> list[Node | None]:
    functions_ = node.next_functions()
    assert all(nr == 0 for _, nr in functions_)
    return [fn for fn, _ in functions_]


def saved(node: Node) -> dict[str, Any]:
    return {name: var.value for name, var in node.saved.items()}


def test_add_sub_edges_put_the_number_in_slot_one() -> None:
    r = Run()
    a, b, t = r.leaf(2.0), r.leaf(3.0), r.const(4.0)
    acc_a, acc_b = a.grad_accumulator(), b.grad_accumulator()
    for y, want in [(a + b, [acc_a, acc_b]), (a + 2, [acc_a, None]), (2 + a, [acc_a, None]),
                    (a + t, [acc_a, None]), (t + a, [None, acc_a])]:
        node = node_of(y)
        assert node.name == "AddBackward0"
        assert edges(node) == want
        assert saved(node) == {"alpha": 1}
    for y, want in [(a - b, [acc_a, acc_b]), (a - 2, [acc_a, None]), (t - a, [None, acc_a])]:
        assert node_of(y).name == "SubBackward0"
        assert edges(node_of(y)) == want


def test_number_minus_tensor_is_rsub_with_one_edge() -> None:
    r = Run()
    a = r.leaf(2.0)
    node = node_of(2 - a)
    assert node.name == "RsubBackward1"
    assert edges(node) == [a.grad_accumulator()]
    assert saved(node) == {"alpha": 1}


def test_mul_saves_only_what_the_other_side_needs() -> None:
    r = Run()
    a, b, t = r.leaf(2.0), r.leaf(3.0), r.const(4.0)
    both = node_of(a * b)
    assert both.name == "MulBackward0"
    assert edges(both) == [a.grad_accumulator(), b.grad_accumulator()]
    assert saved(both)["self"] is a and saved(both)["other"] is b   # the same objects
    for y in (a * 2, 2 * a):
        node = node_of(y)
        assert edges(node) == [a.grad_accumulator(), None]
        assert set(saved(node)) == {"other"}                # self=None: not saved
        other = saved(node)["other"]
        assert other.dtype is dtypes.int64 and other.tolist() == 2
    assert saved(node_of(a * 2.5))["other"].dtype is dtypes.float64
    assert set(saved(node_of(a * t))) == {"other"} and saved(node_of(a * t))["other"] is t
    assert set(saved(node_of(t * a))) == {"self"} and saved(node_of(t * a))["self"] is t
    assert edges(node_of(t * a)) == [None, a.grad_accumulator()]


def test_div_edges_and_saved_values() -> None:
    r = Run()
    a, b, t = r.leaf(2.0), r.leaf(3.0), r.const(4.0)
    assert edges(node_of(a / b)) == [a.grad_accumulator(), b.grad_accumulator()]
    assert set(saved(node_of(a / b))) == {"self", "other"}
    assert edges(node_of(a / 2)) == [a.grad_accumulator(), None]
    assert set(saved(node_of(a / 2))) == {"other"}
    assert edges(node_of(t / a)) == [None, a.grad_accumulator()]
    assert all(node_of(y).name == "DivBackward0" for y in (a / b, a / 2, t / a))


def test_number_over_tensor_is_reciprocal_then_mul() -> None:
    r = Run()
    a = r.leaf(2.0)
    mul = node_of(2 / a)
    assert mul.name == "MulBackward0"
    recip, none = edges(mul)
    assert none is None and recip is not None
    assert recip.name == "ReciprocalBackward0"
    assert mul.sequence_nr == recip.sequence_nr + 1
    assert edges(recip) == [a.grad_accumulator()]
    assert set(saved(recip)) == {"result"}
    assert set(saved(mul)) == {"other"} and saved(mul)["other"].tolist() == 2


def test_pow_nodes() -> None:
    r = Run()
    a, b, t = r.leaf(2.0), r.leaf(3.0), r.const(4.0)
    acc_a, acc_b = a.grad_accumulator(), b.grad_accumulator()
    for exponent in (2, 2.0, 0.5):
        node = node_of(a**exponent)
        assert node.name == "PowBackward0"
        assert edges(node) == [acc_a]
        assert saved(node)["self"] is a
        assert saved(node)["exponent"] == exponent and not node.saved["exponent"].is_tensor
    for y, want in [(a**b, [acc_a, acc_b]), (a**t, [acc_a, None]), (t**a, [None, acc_a]),
                    (a**a, [acc_a, acc_a])]:
        node = node_of(y)
        assert node.name == "PowBackward1"
        assert edges(node) == want
        assert set(saved(node)) == {"self", "exponent", "result"}
    node = node_of(2**a)
    assert node.name == "PowBackward2"
    assert edges(node) == [acc_a]
    assert saved(node)["self"] == 2 and not node.saved["self"].is_tensor
    assert saved(node)["exponent"] is a and "result" in saved(node)


@pytest.mark.parametrize(("name", "saves"), [
    ("tanh", "result"), ("exp", "result"), ("sigmoid", "result"), ("relu", "result"),
    ("sqrt", "result"), ("log", "self"), ("sin", "self"), ("cos", "self"), ("abs", "self"),
])
def test_function_nodes_save_result_or_self(name: str, saves: str) -> None:
    r = Run()
    a = r.leaf(0.5)
    y = getattr(functions, name)(a)
    node = node_of(y)
    assert node.name == f"{name.capitalize()}Backward0"
    assert edges(node) == [a.grad_accumulator()]
    assert set(saved(node)) == {saves}
    if saves == "self":
        assert saved(node)["self"] is a
    else:
        assert saved(node)["result"].tolist() == y.tolist()


def test_neg_and_reductions() -> None:
    r = Run()
    a = r.leaf(2.0)
    v = r.leaf([1.0, 2.0])
    assert node_of(-a).name == "NegBackward0" and saved(node_of(-a)) == {}
    assert edges(node_of(-a)) == [a.grad_accumulator()]
    assert node_of(functions.sum(v)).name == "SumBackward0"
    assert saved(node_of(functions.sum(v))) == {"self_sym_sizes": (2,)}
    assert saved(node_of(functions.sum(a))) == {"self_sym_sizes": ()}
    mean = node_of(functions.mean(v))
    assert mean.name == "MeanBackward0"
    assert saved(mean) == {"self_sym_sizes": (2,), "self_sym_numel": 2}


def test_sequence_numbers_count_nodes_only() -> None:
    """§3: numbers start at 0 in a run, one per node; no-grad ops and leaves take none;
    AccumulateGrad is UINT64_MAX and one shared object per leaf."""
    r = Run()
    a, t = r.leaf(2.0), r.const(3.0)
    first = a * 2
    plain = t * 5 + t                      # no node, no number
    assert plain.grad_fn is None and plain.is_leaf and not plain.requires_grad
    second = first + t
    third = functions.tanh(second)
    assert [node_of(x).sequence_nr for x in (first, second, third)] == [0, 1, 2]
    acc = a.grad_accumulator()
    assert acc.node_name == "torch::autograd::AccumulateGrad" and acc.sequence_nr == UINT64_MAX
    assert a.grad_accumulator() is acc
    assert edges(node_of(a * a)) == [acc, acc]
    assert a.grad_fn is None and a.is_leaf


def test_two_runs_number_independently() -> None:
    first, second = Run(), Run()
    x = first.leaf(1.0) * 2
    x = x * 2
    y = second.leaf(1.0) * 3
    assert node_of(x).sequence_nr == 1 and node_of(y).sequence_nr == 0


# -- freeing saved values -----------------------------------------------------------------

def graph_nodes(root: Node) -> dict[int, Node]:
    nodes: dict[int, Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.id in nodes:
            continue
        nodes[node.id] = node
        stack.extend(e.function for e in node.next_edges if e is not None)
    return nodes


def tensors_saved(node: Node) -> list[str]:
    return [name for name, var in node.saved.items() if var.is_tensor]


def test_saved_tensors_are_freed_right_after_each_node_runs() -> None:
    r = Run()
    a, b = r.leaf(0.5), r.leaf(-1.5)
    loss = (functions.tanh(a * b) * a) ** 2
    nodes = graph_nodes(node_of(loss))
    popped: list[Node] = []
    for event in backward(loss):
        if not isinstance(event, NodePopped):
            continue
        node = nodes[event.node]
        popped.append(node)
        # the pop's event comes after the node ran: it and every node before it are freed
        # (what §1 saw from the next node's pre-hook); nothing that has not run yet is
        for other in nodes.values():
            freed = [other.saved[n].released for n in tensors_saved(other)]
            assert all(freed) if other in popped else not any(freed), other
        assert sorted(event.released) == sorted(tensors_saved(node))
    assert [n.type_name for n in popped] == ["PowBackward0", "MulBackward0", "TanhBackward0",
                                        "MulBackward0", "AccumulateGrad", "AccumulateGrad"]
    for node in popped:
        for name, var in node.saved.items():
            if var.is_tensor:
                with pytest.raises(TorchError) as error:
                    var.unpack()
                assert str(error.value) == FREED_GRAPH
            else:                               # numbers and sizes stay readable
                assert var.unpack() == saved(node)[name]
    assert popped[0].saved["exponent"].unpack() == 2


def test_a_saved_output_does_not_point_back_at_its_node() -> None:
    """tanh saves its own output without that output's grad_fn (saved_variable.cpp does
    the same), so a graph that backward never reaches is freed by reference counting, not
    left to the cycle collector; unpacking gives the grad_fn back."""
    r = Run()
    a = r.leaf(0.5)
    y = functions.tanh(a * 2.0)
    node = node_of(y)
    assert saved(node)["result"].grad_fn is None
    assert node.saved_value("result").grad_fn is node
    assert float(node.saved_value("result").data) == float(y.data)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        unreached = functions.sigmoid(functions.tanh(a * 3.0)) * 2.0
        del unreached
        gc.collect()
        assert not [o for o in gc.garbage if isinstance(o, Node)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_retain_graph_frees_nothing() -> None:
    r = Run()
    a = r.leaf(0.5)
    loss = functions.exp(a * a)
    released = [e.released for e in backward(loss, retain_graph=True)
                if isinstance(e, NodePopped)]
    assert released == [[], [], []]
    assert all(not v.released for n in graph_nodes(node_of(loss)).values()
               for v in n.saved.values())


def test_trace_steps_say_what_was_freed() -> None:
    trace = run_source("a = 0.5\nb = 2.0\ny = (a * b).exp()\n")
    assert [(s["name"], s["released"]) for s in trace.passes[0].steps] == [
        ("ExpBackward0", ["result"]), ("MulBackward0", ["other", "self"]),   # saving order
        ("AccumulateGrad", []), ("AccumulateGrad", [])]


SECOND_BACKWARD = [
    # §2: program, the failing second pass, grads after
    ("a = 2.0\nb = 3.0\nc = 1.0\ny = a * b + c\ny.backward()\ny.backward()\n",
     [("AddBackward0", 1), ("AccumulateGrad", UINT64_MAX), ("MulBackward0", 0)],
     {"a": 3.0, "b": 2.0, "c": 2.0}),
    ("a = 2.0\nb = 3.0\nc = 4.0\nd = 5.0\ny = a * b + c * d\ny.backward()\ny.backward()\n",
     [("AddBackward0", 2), ("MulBackward0", 1)], {"a": 3.0, "b": 2.0, "c": 5.0, "d": 4.0}),
    ("a = 0.5\ny = (a + 1).tanh() + a\ny.backward()\ny.backward()\n",
     [("AddBackward0", 2), ("TanhBackward0", 1)], None),
]


@pytest.mark.parametrize(("source", "second", "grads"), SECOND_BACKWARD,
                         ids=["a*b+c", "a*b+c*d", "tanh+a"])
def test_second_backward_fails_at_the_first_freed_node(
        source: str, second: list[tuple[str, int]], grads: dict[str, float] | None) -> None:
    trace = run_source(source)
    assert trace.error is not None
    assert (trace.error.type, trace.error.message) == ("RuntimeError", FREED_GRAPH)
    assert trace.error.line == source.count("\n")      # the second backward's line
    assert len(trace.passes) == 2
    assert [(s["name"], s["seq"]) for s in trace.passes[1].steps] == second
    last = trace.passes[1].steps[-1]
    assert last["error"] is not None and last["error"].message == FREED_GRAPH
    if grads is not None:
        assert trace.grads == grads
    else:          # unchanged: Acc(a) had received 1 of its 2 inputs
        first = run_source(source.rsplit("y.backward()\n", 1)[0])
        assert trace.grads == first.grads


def test_graphs_without_saved_tensors_run_again_and_accumulate() -> None:
    """§2: y = a + b three times takes a.grad 1 -> 2 -> 3."""
    source = "a = 2.0\nb = 5.0\ny = a + b\n" + "y.backward()\n" * 3
    trace = run_source(source)
    assert trace.error is None and len(trace.passes) == 3
    assert trace.grads == {"a": 3.0, "b": 3.0}


# -- accumulation and create_graph (§3, §6) -----------------------------------------------

def test_accumulation_adds_in_place_into_the_same_tensor() -> None:
    r = Run()
    a = r.leaf(2.0)
    y = a * a
    list(backward(y, retain_graph=True))
    first = a.grad
    assert first is not None and first.tolist() == 4.0
    list(backward(y))
    assert a.grad is first and a.grad.tolist() == 8.0
    list(backward(a * 3))
    assert a.grad is first and a.grad.tolist() == 11.0


def test_grad_none_makes_the_next_write_a_first_write() -> None:
    trace = run_source("a = 2.0\ny = a * a\ny.backward(retain_graph=True)\na.grad = None\n"
                       "y.backward()\n")
    assert trace.grads == {"a": 4.0}


def test_create_graph_records_nodes_and_numbers_as_pytorch() -> None:
    """§3: after y=a*a (Mul=0), y.backward(create_graph=True) makes Mul=1, Mul=2, Add=3
    and CopyBackwards=4; the next z=a*3 gets 5."""
    r = Run()
    a = r.leaf(1.5)
    y = a * a
    list(backward(y, create_graph=True))
    grad = a.grad
    assert grad is not None
    copy = node_of(grad)
    assert copy.node_name == "torch::autograd::CopyBackwards" and copy.sequence_nr == 4
    z = a * 3
    assert node_of(z).sequence_nr == 5
    trace = run_source("a = 1.5\ny = a * a\ny.backward(create_graph=True)\nz = a * 3\n"
                       "z.backward()\n")
    assert [[(s["name"], s["seq"]) for s in p.steps] for p in trace.passes] == [
        [("MulBackward0", 0), ("AccumulateGrad", UINT64_MAX)],
        [("MulBackward0", 5), ("AccumulateGrad", UINT64_MAX)]]
    assert trace.grads == {"a": 6.0}


def test_create_graph_keeps_the_graph() -> None:
    """§6: retain_graph defaults to create_graph, so a second backward works."""
    trace = run_source("a = 1.5\ny = a * a\ny.backward(create_graph=True)\ny.backward()\n")
    assert trace.error is None and trace.grads == {"a": 6.0}
