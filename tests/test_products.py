"""A matrix product's signed zeros (engine/functions/linalg.py `product_values`): an entry
is -0.0 exactly when every one of its products is -0.0, as BLAS's sums that start from
their first product give it; every other entry is numpy's."""

from __future__ import annotations

import numpy as np
import pytest

from engine.functions.linalg import product_values

VALUES = [0.0, -0.0, 1.0, -2.0, 0.5, np.inf, -np.inf, np.nan, 1e-30, -1e-30]


def by_definition(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each entry from its own products: -0.0 if all are -0.0, else numpy's sum."""
    columns = b if b.ndim == 2 else b[:, None]
    out = np.empty((a.shape[0], columns.shape[1]), dtype=a.dtype)
    for i in range(a.shape[0]):
        for j in range(columns.shape[1]):
            products = a[i] * columns[:, j]
            all_negative_zeros = all(p == 0 and np.signbit(p) for p in products)
            out[i, j] = -0.0 if all_negative_zeros else (a[i:i + 1] @ columns[:, j:j + 1])[0, 0]
    return out.reshape(a.shape[0]) if b.ndim == 1 else out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_entry_is_negative_zero_when_all_its_products_are(dtype: type) -> None:
    rng = np.random.default_rng(7)
    for trial in range(400):
        m, k, n = (int(v) for v in rng.integers(1, 6, 3))
        pool = VALUES if trial % 2 else VALUES[:5]       # half with infinities, nan, underflow
        a = rng.choice(pool, size=(m, k)).astype(dtype)
        b = rng.choice(pool, size=(k, n) if trial % 3 else (k,)).astype(dtype)
        with np.errstate(all="ignore"):
            got, want = product_values(a, b), by_definition(a, b)
        assert got.dtype == dtype and got.shape == want.shape
        assert np.array_equal(got, want, equal_nan=True), (a, b)
        signed = ~np.isnan(want)                 # (a nan's sign bit is BLAS's own affair)
        assert np.array_equal(np.signbit(got[signed]), np.signbit(want[signed])), (a, b)


def test_a_dead_unit_zeroes_its_weight_gradient_with_pytorchs_signs() -> None:
    """relu's gradient zeroes whole columns; x.T @ that column's -0.0s is -0.0 where x > 0."""
    x = np.array([[1.0, -2.0], [0.5, 3.0]], dtype=np.float32)
    grad = np.array([[-0.0, 1.0], [-0.0, -1.0]], dtype=np.float32)
    out = product_values(np.ascontiguousarray(x.T), grad)
    assert np.signbit(out[:, 0]).tolist() == [True, False]   # 1*-0 + 0.5*-0; -2*-0 + 3*-0
