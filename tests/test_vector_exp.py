"""sigmoid and silu of float32, forward and backward, to live torch's bits: their kernels'
exp is SLEEF's expf on whole blocks of 32 elements (engine/functions/libm.py `vector_exp`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from engine.context import AutogradContext
from engine.functions import libm
from engine.functions.activation import silu
from engine.functions.pointwise import sigmoid
from engine.functions.softmax_kernel import expf
from engine.tensor import Tensor


def test_whole_blocks_take_sleefs_expf_and_the_rest_std_exp() -> None:
    x = np.linspace(-20.0, 20.0, 70, dtype=np.float32)
    got = libm.vector_exp(x)
    assert got.tobytes() == np.concatenate([expf(x[:64]), libm.exp(x[64:])]).tobytes()
    assert libm.vector_exp(x[:31]).tobytes() == libm.exp(x[:31]).tobytes()
    assert libm.vector_exp(x.astype(np.float64)).dtype == np.float64
    grid = x.reshape(7, 10)                      # blocks run in memory order, across rows
    assert libm.vector_exp(grid).tobytes() == got.tobytes()


def test_sleefs_expf_overflows_and_underflows_as_exp_does() -> None:
    x = np.array([89.0, 88.5, -103.0, -110.0, 0.0] * 8, dtype=np.float32)
    with np.errstate(over="ignore"):
        got = libm.vector_exp(x)[:5]
    assert got[0] == np.inf and np.isfinite(got[1]) and got[3] == 0.0 and got[4] == 1.0


def test_sigmoid_of_minus_infinity_is_zero_in_the_vector_blocks_too() -> None:
    """SLEEF's expf gives inf above 100, +inf included; the lab's once gave nan for it, so
    sigmoid(-inf) was nan in a block of 32 and 0 outside one."""
    x = np.array([-np.inf, np.inf, -200.0, 200.0] * 8, dtype=np.float32)
    with np.errstate(all="ignore"):
        got = sigmoid(Tensor(x, AutogradContext())).data
        exps = libm.vector_exp(x)
    assert got[:4].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert np.isposinf(exps[[1, 3]]).all()


@pytest.mark.parametrize("size", [1, 31, 32, 33, 64, 100, 257])
@pytest.mark.parametrize("op", ["sigmoid", "silu"])
def test_forward_and_backward_have_live_torchs_bits(torch_avx512: Any, size: int,
                                                    op: str) -> None:
    torch = torch_avx512
    rng = np.random.default_rng(size)
    x = (rng.standard_normal((3, size)) * 4).astype(np.float32)
    g = rng.standard_normal((3, size)).astype(np.float32)
    leaf = torch.tensor(x, requires_grad=True)
    want = (torch.sigmoid if op == "sigmoid" else torch.nn.functional.silu)(leaf)
    want.backward(torch.tensor(g))
    ctx = AutogradContext()
    got = (sigmoid if op == "sigmoid" else silu)(Tensor(x, ctx, requires_grad=True))
    ctx.grad_mode = False                       # as during backward()
    assert got.grad_fn is not None
    (grad,) = got.grad_fn.apply([Tensor(g, ctx)])
    assert grad is not None
    # The elements after the last whole block take glibc's expf, which the lab rounds
    # correctly instead: they may differ in a last bit, about once in a thousand.
    block = x.size - x.size % libm.VECTOR_BLOCK
    for mine, theirs in ((got.data, want.detach().numpy()), (grad.data, leaf.grad.numpy())):
        assert mine.ravel()[:block].tobytes() == theirs.ravel()[:block].tobytes()
        assert np.all(np.abs(mine - theirs) <= np.spacing(np.abs(theirs)))
