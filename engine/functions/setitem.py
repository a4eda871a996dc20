"""Index assignment, `x[index] = value`, as PyTorch's `THPVariable_setitem` does it.

A basic index (ints, slices) selects a view and copies into it (`copy_to`), so the base
gets a CopySlices node; integer or bool tensors write in place with `index_put_`
(IndexPutBackward0). See Note [In-place ops] in inplace.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import errors
from engine.functions._record import record, wrap
from engine.functions.inplace import copy_, inplace
from engine.node import Node
from engine.tensor import Number, Tensor


def setitem(self: Tensor, index: Any, value: Tensor | Number) -> None:
    """`self[index] = value`: a basic index copies into the view it selects (CopySlices);
    integer or bool tensors write in place with index_put_ (IndexPutBackward0)."""
    from engine.functions.indexing import getitem

    parts = list(index) if isinstance(index, tuple) else [index]
    if any(isinstance(p, (Tensor, list)) for p in parts):
        index_put_(self, parts, value)
        return
    target = getitem(self, index)
    copy_to(target, wrap(value, self))


def copy_to(dst: Tensor, src: Tensor) -> None:
    """TensorIndexing.h `copy_to`: the same shape is copied; a 0-d source fills; otherwise
    the source is viewed without its leading 1s and expanded to dst's shape (recording
    ViewBackward0 and ExpandBackward0 when it requires grad), then copied."""
    if dst.shape == src.shape or src.ndim == 0:
        copy_(dst, src)
        return
    from engine.functions.dims import expand
    from engine.functions.shape import view

    sizes = list(src.shape)
    while sizes and sizes[0] == 1:
        sizes.pop(0)
    src = view(src, tuple(sizes))
    if src.shape != dst.shape:
        src = expand(src, dst.shape)
    copy_(dst, src)


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


def index_put_(self: Tensor, parts: list[Any], value: Tensor | Number) -> None:
    key = tuple(p.data if isinstance(p, Tensor) else np.asarray(p) if isinstance(p, list)
                else p for p in parts)
    source = wrap(value, self)

    def compute(before: Tensor) -> Tensor:
        values = np.array(before.data, copy=True)
        try:
            values[key] = source.data.astype(values.dtype)
        except (IndexError, ValueError) as e:
            raise errors.TorchError("IndexError", str(e)) from None
        out, node = record(IndexPutBackward0, [before, source], values, before)
        if node:
            node.save("indices", key)
        return out

    inplace(self, compute)
