"""The compiled build's Adam step in C (engine/optim.py, Note [Adam in C]) gives numpy's
bits, step after step, for every option; the pure build has no C step and skips these."""

from __future__ import annotations

import numpy as np
import pytest

from engine import optim
from engine.context import AutogradContext
from engine.tensor import Tensor

pytestmark = pytest.mark.skipif(optim.NATIVE is None,
                                reason="this build has no C Adam step (the pure build)")

OPTIONS = [  # lr, beta1, beta2, eps, weight_decay, amsgrad, maximize
    (0.01, 0.9, 0.999, 1e-8, 0.0, False, False),
    (0.1, 0.9, 0.999, 1e-8, 0.01, True, False),
    (0.003, 0.3, 0.9, 1e-6, 0.0, False, True),        # 1 - beta1 >= 0.5: lerp's other form
    (1.0, 0.0, 0.5, 1e-3, 0.5, True, True),
]


def _param(values: np.ndarray, grad: np.ndarray) -> Tensor:
    ctx = AutogradContext()
    p = Tensor(values.copy(), ctx, requires_grad=True)
    p.grad = Tensor(grad.copy(), ctx)
    return p


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("shape", [(), (1,), (7,), (16, 32)])
def test_the_c_step_is_numpys_to_the_bit(options: tuple[float, float, float, float, float,
                                                        bool, bool],
                                         shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(shape))
    values = rng.standard_normal(shape).astype(np.float32)
    c, numpy = _param(values, values), _param(values, values)
    c_state, numpy_state = optim.AdamState(c.data), optim.AdamState(numpy.data)
    for _ in range(5):
        grad = (rng.standard_normal(shape) * rng.choice([1e-4, 1.0, 100.0])).astype(np.float32)
        assert c.grad is not None and numpy.grad is not None
        c.grad.data[...] = numpy.grad.data[...] = grad
        version = c.version_counter.version
        optim.adam_step(c, c_state, *options)
        optim.adam_step(numpy, numpy_state, *options, False)
        assert c.version_counter.version == version + 1
        assert c.data.tobytes() == numpy.data.tobytes()
        for name in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
            got, want = getattr(c_state, name), getattr(numpy_state, name)
            assert (got is None) == (want is None)
            assert got is None or got.tobytes() == want.tobytes(), name


def test_other_layouts_and_dtypes_take_numpys_way() -> None:
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    transposed = _param(values, values)
    transposed.data = values.T                                   # not C-contiguous
    state = optim.AdamState(transposed.data)
    assert transposed.grad is not None
    transposed.grad.data = values.T.copy()
    assert not optim._in_c(transposed, state)
    double = _param(values.astype(np.float64), values.astype(np.float64))
    assert not optim._in_c(double, optim.AdamState(double.data))
    plain = _param(values, values)
    assert optim._in_c(plain, optim.AdamState(plain.data))
