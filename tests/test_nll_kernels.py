"""The compiled build's nll_loss cascade in C (engine/functions/nll_sums.py, Note [The
cascade in C]) gives the Python cascade's bits; the pure build has no C and skips these."""

from __future__ import annotations

import numpy as np
import pytest

from engine import errors
from engine.context import AutogradContext
from engine.functions import nll_sums
from engine.tensor import Tensor

pytestmark = pytest.mark.skipif(nll_sums.NATIVE is None,
                                reason="this build has no C cascade (the pure build)")


def _bits(value: object) -> bytes:
    return np.asarray(value).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_c_cascade_is_the_pythons_to_the_bit(dtype: type) -> None:
    rng = np.random.default_rng(16)
    ctx = AutogradContext()
    for batch in (0, 1, 2, 8, 15, 16, 17, 31, 33, 256, 257, 4097, 70_000):
        for trial in range(4):
            classes = int(rng.integers(1, 7))
            rows = (rng.standard_normal((batch, classes)) * rng.choice([1.0, 1e6, 1e-30]))
            rows = rows.astype(dtype)
            if trial == 1 and batch:
                rows[rng.random(rows.shape) < 0.2] = -0.0
                rows.flat[0] = np.inf if batch % 2 else np.nan
            if trial == 3:
                rows = np.asfortranarray(rows)          # strided rows
            targets = rng.integers(0, classes, batch)
            if trial % 2:
                targets[rng.random(batch) < 0.3] = 1
            weight = (Tensor(rng.uniform(0.1, 3.0, classes).astype(dtype), ctx)
                      if trial >= 2 else None)
            with np.errstate(invalid="ignore", over="ignore"):
                got = nll_sums.cascaded_sums(rows, targets, weight, 1)
                want = nll_sums._cascade(rows, targets.tolist(), weight, 1)
            assert [_bits(v) for v in got] == [_bits(v) for v in want], (batch, trial)
            assert {type(v) for v in got} == {np.dtype(dtype).type}


def test_the_first_target_out_of_range_is_named() -> None:
    rows = np.zeros((5, 3), np.float32)
    for targets, named in (([0, 7, -1, 2, 1], 7), ([-100, -1, 9, 0, 0], -1)):
        with pytest.raises(errors.TorchError, match=f"Target {named} is out of bounds"):
            nll_sums.cascaded_sums(rows, np.array(targets), None, -100)
        with pytest.raises(errors.TorchError, match=f"Target {named} is out of bounds"):
            nll_sums._cascade(rows, targets, None, -100)


def test_misuse_is_an_error_not_a_crash() -> None:
    rows, out = np.zeros((2, 3), np.float32), np.zeros(2, np.float32)
    with pytest.raises(ValueError):
        nll_sums.NATIVE.cascade(rows, np.zeros(3, np.int64), None, -100, out)
    with pytest.raises(ValueError):
        nll_sums.NATIVE.cascade(rows, np.zeros(2, np.int32), None, -100, out)
    with pytest.raises(ValueError):
        nll_sums.NATIVE.cascade(rows, np.zeros(2, np.int64), np.ones(2, np.float32), -100, out)
    with pytest.raises(ValueError):
        nll_sums.NATIVE.cascade(rows.astype(np.float64), np.zeros(2, np.int64), None, -100, out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_c_scatter_is_the_fancy_assignment(dtype: type) -> None:
    """nll_loss_backward's gradient of a reduced loss: the share (times the class weight)
    at each kept sample's target, zeros elsewhere, to the bit."""
    rng = np.random.default_rng(17)
    ctx = AutogradContext()
    for batch in (1, 2, 8, 33, 500):
        for trial in range(4):
            classes = int(rng.integers(1, 9))
            targets = rng.integers(0, classes, batch)
            if trial % 2:
                targets[rng.random(batch) < 0.3] = -100
            share: np.ndarray = np.asarray(-rng.standard_normal() / batch, dtype)
            weight = (Tensor(rng.uniform(0.1, 3.0, classes).astype(dtype), ctx)
                      if trial >= 2 else None)
            got: np.ndarray = np.zeros((batch, classes), dtype)
            nll_sums.scattered(got, targets, share, weight, -100)
            want: np.ndarray = np.zeros((batch, classes), dtype)
            (kept,) = (targets != -100).nonzero()
            want[kept, targets[kept]] = (share if weight is None
                                         else weight.data[targets[kept]] * share)
            assert got.tobytes() == want.tobytes(), (batch, trial)
    with pytest.raises(errors.TorchError, match="Target 5 is out of bounds"):
        nll_sums.scattered(np.zeros((2, 3), np.float32), np.array([0, 5]),
                           np.float32(1.0), None, -100)
