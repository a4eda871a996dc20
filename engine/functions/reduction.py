"""sum() and mean(): a whole tensor reduced to a 0-d tensor."""

from __future__ import annotations

import numpy as np

from engine import errors
from engine.functions._record import record
from engine.functions.higher_order import ExpandBackward0, recorded
from engine.node import Node
from engine.tensor import FLOAT32, INT64, Tensor, as_values


def _expand(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """`grad.expand(sizes)`: the 0-d gradient copied to every element."""
    values = as_values(np.broadcast_to(grad.data, shape).copy(), grad.dtype)
    return recorded(ExpandBackward0, values, [grad], grad)


class SumBackward0(Node):
    """sum: every element gets grad (`grad.expand(self_sym_sizes)`)."""

    name = "SumBackward0"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        return [_expand(grad, self.saved_value("self_sym_sizes"))]


def sum(self: Tensor) -> Tensor:
    dtype = FLOAT32 if self.is_floating_point else INT64
    out, node = record(SumBackward0, [self], as_values(np.sum(self.data, dtype=dtype), dtype), self)
    if node:
        node.save("self_sym_sizes", self.shape)
    return out


class MeanBackward0(Node):
    """mean: every element gets grad / numel."""

    name = "MeanBackward0"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        saved = self.unpack_saved()
        return [_expand(grad, saved["self_sym_sizes"]) / saved["self_sym_numel"]]


def mean(self: Tensor) -> Tensor:
    if not self.is_floating_point:
        raise errors.TorchError("RuntimeError", errors.MEAN_OF_INTEGERS)
    values = as_values(np.float32(np.sum(self.data, dtype=FLOAT32)) / np.float32(self.numel()),
                       FLOAT32)
    out, node = record(MeanBackward0, [self], values, self)
    if node:
        node.save("self_sym_sizes", self.shape)
        node.save("self_sym_numel", self.numel())
    return out
