"""PyTorch's summation order (engine/functions/summation.py, Notes [Summation order] and
[Sum loops]): `torch.sum` over every choice of dims of tensors of several shapes and
layouts (contiguous, transposed, sliced) gives live torch's bits."""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pytest

from engine.functions.summation import cascade_sum

# values whose float32 sums depend on the order: many magnitudes, signs and zeros of both signs
POOL = np.array([1e8, -1e8, 3.0, 0.1, -0.7, 1e-3, 2.5e4, -0.0, 0.0, 7.25, -1e-7])
SHAPES = [(5,), (16,), (17,), (40,), (130,), (1000,), (8, 32), (8, 5), (8, 33), (3, 40),
          (70, 3), (16, 17), (9, 1), (1, 9), (8, 100), (200, 20), (4, 3, 40), (3, 9, 5),
          (2, 20, 3), (6, 4, 17), (2, 3, 4, 5)]
VIEWS = [((8, 32), (1, 0)), ((5, 40), (1, 0)), ((3, 9, 20), (2, 0, 1)),
         ((3, 9, 20), (1, 2, 0)), ((4, 6, 5), (2, 1, 0))]


def draw(rng: np.random.Generator, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    values = rng.choice(POOL, size=shape) * rng.uniform(0.5, 2.0, size=shape)
    return values.astype(dtype)


def every_choice_of_dims(ndim: int) -> list[tuple[int, ...]]:
    return [dims for r in range(1, ndim + 1) for dims in itertools.combinations(range(ndim), r)]


def test_an_all_negative_zero_column_sums_to_positive_zero() -> None:
    values = np.full((8, 3), -0.0, dtype=np.float32)
    assert not np.signbit(cascade_sum(values, (0,), False)).any()
    assert not np.signbit(cascade_sum(values, (0, 1), False))


def test_keepdim_keeps_the_reduced_dims_as_ones() -> None:
    values = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert cascade_sum(values, (0, 2), True).shape == (1, 3, 1)
    assert cascade_sum(values, (1,), False).tolist() == values.sum(1).tolist()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sums_are_torchs_to_the_bit(dtype: type) -> None:
    torch = pytest.importorskip("torch", reason="live torch (the test extra) sums the same")
    rng = np.random.default_rng(5)
    arrays = [draw(rng, shape, dtype) for shape in SHAPES]
    arrays += [draw(rng, shape, dtype).transpose(perm) for shape, perm in VIEWS]
    arrays += [draw(rng, shape, dtype)[..., 1:] for shape, _ in VIEWS]
    for values in arrays:
        for dims in every_choice_of_dims(values.ndim):
            want = torch.from_numpy(values).sum(dim=dims).numpy()
            got = cascade_sum(values, dims, False)
            assert got.tobytes() == want.tobytes(), (values.shape, values.strides, dims)


def test_repeat_backward_sums_as_pytorch_to_the_bit() -> None:
    """RepeatBackward0 adds the copies' gradients as `repeat_backward` does (leading dims
    one `sum(0)` at a time, then one sum over the repeated dims): live torch's bits."""
    torch = pytest.importorskip("torch", reason="live torch (the test extra) sums the same")
    from engine.context import AutogradContext
    from engine.functions.joins import repeat
    from engine.tensor import Tensor

    ctx = AutogradContext()
    rng = np.random.default_rng(1)
    cases = [((3,), (40,)), ((2, 3), (17, 5)), ((4,), (3, 20)), ((2, 1, 3), (1, 33, 2)),
             ((5, 2), (2, 9, 3)), ((3,), (1,)), ((6,), (300,)), ((2, 3), (64, 1)),
             ((2,), (0, 3))]
    for shape, repeats in cases:
        for _ in range(4):
            x = draw(rng, shape, np.float32)
            out_shape = tuple(torch.zeros(shape).repeat(*repeats).shape)
            g = draw(rng, out_shape, np.float32)
            leaf = torch.tensor(x, requires_grad=True)
            leaf.repeat(*repeats).backward(torch.tensor(g))
            out = repeat(Tensor(x, ctx, requires_grad=True), repeats)
            assert out.grad_fn is not None
            (got,) = out.grad_fn.apply([Tensor(g, ctx)])
            assert got is not None
            assert got.data.tobytes() == leaf.grad.numpy().tobytes(), (shape, repeats)


def test_cumsum_runs_in_double_for_float32_as_pytorch() -> None:
    """cumsum (and its backward, a reversed cumsum) accumulate a float32 tensor in double,
    rounding each running sum as it is written: live torch's bits."""
    torch = pytest.importorskip("torch", reason="live torch (the test extra) sums the same")
    from engine.context import AutogradContext
    from engine.functions.statistics import cumulative_sum
    from engine.tensor import Tensor

    ctx = AutogradContext()
    rng = np.random.default_rng(2)
    for shape, dim in [((1000,), 0), ((40, 30), 0), ((40, 30), 1), ((3, 50, 4), 1)]:
        for dtype in (np.float32, np.float64):
            x, g = draw(rng, shape, dtype), draw(rng, shape, dtype)
            leaf = torch.tensor(x, requires_grad=True)
            out = leaf.cumsum(dim)
            out.backward(torch.tensor(g))
            got = cumulative_sum(Tensor(x, ctx, requires_grad=True), dim)
            assert got.data.tobytes() == out.detach().numpy().tobytes(), (shape, dim, dtype)
            assert got.grad_fn is not None
            (grad,) = got.grad_fn.apply([Tensor(g, ctx)])
            assert grad is not None
            assert grad.data.tobytes() == leaf.grad.numpy().tobytes(), (shape, dim, dtype)


@pytest.mark.parametrize("std", [False, True])
def test_var_and_std_are_torchs_to_the_bit(std: bool) -> None:
    """var and std (Note [Welford]): over some dims Welford's updates in double, to one value
    the mean in float32 then squares summed in double; their backward as var_backward
    writes it ((2 / dof) * grad * (x - mean), std's grad / (2 * std) first). Live torch's
    bits (a NaN's sign aside), float32 and float64, with and without dims and keepdim."""
    torch = pytest.importorskip("torch", reason="live torch (the test extra) sums the same")
    from engine.context import AutogradContext
    from engine.functions.spread import var
    from engine.tensor import Tensor

    ctx = AutogradContext()
    rng = np.random.default_rng(7)
    function = torch.std if std else torch.var
    with np.errstate(all="ignore"):
        for shape in [(7,), (100,), (8, 30), (30, 8), (1, 50), (50, 1), (5, 6, 7), (1,)]:
            for trial in range(4):
                dtype = np.float64 if trial == 3 else np.float32
                x = (rng.standard_normal(shape) * rng.choice([1, 0.01])
                     + rng.choice([0, 1000, 3.7])).astype(dtype)
                dim_sets = [None, *[(d,) for d in range(len(shape))]]
                for dims in dim_sets + ([(0, 2)] if len(shape) == 3 else []):
                    for correction, keepdim in [(1, False), (0, True), (None, False)]:
                        leaf = torch.tensor(x, requires_grad=True)
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")   # degrees of freedom <= 0
                            want = function(leaf, dim=dims, correction=correction,
                                            keepdim=keepdim)
                        g = rng.standard_normal(want.shape).astype(dtype)
                        want.backward(torch.tensor(g))
                        got = var(Tensor(x, ctx, requires_grad=True), dims, correction,
                                  keepdim, std)
                        case = (shape, dims, correction, keepdim, dtype)
                        assert got.shape == tuple(want.shape), case
                        assert np.array_equal(got.data, want.detach().numpy(), equal_nan=True)
                        assert got.data.tobytes() == want.detach().numpy().tobytes() or \
                            np.isnan(got.data).all(), case
                        assert got.grad_fn is not None
                        (grad,) = got.grad_fn.apply([Tensor(g, ctx)])
                        assert grad is not None
                        expected = leaf.grad.numpy()
                        same_bits = grad.data.tobytes() == expected.tobytes()
                        nan_signs = (np.isnan(expected).any()
                                     and np.array_equal(grad.data, expected, equal_nan=True))
                        assert same_bits or nan_signs, case


SPREAD_CALLS = ["x.var()", "x.var(keepdim=True)", "x.var(dim=1)", "x.var(0, keepdim=True)",
                "torch.var(x)", "torch.var(x, 1)", "torch.std(x, dim=0)",
                "x.var(unbiased=False)", "x.var(correction=0)", "x.std(dim=0, unbiased=False)",
                "x.std(dim=[0, 1], correction=2)", "x.var(True)", "x.std(False)",
                "torch.var(x, False)", "torch.std(x, True)"]


@pytest.mark.parametrize("call", SPREAD_CALLS)
def test_var_saves_dim_and_correction_as_pytorchs_overloads_do(call: str) -> None:
    """`_saved_dim` is None without a dim; `_saved_correction` is None unless `unbiased`,
    a correction or a dim (without a correction) chose another overload."""
    pytest.importorskip("torch", reason="compared with live PyTorch")
    from tests.differential import assert_same_as_torch

    assert_same_as_torch(
        "import torch\ntorch.manual_seed(0)\nx = torch.randn(3, 4, requires_grad=True)\n"
        f"y = {call}\nprint(y)\nprint(y.grad_fn._saved_dim, y.grad_fn._saved_correction, "
        "y.grad_fn._saved_keepdim)\ny.sum().backward()\nprint(x.grad)\n")


def test_logsumexp_sums_its_exponentials_as_torch_sum_does(torch_mkl: Any) -> None:
    """logsumexp adds exp(x - max) with torch.sum's cascade: live torch's bits but where
    PyTorch's vectorized exp (MKL's, on Intel) rounds a value the other way (a last bit,
    rarely)."""
    torch = torch_mkl
    from engine.context import AutogradContext
    from engine.functions.statistics import logsumexp
    from engine.tensor import Tensor

    ctx = AutogradContext()
    rng = np.random.default_rng(3)
    same = total = 0
    for shape in [(5,), (40,), (300,), (8, 30), (30, 8), (4, 5, 6)]:
        for _ in range(20):
            x = (rng.standard_normal(shape) * rng.choice([1, 5, 0.1])).astype(np.float32)
            for dims in [tuple(range(len(shape))), *[(d,) for d in range(len(shape))]]:
                want = torch.logsumexp(torch.tensor(x), dim=dims).numpy()
                got = logsumexp(Tensor(x, ctx), dims).data
                assert np.allclose(got, want, rtol=2e-7, atol=0), (shape, dims)
                same += got.tobytes() == want.tobytes()
                total += 1
    assert same >= 0.95 * total, f"{same} of {total} with torch's bits"


def test_prod_multiplies_in_the_kernels_order_to_the_bit() -> None:
    """prod() of a whole tensor multiplies as prod_kernel_impl does (blocks of four AVX2
    vectors lane by lane, then the lanes, then the rest); its backward is grad * (result /
    x), or with a zero the products before and after each element as cumprod makes them."""
    torch = pytest.importorskip("torch", reason="live torch (the test extra) multiplies alike")
    from engine.context import AutogradContext
    from engine.functions.statistics import prod
    from engine.tensor import Tensor

    ctx = AutogradContext()
    rng = np.random.default_rng(3)
    for n in [1, 3, 8, 16, 17, 32, 40, 100, 333]:
        for trial in range(12):
            dtype = np.float64 if trial == 11 else np.float32
            x = rng.uniform(0.5, 1.5, n).astype(dtype)
            if trial % 4 == 3:
                x[rng.integers(0, n)] = 0.0
            shaped = x.reshape(-1, 1) if n % 2 else x.reshape(1, -1)
            leaf = torch.tensor(shaped, requires_grad=True)
            want = leaf.prod()
            want.backward(torch.tensor(1.3, dtype=leaf.dtype))
            got = prod(Tensor(shaped, ctx, requires_grad=True))
            assert got.data.tobytes() == want.detach().numpy().tobytes(), (n, trial)
            assert got.grad_fn is not None
            (grad,) = got.grad_fn.apply([Tensor(np.asarray(1.3, dtype), ctx)])
            assert grad is not None and grad.data.tobytes() == leaf.grad.numpy().tobytes()
