"""The binary losses: binary_cross_entropy (its own kernel, BinaryCrossEntropyBackward0)
and binary_cross_entropy_with_logits (a kernel forward, its backward a chain of ops)."""

from __future__ import annotations

import numpy as np

from engine import errors, op_errors
from engine.functions import libm
from engine.functions._record import record
from engine.functions.arithmetic import (
    add_scalar,
    div_scalar,
    mul,
    neg,
    sub,
)
from engine.functions.log_sigmoid import log_sigmoid
from engine.functions.loss import _check_reduction, _reduce, _scale
from engine.functions.pointwise import sigmoid
from engine.functions.shape import clone
from engine.node import Node
from engine.tensor import Tensor, as_array


def _mul_(self: Tensor, other: Tensor) -> Tensor:
    """`self.mul_(other)` as an out-of-place mul: the same node, which (when other requires
    grad) saves a clone of the original self, made after the node: a CloneBackward0 with
    the next sequence number, that other's gradient then goes through."""
    out = mul(self, other)
    if other.requires_grad and out.grad_fn is not None:
        out.grad_fn.save("self", clone(self))
    return out


def bce_with_logits_backward(grad: Tensor, input: Tensor, target: Tensor,
                             weight: Tensor | None, pos_weight: Tensor | None,
                             reduction: str) -> Tensor:
    """-w * (pos * y * (1 - sigmoid(x)) - (1 - y) * sigmoid(x)) * grad, op by op (these
    are ops, not a kernel, so under create_graph each records its node)."""
    if pos_weight is not None:
        t = mul(pos_weight, target)
        grad_input = sub(mul(sub(add_scalar(t, 1), target), sigmoid(input)), t)
    else:
        grad_input = sub(sigmoid(input), target)
    grad_input = mul(grad_input, grad)
    if weight is not None:
        grad_input = mul(grad_input, weight)
    return div_scalar(grad_input, input.numel()) if reduction == "mean" else grad_input


def bce_with_logits_target_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                                    weight: Tensor | None, pos_weight: Tensor | None,
                                    reduction: str) -> Tensor:
    """(log_sigmoid(-x) - pos_weight * log_sigmoid(x)) * grad, or -x * grad without
    pos_weight; times weight, over n for `mean` (in place in PyTorch, even under
    create_graph)."""
    if pos_weight is not None:
        negative = log_sigmoid(neg(self))
        grad_target = _mul_(sub(negative, _mul_(log_sigmoid(self), pos_weight)), grad_output)
    else:
        grad_target = mul(neg(self), grad_output)
    if weight is not None:
        grad_target = _mul_(grad_target, weight)
    return div_scalar(grad_target, target.numel()) if reduction == "mean" else grad_target


class BinaryCrossEntropyWithLogitsBackward0(Node):
    """bce_with_logits: input gets bce_with_logits_backward, a target that requires grad
    gets bce_with_logits_target_backward."""

    name = "BinaryCrossEntropyWithLogitsBackward0"
    saved_names = ("pos_weight", "reduction", "self", "target", "weight")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, y = self.saved_value("self"), self.saved_value("target")
        weight, pos_weight = self.saved_value("weight"), self.saved_value("pos_weight")
        reduction = self.saved_value("reduction")
        grad_self = grad_target = None
        if self.needs_input_grad(0):
            grad_self = bce_with_logits_backward(grad, x, y, weight, pos_weight, reduction)
        if self.needs_input_grad(1):
            grad_target = bce_with_logits_target_backward(grad, x, y, weight, pos_weight,
                                                          reduction)
        return [grad_self, grad_target]


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise errors.TorchError("ValueError", op_errors.target_size(target.shape, input.shape))
    if not target.is_floating_point:      # ATen's `(1 - target).mul_(input)` cannot cast
        raise errors.TorchError("RuntimeError", op_errors.cannot_cast(input.dtype,
                                                                      target.dtype))
    dt = input.data.dtype
    x, y = input.data, target.data.astype(dt)
    one = dt.type(1)
    log_sigmoid = -(np.maximum(-x, 0) + libm.log1p(libm.exp(-np.abs(x))))
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((pos_weight.data - one) * y + one)
    losses = (one - y) * x - log_sigmoid
    if weight is not None:
        losses = losses * weight.data
    values = as_array(_reduce(as_array(losses, dt), reduction), dt)
    out, node = record(BinaryCrossEntropyWithLogitsBackward0, [input, target], values, input)
    if node:
        node.save("pos_weight", pos_weight)
        node.save("reduction", reduction)
        node.save("self", input)
        node.save("target", target)
        node.save("weight", weight)
    return out


class BinaryCrossEntropyBackward0(Node):
    """bce on probabilities: input gets (input - target) / (input * (1 - input)) * grad,
    with the denominator kept away from 0 by 1e-12 as PyTorch does."""

    name = "BinaryCrossEntropyBackward0"
    saved_names = ("reduction", "self", "target", "weight")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, y = self.saved_value("self"), self.saved_value("target")
        dt = x.data.dtype
        one, eps = dt.type(1), dt.type(1e-12)
        g = _scale(grad.data, x.shape, self.saved_value("reduction"), x.numel(), dt)
        values = g * (x.data - y.data) / np.maximum((one - x.data) * x.data, eps)
        weight = self.saved_value("weight")
        if weight is not None:
            values = values * weight.data
        return [Tensor(as_array(values, dt), grad.ctx)]


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         reduction: str = "mean") -> Tensor:
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise errors.TorchError("ValueError", op_errors.bce_size(target.shape, input.shape))
    x = input.data
    if np.any((x < 0) | (x > 1)):
        raise errors.TorchError("RuntimeError", "all elements of input should be between 0 "
                                "and 1")
    dt = x.dtype
    y = target.data.astype(dt)
    log_p = np.maximum(libm.log(x), dt.type(-100))
    log_q = np.maximum(libm.log1p(-x), dt.type(-100))
    losses = -(y * log_p + (dt.type(1) - y) * log_q)
    if weight is not None:
        losses = losses * weight.data
    values = as_array(_reduce(as_array(losses, dt), reduction), dt)
    out, node = record(BinaryCrossEntropyBackward0, [input], values, input)
    if node:
        node.save("reduction", reduction)
        node.save("self", input)
        node.save("target", target)
        node.save("weight", weight)
    return out
