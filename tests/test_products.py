"""A matrix product's signed zeros (engine/functions/linalg.py `product_values`, Note
[Signs of zero products]): MKL starts each sum from +0.0, so a zero entry is +0.0, except
in an outer product (inner size 1, both outer sizes above 1), whose entries are their one
product, sign and all, and a float32 mv of depth 1, whose fused multiply-add rounds the
exact product once (an underflow keeps its sign). Checked against the definition, and
against live torch if present."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from engine.functions.linalg import product_values

VALUES = [0.0, -0.0, 1.0, -2.0, 0.5, np.inf, -np.inf, np.nan, 1e-30, -1e-30]
# (Products that underflow, 1e-30 * 1e-30, round to a signed zero inside MKL's fused
# multiply-adds; their signs depend on the kernel and are compared with live torch below.)


def by_definition(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each entry from its own products: a sum from +0.0, or the one product of an outer
    product."""
    columns = b if b.ndim == 2 else b[:, None]
    outer = b.ndim == 2 and a.shape[1] == 1 and a.shape[0] > 1 and b.shape[1] > 1
    out = np.empty((a.shape[0], columns.shape[1]), dtype=a.dtype)
    for i in range(a.shape[0]):
        for j in range(columns.shape[1]):
            products = a[i] * columns[:, j]
            if outer:
                out[i, j] = products[0]
            elif b.ndim == 1 and a.shape[1] == 1 and a.dtype == np.float32:
                out[i, j] = np.float64(a[i, 0]) * np.float64(b[0]) + 0.0   # sgemv's fma
            else:
                out[i, j] = (a[i:i + 1] @ columns[:, j:j + 1])[0, 0] + 0
    return out.reshape(a.shape[0]) if b.ndim == 1 else out


def random_operands(rng: np.random.Generator, trial: int,
                    dtype: type) -> tuple[np.ndarray, np.ndarray]:
    m, k, n = (int(v) for v in rng.integers(1, 6, 3))
    pool = VALUES[:8] if trial % 2 else VALUES[:5]   # half with infinities and nan
    a: np.ndarray = rng.choice(pool, size=(m, k)).astype(dtype)
    b: np.ndarray = rng.choice(pool, size=(k, n) if trial % 3 else (k,)).astype(dtype)
    return a, b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_zero_entries_are_positive_but_an_outer_products_keep_their_sign(dtype: type) -> None:
    rng = np.random.default_rng(7)
    for trial in range(400):
        a, b = random_operands(rng, trial, dtype)
        with np.errstate(all="ignore"):
            got, want = product_values(a, b), by_definition(a, b)
        assert got.dtype == dtype and got.shape == want.shape
        assert np.array_equal(got, want, equal_nan=True), (a, b)
        signed = ~np.isnan(want)                 # (a nan's sign bit is BLAS's own affair)
        assert np.array_equal(np.signbit(got[signed]), np.signbit(want[signed])), (a, b)


def test_a_dead_unit_zeroes_its_weight_gradient_as_positive_zeros() -> None:
    """relu's gradient zeroes whole columns; x.T @ that column's -0.0s is +0.0 in MKL."""
    x = np.array([[1.0, -2.0], [0.5, 3.0]], dtype=np.float32)
    grad = np.array([[-0.0, 1.0], [-0.0, -1.0]], dtype=np.float32)
    out = product_values(np.ascontiguousarray(x.T), grad)
    assert np.signbit(out[:, 0]).tolist() == [False, False]
    outer = product_values(np.array([[1.0], [-2.0]], dtype=np.float32),
                           np.array([[-0.0, 1.0]], dtype=np.float32))
    assert np.signbit(outer[:, 0]).tolist() == [True, False]


def test_the_signs_are_torchs() -> None:
    torch = pytest.importorskip("torch", reason="live torch (the test extra) compares signs")
    rng = np.random.default_rng(11)
    for trial in range(300):
        a, b = random_operands(rng, trial * 2, np.float32)      # finite values only
        want = (torch.from_numpy(a) @ torch.from_numpy(b)).numpy()
        got = product_values(a, b)
        assert np.array_equal(np.signbit(got), np.signbit(want)), (a, b)


def test_underflowing_products_have_torchs_signs(torch_mkl: Any) -> None:
    """1e-30 * -1e-30 is -0.0 once rounded: the fused multiply-adds keep that sign where
    MKL's kernels use them (mv of depth 1) and lose it where they add to +0.0."""
    torch = torch_mkl
    finite = [v for v in VALUES if np.isfinite(v)]
    rng = np.random.default_rng(12)
    for _ in range(400):
        m, k, n = (int(v) for v in rng.integers(1, 6, 3))
        m += m == 1 and rng.random() < 0.8     # one row times a matrix (mostly skipped below)
        a = rng.choice(finite, size=(m, k)).astype(np.float32)
        b = rng.choice(finite, size=(k, n) if rng.random() < 0.5 else (k,)).astype(np.float32)
        want = (torch.from_numpy(a) @ torch.from_numpy(b)).numpy()
        got = product_values(a, b)
        assert np.array_equal(got, want), (a, b)
        if m == 1 and b.ndim == 2 and n > 1:
            continue       # sgemv's kernel for one row is not reproduced (blas.py's Note)
        assert np.array_equal(np.signbit(got), np.signbit(want)), (a, b)
