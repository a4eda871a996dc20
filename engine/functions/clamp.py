"""clamp(min, max), clamp_min, clamp_max: the gradient passes where the value was
kept, and (for tensor bounds) goes to the bound that was chosen."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import dtypes, errors, op_errors
from engine.functions._record import (
    Operand,
    record,
    result_type,
    values_as,
    wrap,
)
from engine.functions.compare import _where_values
from engine.node import Node
from engine.tensor import Number, Tensor, as_array


class ClampBackward1(Node):
    """clamp(self, min, max) with number bounds: grad where min <= self <= max, else 0
    (the bounds themselves pass the gradient)."""

    name = "ClampBackward1"
    saved_names = ("max", "min", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self").data
        low, high = self.saved_value("min"), self.saved_value("max")
        inside = np.ones(x.shape, dtype=bool)
        if low is not None:
            inside &= x >= low
        if high is not None:
            inside &= x <= high
        return [_where_values(inside, grad)]


class ClampBackward0(Node):
    """clamp(self, min, max) with tensor bounds: each bound gets the gradient where it
    was chosen, self where it stayed inside."""

    name = "ClampBackward0"
    saved_names = ("max", "min", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self").data
        low, high = self.saved_value("min"), self.saved_value("max")
        low_v = low.data if low is not None else None
        high_v = high.data if high is not None else None
        below = x < low_v if low_v is not None else np.zeros(x.shape, bool)
        above = x > high_v if high_v is not None else np.zeros(x.shape, bool)
        if low_v is not None and high_v is not None:
            below = below & ~(low_v > high_v)
            above = above | (low_v > high_v)
        out: list[Tensor | None] = [_where_values(~(below | above), grad)]
        if len(self.next_edges) > 1:
            out.append(_where_values(below, grad) if self.needs_input_grad(1) else None)
        if len(self.next_edges) > 2:
            out.append(_where_values(above, grad) if self.needs_input_grad(2) else None)
        return out


class ClampMinBackward0(Node):
    name = "ClampMinBackward0"
    saved_names = ("min", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [_where_values(self.saved_value("self").data >= self.saved_value("min"), grad)]


class ClampMaxBackward0(Node):
    name = "ClampMaxBackward0"
    saved_names = ("max", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [_where_values(self.saved_value("self").data <= self.saved_value("max"), grad)]


def _clamp_values(x: np.ndarray, low: Any, high: Any) -> np.ndarray:
    """x where it is within the bounds (nan, and -0.0 against a bound of 0, stay as they
    are), else the bound it crosses; min wins when min > max, as in PyTorch."""
    out = x
    if low is not None:
        out = np.where(out < low, low, out)
    if high is not None:
        out = np.where(out > high, high, out)
    return out


def clamp(self: Tensor, min: Operand | None = None, max: Operand | None = None) -> Tensor:
    """`x.clamp(min, max)`: numbers record ClampBackward1, tensors ClampBackward0."""
    if min is None and max is None:
        raise errors.TorchError("RuntimeError", op_errors.CLAMP_NO_BOUNDS)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        low = wrap(min, self) if min is not None else None
        high = wrap(max, self) if max is not None else None
        dtype = result_type(*(t for t in (self, low, high) if t is not None))
        values = _clamp_values(values_as(self, dtype),
                               values_as(low, dtype) if low is not None else None,
                               values_as(high, dtype) if high is not None else None)
        bounds = [t for t in (low, high) if t is not None]
        out, node = record(ClampBackward0, [self, *bounds], as_array(values, dtype.numpy), self)
        if node:
            node.save("self", self)
            node.save("min", low)
            node.save("max", high)
        return out
    dtype = result_type(self, *(wrap(b, self) for b in (min, max) if b is not None))
    x = values_as(self, dtype)
    values = _clamp_values(x, _bound(min, dtype), _bound(max, dtype))
    out, node1 = record(ClampBackward1, [self], as_array(values, dtype.numpy), self)
    if node1:
        node1.save("self", self)
        node1.save("min", min)
        node1.save("max", max)
    return out


def _bound(b: Number | None, dtype: dtypes.DType) -> Any:
    return None if b is None else dtype.numpy.type(b)


def clamp_min(self: Tensor, min: Number) -> Tensor:
    values = _clamp_values(self.data, _bound(min, self.dtype), None)
    out, node = record(ClampMinBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("self", self)
        node.save("min", min)
    return out


def clamp_max(self: Tensor, max: Number) -> Tensor:
    values = _clamp_values(self.data, None, _bound(max, self.dtype))
    out, node = record(ClampMaxBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("self", self)
        node.save("max", max)
    return out
