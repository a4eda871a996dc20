"""Note [Formulas as kernels] (engine/functions/power.py): outside grad mode PowBackward0
computes its formula on the values; it must give what the formula's own ops give, bit for
bit, in value and dtype."""

from __future__ import annotations

import numpy as np
import pytest

from engine.context import AutogradContext
from engine.functions import power
from engine.tensor import Tensor


@pytest.mark.parametrize("exponent", [2, 3, 0.5, -0.5, -1, -2, 1.5, 4, 1, 2.0, 7, -3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pow_backward_kernel_equals_its_formula(exponent: float, dtype: type) -> None:
    ctx = AutogradContext()
    rng = np.random.default_rng([int(abs(exponent) * 10), np.dtype(dtype).itemsize])
    for shape in [(), (5,), (3, 4)]:
        with np.errstate(all="ignore"):                # nan and inf are values here
            x = Tensor((rng.standard_normal(shape) * 3).astype(dtype), ctx,
                       requires_grad=True)
            y = power.pow_scalar(x, exponent)
            grad = Tensor(rng.standard_normal(shape).astype(dtype), ctx)
            node = y.grad_fn
            assert isinstance(node, power.PowBackward0)
            ctx.grad_mode = False                # as in a backward without create_graph
            assert power._kernel_suffices(grad, x, exponent)
            (fast,) = node.apply([grad])
            slow = power.mul(grad, power.mul_scalar(power.pow_scalar(x, exponent - 1),
                                                    exponent))
            ctx.grad_mode = True
        assert fast is not None and fast.dtype is slow.dtype
        assert np.array_equal(fast.data, slow.data, equal_nan=True), (exponent, shape)
