"""Reductions with formulas of their own: logsumexp, norm, prod, cumsum (var and std
are in spread.py)."""

from __future__ import annotations

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
from engine.functions.compare import compare, masked_fill
from engine.functions.fused import sgn
from engine.functions.pointwise import exp
from engine.functions.reduction import (
    normalize_dim,
    normalize_dims,
    sum_dtype,
    unsqueeze_multiple,
)
from engine.functions.summation import VECTOR_BYTES, cascade_sum
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
    top = np.max(x, axis=dims, keepdims=True) if x.size else np.zeros(
        [1 if d in dims else n for d, n in enumerate(x.shape)], dtype=x.dtype)
    top = np.where(np.isfinite(top), top, dtype.numpy.type(0))
    total = cascade_sum(libm.exp(x - top), dims, True)     # torch.sum of exp_(x - max)
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
    """norm: norm_backward's formulas, as ops (so create_graph records PyTorch's nodes) for
    p = 2, `grad * (self / norm).masked_fill_(norm == 0, 0)`, and p = 1, `self.sgn() * grad`."""

    name = "LinalgVectorNormBackward0"
    saved_names = ("dim", "keepdim", "ord", "result", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, result = self.saved_value("self"), self.saved_value("result")
        dim, keepdim, p = (self.saved_value("dim"), self.saved_value("keepdim"),
                           self.saved_value("ord"))
        dims = normalize_dims(dim, x.ndim)
        if not keepdim and x.ndim and dim is not None:
            grad = unsqueeze_multiple(grad, dims, x.ndim)
            result = unsqueeze_multiple(result, dims, x.ndim)
        if p == 2:
            return [mul(grad, masked_fill(div(x, result), compare("eq", result, 0), 0.0))]
        if p == 1:
            return [mul(sgn(x), grad)]
        g, n, v = grad.data, result.data, x.data
        if p == float("inf"):
            mask = np.abs(v) == n
            values = g * np.sign(v) * mask / mask.sum(axis=dims, keepdims=True)
        else:
            values = np.where(n == 0, v.dtype.type(0), g * v * np.abs(v) ** (p - 2) / n ** (p - 1))
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
        node.save("dim", None if dim is None else dims)
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
        if not self.ctx.grad_mode and np.count_nonzero(flat == 0) > 1:
            return [Tensor(np.zeros_like(x), grad.ctx)]    # every product of others is 0
        # prod_safe_zeros_backward: the products before and after each element, as cumprod
        # makes them (in double, each rounded as written)
        one = np.ones(1, dtype=x.dtype)
        before = _cumulative(np.concatenate((one, flat[:-1])), np.multiply)
        after = _cumulative(np.concatenate((one, flat[:0:-1])), np.multiply)[::-1]
        others = (before * after).reshape(x.shape)
        return [Tensor(as_array(grad.data * others, x.dtype), grad.ctx)]


def _product(data: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`prod_kernel_impl` over a whole tensor, in memory order (binary_kernel_reduce_vec
    with AVX2's vectors, as for sums: VECTOR_BYTES): each whole block of four vectors is
    multiplied lane by lane into four accumulators, which are then multiplied pairwise and
    their lanes in order; the elements left over follow one by one. Integers wrap alike
    in any order."""
    flat = np.ravel(data, order="K").astype(dtype, copy=False)
    if flat.dtype.kind != "f":
        return np.asarray(np.prod(flat, dtype=dtype))
    lanes = VECTOR_BYTES // flat.itemsize
    count = flat.size // (4 * lanes)
    out = np.ones(1, dtype=dtype)
    if count:
        acc = np.multiply.accumulate(flat[:count * 4 * lanes].reshape(count, 4, lanes))[-1]
        out = out * np.multiply.accumulate((acc[0] * acc[1]) * (acc[2] * acc[3]))[-1:]
    rest = flat[count * 4 * lanes:]
    product: np.ndarray = np.multiply.accumulate(np.concatenate((out, rest)))[-1:]
    return product.reshape(())


def prod(self: Tensor) -> Tensor:
    dtype = sum_dtype(self)
    out, node = record(ProdBackward0, [self], _product(self.data, dtype.numpy), self)
    if node:
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


def _cumulative(values: np.ndarray, op: np.ufunc) -> np.ndarray:
    """`cpu_cum_base_kernel` of a 1-D float array: op's running result in double (acc_type),
    each one rounded to the array's dtype as it is written."""
    running: np.ndarray = op.accumulate(values.astype(np.float64)).astype(values.dtype)
    return running


def _cumsum(data: np.ndarray, dim: int, dtype: np.dtype) -> np.ndarray:
    """`cumsum_cpu_kernel`: a running sum left to right in `acc_type` (double for a
    float32 tensor) from 0, each partial sum rounded to the result's dtype as it is
    written. (Starting from +0 only changes a -0.0, which no running sum then is.)"""
    acc = np.float64 if dtype == np.float32 else dtype
    sums = np.cumsum(data, axis=dim, dtype=acc)
    if sums.dtype.kind == "f":
        sums += 0
    return sums.astype(dtype, copy=False)
