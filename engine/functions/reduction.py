"""Reductions: sum, mean, max, min, amax, amin, logsumexp, norm, prod, var, std, with
`dim` and `keepdim` as PyTorch takes them. A reduction's backward spreads the gradient
back over the reduced dimensions (`unsqueeze` what `keepdim=False` removed, then
`expand`), so under create_graph it records those view nodes."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import dtypes, errors
from engine.functions._record import (
    float_dtype,
    record,
    record_outputs,
    values_as,
)
from engine.functions.arithmetic import div_scalar, mul, sub
from engine.functions.pointwise import exp
from engine.functions.summation import cascade_sum
from engine.node import Node
from engine.tensor import Tensor, as_array

Dims = tuple[int, ...]


def normalize_dim(dim: int, ndim: int) -> int:
    """A dimension index as PyTorch wraps it (0-d tensors take dims 0 and -1)."""
    size = ndim if ndim > 1 else 1
    if not -size <= dim < size:
        raise errors.TorchError(
            "IndexError", f"Dimension out of range (expected to be in range of "
            f"[{-size}, {size - 1}], but got {dim})")
    return dim % size


def normalize_dims(dim: int | Dims | list[int] | None, ndim: int) -> Dims:
    """The reduced dimensions, sorted; None means all of them."""
    if dim is None:
        return tuple(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    out: list[int] = []
    for d in dims:
        n = normalize_dim(d, ndim)
        if n in out:
            raise errors.TorchError("RuntimeError",
                                    f"dim {n} appears multiple times in the list of dims")
        out.append(n)
    return tuple(sorted(out)) if ndim else ()


def unsqueeze_multiple(grad: Tensor, dims: Dims, ndim: int) -> Tensor:
    """Put back the dimensions a reduction without keepdim removed (one unsqueeze each)."""
    from engine.functions.shape import unsqueeze

    for d in sorted(dims):
        if d < ndim:
            grad = unsqueeze(grad, d)
    return grad


def sum_backward(grad: Tensor, sizes: tuple[int, ...], dims: Dims, keepdim: bool) -> Tensor:
    """sum's backward: unsqueeze the reduced dims (unless kept), then expand to sizes."""
    from engine.functions.shape import expand

    if not keepdim and sizes:
        grad = unsqueeze_multiple(grad, dims, len(sizes))
    return expand(grad, sizes)


