"""Losses over classes: nll_loss, cross_entropy (log_softmax then nll_loss, two nodes),
binary_cross_entropy and binary_cross_entropy_with_logits."""

from __future__ import annotations

import numpy as np

from engine import dtypes, errors, op_errors
from engine.functions._record import record, recorded
from engine.functions.activation import SecondOrderUnsupported, log_softmax
from engine.functions.loss import _check_reduction, _reduce, _scale
from engine.node import Node
from engine.tensor import Tensor, as_array


class NllLossBackwardBackward0(SecondOrderUnsupported):
    name = "NllLossBackwardBackward0"


class NllLossBackward0(Node):
    """nll_loss: at each sample's target class the input gets -grad (divided by the
    total weight for `mean`); every other entry gets 0."""

    name = "NllLossBackward0"
    saved_names = ("ignore_index", "reduction", "self", "target", "total_weight", "weight")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self")
        target = self.saved_value("target").data
        reduction = self.saved_value("reduction")
        total = self.saved_value("total_weight").data
        weight = self.saved_value("weight")
        ignore = self.saved_value("ignore_index")
        dt = x.data.dtype
        values = np.zeros(x.shape, dtype=dt)
        rows = x.data.reshape(1, -1) if x.ndim == 1 else x.data
        out = values.reshape(rows.shape)
        targets = np.atleast_1d(target)
        g = np.broadcast_to(grad.data, targets.shape) if reduction == "none" else grad.data
        for i, c in enumerate(targets):
            if c == ignore:
                continue
            w = weight.data[c] if weight is not None else dt.type(1)
            gi = g[i] if reduction == "none" else g
            share = -w * gi
            if reduction == "mean":
                share = share / total
            out[i, c] = share
        return [recorded(NllLossBackwardBackward0, values, [grad, x], grad)]


def _class_targets(input: Tensor, target: Tensor) -> None:
    if target.dtype is not dtypes.int64:
        legacy = {"float32": "Float", "float64": "Double", "bool": "Bool"}[target.dtype.name]
        raise errors.TorchError("RuntimeError",
                                f"expected target dtype to be Long or Byte, but got {legacy}")
    batch = input.shape[0] if input.ndim >= 2 else None
    target_batch = target.shape[0] if target.ndim >= 1 else None
    if input.ndim >= 2 and batch != target_batch:
        raise errors.TorchError("ValueError", f"Expected input batch_size ({batch}) to match "
                                f"target batch_size ({target_batch}).")
    if input.ndim == 1 and target.ndim != 0:
        raise errors.TorchError("RuntimeError", op_errors.NLL_1D_TARGET)
    if input.ndim > 2:
        raise errors.TorchError("RuntimeError", "the lab takes nll_loss and cross_entropy "
                                "of 1-D or 2-D inputs")


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    _check_reduction(reduction)
    _class_targets(input, target)
    classes = input.shape[-1]
    rows = input.data.reshape(1, -1) if input.ndim == 1 else input.data
    targets = np.atleast_1d(target.data)
    dt = input.data.dtype
    losses = np.zeros(targets.shape, dtype=dt)
    total = dt.type(0)
    for i, c in enumerate(targets):
        if c == ignore_index:
            continue
        if not 0 <= c < classes:
            raise errors.TorchError("IndexError", f"Target {c} is out of bounds.")
        w = weight.data[c] if weight is not None else dt.type(1)
        losses[i] = -w * rows[i, c]
        total = total + w
    if reduction == "none":
        values = losses.reshape(target.shape)
    elif reduction == "sum":
        values = np.asarray(losses.sum(dtype=dt), dtype=dt)
    else:
        values = np.asarray(losses.sum(dtype=dt) / total, dtype=dt)
    out, node = record(NllLossBackward0, [input], as_array(values, dt), input)
    if node:
        node.save("ignore_index", ignore_index)
        node.save("reduction", reduction)
        node.save("self", input)
        node.save("target", target)
        node.save("total_weight", Tensor(np.asarray(total, dtype=dt), input.ctx))
        node.save("weight", weight)
    return out


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """`F.cross_entropy` with class-index targets: log_softmax over the classes, then
    nll_loss (LogSoftmaxBackward0 and NllLossBackward0, as PyTorch records them)."""
    _check_reduction(reduction)
    if target.is_floating_point and target.shape == input.shape:
        raise errors.TorchError("RuntimeError", "the lab takes cross_entropy with class-index "
                                "targets (an int64 tensor of class numbers)")
    class_dim = 0 if input.ndim == 1 else 1
    return nll_loss(log_softmax(input, class_dim), target, weight, ignore_index, reduction)


class BinaryCrossEntropyWithLogitsBackwardBackward0(SecondOrderUnsupported):
    name = "BinaryCrossEntropyWithLogitsBackwardBackward0"


class BinaryCrossEntropyWithLogitsBackward0(Node):
    """bce_with_logits: input gets ((1 - target) - w * (1 - sigmoid(input))) * grad, with
    w = (pos_weight - 1) * target + 1 (so `sigmoid(input) - target` without pos_weight);
    a target that requires grad gets (log(1 - s) - pos_weight * log(s)) * grad."""

    name = "BinaryCrossEntropyWithLogitsBackward0"
    saved_names = ("pos_weight", "reduction", "self", "target", "weight")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, y = self.saved_value("self"), self.saved_value("target")
        dt = x.data.dtype
        one = dt.type(1)
        s = one / (one + np.exp(-x.data))
        g = _scale(grad.data, x.shape, self.saved_value("reduction"), x.numel(), dt)
        pos_weight, weight = self.saved_value("pos_weight"), self.saved_value("weight")
        if pos_weight is None:
            values = (s - y.data) * g
            target_values = -x.data * g
        else:
            factor = (pos_weight.data - one) * y.data + one
            values = ((one - y.data) - factor * (one - s)) * g
            target_values = (np.log(one - s) - pos_weight.data * np.log(s)) * g
        if weight is not None:
            values, target_values = values * weight.data, target_values * weight.data
        grad_self = grad_target = None
        if self.needs_input_grad(1):
            grad_target = Tensor(as_array(target_values, dt), grad.ctx)
        if self.needs_input_grad(0):
            grad_self = recorded(BinaryCrossEntropyWithLogitsBackwardBackward0,
                                 as_array(values, dt), [grad, x, y], grad)
        return [grad_self, grad_target]


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise errors.TorchError("ValueError", op_errors.target_size(target.shape, input.shape))
    dt = input.data.dtype
    x, y = input.data, target.data.astype(dt)
    one = dt.type(1)
    log_sigmoid = -(np.maximum(-x, 0) + np.log1p(np.exp(-np.abs(x))))
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
    log_p = np.maximum(np.log(x), dt.type(-100))
    log_q = np.maximum(np.log1p(-x), dt.type(-100))
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
