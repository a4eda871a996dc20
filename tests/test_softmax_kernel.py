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


# -- the C kernels of the compiled build (Note [The kernels in C]) ---------------------------

@pytest.fixture(scope="module")
def native() -> Any:
    from engine.functions.softmax_kernel import NATIVE

    if NATIVE is None:
        pytest.skip("this build has no C kernels (the pure build): the numpy ones run")
    return NATIVE


SPECIAL = [np.inf, -np.inf, np.nan, 1e30, -1e30, 100.0, 100.00001, 88.73, -104.0, -104.01,
           0.0, -0.0]


@pytest.mark.parametrize("seed", range(6))
def test_the_c_kernels_are_the_numpy_ones_to_the_bit(native: Any, seed: int) -> None:
    """Random rows of 1 to 70 classes at several scales, some with an infinity, a nan or a
    huge value: each C kernel gives the numpy kernel's bits."""
    from engine.functions import softmax_kernel as k

    rng = np.random.default_rng(seed)
    for trial in range(300):
        n, rows = int(rng.integers(1, 70)), int(rng.integers(1, 9))
        scale = float(rng.choice([0.1, 1.0, 5.0, 30.0, 100.0]))
        x = (rng.standard_normal((rows, n)) * scale).astype(np.float32)
        if trial % 5 == 0:
            x.flat[rng.integers(0, x.size)] = rng.choice(SPECIAL)
        g = rng.standard_normal((rows, n)).astype(np.float32)
        y, log_y = k.softmax_rows(x), k.log_softmax_rows(x)
        flat = (rng.standard_normal(40) * scale).astype(np.float32)
        sums = np.empty(rows, np.float32)
        native.lane_sums(x, sums, n)
        pairs = {
            "softmax": (k._rows(native.softmax, x), y),
            "log_softmax": (k._rows(native.log_softmax, x), log_y),
            "softmax backward": (k._rows(native.softmax_backward, g, y),
                                 k.softmax_backward_rows(g, y)),
            "log_softmax backward": (k._rows(native.log_softmax_backward, g, log_y),
                                     k.log_softmax_backward_rows(g, log_y)),
            "expf": (k._rows(native.expf, flat), k.expf(flat)),
            "logf": (k._rows(native.logf, np.abs(flat) + 1), k.logf(np.abs(flat) + 1)),
            "lane sums": (sums, k.lane_sum(x)),
        }
        for name, (c, numpy) in pairs.items():
            assert c.tobytes() == np.asarray(numpy, np.float32).tobytes(), (name, x, g)


def test_expf_at_its_edges_is_sleefs(native: Any) -> None:
    """0 below -104, inf above 100 (and for +inf, as SLEEF selects it), nan for nan."""
    from engine.functions import softmax_kernel as k

    edges = np.array(SPECIAL, np.float32)
    c, numpy = k._rows(native.expf, edges), k.expf(edges)
    assert c.tobytes() == numpy.tobytes()
    assert np.isposinf(c[[0, 3, 5, 6, 7]]).all() and np.isnan(c[2])
    assert c[[1, 4, 9]].tolist() == [0.0, 0.0, 0.0]


def test_the_c_kernels_refuse_what_is_not_float32_rows(native: Any) -> None:
    out = np.empty((2, 3), np.float32)
    with pytest.raises(TypeError):
        native.softmax(np.ones((2, 3)), out, 3)              # float64
    with pytest.raises(ValueError):
        native.softmax(np.ones((2, 3), np.float32), out, 4)  # not whole rows of 4
    with pytest.raises(TypeError):
        native.softmax(np.ones((2, 3), np.float32), out)      # no row length
