"""The reductions that pick values: max, min (over everything or along a dim, with
indices), argmax, argmin, amax, amin. Their backward sends the gradient to the chosen
elements (split evenly among ties where PyTorch splits it)."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import errors, op_errors
from engine.functions._record import (
    record,
    record_outputs,
)
from engine.functions.reduction import normalize_dim, normalize_dims
from engine.functions.shape import view
from engine.node import Node
from engine.tensor import Tensor, as_array


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
        raise errors.TorchError("RuntimeError", op_errors.empty_reduction(which))
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
        x, result = self.saved_value("self").data, self.saved_value("result")
        dims, keepdim = self.saved_value("dim"), self.saved_value("keepdim")
        g = grad.data
        if not keepdim and x.ndim:      # restore_reduced_dims reshapes grad and result; the
            g = g.reshape([1 if d in dims else n for d, n in enumerate(x.shape)])
            result = view(result, g.shape)      # result's view is a node under create_graph
        mask = x == result.data
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
