"""Losses: mse_loss, nll_loss, cross_entropy (log_softmax then nll_loss, two nodes),
binary_cross_entropy(_with_logits), l1_loss, smooth_l1_loss and huber_loss, with
PyTorch's reductions (`mean`, `sum`, `none`), argument checks and messages."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import errors
from engine.functions._record import broadcast_shapes, record, recorded, values_as, wrap
from engine.functions.arithmetic import div_scalar, mul, mul_scalar, neg, sub
from engine.functions.pointwise import abs
from engine.functions.reduction import mean
from engine.functions.reduction import sum as reduce_sum
from engine.functions.summation import full_sum
from engine.node import Node
from engine.tensor import Tensor, as_array

REDUCTIONS = ("none", "mean", "sum")


def _check_reduction(reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise errors.TorchError("ValueError", f"{reduction} is not a valid value for reduction")


def _reduce(values: np.ndarray, reduction: str) -> np.ndarray:
    """`apply_loss_reduction`: mean is the sum (in PyTorch's order) over the count."""
    if reduction == "none":
        return values
    total = full_sum(values)
    if reduction == "sum":
        return total
    return np.asarray(total / values.dtype.type(values.size) if values.size else np.nan,
                      dtype=values.dtype)


def _scale(grad: np.ndarray, shape: tuple[int, ...], reduction: str, numel: int,
           dtype: Any) -> np.ndarray:
    """The incoming gradient per element: broadcast for `none`, divided for `mean`."""
    g = np.broadcast_to(grad, shape) if reduction == "none" else grad
    if reduction == "mean":
        g = g / dtype.type(max(numel, 1))
    return np.asarray(g, dtype=dtype)


def mse_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                      reduction: str) -> Tensor:
    """The mse_loss_backward kernel: norm * (self - target) * grad, norm = 2 / n for
    `mean` (n the broadcast size), else 2."""
    shape = broadcast_shapes(self.shape, target.shape)
    dt = self.data.dtype
    norm = dt.type(2.0 / max(int(np.prod(shape)), 1) if reduction == "mean" else 2.0)
    g = values_as(grad_output, self.dtype)
    g = np.broadcast_to(g, shape) if reduction == "none" else g
    values = as_array(norm * (self.data - target.data.astype(dt)) * g, dt)
    out = recorded(MseLossBackwardBackward0, values, [grad_output, self, target], grad_output)
    if out.grad_fn is not None:
        for name, value in (("grad_output", grad_output), ("reduction", reduction),
                            ("self", self), ("target", target)):
            out.grad_fn.save(name, value)
    return out


def mse_loss_double_backward(grad: Tensor, numel: int, reduction: str) -> Tensor:
    """2 * grad, divided by the number of elements for `mean`."""
    grad_input = mul_scalar(grad, 2)
    return div_scalar(grad_input, numel) if reduction == "mean" else grad_input


class MseLossBackwardBackward0(Node):
    """mse_loss_backward(grad_output, self, target): grad_output gets the kernel of grad,
    self gets mse_loss_double_backward(grad * grad_output) and target its negative."""

    name = "MseLossBackwardBackward0"
    saved_names = ("grad_output", "reduction", "self", "target")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, y = self.saved_value("self"), self.saved_value("target")
        reduction = self.saved_value("reduction")
        numel = int(np.prod(broadcast_shapes(x.shape, y.shape)))
        first = second = third = None
        if self.needs_input_grad(0):
            first = mse_loss_backward(grad, x, y, reduction)
        if self.needs_input_grad(1):
            scaled = mul(grad, self.saved_value("grad_output"))
            second = mse_loss_double_backward(scaled, numel, reduction)
        if self.needs_input_grad(2):
            scaled = mul(grad, self.saved_value("grad_output"))
            third = neg(mse_loss_double_backward(scaled, numel, reduction))
        return [first, second, third]


class MseLossBackward0(Node):
    """mse_loss: input gets mse_loss_backward(grad, input, target), a target that
    requires grad gets mse_loss_backward(grad, target, input)."""

    name = "MseLossBackward0"
    saved_names = ("reduction", "self", "target")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, y = self.saved_value("self"), self.saved_value("target")
        reduction = self.saved_value("reduction")
        grad_self = mse_loss_backward(grad, x, y, reduction) if self.needs_input_grad(0) else None
        grad_target = None
        if self.needs_input_grad(1):
            grad_target = mse_loss_backward(grad, y, x, reduction)
        return [grad_self, grad_target]


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    _check_reduction(reduction)
    target = wrap(target, input)
    shape = broadcast_shapes(input.shape, target.shape)
    input.ctx.check_elements(shape)
    dt = input.data.dtype
    diff = input.data - target.data.astype(dt)
    values = as_array(_reduce(diff * diff, reduction), dt)
    out, node = record(MseLossBackward0, [input, target], values, input)
    if node:
        node.save("reduction", reduction)
        node.save("self", input)
        node.save("target", target)
    return out


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """l1_loss is composite in PyTorch: |input - target|, then the reduction."""
    _check_reduction(reduction)
    diff = abs(sub(input, target))
    if reduction == "mean":
        return mean(diff)
    return reduce_sum(diff) if reduction == "sum" else diff


class _Smooth(Node):
    saved_names = ("beta", "reduction", "self", "target")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, y = self.saved_value("self"), self.saved_value("target")
        dt = x.data.dtype
        beta = dt.type(self.saved_value("beta"))
        d = x.data - y.data
        g = _scale(grad.data, x.shape, self.saved_value("reduction"), x.numel(), dt)
        inner = d / beta if self.name == "SmoothL1LossBackward0" else d
        slope = np.where(np.abs(d) < beta, inner, np.sign(d) * (
            dt.type(1) if self.name == "SmoothL1LossBackward0" else beta))
        return [Tensor(as_array(slope * g, dt), grad.ctx)]


class SmoothL1LossBackward0(_Smooth):
    name = "SmoothL1LossBackward0"


class HuberLossBackward0(_Smooth):
    name = "HuberLossBackward0"


def _smooth(node_type: type[_Smooth], input: Tensor, target: Tensor, reduction: str,
            beta: float) -> Tensor:
    _check_reduction(reduction)
    dt = input.data.dtype
    d = input.data - target.data.astype(dt)
    a = np.abs(d)
    b = dt.type(beta)
    if node_type is SmoothL1LossBackward0:
        losses = np.where(a < b, dt.type(0.5) * d * d / b, a - dt.type(0.5) * b)
    else:
        losses = np.where(a < b, dt.type(0.5) * d * d, b * (a - dt.type(0.5) * b))
    values = as_array(_reduce(as_array(losses, dt), reduction), dt)
    out, node = record(node_type, [input], values, input)
    if node:
        node.save("beta", beta)
        node.save("reduction", reduction)
        node.save("self", input)
        node.save("target", target)
    return out


def smooth_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    return _smooth(SmoothL1LossBackward0, input, target, reduction, beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",
               delta: float = 1.0) -> Tensor:
    return _smooth(HuberLossBackward0, input, target, reduction, delta)
