"""softmax's and log_softmax's fused backward kernels (`_softmax_backward_data`,
`_log_softmax_backward_data`), each beside its own backward node; see
activation_backward.py for what these kernels and nodes are."""

from __future__ import annotations

import numpy as np

from engine.functions import libm, softmax_kernel
from engine.functions._record import values_as
from engine.functions.activation_backward import kernel_output
from engine.functions.arithmetic import mul, neg, sub
from engine.functions.conversion import to_dtype
from engine.functions.pointwise import exp
from engine.functions.reduction import sum as reduce_sum
from engine.node import Node
from engine.tensor import Tensor


def _vectorized(output: Tensor, dim: int) -> bool:
    """A float32 softmax over its last dim: PyTorch's vectorized kernel's own additions
    (Note [Vectorized softmax])."""
    return output.data.dtype == softmax_kernel.F32 and output.ndim > 0 and \
        dim % output.ndim == output.ndim - 1


def _axis(t: Tensor, dim: int) -> int | None:
    return dim if t.ndim else None           # a 0-d tensor's one dim


def softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int) -> Tensor:
    """`_softmax_backward_data`: output * (grad - sum(grad * output, dim))."""
    y, g = output.data, values_as(grad_output, output.dtype)
    if _vectorized(output, dim):
        values = softmax_kernel.softmax_backward_lastdim(g, y)
    else:
        values = y * (g - np.sum(g * y, axis=_axis(output, dim), keepdims=True))
    return kernel_output(SoftmaxBackwardDataBackward0, values, grad_output, output,
                         dim=dim, grad_output=grad_output, output=output)


def softmax_double_backward(grad: Tensor, grad_output: Tensor, dim: int,
                            output: Tensor) -> Tensor:
    """go * grad - sum(output * go) * grad - go * sum(output * grad), last term first."""
    third = mul(grad_output, reduce_sum(mul(output, grad), dim, True))
    second = mul(reduce_sum(mul(output, grad_output), dim, True), grad)
    return sub(sub(mul(grad_output, grad), second), third)


class SoftmaxBackwardDataBackward0(Node):
    """grad_output gets the kernel of grad, output gets softmax_double_backward."""

    name = "SoftmaxBackwardDataBackward0"
    saved_names = ("dim", "grad_output", "output")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        output, dim = self.saved_value("output"), self.saved_value("dim")
        first = second = None
        if self.needs_input_grad(0):
            first = softmax_backward_data(to_dtype(grad, output.dtype), output, dim)
        if self.needs_input_grad(1):
            second = softmax_double_backward(to_dtype(grad, output.dtype),
                                             self.saved_value("grad_output"), dim, output)
        return [first, second]


def log_softmax_backward_data(grad_output: Tensor, output: Tensor, dim: int) -> Tensor:
    """`_log_softmax_backward_data`: grad - exp(output) * sum(grad, dim)."""
    g = values_as(grad_output, output.dtype)
    if _vectorized(output, dim):
        values = softmax_kernel.log_softmax_backward_lastdim(g, output.data)
    else:
        values = g - libm.exp(output.data) * np.sum(g, axis=_axis(output, dim), keepdims=True)
    return kernel_output(LogSoftmaxBackwardDataBackward0, values, grad_output, output,
                         dim=dim, grad_output=grad_output, output=output)


class LogSoftmaxBackwardDataBackward0(Node):
    """_log_softmax_backward_data(grad_output, output): grad_output gets
    grad - sum(grad * exp(output)), output gets -sum(grad_output) * exp(output) * grad."""

    name = "LogSoftmaxBackwardDataBackward0"
    saved_names = ("dim", "grad_output", "output")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        output, dim = self.saved_value("output"), self.saved_value("dim")
        first = second = None
        if self.needs_input_grad(0):
            g = to_dtype(grad, output.dtype)
            first = sub(g, reduce_sum(mul(g, exp(output)), dim, True))
        if self.needs_input_grad(1):
            g = to_dtype(grad, output.dtype)
            e = exp(output)
            total = neg(reduce_sum(self.saved_value("grad_output"), dim, True))
            second = mul(mul(total, e), g)
        return [first, second]
