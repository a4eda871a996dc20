"""Reductions with formulas of their own: logsumexp, norm, prod, var and std, cumsum."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine import errors, op_errors
from engine.functions import libm
from engine.functions._record import (
    float_dtype,
    record,
    values_as,
)
from engine.functions.arithmetic import div, mul, sub
from engine.functions.pointwise import exp
from engine.functions.reduction import (
    mean_check,
    normalize_dim,
    normalize_dims,
    sum_dtype,
    unsqueeze_multiple,
)
from engine.functions.summation import cascade_sum
from engine.node import Node
from engine.tensor import Tensor, as_array


class LogsumexpBackward0(Node):
    """logsumexp(dim): self gets grad * exp(self - result) (softmax along dim)."""

    name = "LogsumexpBackward0"
    saved_names = ("dim", "keepdim", "result", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, result = self.saved_value("self"), self.saved_value("result")
        dims, keepdim = self.saved_value("dim"), self.saved_value("keepdim")
        if not keepdim and x.ndim:
            grad = unsqueeze_multiple(grad, dims, x.ndim)
            result = unsqueeze_multiple(result, dims, x.ndim)
        return [mul(grad, exp(sub(x, result)))]


def logsumexp(self: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    dims = normalize_dims(dim, self.ndim)
    dtype = float_dtype(self)
    x = values_as(self, dtype)
    top = np.max(x, axis=dims, keepdims=True) if x.size else np.zeros_like(x)
    top = np.where(np.isfinite(top), top, dtype.numpy.type(0))
    total = np.sum(libm.exp(x - top), axis=dims, keepdims=True)
    values = libm.log(total) + top
    if not keepdim:
        values = np.squeeze(values, axis=dims) if x.ndim else values.reshape(())
    out, node = record(LogsumexpBackward0, [self], as_array(values, dtype.numpy), self)
    if node:
        node.save("dim", dims)
        node.save("keepdim", keepdim)
        node.save("self", self)
        node.save("result", out)
    return out


class LinalgVectorNormBackward0(Node):
    """norm (p=2): self gets grad * self / norm (0 where the norm is 0); other p follow
    linalg_vector_norm_backward."""

    name = "LinalgVectorNormBackward0"
    saved_names = ("dim", "keepdim", "ord", "result", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, result = self.saved_value("self"), self.saved_value("result")
        dims, keepdim, p = (self.saved_value("dim"), self.saved_value("keepdim"),
                            self.saved_value("ord"))
        if not keepdim and x.ndim:
            grad = unsqueeze_multiple(grad, dims, x.ndim)
            result = unsqueeze_multiple(result, dims, x.ndim)
        g, n, v = grad.data, result.data, x.data
        zero = v.dtype.type(0)
        if p == 2:
            scaled = np.where(n == 0, zero, v / np.where(n == 0, 1, n))
            values = g * scaled
        elif p == 1:
            values = g * np.sign(v)
        elif p == float("inf"):
            mask = np.abs(v) == n
            values = g * np.sign(v) * mask / mask.sum(axis=dims, keepdims=True)
        else:
            values = np.where(n == 0, zero, g * v * np.abs(v) ** (p - 2) / n ** (p - 1))
        return [Tensor(as_array(values, x.data.dtype), grad.ctx)]


def norm(self: Tensor, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
    """`x.norm(p, dim)`: torch.norm is linalg.vector_norm for the p the lab takes."""
    if not self.is_floating_point:
        raise errors.TorchError("RuntimeError", op_errors.NORM_OF_INTEGERS)
    dims = normalize_dims(dim, self.ndim)
    a = np.abs(self.data)
    axis = dims if dims else None
    if p == 2:
        values = np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdim))
    elif p == 1:
        values = np.sum(a, axis=axis, keepdims=keepdim)
    elif p == float("inf"):
        values = np.max(a, axis=axis, keepdims=keepdim)
    else:
        values = np.sum(a ** p, axis=axis, keepdims=keepdim) ** (1.0 / p)
    out, node = record(LinalgVectorNormBackward0, [self], as_array(values, self.data.dtype),
                       self)
    if node:
        node.save("dim", dims)
        node.save("keepdim", keepdim)
        node.save("ord", p)
        node.save("self", self)
        node.save("result", out)
    return out


class ProdBackward0(Node):
    """prod(): each element gets grad * the product of the others."""

    name = "ProdBackward0"
    saved_names = ("result", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        self_t, result_t = self.saved_value("self"), self.saved_value("result")
        x = self_t.data
        if x.ndim == 0:
            return [grad]
        if not np.any(x == 0):      # prod_backward: grad * (result / input), recorded
            return [mul(grad, div(result_t, self_t))]     # under create_graph
        flat = x.reshape(-1)
        others = np.array([np.prod(np.delete(flat, i)) for i in range(flat.size)],
                          dtype=x.dtype).reshape(x.shape)
        return [Tensor(as_array(grad.data * others, x.dtype), grad.ctx)]


def prod(self: Tensor) -> Tensor:
    dtype = sum_dtype(self)
    out, node = record(ProdBackward0, [self],
                       as_array(np.prod(self.data, dtype=dtype.numpy), dtype.numpy), self)
    if node:
        node.save("self", self)
        node.save("result", out)
    return out


class _Spread(Node):
    """var / std: the gradient of the mean squared deviation (with a correction)."""

    saved_names = ("correction", "dim", "keepdim", "result", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self").data
        dims, keepdim = self.saved_value("dim"), self.saved_value("keepdim")
        correction = self.saved_value("correction")
        correction = 1 if correction is None else correction
        g, dt = grad.data, x.dtype.type
        if self.name == "StdBackward0":      # std_backward: var's, of grad / (2 * std)
            result = self.saved_value("result").data
            g = np.where(result == 0, dt(0), g / (result * dt(2)))
        if dims is None or not x.ndim:       # var_backward without dims
            dof = x.size - correction
            mean = cascade_sum(x, tuple(range(x.ndim)), False) / dt(x.size)
            if dof <= 0:                     # 2 / dof is infinite: nan where x is its mean
                values = g * np.where(x == mean, dt(math.nan), dt(math.inf))
            else:
                values = dt(2.0 / dof) * g * (x - mean)
        else:
            if not keepdim and x.ndim > 1:
                for d in sorted(dims):
                    g = np.expand_dims(g, d)
            count = math.prod(x.shape[d] for d in dims)
            mean = cascade_sum(x, dims, True) / dt(count)
            scale = math.inf if count == correction else 2.0 / (count - correction)
            values = dt(scale) * g * (x - mean)
        return [Tensor(as_array(values, x.dtype), grad.ctx)]


class VarBackward0(_Spread):
    name = "VarBackward0"


class StdBackward0(_Spread):
    name = "StdBackward0"


def _spread_all(x: np.ndarray, correction: int) -> np.ndarray:
    """`std_var_all_cpu` (a reduction to one value): the mean as `mean()` gives it (in
    x's dtype), widened to double; the squared deviations added in double, in order;
    divided by n - correction (0 at least) in double."""
    mean = float(cascade_sum(x, tuple(range(x.ndim)), False) / x.dtype.type(max(x.size, 1)))
    deviations = x.reshape(-1).astype(np.float64) - mean
    squares = np.cumsum(deviations * deviations)[-1] if x.size else np.float64(0)
    return np.asarray(squares / np.float64(max(0.0, x.size - correction)))


WELFORD_LIMIT = 4096    # reduced elements per value updated one by one (Note [Welford])


def _welford(x: np.ndarray, reduced: tuple[int, ...], correction: int) -> np.ndarray:
    """`std_var_kernel`'s WelfordOps in double: each value's running mean and sum of
    squared deviations, updated element by element over the reduced dims in order."""
    rows = np.moveaxis(x.astype(np.float64), reduced, tuple(range(len(reduced))))
    rows = rows.reshape(-1, *rows.shape[len(reduced):])
    n = rows.shape[0]
    if n > WELFORD_LIMIT:
        m2 = np.sum((rows - np.mean(rows, axis=0)) ** 2, axis=0)
    else:
        mean = np.zeros(rows.shape[1:])
        m2 = np.zeros(rows.shape[1:])
        for i in range(n):
            delta = rows[i] - mean
            mean = mean + delta / float(i + 1)
            m2 = m2 + delta * (rows[i] - mean)
    spread: np.ndarray = m2 / np.float64(max(0.0, n - correction))
    return spread


# Note [Welford]
# PyTorch reduces var and std over some dims with Welford's updates in double, and to a
# single value by a mean in the tensor's dtype and a sum of squares in double. Either way
# the float32 result is the double one rounded, so the order of the double additions only
# shows in a last bit now and then. The lab follows both exactly (tests/test_summation.py
# holds them to live torch's bits); over more than WELFORD_LIMIT elements a value, where
# PyTorch's threads split the updates anyway, it takes the two-pass sum in double.


def var(self: Tensor, dim: Any = None, correction: int | None = None, keepdim: bool = False,
        std: bool = False) -> Tensor:
    """`var` / `std`: a correction of None (the default, saved as None) is 1; a dim of None
    (saved as None) reduces every dim."""
    mean_check(self)
    dims = normalize_dims(dim, self.ndim)
    saved_correction = correction
    correction = 1 if correction is None else correction
    reduced = dims if dims else tuple(range(self.ndim))
    x = self.data
    kept = [n for d, n in enumerate(x.shape) if d not in reduced]
    if math.prod(kept) == 1:
        spread = _spread_all(x, correction)
    else:
        spread = _welford(x, reduced, correction)
    values = np.sqrt(spread) if std else spread
    shape = tuple(1 if d in reduced else n for d, n in enumerate(x.shape)) if keepdim \
        else tuple(kept)
    out, node = record(StdBackward0 if std else VarBackward0, [self],
                       as_array(values.astype(x.dtype).reshape(shape), x.dtype), self)
    if node:
        node.save("correction", saved_correction)
        node.save("dim", None if dim is None else dims)
        node.save("keepdim", keepdim)
        node.save("self", self)
        node.save("result", out)
    return out


def cumulative_sum(self: Tensor, dim: int) -> Tensor:
    d = normalize_dim(dim, self.ndim)
    dtype = sum_dtype(self)
    data = self.data if self.ndim else self.data.reshape(1)
    values = _cumsum(data, d, dtype.numpy).reshape(self.shape)
    out, node = record(CumsumBackward0, [self], as_array(values, dtype.numpy), self)
    if node:
        node.save("dim", d)
    return out


class CumsumBackward0(Node):
    """cumsum(dim): each element gets the sum of the gradients at or after it."""

    name = "CumsumBackward0"
    saved_names = ("dim",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        d = self.saved_value("dim")
        g = grad.data if grad.ndim else grad.data.reshape(1)
        values = np.flip(_cumsum(np.flip(g, d), d, g.dtype), d).reshape(grad.shape)
        return [Tensor(as_array(values, grad.dtype.numpy), grad.ctx)]


def _cumsum(data: np.ndarray, dim: int, dtype: np.dtype) -> np.ndarray:
    """`cumsum_cpu_kernel`: a running sum left to right in `acc_type` (double for a
    float32 tensor) from 0, each partial sum rounded to the result's dtype as it is
    written. (Starting from +0 only changes a -0.0, which no running sum then is.)"""
    acc = np.float64 if dtype == np.float32 else dtype
    sums = np.cumsum(data, axis=dim, dtype=acc)
    if sums.dtype.kind == "f":
        sums += 0
    return sums.astype(dtype, copy=False)
