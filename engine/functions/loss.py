"""Losses: mse_loss, nll_loss, cross_entropy (log_softmax then nll_loss, two nodes),
binary_cross_entropy(_with_logits), l1_loss, smooth_l1_loss and huber_loss, with
PyTorch's reductions (`mean`, `sum`, `none`), argument checks and messages."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import errors
from engine.functions._record import broadcast_shapes, record, recorded, wrap
from engine.functions.activation import SecondOrderUnsupported
from engine.functions.arithmetic import sub
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


class MseLossBackwardBackward0(SecondOrderUnsupported):
    name = "MseLossBackwardBackward0"


class MseLossBackward0(Node):
    """mse_loss: input gets norm * (input - target) * grad with norm = 2 / n for `mean`
    (2 for `sum`); a target that requires grad gets the negative."""

    name = "MseLossBackward0"
    saved_names = ("reduction", "self", "target")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, y = self.saved_value("self"), self.saved_value("target")
        reduction = self.saved_value("reduction")
        shape = broadcast_shapes(x.shape, y.shape)
        dt = x.data.dtype
        norm = dt.type(2.0 / max(int(np.prod(shape)), 1) if reduction == "mean" else 2.0)
        g = np.broadcast_to(grad.data, shape) if reduction == "none" else grad.data
        values = norm * (x.data - y.data) * g
        grad_self = grad_target = None
        if self.needs_input_grad(1):
            grad_target = recorded(MseLossBackwardBackward0, as_array(-values, dt),
                                   [grad, x, y], grad)
        if self.needs_input_grad(0):
            grad_self = recorded(MseLossBackwardBackward0, as_array(values, dt),
                                 [grad, x, y], grad)
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
