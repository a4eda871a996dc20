"""Views that add, drop or stretch dimensions: unsqueeze, squeeze, expand."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import errors, op_errors
from engine.functions.reduction import normalize_dim, sum_to
from engine.functions.shape import Shape, record_view, reshape
from engine.node import Node
from engine.tensor import Tensor


class UnsqueezeBackward0(Node):
    """unsqueeze(dim): the gradient squeezed at dim."""

    name = "UnsqueezeBackward0"
    saved_names = ("dim",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [squeeze(grad, self.saved_value("dim"))]


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    d = normalize_dim(dim, self.ndim + 1) if self.ndim else normalize_dim(dim, 1)
    if self.ndim == 0 and dim in (0, -1):
        d = 0
    out, node = record_view(UnsqueezeBackward0, self, np.expand_dims(self.data, d))
    if node:
        node.save("dim", d)
    return out


class SqueezeBackward0(Node):
    """squeeze(): the gradient reshaped back to the source's sizes."""

    name = "SqueezeBackward0"
    saved_names = ("self_sym_sizes",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [reshape(grad, self.saved_value("self_sym_sizes"))]


class SqueezeBackward1(Node):
    """squeeze(dim): the gradient unsqueezed at dim (when that dim was squeezed)."""

    name = "SqueezeBackward1"
    saved_names = ("dim", "self_sym_sizes")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        sizes, dim = self.saved_value("self_sym_sizes"), self.saved_value("dim")
        if grad.ndim == len(sizes):
            return [grad]
        return [unsqueeze(grad, dim)]


class SqueezeBackward2(Node):
    """squeeze(dims): the gradient reshaped back."""

    name = "SqueezeBackward2"
    saved_names = ("dim", "self_sym_sizes")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [reshape(grad, self.saved_value("self_sym_sizes"))]


def squeeze(self: Tensor, dim: Any = None) -> Tensor:
    if dim is None:
        out, node = record_view(SqueezeBackward0, self, np.squeeze(self.data))
        if node:
            node.save("self_sym_sizes", self.shape)
        return out
    if isinstance(dim, int):
        d = normalize_dim(dim, self.ndim)
        values = (np.squeeze(self.data, axis=d) if self.ndim and self.shape[d] == 1
                  else self.data.view())
        out, node = record_view(SqueezeBackward1, self, values)
        if node:
            node.save("dim", d)
            node.save("self_sym_sizes", self.shape)
        return out
    dims = tuple(normalize_dim(d, self.ndim) for d in dim)
    axes = tuple(d for d in dims if self.ndim and self.shape[d] == 1)
    out, node = record_view(SqueezeBackward2, self, np.squeeze(self.data, axis=axes))
    if node:
        node.save("dim", dims)
        node.save("self_sym_sizes", self.shape)
    return out


class ExpandBackward0(Node):
    """expand(sizes): the gradient summed back to the source's sizes."""

    name = "ExpandBackward0"
    saved_names = ("self_sym_sizes",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [sum_to(grad, self.saved_value("self_sym_sizes"))]


def expand(self: Tensor, sizes: Shape) -> Tensor:
    sizes = tuple(sizes)
    if len(sizes) < self.ndim:
        raise errors.TorchError("RuntimeError", op_errors.expand_too_few(sizes, self.shape,
                                                                          self.dtype))
    lead = len(sizes) - self.ndim
    target = []
    for i, size in enumerate(sizes):
        if i < lead:
            if size == -1:
                raise errors.TorchError("RuntimeError", op_errors.expand_negative(i, size))
            if size < 0:          # ATen multiplies the sizes as unsigned numbers first
                raise errors.TorchError("RuntimeError", "numel: integer multiplication overflow")
            target.append(size)
            continue
        own = self.shape[i - lead]
        if size == -1:
            size = own
        elif own != 1 and own != size:
            raise errors.TorchError("RuntimeError", op_errors.expand_mismatch(
                size, own, i, sizes, self.shape))
        target.append(size)
    self.ctx.check_elements(tuple(target))
    out, node = record_view(ExpandBackward0, self, np.broadcast_to(self.data, tuple(target)))
    if node:
        node.save("self_sym_sizes", self.shape)
    return out


# -- tensors joined and repeated ----------------------------------------------------------


def broadcast_pair(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """`torch.broadcast_tensors(a, b)`: each expanded to the common shape
    (ExpandBackward0), a tensor that already has it returned as it is. F.mse_loss
    broadcasts its operands so before the loss."""
    from engine.functions._record import broadcast_shapes

    shape = broadcast_shapes(a.shape, b.shape)
    return tuple(t if t.shape == shape else expand(t, shape)   # type: ignore[return-value]
                 for t in (a, b))
