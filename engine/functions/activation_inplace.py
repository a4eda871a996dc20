"""Activations in place: `F.leaky_relu(x, inplace=True)`, `nn.ELU(inplace=True)`,
`F.silu(x, inplace=True)`, `F.elu_`, `F.leaky_relu_` (Note [In-place ops] in inplace.py).

Once the input is overwritten, leaky_relu_ and elu_ save their result instead, and so
record their ops' second node class (LeakyReluBackward1, EluBackward1), whose formulas
read the input's sign from the result's: which only a slope (alpha) >= 0 keeps, so
PyTorch refuses a negative one in backward. silu_ needs its input itself: PyTorch saves a
clone of it, as for `sin_`.
"""

from __future__ import annotations

import numpy as np

from engine import errors, op_errors
from engine.functions import libm
from engine.functions._record import record
from engine.functions.activation import silu
from engine.functions.activation_backward import elu_backward, leaky_relu_backward
from engine.functions.inplace import inplace
from engine.node import Node
from engine.tensor import Number, Tensor, as_array


class LeakyReluBackward1(Node):
    """leaky_relu_ (in place): the input is overwritten, so the result is saved; self gets
    grad where the result > 0, else grad * negative_slope, which only a slope >= 0 allows
    (the result then has the input's sign)."""

    name = "LeakyReluBackward1"
    saved_names = ("negative_slope", "result")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        slope = self.saved_value("negative_slope")
        if slope < 0:
            raise errors.TorchError("RuntimeError", op_errors.INPLACE_LEAKY_RELU_SLOPE)
        return [leaky_relu_backward(grad, self.saved_value("result"), slope)]


def leaky_relu_(self: Tensor, negative_slope: Number = 0.01) -> Tensor:
    """`F.leaky_relu(x, inplace=True)`, `nn.LeakyReLU(inplace=True)`: in place (Note
    [In-place ops]), recording LeakyReluBackward1."""
    def compute(before: Tensor) -> Tensor:
        slope = before.data.dtype.type(negative_slope)
        values = np.where(before.data > 0, before.data, before.data * slope)
        out, node = record(LeakyReluBackward1, [before], as_array(values, before.data.dtype),
                           before)
        if node:
            node.save("negative_slope", negative_slope)
            node.save("result", out)
        return out

    return inplace(self, compute)


class EluBackward1(Node):
    """elu_ (in place): the result is saved; self gets elu_backward(grad, result), which
    only alpha >= 0 allows."""

    name = "EluBackward1"
    saved_names = ("alpha", "input_scale", "result", "scale")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        alpha = self.saved_value("alpha")
        if alpha < 0:
            raise errors.TorchError("RuntimeError", op_errors.INPLACE_ELU_SLOPE)
        return [elu_backward(grad, alpha, self.saved_value("scale"),
                             self.saved_value("input_scale"), True, self.saved_value("result"))]


def elu_(self: Tensor, alpha: Number = 1.0) -> Tensor:
    """`F.elu_(x)`, `F.elu(x, inplace=True)`, `nn.ELU(inplace=True)`: in place, recording
    EluBackward1."""
    def compute(before: Tensor) -> Tensor:
        a = before.data.dtype.type(alpha)
        values = np.where(before.data > 0, before.data, a * libm.expm1(before.data))
        out, node = record(EluBackward1, [before], as_array(values, before.data.dtype), before)
        if node:
            node.save("alpha", alpha)
            node.save("input_scale", 1)
            node.save("result", out)
            node.save("scale", 1)
        return out

    return inplace(self, compute)


def silu_(self: Tensor) -> Tensor:
    """`F.silu(x, inplace=True)`, `nn.SiLU(inplace=True)`: SiluBackward0 saves the input as
    it was, a clone (engine/functions/inplace.py)."""
    return inplace(self, silu)
