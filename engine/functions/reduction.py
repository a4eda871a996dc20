"""Reductions: sum, mean, max, min, amax, amin, logsumexp, norm, prod, var, std, with
`dim` and `keepdim` as PyTorch takes them. A reduction's backward spreads the gradient
back over the reduced dimensions (`unsqueeze` what `keepdim=False` removed, then
`expand`), so under create_graph it records those view nodes."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import dtypes, errors, op_errors
from engine.functions._record import (
    record,
)
from engine.functions.arithmetic import div_scalar
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
    from engine.functions.dims import unsqueeze

    for d in sorted(dims):
        if d < ndim:
            grad = unsqueeze(grad, d)
    return grad


def sum_backward(grad: Tensor, sizes: tuple[int, ...], dims: Dims, keepdim: bool) -> Tensor:
    """sum's backward: unsqueeze the reduced dims (unless kept), then expand to sizes."""
    from engine.functions.dims import expand

    if not keepdim and sizes:
        grad = unsqueeze_multiple(grad, dims, len(sizes))
    return expand(grad, sizes)


class SumBackward0(Node):
    """sum(): every element gets the gradient (`grad.expand(self_sym_sizes)`)."""

    name = "SumBackward0"
    saved_names = ("self_sym_sizes",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        from engine.functions.dims import expand

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


def sum_dtype(t: Tensor) -> dtypes.DType:
    return t.dtype if t.is_floating_point else dtypes.int64


def _sum_values(data: np.ndarray, dims: Dims, keepdim: bool, dtype: dtypes.DType) -> np.ndarray:
    """The sum over dims, floats in PyTorch's order (Note [Summation order])."""
    if dtype.is_floating_point:
        return cascade_sum(data.astype(dtype.numpy, copy=False), dims, keepdim)
    return as_array(np.sum(data, axis=dims, keepdims=keepdim, dtype=dtype.numpy), dtype.numpy)


def sum(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    dtype = sum_dtype(self)
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


def mean_check(t: Tensor) -> None:
    if not t.is_floating_point:
        raise errors.TorchError("RuntimeError", op_errors.mean_of(t.dtype))


class MeanBackward0(Node):
    """mean(): every element gets grad / numel."""

    name = "MeanBackward0"
    saved_names = ("self_sym_numel", "self_sym_sizes")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        from engine.functions.dims import expand

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
    mean_check(self)
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
