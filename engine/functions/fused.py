"""Backward kernels that PyTorch fuses into one op, and their own backward nodes.

`tanh_backward(grad, y)` is one kernel, not `grad * (1 - y * y)`: under create_graph it
records one TanhBackwardBackward0 node with the edges (grad, y), and a second derivative
runs that node's formula. The same holds for sigmoid_backward, threshold_backward (relu)
and sgn (abs).
"""

from __future__ import annotations

import numpy as np

from engine.functions._record import recorded, values_as, zeros_like
from engine.node import Node
from engine.tensor import Number, Tensor, as_array


def _float64(values: np.ndarray) -> np.ndarray:
    return values.astype(np.float64)


def _save_inputs(out: Tensor, grad_output: Tensor, output: Tensor) -> None:
    if out.grad_fn is not None:
        out.grad_fn.save("grad_output", grad_output)
        out.grad_fn.save("output", output)


def tanh_backward(grad: Tensor, output: Tensor) -> Tensor:
    """grad * (1 - y²), with `1 - y²` rounded once: PyTorch's kernel computes it with a
    fused multiply-add, which a float64 product rounded to float32 reproduces exactly."""
    dtype = grad.dtype if grad.dtype.is_floating_point else output.dtype
    y = _float64(values_as(output, dtype))
    one_minus = (1.0 - y * y).astype(dtype.numpy)
    values = as_array(values_as(grad, dtype) * one_minus, dtype.numpy)
    out = recorded(TanhBackwardBackward0, values, [grad, output], grad)
    _save_inputs(out, grad, output)
    return out


class TanhBackwardBackward0(Node):
    """tanh_backward(grad_output, output): grad_output gets tanh_backward(grad, output),
    output gets grad * (-2 * output * grad_output)."""

    name = "TanhBackwardBackward0"
    saved_names = ("grad_output", "output")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        from engine.functions.arithmetic import mul, mul_scalar

        (grad,) = grads
        assert grad is not None
        grad_output, output = self.saved_value("grad_output"), self.saved_value("output")
        first = tanh_backward(grad, output) if self.needs_input_grad(0) else None
        second = None
        if self.needs_input_grad(1):
            second = mul(grad, mul(mul_scalar(output, -2.0), grad_output))
        return [first, second]


def sigmoid_backward(grad: Tensor, output: Tensor) -> Tensor:
    """grad * (1 - y) * y, multiplied in that order, as PyTorch's kernel does."""
    dtype = grad.dtype if grad.dtype.is_floating_point else output.dtype
    y = values_as(output, dtype)
    one = dtype.numpy.type(1)
    values = as_array(values_as(grad, dtype) * (one - y) * y, dtype.numpy)
    out = recorded(SigmoidBackwardBackward0, values, [grad, output], grad)
    _save_inputs(out, grad, output)
    return out


class SigmoidBackwardBackward0(Node):
    """sigmoid_backward(grad_output, output): grad_output gets sigmoid_backward(grad,
    output), output gets grad * grad_output * (-2 * output + 1)."""

    name = "SigmoidBackwardBackward0"
    saved_names = ("grad_output", "output")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        from engine.functions.arithmetic import add_scalar, mul, mul_scalar

        (grad,) = grads
        assert grad is not None
        grad_output, output = self.saved_value("grad_output"), self.saved_value("output")
        first = sigmoid_backward(grad, output) if self.needs_input_grad(0) else None
        second = None
        if self.needs_input_grad(1):
            slope = add_scalar(mul_scalar(output, -2), 1)
            second = mul(mul(grad, grad_output), slope)
        return [first, second]


def threshold_backward(grad: Tensor, self: Tensor, threshold: Number) -> Tensor:
    """grad where self > threshold, else 0 (relu's backward, with self its result)."""
    g = np.broadcast_to(grad.data, self.shape)
    values = as_array(np.where(self.data <= threshold, grad.dtype.numpy.type(0), g),
                      grad.dtype.numpy)
    out = recorded(ThresholdBackwardBackward0, values, [grad, self], grad)
    if out.grad_fn is not None:
        out.grad_fn.save("self", self)
        out.grad_fn.save("threshold", threshold)
    return out


class ThresholdBackwardBackward0(Node):
    """threshold_backward(grad_output, self, threshold): grad_output gets
    threshold_backward(grad, self, threshold); self gets zeros."""

    name = "ThresholdBackwardBackward0"
    saved_names = ("self", "threshold")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        first = None
        if self.needs_input_grad(0):
            first = threshold_backward(grad, self.saved_value("self"),
                                       self.saved_value("threshold"))
        return [first, zeros_like(grad) if self.needs_input_grad(1) else None]


def sgn(self: Tensor) -> Tensor:
    """sgn, as PyTorch defines it: -1, 0 or 1, and 0 at nan."""
    values = np.nan_to_num(np.sign(self.data), nan=0.0)
    return recorded(SgnBackward0, as_array(values, self.data.dtype), [self], self)


class SgnBackward0(Node):
    """sgn: the gradient is 0 for real inputs."""

    name = "SgnBackward0"
    saved_names = ("result", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [zeros_like(grad)]
