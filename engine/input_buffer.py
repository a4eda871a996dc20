"""InputBuffer: where a node's incoming gradients wait and are summed.

The first gradient is stored; each later one is added as `old + new` in arrival order
(input_buffer.cpp `accumulate`). In float32 the order can change the result, so it is
kept exactly: see the reference's `a*1.0 + a*-1e8 + a*1e8` example.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from engine.functions._record import cast
from engine.tensor import FLOAT32, FLOAT32_SCALAR, Tensor, Values, as_values

if TYPE_CHECKING:
    from engine.node import Node


class InputBuffer:
    __slots__ = ("total",)

    def __init__(self) -> None:
        self.total: Tensor | None = None

    def add(self, grad: Tensor) -> None:
        self.total = grad if self.total is None else self.total + grad


def validate_output(grad: Tensor, target: Node) -> Tensor:
    """`validate_outputs`: sum a broadcast gradient back to the input's shape and dtype."""
    values = grad.data
    if type(values) is FLOAT32_SCALAR and target.input_dtype is FLOAT32 and not target.input_shape:
        return grad                 # the common case: a 0-d float32 for a 0-d float32
    if values.shape != target.input_shape:
        if grad.requires_grad and grad.ctx.grad_mode:
            return _recorded_sum_to(grad, target.input_shape)
        values = sum_to(values, target.input_shape)
    if target.input_dtype is not None and values.dtype != target.input_dtype:
        values = cast(values, target.input_dtype)
    if values is grad.data:
        return grad
    return Tensor(as_values(values, values.dtype), grad.ctx, grad_fn=grad.grad_fn)


def _recorded_sum_to(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """`at::sum_to` under create_graph: `sum()` to a 0-d shape (SumBackward0), else
    `sum(dims, keepdim=True)` (SumBackward1) and a view if leading dims went
    (ViewBackward0)."""
    from engine.functions import sum as full_sum
    from engine.functions.higher_order import SumBackward1, ViewBackward0, recorded

    if shape == ():
        return full_sum(grad)
    values = grad.data
    lead = values.ndim - len(shape)
    kept = sum_to(values, (1,) * lead + shape)
    out = recorded(SumBackward1, kept, [grad], grad)
    if lead:
        out = recorded(ViewBackward0, as_values(kept.reshape(shape), kept.dtype), [out], out)
    return out


def sum_to(values: Values, shape: tuple[int, ...]) -> Values:
    """`at::sum_to`: sum away leading dimensions and dimensions that were 1."""
    lead = values.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and values.shape[lead + i] != 1)
    summed = np.sum(values, axis=axes, keepdims=True, dtype=values.dtype)
    return as_values(summed.reshape(shape), values.dtype)
