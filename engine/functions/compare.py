"""Comparisons, masks and the ops that choose between values: where, maximum, minimum,
clamp. Comparisons give bool tensors, which are never differentiable (no node, no
sequence number); the choosing ops send the gradient to the value that was chosen."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from engine import dtypes, errors, op_errors
from engine.functions._record import (
    Operand,
    binary_values,
    broadcast_shapes,
    record,
    result_type,
    values_as,
    wrap,
)
from engine.node import Node
from engine.tensor import Number, Tensor, as_array

COMPARISONS: Mapping[str, Callable[[Any, Any], Any]] = MappingProxyType({
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
    "eq": operator.eq, "ne": operator.ne,
})


def compare(op: str, self: Tensor, other: Operand) -> Tensor:
    """`a < b` and friends: computed in the promoted dtype, a bool tensor out."""
    other_t = wrap(other, self)
    dtype = result_type(self, other_t)
    shape = broadcast_shapes(self.shape, other_t.shape)
    self.ctx.check_elements(shape)
    values = COMPARISONS[op](values_as(self, dtype), values_as(other_t, dtype))
    return Tensor(as_array(values, np.dtype(np.bool_)), self.ctx)


def logical(op: str, self: Tensor, other: Operand | None = None) -> Tensor:
    """`&`, `|`, `^` on bool (or integer) tensors, and `~`."""
    if op == "not":
        if self.dtype is dtypes.bool_:
            return Tensor(np.logical_not(self.data), self.ctx)
        if self.is_floating_point:
            raise errors.TorchError("TypeError", op_errors.BITWISE_NOT_FLOAT)
        return Tensor(as_array(np.invert(self.data), self.data.dtype), self.ctx)
    assert other is not None
    other_t = wrap(other, self)
    dtype = result_type(self, other_t)
    if dtype.is_floating_point:
        raise errors.TorchError("NotImplementedError", op_errors.bitwise_on_float(op))
    kernel = {"and": operator.and_, "or": operator.or_, "xor": operator.xor}[op]
    return Tensor(binary_values(kernel, self, other_t, dtype), self.ctx)


class WhereBackward0(Node):
    """where(condition, self, other): other gets grad where the condition is False,
    self where it is True (the condition has no edge)."""

    name = "WhereBackward0"
    saved_names = ("condition",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        condition = self.saved_value("condition")
        grad_other = (_where_values(~condition, grad) if self.needs_input_grad(1) else None)
        grad_self = _where_values(condition, grad) if self.needs_input_grad(0) else None
        return [grad_self, grad_other]


def wrap_mask(mask: np.ndarray, like: Tensor) -> Tensor:
    return Tensor(np.asarray(mask, dtype=np.bool_), like.ctx)


def _where_values(condition: np.ndarray, grad: Tensor) -> Tensor:
    """`where(condition, grad, 0)`, recorded under create_graph."""
    shape = broadcast_shapes(condition.shape, grad.shape)
    values = as_array(np.where(condition, np.broadcast_to(grad.data, shape),
                               grad.dtype.numpy.type(0)), grad.dtype.numpy)
    out, node = record(WhereBackward0, [grad, None], values, grad)
    if node:
        node.save("condition", np.broadcast_to(condition, shape))
    return out


def _number_tensor(value: Operand, like: Tensor) -> Tensor:
    """A Python number as torch.where's scalar overload takes it when both are numbers."""
    assert not isinstance(value, Tensor)
    kind = (dtypes.bool_ if isinstance(value, bool) else
            dtypes.DEFAULT_FLOAT if isinstance(value, float) else dtypes.int64)
    return Tensor(np.asarray(value, dtype=kind.numpy), like.ctx)


def where(condition: Tensor, self: Operand, other: Operand) -> Tensor:
    """`torch.where(condition, x, y)`: x where the condition holds, else y."""
    if condition.dtype is not dtypes.bool_:
        raise errors.TorchError("RuntimeError", op_errors.where_condition(condition.dtype))
    like = self if isinstance(self, Tensor) else other if isinstance(other, Tensor) else None
    if like is None:        # two numbers: each a 0-d tensor of its kind (a float in the
        self, other = (_number_tensor(v, condition) for v in (self, other))   # default)
        like = self
    x, y = wrap(self, like), wrap(other, like)
    dtype = result_type(x, y)
    shape = broadcast_shapes(broadcast_shapes(condition.shape, x.shape), y.shape)
    like.ctx.check_elements(shape)
    values = as_array(np.where(condition.data, values_as(x, dtype), values_as(y, dtype)),
                      dtype.numpy)
    out, node = record(WhereBackward0, [x, y], values, like)
    if node:
        node.save("condition", np.broadcast_to(condition.data, shape))
    return out


class _Choose(Node):
    """maximum / minimum: the chosen input gets the gradient; on a tie each gets half."""

    saved_names = ("other", "self")
    picks_larger = True

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        from engine.functions.arithmetic import div_scalar

        (grad,) = grads
        assert grad is not None
        a, b = self.saved_value("self").data, self.saved_value("other").data
        grad_other = grad_self = None
        if self.needs_input_grad(1):
            share = where(wrap_mask(a == b, grad), div_scalar(grad, 2), grad)
            loses = a > b if self.picks_larger else a < b
            grad_other = _where_values(~loses, share)
        if self.needs_input_grad(0):
            share = where(wrap_mask(a == b, grad), div_scalar(grad, 2), grad)
            loses = a < b if self.picks_larger else a > b
            grad_self = _where_values(~loses, share)
        return [grad_self, grad_other]


class MaximumBackward0(_Choose):
    name = "MaximumBackward0"


class MinimumBackward0(_Choose):
    name = "MinimumBackward0"
    picks_larger = False


def _choose(node_type: type[_Choose], kernel: Any, self: Tensor, other: object) -> Tensor:
    if not isinstance(other, Tensor):
        raise op_errors.not_a_tensor_argument(node_type.name.removesuffix("Backward0").lower(),
                                           "other", 2, other)
    dtype = result_type(self, other)
    out, node = record(node_type, [self, other], binary_values(kernel, self, other, dtype),
                       self)
    if node:
        node.save("other", other)          # see Note [Saving order]
        node.save("self", self)
    return out


def maximum(self: Tensor, other: object) -> Tensor:   # `other` checked in _choose
    return _choose(MaximumBackward0, np.maximum, self, other)


def minimum(self: Tensor, other: object) -> Tensor:
    return _choose(MinimumBackward0, np.minimum, self, other)


class MaskedFillBackward0(Node):
    """masked_fill(mask, value): the filled places get no gradient."""

    name = "MaskedFillBackward0"
    saved_names = ("mask",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [_where_values(~self.saved_value("mask"), grad)]


def masked_fill(self: Tensor, mask: Tensor, value: Number) -> Tensor:
    if mask.dtype is not dtypes.bool_:
        raise errors.TorchError("RuntimeError", "masked_fill_ only supports boolean masks, but "
                                f"got mask with dtype {op_errors.legacy_name(mask.dtype).lower()}")
    shape = broadcast_shapes(self.shape, mask.shape)    # out of place: self is expanded
    self.ctx.check_elements(shape)
    values = np.where(mask.data, self.dtype.numpy.type(value), self.data)
    out, node = record(MaskedFillBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("mask", np.broadcast_to(mask.data, shape))
    return out
