"""Activations of a small network: softmax and log_softmax along a dim, and the
nonlinearities of torch.nn.functional (gelu, silu, leaky_relu, softplus, elu).

Most backwards here are one fused kernel in PyTorch (`_softmax_backward_data`,
`gelu_backward`, ...), recorded under create_graph as one `...BackwardBackward0` node:
the kernels and those nodes are in activation_backward.py and softmax_backward.py.
silu's is a kernel only without create_graph; with it, PyTorch differentiates a chain of
ops instead.
"""

from __future__ import annotations

import math

import numpy as np

from engine import errors, op_errors
from engine.functions import libm, softmax_kernel
from engine.functions._record import float_dtype, full_like, record, values_as
from engine.functions.activation_backward import (
    M_SQRT1_2,
    elu_backward,
    erf_rounded,
    gelu_backward,
    leaky_relu_backward,
    softplus_backward,
)
from engine.functions.arithmetic import add_scalar, mul, sub
from engine.functions.pointwise import sigmoid
from engine.functions.reduction import normalize_dim
from engine.functions.softmax_backward import log_softmax_backward_data, softmax_backward_data
from engine.node import Node
from engine.tensor import Number, Tensor, as_array

# -- softmax and log_softmax ------------------------------------------------------------

class SoftmaxBackward0(Node):
    """softmax(dim): self gets result * (grad - sum(grad * result, dim))."""

    name = "SoftmaxBackward0"
    saved_names = ("dim", "result")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [softmax_backward_data(grad, self.saved_value("result"), self.saved_value("dim"))]


def _along(self: Tensor, dim: int | None, kernel: str = "softmax") -> int:
    """The dimension, checked; ATen's CPU kernels take floating inputs only (their
    `_lastdim_` variant along the last dimension names itself in the error)."""
    if dim is None:
        raise errors.TorchError("TypeError", op_errors.SOFTMAX_NEEDS_DIM)
    d = normalize_dim(dim, self.ndim) if self.ndim else 0
    if not self.is_floating_point:
        variant = "lastdim_" if self.ndim == 0 or d == self.ndim - 1 else ""
        raise errors.TorchError("NotImplementedError", f'"{kernel}_{variant}kernel_impl" not '
                                f"implemented for '{op_errors.legacy_name(self.dtype)}'")
    return d


def softmax(self: Tensor, dim: int | None = None) -> Tensor:
    d = _along(self, dim)
    dtype = float_dtype(self)
    x = values_as(self, dtype)
    if x.ndim == 0:
        values = np.ones((), dtype=dtype.numpy)
    elif x.dtype == softmax_kernel.F32 and d == x.ndim - 1:     # Note [Vectorized softmax]
        values = softmax_kernel.softmax_lastdim(x)
    else:
        shifted = libm.exp(x - np.max(x, axis=d, keepdims=True))
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
        return [log_softmax_backward_data(grad, self.saved_value("result"),
                                          self.saved_value("dim"))]


def log_softmax(self: Tensor, dim: int | None = None) -> Tensor:
    d = _along(self, dim, "log_softmax")
    dtype = float_dtype(self)
    x = values_as(self, dtype)
    if x.ndim == 0:
        values = np.zeros((), dtype=dtype.numpy)
    elif x.dtype == softmax_kernel.F32 and d == x.ndim - 1:     # Note [Vectorized softmax]
        values = softmax_kernel.log_softmax_lastdim(x)
    else:
        shifted = x - np.maximum.reduce(x, axis=d, keepdims=True)
        values = shifted - libm.log(np.add.reduce(libm.exp(shifted), axis=d, keepdims=True))
    out, node = record(LogSoftmaxBackward0, [self], as_array(values, dtype.numpy), self)
    if node:
        node.save("dim", d)
        node.save("result", out)
    return out


# -- nonlinearities -----------------------------------------------------------------------

class GeluBackward0(Node):
    """gelu: self gets gelu_backward(grad, self), grad * (Φ(x) + x φ(x)) when exact."""

    name = "GeluBackward0"
    saved_names = ("approximate", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [gelu_backward(grad, self.saved_value("self"), self.saved_value("approximate"))]


def gelu(self: Tensor, approximate: str = "none") -> Tensor:
    if approximate not in ("none", "tanh"):
        raise errors.TorchError("RuntimeError", op_errors.gelu_approximate(approximate))
    if approximate == "tanh":
        v = self.data.astype(np.float64)
        k = math.sqrt(2.0 / math.pi)
        values = 0.5 * v * (1 + libm.tanh(k * (v + 0.044715 * v ** 3)))
    else:                       # GeluKernelImpl, each op in x's dtype
        x, dt = self.data, self.data.dtype.type
        values = x * dt(0.5) * (dt(1) + erf_rounded(x * dt(M_SQRT1_2)))
    out, node = record(GeluBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("approximate", approximate)
        node.save("self", self)
    return out


class SiluBackward0(Node):
    """silu = x * sigmoid(x): self gets grad * s * (1 + x * (1 - s)), the silu_backward
    kernel (whose `1 + x * (1 - s)` GCC fuses into one multiply-add), or under
    create_graph those ops one by one (derivatives.yaml: "GradMode::is_enabled() ?
    infinitely_differentiable_silu_backward : silu_backward")."""

    name = "SiluBackward0"
    saved_names = ("self",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self")
        if grad.ctx.grad_mode:
            s = sigmoid(x)
            slope = add_scalar(mul(x, sub(full_like(s, 1.0), s)), 1.0)
            return [mul(mul(grad, s), slope)]
        one = x.data.dtype.type(1)
        s_values = one / (one + libm.vector_exp(-x.data))
        values = values_as(grad, x.dtype) * s_values * libm.fma(x.data, one - s_values, one)
        return [Tensor(as_array(values, x.data.dtype), grad.ctx)]


def silu(self: Tensor) -> Tensor:
    one = self.data.dtype.type(1)
    values = self.data / (one + libm.vector_exp(-self.data))
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
        return [leaky_relu_backward(grad, self.saved_value("self"),
                                    self.saved_value("negative_slope"))]


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
        return [softplus_backward(grad, self.saved_value("self"), self.saved_value("beta"),
                                  self.saved_value("threshold"))]


def softplus(self: Tensor, beta: Number = 1, threshold: Number = 20) -> Tensor:
    dt = self.data.dtype.type
    b, th = dt(beta), dt(threshold)
    scaled = self.data * b
    values = np.where(scaled > th, self.data, libm.log1p(libm.exp(scaled)) / b)
    out, node = record(SoftplusBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("beta", beta)
        node.save("threshold", threshold)
        node.save("self", self)
    return out


class EluBackward0(Node):
    """elu(alpha, scale=1, input_scale=1): self gets elu_backward(grad, self), grad where
    x > 0, else grad * alpha * exp(x)."""

    name = "EluBackward0"
    saved_names = ("alpha", "input_scale", "scale", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [elu_backward(grad, self.saved_value("alpha"), self.saved_value("scale"),
                             self.saved_value("input_scale"), False, self.saved_value("self"))]


def elu(self: Tensor, alpha: Number = 1.0) -> Tensor:
    a = self.data.dtype.type(alpha)
    values = np.where(self.data > 0, self.data, a * libm.expm1(self.data))
    out, node = record(EluBackward0, [self], as_array(values, self.data.dtype), self)
    if node:
        node.save("alpha", alpha)
        node.save("input_scale", 1)
        node.save("scale", 1)
        node.save("self", self)
    return out
