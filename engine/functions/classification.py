"""Losses over classes: nll_loss and cross_entropy (log_softmax then nll_loss, two nodes;
or, with class probabilities as targets, the ops ATen runs). The binary losses are in
binary_cross_entropy.py."""

from __future__ import annotations

from typing import Any

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
)
from engine.functions.loss import _check_reduction
from engine.functions.nll_sums import cascaded_sums, in_bounds, scattered
from engine.node import Node
from engine.tensor import Tensor, as_array


def _at_least_1d(values: np.ndarray) -> np.ndarray:
    """np.atleast_1d of one array (which is a Python function, called once a pass)."""
    return values if values.ndim else values.reshape(1)


def _class_weights_fit(input: Tensor, weight: Tensor | None) -> None:
    """The kernel's checks of `weight`, after the targets': one per class, in the input's
    dtype."""
    if weight is None:
        return
    classes = input.shape[-1] if input.ndim else 1
    if weight.ndim != 1 or weight.numel() != classes:
        raise errors.TorchError("RuntimeError", f"weight tensor should be defined either for "
                                f"all {classes} classes or no classes but got weight tensor "
                                f"of shape: {list(weight.shape)}")
    if weight.dtype is not input.dtype:
        raise errors.TorchError("RuntimeError", f"expected scalar type {_scalar_type(input)} "
                                f"but found {_scalar_type(weight)}")


def _counted(targets: np.ndarray, ignore_index: int) -> tuple[np.ndarray, np.ndarray]:
    """The samples whose target is not ignore_index, and their classes."""
    (samples,) = (targets != ignore_index).nonzero()
    return samples, targets[samples]


def _class_weights(weight: Tensor | None, classes: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Each counted sample's class weight (1 without weights), in the input's dtype."""
    if weight is None:
        return np.full(classes.shape, 1, dtype=dt)
    return np.asarray(weight.data[classes], dtype=dt)


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
    targets, g = _at_least_1d(target.data), grad_output.data.astype(dt)
    if reduction == "none":          # -w * grad_output[i]
        samples, classes = _counted(targets, ignore_index)
        g = np.broadcast_to(g, target.shape or (1,))[samples]
        out[samples, classes] = -_class_weights(weight, classes, dt) * g
    else:                            # w * -(grad_output / total_weight), as the kernel has it
        share = -(g / total_weight.data if reduction == "mean" else g)
        scattered(out, targets, share, weight, ignore_index)
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
    _class_weights_fit(input, weight)
    rows = input.data.reshape(1, -1) if input.ndim == 1 else input.data
    targets = _at_least_1d(target.data)
    dt = input.data.dtype
    values: Any
    if reduction == "none" and input.ndim == 2:    # each sample's loss; total weight 0
        samples, classes = _counted(targets, ignore_index)
        in_bounds(classes.tolist(), input.shape[-1])
        values = np.zeros(targets.shape, dtype=dt)
        values[samples] = -_class_weights(weight, classes, dt) * rows[samples, classes]
        total: Any = np.zeros((), dtype=dt)
    else:                                          # (a 1-D input's one loss too)
        loss, total = cascaded_sums(rows, targets, weight, ignore_index)
        values = loss / total if reduction == "mean" else loss
    out, node = record(NllLossBackward0, [input], as_array(np.asarray(values, dt), dt), input)
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
    """`F.cross_entropy`: with class-index targets log_softmax over the classes, then
    nll_loss (LogSoftmaxBackward0 and NllLossBackward0, as PyTorch records them); a target
    of the input's shape holds class probabilities (ATen tells them apart by shape alone)."""
    _check_reduction(reduction)
    if target.shape == input.shape:
        if not target.is_floating_point:
            raise errors.TorchError("RuntimeError", "Expected floating point type for target "
                                    "with class probabilities, got "
                                    f"{_scalar_type(target)}")
        if ignore_index >= 0:
            raise errors.TorchError("RuntimeError",
                                    "ignore_index is not supported for floating point target")
        return _probability_targets(input, target, weight, reduction, label_smoothing)
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


def _scalar_type(t: Tensor) -> str:
    """A dtype as ATen's ScalarType names it in messages (`Long`, `Float`)."""
    names = {"int64": "Long", "bool": "Bool", "float32": "Float", "float64": "Double"}
    return names.get(t.dtype.name, t.dtype.name)


def _probability_targets(input: Tensor, target: Tensor, weight: Tensor | None,
                         reduction: str, label_smoothing: float) -> Tensor:
    """ATen's cross_entropy_loss_prob_target, op by op: -(log_softmax(input) * target
    [* weight]).sum(), divided by the number of samples for `mean` (an integer, so a
    DivBackward1), summed over the classes only for `none`."""
    from engine.functions.reduction import sum as sum_
    from engine.functions.shape import view

    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.numel() != classes):
        raise errors.TorchError("RuntimeError", f"cross_entropy: weight tensor should be "
                                f"defined either for all {classes} classes or no classes but "
                                f"got weight tensor of shape: {list(weight.shape)}")
    logp = log_softmax(input, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise errors.TorchError("RuntimeError", "label_smoothing must be between 0.0 and "
                                    f"1.0. Got: {label_smoothing:g}")
        target = add_scalar(mul_scalar(target, 1 - label_smoothing), label_smoothing / classes)
    product = mul(logp, target)
    if weight is not None:
        shape = tuple(classes if d == 1 else 1 for d in range(logp.ndim))
        product = mul(product, view(weight, shape) if logp.ndim > 1 else weight)
    if reduction == "none":
        return neg(sum_(product, class_dim))
    total = neg(sum_(product))
    if reduction == "sum":
        return total
    if input.numel() == 0:
        raise errors.TorchError("RuntimeError", "the lab takes cross_entropy of a non-empty "
                                "input")
    return div_scalar(total, input.numel() // classes)


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
        kept = _at_least_1d(target.data)[~_at_least_1d(ignored.data)]
        if weight is not None:
            dt = weight.data.dtype
            total = np.asarray(weight.data[kept].sum(dtype=dt), dtype=dt)
        else:
            total = np.asarray(kept.size, dtype=np.int64)
        smooth = div(sum_(smooth), Tensor(total, target.ctx))
    classes = logp.shape[class_dim]
    return add(mul_scalar(nll, 1 - label_smoothing),
               mul_scalar(smooth, label_smoothing / classes))


def one_hot(target: Tensor, num_classes: int = -1) -> Tensor:
    """`F.one_hot(target, num_classes)`: class indices as rows of 0s and a 1 (int64, no
    history), with ATen's checks in its order; -1 takes the largest class plus one."""
    if target.dtype is not dtypes.int64:
        raise errors.TorchError("RuntimeError", "one_hot is only applicable to index tensor "
                                "of type LongTensor.")
    values = target.data
    if values.size == 0:
        if num_classes == -1:
            raise errors.TorchError("RuntimeError", "Can not infer total number of classes "
                                    "from empty tensor.")
    else:
        if values.min() < 0:
            raise errors.TorchError("RuntimeError", "Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(values.max()) + 1
        elif values.max() >= num_classes:
            raise errors.TorchError("RuntimeError",
                                    "Class values must be smaller than num_classes.")
    shape = (*target.shape, max(num_classes, 0))
    target.ctx.check_elements(shape)
    out = np.zeros(shape, dtype=np.int64)
    if values.size:
        np.put_along_axis(out, values[..., None], 1, axis=-1)
    return Tensor(out, target.ctx)
