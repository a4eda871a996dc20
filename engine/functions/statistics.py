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
from engine.functions.arithmetic import div, mul, mul_scalar, sub
from engine.functions.compare import compare, masked_fill
from engine.functions.fused import sgn
from engine.functions.pointwise import exp
from engine.functions.reduction import (
    mean,
    mean_check,
    normalize_dim,
    normalize_dims,
    sum_dtype,
    unsqueeze_multiple,
)
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
    """var / std: var_backward, `(2 / (n - correction)) * grad * (self - self.mean(...))`;
    std first makes `(grad / (result * 2)).masked_fill_(result == 0, 0)` its grad. As ops,
    so create_graph records PyTorch's nodes."""

    saved_names = ("correction", "dim", "keepdim", "result", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, result, dim, keepdim = map(self.saved_value, ("self", "result", "dim", "keepdim"))
        dims = normalize_dims(dim, x.ndim)
        if self.name == "StdBackward0":
            grad = masked_fill(div(grad, mul_scalar(result, 2)), compare("eq", result, 0), 0.0)
        if dim is not None and not keepdim and x.ndim > 1:
            grad = unsqueeze_multiple(grad, dims, x.ndim)
        dof = math.prod(x.shape[d] for d in dims) - self.saved_value("correction")
        if dof <= 0 and (dim is None or x.ndim == 0):   # grad * where(self == mean, nan, inf)
            nan_inf = np.where(x.data == mean(x).data, np.nan, np.inf)
            return [mul(grad, Tensor(as_array(nan_inf, x.data.dtype), grad.ctx))]
        centred = sub(x, mean(x) if dim is None or x.ndim == 0 else mean(x, dims, True))
        return [mul(mul_scalar(grad, 2.0 / dof if dof > 0 else math.inf), centred)]


class VarBackward0(_Spread):
    name = "VarBackward0"


class StdBackward0(_Spread):
    name = "StdBackward0"


def var(self: Tensor, dim: Any = None, correction: int = 1, keepdim: bool = False,
        std: bool = False) -> Tensor:
    mean_check(self)
    dims = normalize_dims(dim, self.ndim)
    axis = dims if dims else None
    values = np.var(self.data, axis=axis, ddof=correction, keepdims=keepdim)
    if std:
        values = np.sqrt(values)
    out, node = record(StdBackward0 if std else VarBackward0, [self],
                       as_array(values, self.data.dtype), self)
    if node:
        node.save("dim", None if dim is None else dims)
        node.save("keepdim", keepdim)
        node.save("correction", correction)
        node.save("self", self)
        node.save("result", out)
    return out


def cumulative_sum(self: Tensor, dim: int) -> Tensor:
    d = normalize_dim(dim, self.ndim)
    dtype = sum_dtype(self)
    data = self.data if self.ndim else self.data.reshape(1)
    values = np.cumsum(data, axis=d, dtype=dtype.numpy).reshape(self.shape)
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
        values = np.flip(np.cumsum(np.flip(g, d), axis=d), d).reshape(grad.shape)
        return [Tensor(as_array(values, grad.dtype.numpy), grad.ctx)]
