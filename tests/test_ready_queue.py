"""The engine's order: the ready queue's pops, and whole backward passes from the reference.

Expected values come from ../shared/reference/pytorch-autograd.md §4 (recorded from
PyTorch 2.13 in a fresh process), never from the engine: the libstdc++ tie order, the
largest sequence number first, the examples table #1-#7 and the InputBuffer's float32
summation order.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.trace import run_source
from engine import UINT64_MAX
from engine.ready_queue import ReadyQueue
from tests.matching import grads_equal

MAX = UINT64_MAX


# -- the reference's libstdc++-faithful simulator (§4), copied as the oracle ---------------

def _up(h: list[tuple[int, str]], hole: int, top: int, v: tuple[int, str]) -> None:
    p = (hole - 1) // 2
    while hole > top and h[p][0] < v[0]:
        h[hole] = h[p]
        hole = p
        p = (hole - 1) // 2
    h[hole] = v


def ref_push(h: list[tuple[int, str]], v: tuple[int, str]) -> None:
    h.append(v)
    _up(h, len(h) - 1, 0, v)


def ref_pop(h: list[tuple[int, str]]) -> tuple[int, str]:
    top = h[0]
    if len(h) > 1:
        n = len(h) - 1
        v = h[n]
        h[n] = h[0]
        hole = c = 0
        while c < (n - 1) // 2:
            c = 2 * (c + 1)
            if h[c][0] < h[c - 1][0]:
                c -= 1
            h[hole] = h[c]
            hole = c
        if n % 2 == 0 and c == (n - 2) // 2:
            c = 2 * (c + 1)
            h[hole] = h[c - 1]
            hole = c - 1
        _up(h, hole, 0, v)
    h.pop()
    return top


def pops(queue: ReadyQueue[str]) -> list[str]:
    return [queue.pop()[1] for _ in range(len(queue))]


@pytest.mark.parametrize(("names", "order"), [
    ("ab", "ab"),
    ("abc", "abc"),
    ("abcd", "acbd"),        # torch.stack([a, b, c, d]).sum(): Acc a, c, b, d
    ("abcde", "acebd"),      # with 5 leaves: a, c, e, b, d
])
def test_equal_keys_pop_in_libstdcxx_heap_order(names: str, order: str) -> None:
    queue: ReadyQueue[str] = ReadyQueue()
    for name in names:
        queue.push(MAX, name)
    assert queue.in_pop_order() == list(order)
    assert pops(queue) == list(order)


def test_largest_sequence_number_pops_first() -> None:
    queue: ReadyQueue[str] = ReadyQueue()
    for seq in (3, 7, 0, 5, 1):
        queue.push(seq, f"n{seq}")
    assert pops(queue) == ["n7", "n5", "n3", "n1", "n0"]


def test_accumulate_grad_pops_before_any_ready_node() -> None:
    queue: ReadyQueue[str] = ReadyQueue()
    queue.push(9, "Mul9")
    queue.push(MAX, "Acc(a)")
    queue.push(12, "Add12")
    queue.push(MAX, "Acc(b)")
    assert queue.in_pop_order() == ["Acc(a)", "Acc(b)", "Add12", "Mul9"]
    assert pops(queue) == ["Acc(a)", "Acc(b)", "Add12", "Mul9"]


def test_two_accumulators_pushed_by_one_node_pop_left_operand_first() -> None:
    """§4: at most two AccumulateGrads are ready together, pushed by one node, and the
    lower output index pops first, whatever else waits in the heap."""
    for waiting in range(6):
        queue: ReadyQueue[str] = ReadyQueue()
        for seq in range(waiting):
            queue.push(seq, f"n{seq}")
        queue.push(MAX, "left")
        queue.push(MAX, "right")
        assert [queue.pop()[1], queue.pop()[1]] == ["left", "right"]


# Operations on the queue as the engine does them: distinct ordinary numbers, any number of
# UINT64_MAX ties, pops in between.
OPERATIONS = st.lists(st.one_of(
    st.just("pop"), st.just("acc"), st.integers(0, 40)), max_size=60)


@settings(max_examples=200, deadline=None)
@given(OPERATIONS)
def test_matches_the_reference_simulator(operations: list[Any]) -> None:
    queue: ReadyQueue[str] = ReadyQueue()
    heap: list[tuple[int, str]] = []
    used: set[int] = set()
    for i, op in enumerate(operations):
        if op == "pop":
            if heap:
                assert queue.pop() == ref_pop(heap)
            continue
        seq = MAX if op == "acc" else op
        if seq in used:
            continue
        if seq != MAX:
            used.add(seq)
        queue.push(seq, f"t{i}")
        ref_push(heap, (seq, f"t{i}"))
        oracle = list(heap)
        assert queue.in_pop_order() == [ref_pop(oracle)[1] for _ in range(len(heap))]
    while heap:
        assert queue.pop() == ref_pop(heap)
    assert len(queue) == 0


# -- whole passes: the reference's examples table (§4) ----------------------------------

Step = tuple[str, int | None, str | None]      # name, seq (None for AccumulateGrad), leaf


def acc(leaf: str) -> Step:
    return ("AccumulateGrad", None, leaf)


def steps_of(source: str) -> tuple[list[list[Step]], dict[str, Any]]:
    trace = run_source(source)
    assert trace.error is None, trace.error
    passes = [[(s["name"], None if s["seq"] == MAX else s["seq"], s["leaf"]) for s in p.steps]
              for p in trace.passes]
    for p in trace.passes:
        for s in p.steps:
            assert (s["name"] == "AccumulateGrad") == (s["seq"] == MAX)
    return passes, trace.grads


EXAMPLES: list[tuple[str, str, list[Step], dict[str, Any]]] = [
    ("1-worked-example", "w = 3.0\nb = 1.0\nx = torch.tensor(2.0)\ny = w * x + b\nloss = y * y\n",
     [("MulBackward0", 2, None), ("AddBackward0", 1, None), acc("b"),
      ("MulBackward0", 0, None), acc("w")],
     {"w": 28.0, "b": 14.0}),
    ("2-product-chain", "a = 2.0\nb = 3.0\nc = 4.0\nd = 5.0\nL = a * b * c * d\n",
     [("MulBackward0", 2, None), acc("d"), ("MulBackward0", 1, None), acc("c"),
      ("MulBackward0", 0, None), acc("a"), acc("b")],
     {"a": 60.0, "b": 40.0, "c": 30.0, "d": 24.0}),
    ("3-accumulators-overtake",
     "a = 2.0\nb = 3.0\nc = 4.0\nd = 5.0\ne = 6.0\nL = a * b + c * d * e + a\n",
     [("AddBackward0", 4, None), ("AddBackward0", 3, None), ("MulBackward0", 2, None),
      acc("e"), ("MulBackward0", 1, None), acc("c"), acc("d"), ("MulBackward0", 0, None),
      acc("a"), acc("b")],
     {"a": 4.0, "b": 2.0, "c": 30.0, "d": 24.0, "e": 20.0}),
    ("4-tanh-neuron",
     "x1 = 2.0\nx2 = 0.0\nw1 = -3.0\nw2 = 1.0\nb = 6.8813735870195432\n"
     "n = x1 * w1 + x2 * w2 + b\no = torch.tanh(n)\n",
     [("TanhBackward0", 4, None), ("AddBackward0", 3, None), acc("b"),
      ("AddBackward0", 2, None), ("MulBackward0", 1, None), acc("x2"), acc("w2"),
      ("MulBackward0", 0, None), acc("x1"), acc("w1")],
     {"x1": -1.5000003576278687, "x2": 0.5000001192092896, "w1": 1.000000238418579,
      "w2": 0.0, "b": 0.5000001192092896}),
    ("5-reciprocal", "a = 3.0\nb = 2.0\nL = (a + b) * (a - b) + 2 / a\n",
     [("AddBackward0", 5, None), ("MulBackward0", 4, None), ("ReciprocalBackward0", 3, None),
      ("MulBackward0", 2, None), ("SubBackward0", 1, None), ("AddBackward0", 0, None),
      acc("a"), acc("b")],
     {"a": 5.777777671813965, "b": -4.0}),
    ("6-mean-of-vector",
     "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\nw = 2.0\nL = (x * w - 1).mean()\n",
     [("MeanBackward0", 2, None), ("SubBackward0", 1, None), ("MulBackward0", 0, None),
      acc("x"), acc("w")],
     {"x": [0.6666666865348816] * 3, "w": 2.0}),
    ("7-leaf-is-the-root", "a = 3.0\nL = a\n", [acc("a")], {"a": 1.0}),
]


@pytest.mark.parametrize(("source", "steps", "grads"), [e[1:] for e in EXAMPLES],
                         ids=[e[0] for e in EXAMPLES])
def test_reference_examples(source: str, steps: list[Step], grads: dict[str, Any]) -> None:
    got_steps, got_grads = steps_of(source)
    assert got_steps == [steps]
    assert set(got_grads) == set(grads)
    assert all(grads_equal(got_grads[k], grads[k]) for k in grads), got_grads
    if "tanh" not in source:
        # + - * / and sums are IEEE float32 in both: equal to the last bit. tanh's kernel
        # is PyTorch's own (§10), so there the contract's tolerance is the promise.
        assert got_grads == grads


def test_input_buffer_sums_in_arrival_order_in_float32() -> None:
    """Acc(a) receives 1e8, then -1e8, then 1: (1e8 + -1e8) + 1 = 1 in float32, where
    summing in program order would give 0."""
    got_steps, got_grads = steps_of("a = 1.0\nL = a * 1.0 + a * -1e8 + a * 1e8\n")
    assert got_steps == [[("AddBackward0", 4, None), ("MulBackward0", 3, None),
                          ("AddBackward0", 2, None), ("MulBackward0", 1, None),
                          ("MulBackward0", 0, None), acc("a")]]
    assert got_grads == {"a": 1.0}


def test_dependencies_count_every_edge() -> None:
    """compute_dependencies adds 1 per edge: `a * a` gives Acc(a) two, and it runs once."""
    trace = run_source("a = 3.0\ny = a * a\n")
    (p,) = trace.passes
    graph = p.graph
    assert graph is not None
    acc_id = next(n["id"] for n in graph.nodes if n["name"] == "AccumulateGrad")
    assert p.dependencies[str(acc_id)] == 2
    assert [s["name"] for s in p.steps] == ["MulBackward0", "AccumulateGrad"]
    assert trace.grads == {"a": 6.0}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=50), max_size=30), st.integers(0, 50))
def test_insertion_point_is_bisect_right(keys: list[int], key: int) -> None:
    from bisect import bisect_right

    from engine.ready_queue import _insertion_point

    keys.sort()
    assert _insertion_point(keys, key) == bisect_right(keys, key)
