"""softmax and log_softmax over the last dim of float32, forward and backward, to live
torch's bits (engine/functions/softmax_kernel.py, Note [Vectorized softmax]): SLEEF's expf
and logf, sums in the lanes' order, the backward's fused multiply-add."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from engine.context import AutogradContext
from engine.functions.activation import log_softmax, softmax
from engine.functions.softmax_kernel import expf, lane_sum, logf
from engine.tensor import Tensor


@pytest.mark.parametrize("classes", [1, 2, 3, 4, 10, 15, 16, 17, 40, 100])
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
def test_rows_are_torchs_to_the_bit(torch_avx512: Any, classes: int, log: bool) -> None:
    torch = torch_avx512
    rng = np.random.default_rng(classes)
    ctx = AutogradContext()
    x = (rng.standard_normal((600, classes)) * rng.choice([0.5, 3.0, 20.0], (600, 1))
         ).astype(np.float32)
    g = rng.standard_normal((600, classes)).astype(np.float32)
    leaf = torch.tensor(x, requires_grad=True)
    want = (torch.log_softmax if log else torch.softmax)(leaf, -1)
    want.backward(torch.tensor(g))
    got = (log_softmax if log else softmax)(Tensor(x, ctx, requires_grad=True), 1)
    assert got.data.tobytes() == want.detach().numpy().tobytes()
    assert got.grad_fn is not None
    (grad,) = got.grad_fn.apply([Tensor(g, ctx)])
    assert grad is not None and grad.data.tobytes() == leaf.grad.numpy().tobytes()


def test_a_batch_of_rows_in_three_dims_too(torch_avx512: Any) -> None:
    torch = torch_avx512
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5, 7)).astype(np.float32)
    want = torch.log_softmax(torch.tensor(x), 2).numpy()
    got = log_softmax(Tensor(x, AutogradContext()), -1).data
    assert got.tobytes() == want.tobytes()


def test_sleef_functions_are_within_an_ulp_where_softmax_uses_them() -> None:
    """expf of d <= 0 (0 below -104), logf of sums from 1 up: within an ulp of exact."""
    x = np.linspace(-103.0, 0.0, 20001, dtype=np.float32)
    exact = np.exp(x.astype(np.float64))
    assert np.all(np.abs(expf(x) - exact) <= np.spacing(exact.astype(np.float32)))
    assert expf(np.array([-200.0, -np.inf], np.float32)).tolist() == [0.0, 0.0]
    y = np.linspace(1.0, 5000.0, 20001, dtype=np.float32)
    assert np.all(np.abs(logf(y) - np.log(y.astype(np.float64)))
                  <= np.spacing(np.log(y).astype(np.float32)))


def test_lane_sum_adds_as_reduce_all_does() -> None:
    """16 lanes, each every 16th element, the tail into the first lanes, then halves."""
    row = np.array([1e8, 1.0, -1e8, 1.0] * 9, dtype=np.float32)[None]   # 36 elements
    lanes = row[0, :16] + row[0, 16:32]
    lanes[:4] += row[0, 32:]
    for half in (8, 4, 2, 1):
        lanes = lanes[:half] + lanes[half:2 * half]
    assert lane_sum(row).tolist() == lanes.tolist()