class SumBackward0(Node):
    """sum(): every element gets the gradient (`grad.expand(self_sym_sizes)`)."""

    name = "SumBackward0"
    saved_names = ("self_sym_sizes",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        from engine.functions.shape import expand

        (grad,) = grads
        assert grad is not None
        return [expand(grad, self.saved_value("self_sym_sizes"))]


class SumBackward1(Node):
    """sum(dim, keepdim): the gradient spread back over the reduced dims."""

    name = "SumBackward1"
    saved_names = ("dim", "keepdim", "self_sym_sizes")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [sum_backward(grad, self.saved_value("self_sym_sizes"),
                             self.saved_value("dim"), self.saved_value("keepdim"))]


def _sum_dtype(t: Tensor) -> dtypes.DType:
    return t.dtype if t.is_floating_point else dtypes.int64


def _sum_values(data: np.ndarray, dims: Dims, keepdim: bool, dtype: dtypes.DType) -> np.ndarray:
    """The sum over dims, floats in PyTorch's order (Note [Summation order])."""
    if dtype.is_floating_point:
        return cascade_sum(data.astype(dtype.numpy, copy=False), dims, keepdim)
    return as_array(np.sum(data, axis=dims, keepdims=keepdim, dtype=dtype.numpy), dtype.numpy)


def sum(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    dtype = _sum_dtype(self)
    if dim is None:
        values = _sum_values(self.data, tuple(range(self.ndim)), False, dtype)
        out, node = record(SumBackward0, [self], values, self)
        if node:
            node.save("self_sym_sizes", self.shape)
        return out
    dims = normalize_dims(dim, self.ndim)
    values = _sum_values(self.data, dims, keepdim, dtype)
    out, node1 = record(SumBackward1, [self], values, self)
    if node1:
        node1.save("dim", dims)
        node1.save("keepdim", keepdim)
        node1.save("self_sym_sizes", self.shape)
    return out


def _mean_check(t: Tensor) -> None:
    if not t.is_floating_point:
        raise errors.TorchError("RuntimeError", errors.mean_of(t.dtype))


class MeanBackward0(Node):
    """mean(): every element gets grad / numel."""

    name = "MeanBackward0"
    saved_names = ("self_sym_numel", "self_sym_sizes")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        from engine.functions.shape import expand

        (grad,) = grads
        assert grad is not None
        expanded = expand(grad, self.saved_value("self_sym_sizes"))
        return [div_scalar(expanded, self.saved_value("self_sym_numel"))]


class MeanBackward1(Node):
    """mean(dim, keepdim): the gradient spread back, divided by the reduced count."""

    name = "MeanBackward1"
    saved_names = ("dim", "keepdim", "self_sym_numel", "self_sym_sizes")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        sizes, dims = self.saved_value("self_sym_sizes"), self.saved_value("dim")
        count = 1
        for d in dims:
            count *= sizes[d]
        spread = sum_backward(grad, sizes, dims, self.saved_value("keepdim"))
        return [div_scalar(spread, count)]


def mean(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    _mean_check(self)
    dt = self.data.dtype
    if dim is None:
        total = cascade_sum(self.data, tuple(range(self.ndim)), False)
        values = as_array(total / dt.type(self.numel()) if self.numel() else np.nan, dt)
        out, node = record(MeanBackward0, [self], values, self)
        if node:
            node.save("self_sym_sizes", self.shape)
            node.save("self_sym_numel", self.numel())
        return out
    dims = normalize_dims(dim, self.ndim)
    count = 1
    for d in dims:
        count *= self.shape[d]
    total = cascade_sum(self.data, dims, keepdim)
    values = as_array(total / dt.type(count), dt)
    out, node1 = record(MeanBackward1, [self], values, self)
    if node1:
        node1.save("dim", dims)
        node1.save("keepdim", keepdim)
        node1.save("self_sym_sizes", self.shape)
        node1.save("self_sym_numel", self.numel())
    return out


class _EvenlyDistributed(Node):
    """max() / min() over everything: the gradient split evenly among the elements equal
    to the result (evenly_distribute_backward)."""

    saved_names = ("result", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, result = self.saved_value("self").data, self.saved_value("result").data
        mask = np.isnan(x) if np.isnan(result) else x == result
        share = grad.data / grad.dtype.numpy.type(mask.sum())
        values = np.where(mask, share, grad.dtype.numpy.type(0))
        return [Tensor(as_array(values, grad.dtype.numpy), grad.ctx)]


class MaxBackward1(_EvenlyDistributed):
    name = "MaxBackward1"


class MinBackward1(_EvenlyDistributed):
    name = "MinBackward1"


class _Selected(Node):
    """max(dim) / min(dim): the gradient goes to the index that was chosen."""

    saved_names = ("dim", "indices", "keepdim", "self_sym_sizes")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        grad = grads[0]
        assert grad is not None
        dim, keepdim = self.saved_value("dim"), self.saved_value("keepdim")
        indices = self.saved_value("indices").data
        sizes = self.saved_value("self_sym_sizes")
        g = grad.data
        if not keepdim and sizes:
            g = np.expand_dims(g, dim)
            indices = np.expand_dims(indices, dim)
        out = np.zeros(sizes, dtype=grad.dtype.numpy)
        if sizes:
            np.put_along_axis(out, indices, g, axis=dim)
        else:
            out = g.copy()
        return [Tensor(as_array(out, grad.dtype.numpy), grad.ctx)]


class MaxBackward0(_Selected):
    name = "MaxBackward0"


class MinBackward0(_Selected):
    name = "MinBackward0"


def _extreme(self: Tensor, largest: bool, dim: int | None, keepdim: bool) -> Any:
    """max()/min() (one tensor) or max(dim)/min(dim) (values and indices)."""
    if self.numel() == 0:
        which = "max" if largest else "min"
        raise errors.TorchError("RuntimeError", errors.empty_reduction(which))
    if dim is None:
        values = as_array(np.max(self.data) if largest else np.min(self.data),
                          self.data.dtype)
        node_type = MaxBackward1 if largest else MinBackward1
        out, node = record(node_type, [self], values, self)
        if node:
            node.save("self", self)
            node.save("result", out)
        return out
    d = normalize_dim(dim, self.ndim)
    data = self.data if self.ndim else self.data.reshape(1)
    indices = np.argmax(data, axis=d) if largest else np.argmin(data, axis=d)
    picked = np.take_along_axis(data, np.expand_dims(indices, d), axis=d)
    if not keepdim:
        picked = np.squeeze(picked, axis=d)
    else:
        indices = np.expand_dims(indices, d)
    if not self.ndim:
        picked, indices = picked.reshape(()), np.asarray(indices).reshape(())
    node_type2 = MaxBackward0 if largest else MinBackward0
    outputs, node2 = record_outputs(node_type2, [self], [
        as_array(picked, self.data.dtype), as_array(indices, np.dtype(np.int64))], self)
    if node2:
        node2.input_metadata = node2.input_metadata[:1]
        node2.save("dim", d)
        node2.save("keepdim", keepdim)
        node2.save("indices", outputs[1])
        node2.save("self_sym_sizes", self.shape)
    return outputs[0], outputs[1]


def max(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    return _extreme(self, True, dim, keepdim)


def min(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    return _extreme(self, False, dim, keepdim)


def argmax(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg(self, np.argmax, dim, keepdim)


def argmin(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg(self, np.argmin, dim, keepdim)


def _arg(self: Tensor, kernel: Any, dim: int | None, keepdim: bool) -> Tensor:
    if dim is None:
        index = kernel(self.data.reshape(-1))
        values = np.asarray(index, dtype=np.int64)
        if keepdim:
            values = values.reshape((1,) * self.ndim)
        return Tensor(values, self.ctx)
    d = normalize_dim(dim, self.ndim)
    data = self.data if self.ndim else self.data.reshape(1)
    out = kernel(data, axis=d)
    if keepdim:
        out = np.expand_dims(out, d)
    return Tensor(np.asarray(out, dtype=np.int64).reshape(
        () if not self.ndim else np.shape(out)), self.ctx)


class _ExtremesAlong(Node):
    """amax / amin: the gradient split evenly among the ties along the reduced dims."""

    saved_names = ("dim", "keepdim", "result", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self").data
        result = self.saved_value("result").data
        dims, keepdim = self.saved_value("dim"), self.saved_value("keepdim")
        g = grad.data
        if not keepdim and x.ndim:
            for d in dims:
                g = np.expand_dims(g, d)
                result = np.expand_dims(result, d)
        mask = x == result
        count = mask.sum(axis=dims, keepdims=True)
        values = np.where(mask, g / count.astype(g.dtype), g.dtype.type(0))
        return [Tensor(as_array(values, grad.dtype.numpy), grad.ctx)]


class AmaxBackward0(_ExtremesAlong):
    name = "AmaxBackward0"


class AminBackward0(_ExtremesAlong):
    name = "AminBackward0"


def amax(self: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    return _amax_amin(self, True, dim, keepdim)


def amin(self: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    return _amax_amin(self, False, dim, keepdim)


def _amax_amin(self: Tensor, largest: bool, dim: Any, keepdim: bool) -> Tensor:
    dims = normalize_dims(None if dim == () else dim, self.ndim)
    kernel = np.max if largest else np.min
    values = as_array(kernel(self.data, axis=dims, keepdims=keepdim), self.data.dtype)
    out, node = record(AmaxBackward0 if largest else AminBackward0, [self], values, self)
    if node:
        node.save("dim", dims)
        node.save("keepdim", keepdim)
        node.save("self", self)
        node.save("result", out)
    return out


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
    total = np.sum(np.exp(x - top), axis=dims, keepdims=True)
    values = np.log(total) + top
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
        raise errors.TorchError("RuntimeError", errors.NORM_OF_INTEGERS)
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
        x, result = self.saved_value("self").data, self.saved_value("result").data
        flat = x.reshape(-1)
        others = np.array([np.prod(np.delete(flat, i)) for i in range(flat.size)],
                          dtype=x.dtype).reshape(x.shape) if np.any(x == 0) else result / x
        return [Tensor(as_array(grad.data * others, x.dtype), grad.ctx)]


def prod(self: Tensor) -> Tensor:
    dtype = _sum_dtype(self)
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
        g, result = grad.data, self.saved_value("result").data
        if not keepdim and x.ndim:
            for d in dims:
                g = np.expand_dims(g, d)
                result = np.expand_dims(result, d)
        count = 1
        for d in dims:
            count *= x.shape[d]
        centred = x - np.mean(x, axis=dims, keepdims=True)
        scale = x.dtype.type(count - correction if count > correction else 0)
        values = g * x.dtype.type(2) * centred / scale
        if self.name == "StdBackward0":
            values = values / (x.dtype.type(2) * result)
        return [Tensor(as_array(values, x.dtype), grad.ctx)]


class VarBackward0(_Spread):
    name = "VarBackward0"


class StdBackward0(_Spread):
    name = "StdBackward0"


def var(self: Tensor, dim: Any = None, correction: int = 1, keepdim: bool = False,
        std: bool = False) -> Tensor:
    _mean_check(self)
    dims = normalize_dims(dim, self.ndim)
    axis = dims if dims else None
    values = np.var(self.data, axis=axis, ddof=correction, keepdims=keepdim)
    if std:
        values = np.sqrt(values)
    out, node = record(StdBackward0 if std else VarBackward0, [self],
                       as_array(values, self.data.dtype), self)
    if node:
        node.save("dim", dims)
        node.save("keepdim", keepdim)
        node.save("correction", correction)
        node.save("self", self)
        node.save("result", out)
    return out


def cumulative_sum(self: Tensor, dim: int) -> Tensor:
    d = normalize_dim(dim, self.ndim)
    dtype = _sum_dtype(self)
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


def _recorded_sum_to(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """`at::sum_to` under create_graph: `sum()` to a 0-d shape (SumBackward0), else
    `sum(dims, keepdim=True)` (SumBackward1) and a view if leading dims went."""
    from engine.functions.shape import view

    if shape == ():
        return sum(grad)
    lead = grad.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and grad.shape[lead + i] != 1)
    out = sum(grad, dims, keepdim=True) if dims else grad
    return view(out, shape) if lead else out


def sum_to(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """`at::sum_to`: sum away leading dimensions and dimensions that were 1."""
    if grad.shape == shape:
        return grad
    if grad.requires_grad and grad.ctx.grad_mode:
        return _recorded_sum_to(grad, shape)
    values = grad.data
    lead = values.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and values.shape[lead + i] != 1)
    summed = cascade_sum(values, axes, True) if values.dtype.kind == "f" else np.sum(
        values, axis=axes, keepdims=True, dtype=values.dtype)
    return Tensor(as_array(summed.reshape(shape), values.dtype), grad.ctx)

