"""Activations of a small network: softmax and log_softmax along a dim, and the
nonlinearities of torch.nn.functional (gelu, silu, leaky_relu, softplus, elu).

Each backward here is one fused kernel in PyTorch (`_softmax_backward_data`,
`silu_backward`, ...), recorded under create_graph as one `...BackwardBackward0` node.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine import errors, op_errors
from engine.functions._record import float_dtype, record, recorded, values_as
from engine.functions.reduction import normalize_dim
from engine.node import Node
from engine.tensor import Number, Tensor, as_array


class SecondOrderUnsupported(Node):
    """A fused backward kernel's node: the lab records it (so sequence numbers match) but
    does not run backward through it."""

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        raise errors.TorchError("RuntimeError", errors.second_order_unsupported(self.name))


class SoftmaxBackwardDataBackward0(SecondOrderUnsupported):
    name = "SoftmaxBackwardDataBackward0"


class LogSoftmaxBackwardDataBackward0(SecondOrderUnsupported):
    name = "LogSoftmaxBackwardDataBackward0"


class GeluBackwardBackward0(SecondOrderUnsupported):
    name = "GeluBackwardBackward0"


class SiluBackwardBackward0(SecondOrderUnsupported):
    name = "SiluBackwardBackward0"


class LeakyReluBackwardBackward0(SecondOrderUnsupported):
    name = "LeakyReluBackwardBackward0"


class SoftplusBackwardBackward0(SecondOrderUnsupported):
    name = "SoftplusBackwardBackward0"


class EluBackwardBackward0(SecondOrderUnsupported):
    name = "EluBackwardBackward0"


def _backward_result(node_type: type[Node], values: Any, grad: Tensor,
                     saved: Tensor) -> Tensor:
    return recorded(node_type, as_array(values, grad.dtype.numpy), [grad, saved], grad)


# -- softmax and log_softmax ------------------------------------------------------------

class SoftmaxBackward0(Node):
    """softmax(dim): self gets result * (grad - sum(grad * result, dim))."""

    name = "SoftmaxBackward0"
    saved_names = ("dim", "result")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        y, dim = self.saved_value("result"), self.saved_value("dim")
        g = grad.data
        values = y.data * (g - np.sum(g * y.data, axis=dim, keepdims=True))
        return [_backward_result(SoftmaxBackwardDataBackward0, values, grad, y)]


def _along(self: Tensor, dim: int | None) -> int:
    if dim is None:
        raise errors.TorchError("TypeError", op_errors.SOFTMAX_NEEDS_DIM)
    return normalize_dim(dim, self.ndim) if self.ndim else 0


def softmax(self: Tensor, dim: int | None = None) -> Tensor:
    d = _along(self, dim)
    dtype = float_dtype(self)
    x = values_as(self, dtype)
    if x.ndim == 0:
        values = np.ones((), dtype=dtype.numpy)
    else:
        shifted = np.exp(x - np.max(x, axis=d, keepdims=True))
        values = shifted / np.sum(shifted, axis=d, keepdims=True)
    out, node = record(SoftmaxBackward0, [self], as_array(values, dtype.numpy), self)
    if node:
        node.save("dim", d if self.ndim else 0)
        node.save("result", out)
    return out


class LogSoftmaxBackward0(Node):
    """log_softmax(dim): self gets grad - exp(result) * sum(grad, dim)."""

    name = "LogSoftmaxBackward0"
    saved_names = ("dim", "result")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        y, dim = self.saved_value("result"), self.saved_value("dim")
        g = grad.data
        values = g - np.exp(y.data) * np.sum(g, axis=dim, keepdims=True)
        return [_backward_result(LogSoftmaxBackwardDataBackward0, values, grad, y)]


def log_softmax(self: Tensor, dim: int | None = None) -> Tensor:
    d = _along(self, dim)
    dtype = float_dtype(self)
    x = values_as(self, dtype)
    if x.ndim == 0:
        values = np.zeros((), dtype=dtype.numpy)
    else:
        shifted = x - np.max(x, axis=d, keepdims=True)
        values = shifted - np.log(np.sum(np.exp(shifted), axis=d, keepdims=True))
    out, node = record(LogSoftmaxBackward0, [self], as_array(values, dtype.numpy), self)
    if node:
        node.save("dim", d)
        node.save("result", out)
    return out


# -- nonlinearities -----------------------------------------------------------------------

def _erf(x: np.ndarray) -> np.ndarray:
    flat = [math.erf(v) for v in x.astype(np.float64).reshape(-1)]
    return np.array(flat, dtype=np.float64).reshape(x.shape)


class GeluBackward0(Node):
    """gelu (exact): self gets grad * (Φ(x) + x φ(x))."""

    name = "GeluBackward0"
    saved_names = ("approximate", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self")
        v = x.data.astype(np.float64)
        if self.saved_value("approximate") == "tanh":
            k = math.sqrt(2.0 / math.pi)
            inner = k * (v + 0.044715 * v ** 3)
            t = np.tanh(inner)
            d = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * k * (1 + 3 * 0.044715 * v * v)
        else:
            cdf = 0.5 * (1.0 + _erf(v / math.sqrt(2.0)))
            pdf = np.exp(-0.5 * v * v) / math.sqrt(2.0 * math.pi)
            d = cdf + v * pdf
        return [_backward_result(GeluBackwardBackward0, grad.data * d.astype(x.data.dtype),
                                 grad, x)]


def gelu(self: Tensor, approximate: str = "none") -> Tensor:
    if approximate not in ("none", "tanh"):
        raise errors.TorchError("RuntimeError", op_errors.gelu_approximate(approximate))
    v = self.data.astype(np.float64)
    if approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        values = 0.5 * v * (1 + np.tanh(k * (v + 0.044715 * v ** 3)))
    else:
        values = v * 0.5 * (1.0 + _erf(v / math.sqrt(2.0)))
    out, node = record(GeluBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("approximate", approximate)
        node.save("self", self)
    return out


class SiluBackward0(Node):
    """silu = x * sigmoid(x): self gets grad * s * (1 + x * (1 - s))."""

    name = "SiluBackward0"
    saved_names = ("self",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self")
        one = x.data.dtype.type(1)
        s = one / (one + np.exp(-x.data))
        values = grad.data * s * (one + x.data * (one - s))
        return [_backward_result(SiluBackwardBackward0, values, grad, x)]


def silu(self: Tensor) -> Tensor:
    one = self.data.dtype.type(1)
    values = self.data / (one + np.exp(-self.data))
    out, node = record(SiluBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("self", self)
    return out


class LeakyReluBackward0(Node):
    """leaky_relu: self gets grad where x > 0, else grad * negative_slope."""

    name = "LeakyReluBackward0"
    saved_names = ("negative_slope", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self")
        slope = x.data.dtype.type(self.saved_value("negative_slope"))
        values = np.where(x.data > 0, grad.data, grad.data * slope)
        return [_backward_result(LeakyReluBackwardBackward0, values, grad, x)]


def leaky_relu(self: Tensor, negative_slope: Number = 0.01) -> Tensor:
    slope = self.data.dtype.type(negative_slope)
    values = np.where(self.data > 0, self.data, self.data * slope)
    out, node = record(LeakyReluBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("negative_slope", negative_slope)
        node.save("self", self)
    return out


class SoftplusBackward0(Node):
    """softplus: self gets grad * sigmoid(beta * x), or grad where beta * x > threshold."""

    name = "SoftplusBackward0"
    saved_names = ("beta", "self", "threshold")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self")
        dt = x.data.dtype.type
        beta, threshold = dt(self.saved_value("beta")), dt(self.saved_value("threshold"))
        z = np.exp(x.data * beta)
        values = np.where(x.data * beta > threshold, grad.data, grad.data * z / (z + dt(1)))
        return [_backward_result(SoftplusBackwardBackward0, values, grad, x)]


def softplus(self: Tensor, beta: Number = 1, threshold: Number = 20) -> Tensor:
    dt = self.data.dtype.type
    b, th = dt(beta), dt(threshold)
    scaled = self.data * b
    values = np.where(scaled > th, self.data, np.log1p(np.exp(scaled)) / b)
    out, node = record(SoftplusBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("beta", beta)
        node.save("threshold", threshold)
        node.save("self", self)
    return out


class EluBackward0(Node):
    """elu: self gets grad where x > 0, else grad * alpha * exp(x)."""

    name = "EluBackward0"
    saved_names = ("alpha", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self")
        alpha = x.data.dtype.type(self.saved_value("alpha"))
        values = np.where(x.data > 0, grad.data, grad.data * alpha * np.exp(x.data))
        return [_backward_result(EluBackwardBackward0, values, grad, x)]


def elu(self: Tensor, alpha: Number = 1.0) -> Tensor:
    a = self.data.dtype.type(alpha)
    values = np.where(self.data > 0, self.data, a * np.expm1(self.data))
    out, node = record(EluBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("alpha", alpha)
        node.save("self", self)
    return out
