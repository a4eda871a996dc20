"""Indexing's ops: `select` (SelectBackward0), `slice` (SliceBackward0), `alias` and
`index` (IndexBackward0), of which `x[0]`, `x[:, 1:]`, `x[...]`, `x[mask]` and `x[[0, 2]]`
are made (engine/functions/slicing.py takes the index apart). Basic indexing gives views
that share the source's values; advanced indexing copies. Each backward puts the gradient
back where the values came from, in zeros.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from engine import errors, op_errors
from engine.functions._record import recorded
from engine.functions.shape import record_view
from engine.node import Node
from engine.tensor import Tensor, as_array


def _placed(grad: Tensor, sizes: tuple[int, ...], where: tuple[Any, ...],
            node_type: type[Node]) -> Tensor:
    """zeros(sizes) with `grad` written at `where`: the backward of taking `where`."""
    values = np.zeros(sizes, dtype=grad.dtype.numpy)
    values[where] = grad.data
    out = recorded(node_type, values, [grad], grad)
    if out.grad_fn is not None:
        out.grad_fn.save("_where", where)
    return out


def _taken(grad: Tensor, where: tuple[Any, ...], node_type: type[Node]) -> Tensor:
    """grad[where]: the backward of putting a gradient at `where`."""
    values = np.array(grad.data[where])
    out = recorded(node_type, values, [grad], grad)
    if out.grad_fn is not None:
        out.grad_fn.save("_where", where)
        out.grad_fn.save("self_sym_sizes", grad.shape)
    return out


class _Taking(Node):
    """A node whose forward took part of a tensor: backward places grad in zeros."""

    placing: ClassVar[type[Node]]

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [_placed(grad, self.saved_value("self_sym_sizes"), self.saved_value("_where"),
                        self.placing)]


class _Placing(Node):
    """A backward node that placed a gradient in zeros: its own backward takes it out."""

    taking: ClassVar[type[Node]]

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [_taken(grad, self.saved_value("_where"), self.taking)]


class SelectBackwardBackward0(_Placing):
    name = "SelectBackwardBackward0"


class SliceBackwardBackward0(_Placing):
    name = "SliceBackwardBackward0"


class IndexPutBackward0(_Placing):
    name = "IndexPutBackward0"


class SelectBackward0(_Taking):
    """select(dim, index): the gradient placed at that index, zeros elsewhere."""

    name = "SelectBackward0"
    saved_names = ("dim", "index", "self_sym_sizes")
    placing = SelectBackwardBackward0


class SliceBackward0(_Taking):
    """slice(dim, start, end, step): the gradient placed in the slice, zeros elsewhere."""

    name = "SliceBackward0"
    saved_names = ("dim", "end", "self_sym_sizes", "start", "step")
    placing = SliceBackwardBackward0


class IndexBackward0(_Taking):
    """index(indices): the gradient added at the indexed places (repeats add up)."""

    name = "IndexBackward0"
    saved_names = ("indices", "self_sym_sizes")
    placing = IndexPutBackward0

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        values = np.zeros(self.saved_value("self_sym_sizes"), dtype=grad.dtype.numpy)
        np.add.at(values, self.saved_value("_where"), grad.data)
        out = recorded(IndexPutBackward0, values, [grad], grad)
        if out.grad_fn is not None:
            out.grad_fn.save("_where", self.saved_value("_where"))
        return [out]


SelectBackwardBackward0.taking = SelectBackward0
SliceBackwardBackward0.taking = SliceBackward0
IndexPutBackward0.taking = IndexBackward0


def select(self: Tensor, dim: int, index: int) -> Tensor:
    if self.ndim == 0:        # PyTorch reads a 0-d tensor as one of size 0 but for index 0
        raise errors.TorchError("IndexError", op_errors.INDEX_0_DIM if index == 0 else
                                op_errors.index_out_of_bounds(index, 0, 0))
    size = self.shape[dim]
    if not -size <= index < size:
        raise errors.TorchError("IndexError", op_errors.index_out_of_bounds(index, dim, size))
    where: Any = (*(slice(None),) * dim, index % size, Ellipsis)
    out, node = record_view(SelectBackward0, self, self.data[where])
    if node:
        node.save("dim", dim)
        node.save("index", index)
        node.save("self_sym_sizes", self.shape)
        node.save("_where", where)
    return out


def slice_dim(self: Tensor, dim: int, start: int | None, stop: int | None,
              step: int | None) -> Tensor:
    if step is not None and step <= 0:
        raise errors.TorchError("ValueError", "step must be greater than zero")
    part = slice(start, stop, step)
    where: Any = (*(slice(None),) * dim, part, Ellipsis)
    out, node = record_view(SliceBackward0, self, self.data[where])
    if node:
        lo, hi, st = part.indices(self.shape[dim])
        node.save("dim", dim)
        node.save("start", lo)
        node.save("end", hi)
        node.save("step", st)
        node.save("self_sym_sizes", self.shape)
        node.save("_where", where)
    return out


def alias(self: Tensor) -> Tensor:
    """`x[...]` or `x[:, :]`: PyTorch returns a new view of all of x (an alias)."""
    out, node = record_view(AliasBackward0, self, self.data.view())
    if node:
        node.save("self_sym_sizes", self.shape)
    return out


class AliasBackward0(Node):
    name = "AliasBackward0"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return [grads[0]]


def index(self: Tensor, key: tuple[Any, ...]) -> Tensor:
    """`index(indices)`, `key` the indices as numpy takes them: one IndexBackward0, a copy
    of the places the tensors pick."""
    values = np.array(self.data[key], order="C")   # ATen allocates the result contiguous
    self.ctx.check_elements(values.shape)
    from engine.functions._record import record

    out, node = record(IndexBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("indices", key)
        node.save("self_sym_sizes", self.shape)
        node.save("_where", key)
    return out
