"""Indexing: `x[0]`, `x[:, 1:]`, `x[None]`, `x[mask]`, `x[[0, 2]]`.

PyTorch applies a basic index one part at a time: an integer is `select` (SelectBackward0),
a slice is `slice` (SliceBackward0; a full `:` is skipped), None is `unsqueeze`. Integer
and bool tensors (or lists) are advanced indexing, one `index` op (IndexBackward0) at
the end. Basic indexing gives views that share the source's values; advanced indexing
copies. Each backward puts the gradient back where the values came from, in zeros.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from engine import dtypes, errors, op_errors
from engine.functions._record import recorded
from engine.functions.dims import unsqueeze
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
    if self.ndim == 0:
        raise errors.TorchError("IndexError", op_errors.INDEX_0_DIM)
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


def _is_full(part: slice, size: int) -> bool:
    return part.indices(size) == (0, size, 1)


def getitem(self: Tensor, index: Any) -> Tensor:
    """`self[index]` as PyTorch's `applySlicing` then `index` do it."""
    parts = list(index) if isinstance(index, tuple) else [index]
    advanced = [p for p in parts if isinstance(p, (Tensor, list))]
    if advanced:
        return _advanced(self, parts)
    used = sum(1 for p in parts if p is not None and p is not Ellipsis)
    if used > self.ndim:
        if self.ndim == 0 and used == 1:
            (only,) = [p for p in parts if p is not None and p is not Ellipsis]
            if isinstance(only, int) and not isinstance(only, bool) and only != 0:
                # PyTorch reads a 0-d tensor as one of size 0 for any index but 0
                raise errors.TorchError("IndexError",
                                        op_errors.index_out_of_bounds(only, 0, 0))
            raise errors.TorchError("IndexError", op_errors.INDEX_0_DIM)
        raise errors.TorchError("IndexError", op_errors.too_many_indices(self.ndim, used))
    if isinstance(index, slice):
        # a lone slice is never skipped, even whole (`x[:]`: SliceBackward0, not an alias):
        # PyTorch's getitem disables applySlice's optimisation outside a tuple index
        return slice_dim(self, 0, index.start, index.stop, index.step)
    out = self
    dim = 0
    for p in parts:
        if p is Ellipsis:
            dim += self.ndim - used
        elif p is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(p, bool):
            raise errors.TorchError("UnsupportedError", "the lab takes bool indices as tensors")
        elif isinstance(p, int):
            out = select(out, dim, p)
        elif isinstance(p, slice):
            if not _is_full(p, out.shape[dim]):
                out = slice_dim(out, dim, p.start, p.stop, p.step)
            dim += 1
        else:
            raise errors.TorchError("IndexError", op_errors.BAD_INDEX)
    return out if out is not self else _alias(self)


def _alias(self: Tensor) -> Tensor:
    """`x[...]` or `x[:, :]`: PyTorch returns a new view of all of x (an alias)."""
    out, node = record_view(AliasBackward0, self, self.data.view())
    if node:
        node.save("self_sym_sizes", self.shape)
    return out


class AliasBackward0(Node):
    name = "AliasBackward0"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return [grads[0]]


def _advanced(self: Tensor, parts: list[Any]) -> Tensor:
    """Indexing with integer or bool tensors (or lists): one IndexBackward0, a copy."""
    where: list[Any] = []
    for p in parts:
        if isinstance(p, Tensor):
            if p.dtype is dtypes.bool_ or p.dtype is dtypes.int64:
                where.append(p.data)
            else:
                raise errors.TorchError("IndexError", op_errors.BAD_INDEX_TENSOR)
        elif isinstance(p, list):
            where.append(np.asarray(p))
        else:
            where.append(p)
    _check_bounds(self, parts, where)
    key: Any = tuple(where)
    try:
        values = np.array(self.data[key], order="C")   # ATen allocates the result contiguous
    except IndexError as e:
        raise errors.TorchError("IndexError", _index_message(self, e)) from None
    self.ctx.check_elements(values.shape)
    from engine.functions._record import record

    out, node = record(IndexBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("indices", key)
        node.save("self_sym_sizes", self.shape)
        node.save("_where", key)
    return out


def _check_bounds(self: Tensor, parts: list[Any], where: list[Any]) -> None:
    """An integer index tensor's values must fit its dimension. PyTorch's index kernel
    numbers the dimension among the index tensors (`x[:, [7]]` is out of bounds "for
    dimension 0"), and integers (selects) by the tensor's own dimensions."""
    used = sum(1 for p in parts if p is not None and p is not Ellipsis)
    dim = 0
    k = 0
    for p, w in zip(parts, where, strict=True):
        if p is Ellipsis:
            dim += self.ndim - used
            continue
        if p is None:
            continue
        if dim >= self.ndim:
            return                      # numpy's error says too many indices
        size = self.shape[dim]
        if isinstance(p, Tensor) and p.dtype is dtypes.bool_:
            for i, n in enumerate(p.shape):
                if dim + i >= self.ndim or self.shape[dim + i] != n:
                    raise errors.TorchError("IndexError", (
                        f"The shape of the mask {list(p.shape)} at index {i} does not match the "
                        f"shape of the indexed tensor {list(self.shape)} at index {dim + i}"))
            dim += p.ndim
            continue
        if isinstance(p, (Tensor, list)):
            values = np.asarray(w)
            if values.dtype.kind in "iu" and values.size:
                bad = values[(values < -size) | (values >= size)]
                if bad.size:
                    raise errors.TorchError("IndexError", op_errors.index_out_of_bounds(
                        int(bad.reshape(-1)[0]), k, size))
            k += 1
        elif isinstance(p, int) and not -size <= p < size:
            raise errors.TorchError("IndexError", op_errors.index_out_of_bounds(p, dim, size))
        dim += 1


def _index_message(self: Tensor, e: IndexError) -> str:
    text = str(e)
    if "out of bounds" in text:
        parts = text.split()
        try:
            index, axis, size = int(parts[1]), int(parts[5]), int(parts[-1])
            return op_errors.index_out_of_bounds(index, axis, size)
        except (ValueError, IndexError):
            pass
    return text
