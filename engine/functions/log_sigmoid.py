"""log_sigmoid and its fused backward kernel. The language has no spelling for it:
binary_cross_entropy_with_logits records it when its target requires grad and a
pos_weight is given (FunctionsManual.cpp `binary_cross_entropy_with_logits_target_backward`).
"""

from __future__ import annotations

import numpy as np

from engine.functions import libm
from engine.functions._record import record, recorded, values_as
from engine.functions.arithmetic import mul, sub_scalar
from engine.functions.pointwise import sigmoid
from engine.node import Node
from engine.tensor import Tensor, as_array


class LogSigmoidBackward0(Node):
    """log_sigmoid_forward: self gets log_sigmoid_backward(grad, self, buffer)."""

    name = "LogSigmoidBackward0"
    saved_names = ("buffer", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [log_sigmoid_backward(grad, self.saved_value("self"),
                                     self.saved_value("buffer"))]


def log_sigmoid(self: Tensor) -> Tensor:
    """min(x, 0) - log1p(exp(-|x|)); the CPU kernel keeps exp(-|x|) as its `buffer`."""
    x = self.data
    buffer = libm.exp(-np.abs(x))
    values = as_array(np.minimum(x, x.dtype.type(0)) - libm.log1p(buffer), x.dtype)
    out, node = record(LogSigmoidBackward0, [self], values, self)
    if node:
        node.save("buffer", Tensor(as_array(buffer, x.dtype), self.ctx))
        node.save("self", self)
    return out


def log_sigmoid_backward(grad_output: Tensor, self: Tensor, buffer: Tensor) -> Tensor:
    """grad * (1 - sigmoid(x)), from the buffer z as the CPU kernel computes it:
    grad * (1 - z / (1 + z)) for x < 0, grad * z / (1 + z) otherwise."""
    x, z = self.data, buffer.data
    one = x.dtype.type(1)
    negative = x < 0
    slope = np.where(negative, one, x.dtype.type(0)) - np.where(negative, one, -one) * (
        z / (one + z))
    values = as_array(values_as(grad_output, self.dtype) * slope, x.dtype)
    out = recorded(LogSigmoidBackwardBackward0, values, [grad_output, self], grad_output)
    if out.grad_fn is not None:
        out.grad_fn.save("buffer", buffer)
        out.grad_fn.save("grad_output", grad_output)
        out.grad_fn.save("self", self)
    return out


class LogSigmoidBackwardBackward0(Node):
    """log_sigmoid_backward(grad_output, self): grad_output gets the kernel of grad, self
    gets log_sigmoid_double_backward(grad * grad_output) = g * (z - 1) * z, z = sigmoid(x)."""

    name = "LogSigmoidBackwardBackward0"
    saved_names = ("buffer", "grad_output", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self")
        first = second = None
        if self.needs_input_grad(0):
            first = log_sigmoid_backward(grad, x, self.saved_value("buffer"))
        if self.needs_input_grad(1):
            g = mul(grad, self.saved_value("grad_output"))
            z = sigmoid(x)
            second = mul(mul(g, sub_scalar(z, 1)), z)
        return [first, second]
