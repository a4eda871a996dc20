"""Losses over classes: nll_loss, cross_entropy (log_softmax then nll_loss, two nodes),
binary_cross_entropy and binary_cross_entropy_with_logits."""

from __future__ import annotations

import numpy as np

from engine import dtypes, errors, op_errors
from engine.functions._record import broadcast_shapes, record, recorded, zeros_like
from engine.functions.activation import log_softmax
from engine.functions.arithmetic import (
    add,
    add_scalar,
    div,
    div_scalar,
    mul,
    mul_scalar,
    neg,
    sub,
)
from engine.functions.log_sigmoid import log_sigmoid
from engine.functions.loss import _check_reduction, _reduce, _scale
from engine.functions.pointwise import sigmoid
from engine.functions.shape import clone
from engine.node import Node
from engine.tensor import Tensor, as_array


def nll_loss_backward(grad_output: Tensor, self: Tensor, target: Tensor,
                      weight: Tensor | None, reduction: str, ignore_index: int,
                      total_weight: Tensor) -> Tensor:
    """The nll_loss_backward kernel: at each sample's target class the input gets -grad
    times the class weight (divided by the total weight for `mean`); elsewhere 0."""
    if self.ndim == 1 and target.ndim == 1:     # a 1-D input's target of size 1: the
        raise errors.TorchError("RuntimeError",  # forward takes it, the kernel does not
                                f"size mismatch (got input: {list(self.shape)}, target: "
                                f"{list(target.shape)})")
    dt = self.data.dtype
    values = np.zeros(self.shape, dtype=dt)
    out = values.reshape(1, -1) if self.ndim == 1 else values
    targets = np.atleast_1d(target.data)
    g = grad_output.data.astype(dt)
    g = np.broadcast_to(g, targets.shape) if reduction == "none" else g
    for i, c in enumerate(targets):
        if c == ignore_index:
            continue
        share = -(weight.data[c] if weight is not None else dt.type(1)) * (
            g[i] if reduction == "none" else g)
        out[i, c] = share / total_weight.data if reduction == "mean" else share
    result = recorded(NllLossBackwardBackward0, values, [grad_output, self], grad_output)
    if result.grad_fn is not None:
        for name, value in (("ignore_index", ignore_index), ("reduction", reduction),
                            ("target", target), ("weight", weight)):
            result.grad_fn.save(name, value)
    return result


class NllLossBackwardBackward0(Node):
    """nll_loss_backward(grad_output, self): grad_output gets nll_loss(grad, target)
    (a new NllLossBackward0), self gets zeros."""

    name = "NllLossBackwardBackward0"
    saved_names = ("ignore_index", "reduction", "target", "weight")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        first = None
        if self.needs_input_grad(0):
            first = nll_loss(grad, self.saved_value("target"), self.saved_value("weight"),
                             self.saved_value("ignore_index"), self.saved_value("reduction"))
        return [first, zeros_like(grad) if self.needs_input_grad(1) else None]


class NllLossBackward0(Node):
    """nll_loss: the input gets nll_loss_backward(grad, ...)."""

    name = "NllLossBackward0"
    saved_names = ("ignore_index", "reduction", "self", "target", "total_weight", "weight")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        names = ("self", "target", "weight", "reduction", "ignore_index", "total_weight")
        return [nll_loss_backward(grad, *(self.saved_value(n) for n in names))]


def _class_targets(input: Tensor, target: Tensor) -> None:
    """nll_loss's checks in ATen's order: the batch sizes (a 0-d target counts as 0),
    one class per sample, the target's dtype, then a 1-D input's single target."""
    if input.ndim >= 2:
        batch, target_batch = input.shape[0], target.shape[0] if target.ndim >= 1 else 0
        if batch != target_batch:
            raise errors.TorchError("ValueError", f"Expected input batch_size ({batch}) to "
                                    f"match target batch_size ({target_batch}).")
    if target.ndim > 1:
        raise errors.TorchError("RuntimeError", op_errors.NLL_1D_TARGET)
    if target.dtype is not dtypes.int64:
        legacy = {"float32": "Float", "float64": "Double", "bool": "Bool"}[target.dtype.name]
        raise errors.TorchError("RuntimeError",
                                f"expected target dtype to be Long or Byte, but got {legacy}")
    if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise errors.TorchError("ValueError", "For 1D input, 1D target must have size 1, but "
                                f"got target size: {target.shape[0]}")
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
        values = losses.reshape(target.shape if input.ndim >= 2 else ())
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
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """`F.cross_entropy` with class-index targets: log_softmax over the classes, then
    nll_loss (LogSoftmaxBackward0 and NllLossBackward0, as PyTorch records them)."""
    _check_reduction(reduction)
    if target.is_floating_point and target.shape == input.shape:
        raise errors.TorchError("RuntimeError", "the lab takes cross_entropy with class-index "
                                "targets (an int64 tensor of class numbers)")
    if label_smoothing > 1.0:
        raise errors.TorchError("RuntimeError", "label_smoothing must be between 0.0 and 1.0. "
                                f"Got: {label_smoothing:g}")
    class_dim = 0 if input.ndim == 1 else 1
    logp = log_softmax(input, class_dim)
    nll = nll_loss(logp, target, weight, ignore_index, reduction)
    if label_smoothing <= 0.0:
        return nll
    return _smoothed(logp, nll, target, weight, ignore_index, reduction, label_smoothing,
                     class_dim)


def _smoothed(logp: Tensor, nll: Tensor, target: Tensor, weight: Tensor | None,
              ignore_index: int, reduction: str, label_smoothing: float,
              class_dim: int) -> Tensor:
    """ATen's cross_entropy_loss_label_smoothing, op by op (each records its node):
    (1 - ls) * nll + smooth * (ls / classes), smooth the negated sum of the log
    probabilities (weighted by class), 0 where the target is ignored, reduced as nll is."""
    from engine.functions.compare import masked_fill
    from engine.functions.reduction import sum as sum_
    from engine.functions.shape import view

    ignored = Tensor(np.asarray(target.data == ignore_index), target.ctx)
    if weight is not None:
        shape = tuple(weight.shape[0] if d == class_dim else 1 for d in range(logp.ndim))
        smooth = neg(sum_(mul(logp, view(weight, shape)), class_dim))
    else:
        smooth = neg(sum_(logp, class_dim))
    if broadcast_shapes(smooth.shape, ignored.shape) != smooth.shape:   # in place: no growing
        raise errors.TorchError("RuntimeError", f"output with shape {list(smooth.shape)} "
                                "doesn't match the broadcast shape "
                                f"{list(broadcast_shapes(smooth.shape, ignored.shape))}")
    smooth = masked_fill(smooth, ignored, 0.0)     # masked_fill_ on a fresh result
    if reduction == "sum":
        smooth = sum_(smooth)
    elif reduction == "mean":
        kept = np.atleast_1d(target.data)[~np.atleast_1d(ignored.data)]
        if weight is not None:
            dt = weight.data.dtype
            total = np.asarray(weight.data[kept].sum(dtype=dt), dtype=dt)
        else:
            total = np.asarray(kept.size, dtype=np.int64)
        smooth = div(sum_(smooth), Tensor(total, target.ctx))
    classes = logp.shape[class_dim]
    return add(mul_scalar(nll, 1 - label_smoothing),
               mul_scalar(smooth, label_smoothing / classes))


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
