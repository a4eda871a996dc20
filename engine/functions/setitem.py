"""Index assignment, `x[index] = value`, as PyTorch's `THPVariable_setitem` does it.

A number becomes a 0-d tensor of x's dtype. One index of its own is taken apart first:
False writes nothing, `...` writes into x itself, None and True into `x.unsqueeze(0)`, an
integer into `select`, a slice into `slice` (or into x itself when it is whole). Otherwise
the basic parts select a view as getitem's do (a whole slice is skipped) and the value is
copied into it (`copy_to`); integer or bool tensors among the parts write into that view
with `index_put_` (IndexPutBackward0). Writing into a view gives its base a CopySlices
node (Note [In-place ops] in inplace.py); writing into x itself records the op's own
node: `copy_` (CopyBackwards) of a value of x's shape, `fill_` (FillBackward3) of a 0-d one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import errors, op_errors
from engine.functions._record import record
from engine.functions.dims import expand, unsqueeze
from engine.functions.indexing import select
from engine.functions.inplace import copy_, fill_, inplace
from engine.functions.shape import view
from engine.functions.slicing import apply_slice, apply_slicing, numpy_key
from engine.node import Node
from engine.tensor import Number, Tensor


def setitem(self: Tensor, index: Any, value: Tensor | Number) -> None:
    """`self[index] = value` (python_variable_indexing.cpp, then TensorIndexing.h)."""
    source = value if isinstance(value, Tensor) else _value_tensor(value, self)
    if index is False:
        return
    if index is Ellipsis:
        copy_to(self, source)
    elif index is None or index is True:
        copy_to(unsqueeze(self, 0), source)
    elif isinstance(index, int):
        copy_to(select(self, 0, index), source)
    elif isinstance(index, slice):
        copy_to(apply_slice(self, 0, index), source)
    else:
        sliced, indices = apply_slicing(self, list(index) if isinstance(index, tuple)
                                         else [index])
        if indices:
            index_put_(sliced, indices, source)
        else:
            copy_to(sliced, source)


def _value_tensor(value: Number, like: Tensor) -> Tensor:
    """`valueToTensor`: a number as a 0-d tensor of the written tensor's dtype."""
    return Tensor(np.asarray(value).astype(like.data.dtype), like.ctx)


def copy_to(dst: Tensor, src: Tensor) -> None:
    """TensorIndexing.h `copy_to`: a source of dst's shape is copied; a 0-d one fills;
    otherwise the source is viewed without its leading 1s and expanded to dst's shape
    (recording ViewBackward0 and ExpandBackward0 when it requires grad), then copied."""
    if dst.shape == src.shape:
        copy_(dst, src)
        return
    if src.ndim == 0:
        fill_(dst, src)
        return
    src = _without_leading_ones(src)
    if src.shape != dst.shape:
        src = expand(src, dst.shape)
    copy_(dst, src)


def _without_leading_ones(src: Tensor) -> Tensor:
    """`slicePrefix1sDims`: the source's leading 1s dropped (a view, when there are any)."""
    sizes = list(src.shape)
    while sizes and sizes[0] == 1:
        sizes.pop(0)
    return src if len(sizes) == src.ndim else view(src, tuple(sizes))


class IndexPutBackward0(Node):
    """index_put_: the written places get zeros, values get the gradient there."""

    name = "IndexPutBackward0"
    saved_names = ("indices",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        key = self.saved_value("indices")
        grad_self = None
        if self.needs_input_grad(0):
            kept = np.array(grad.data, copy=True)
            kept[key] = 0
            grad_self = Tensor(kept, grad.ctx)
        grad_values = None
        if len(self.next_edges) > 1 and self.needs_input_grad(1):
            grad_values = Tensor(np.array(grad.data[key]), grad.ctx)
        return [grad_self, grad_values]


def index_put_(self: Tensor, indices: dict[int, Any], value: Tensor) -> None:
    """`self.index_put_(indices, value)`: the value (without its leading 1s) must
    broadcast to the indexed places, and have self's dtype unless one mask is the index."""
    one_mask = len(indices) == 1 and next(iter(indices.values())).dtype == np.bool_
    if value.dtype is not self.dtype and not one_mask:     # a lone mask takes any dtype
        raise errors.TorchError("RuntimeError", op_errors.index_put_dtypes(
            op_errors.legacy_name(self.dtype), op_errors.legacy_name(value.dtype)))
    source = _without_leading_ones(value)
    key = numpy_key(self, indices)
    target = np.empty(self.shape, dtype=np.int8)[key].shape
    if not _broadcasts(source.shape, target):
        raise errors.TorchError("RuntimeError", op_errors.index_put_shape(source.shape, target))

    def compute(before: Tensor) -> Tensor:
        values = np.array(before.data, copy=True)
        values[key] = source.data
        out, node = record(IndexPutBackward0, [before, source], values, before)
        if node:
            node.save("indices", key)
        return out

    inplace(self, compute)


def _broadcasts(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether a value of `shape` broadcasts to exactly `target`."""
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False
