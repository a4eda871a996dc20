"""The activations' fused backward kernels, each beside its own backward node (softmax's
and log_softmax's are in softmax_backward.py).

`gelu_backward(grad, self)` is one kernel in PyTorch, not a chain of ops: under
create_graph it records one GeluBackwardBackward0 node with the edges (grad_output, self),
and a second derivative runs that node's formula from derivatives.yaml (the
`..._double_backward` helpers of FunctionsManual.cpp). The formulas are written with the
engine's ops in the order PyTorch's C++ evaluates them (Note [Order of gradient formulas]
in arithmetic.py: inputs alphabetically, the right operand of a binary operator first),
so that a third derivative records PyTorch's nodes and sequence numbers too.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine.functions import fused, libm
from engine.functions._record import full_like, recorded, values_as, zeros_like
from engine.functions.arithmetic import add, add_scalar, div, mul, mul_scalar, neg, sub
from engine.functions.compare import compare
from engine.functions.hyperbolic import cosh
from engine.functions.pointwise import exp, sigmoid, tanh
from engine.functions.power import pow_scalar
from engine.node import Node
from engine.tensor import Number, Tensor, as_array

M_2_SQRTPI, M_SQRT1_2 = 1.12837916709551257390, 0.70710678118654752440
M_SQRT2 = 1.41421356237309504880
GELU_KAPPA = 0.044715


def kernel_output(node_type: type[Node], values: Any, grad: Tensor, other: Tensor,
                   **saved: Any) -> Tensor:
    """A kernel's result in other's dtype, recorded (with the node's saved values, and the
    edges grad_output and other) under create_graph."""
    out = recorded(node_type, as_array(values, other.dtype.numpy), [grad, other],
                   grad)
    if out.grad_fn is not None:
        for name, value in saved.items():
            out.grad_fn.save(name, value)
    return out


def _mask(condition: Tensor, like: Tensor) -> Tensor:
    """`condition.type_as(like)`: a 0/1 constant of like's dtype."""
    return Tensor(condition.data.astype(like.dtype.numpy), like.ctx)


# -- gelu -----------------------------------------------------------------------------------

def erf_float64(x: np.ndarray) -> np.ndarray:
    """erf of float64 values, element by element (numpy has no erf)."""
    flat = [math.erf(v) for v in x.reshape(-1)]
    return np.array(flat, dtype=np.float64).reshape(x.shape)


def erf_rounded(x: np.ndarray) -> np.ndarray:
    """erf rounded once to x's dtype, as glibc's erff is (Note [Float32 functions])."""
    return erf_float64(x.astype(np.float64)).astype(x.dtype)


def gelu_derivative(v: np.ndarray, approximate: str) -> np.ndarray:
    """gelu'(x) for the tanh form, in float64."""
    k = M_SQRT2 * M_2_SQRTPI * 0.5
    t = libm.tanh(k * (v + GELU_KAPPA * v ** 3))
    d = 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * k * (1 + 3 * GELU_KAPPA * v * v)
    return np.asarray(d)


def gelu_backward(grad_output: Tensor, self: Tensor, approximate: str) -> Tensor:
    """grad * (cdf + x * pdf), each op in x's dtype as GeluBackwardKernelImpl does it (the
    tanh form in float64)."""
    x, dt = self.data, self.data.dtype.type
    g = values_as(grad_output, self.dtype)
    if approximate == "tanh":
        values = g * gelu_derivative(x.astype(np.float64), approximate).astype(x.dtype)
    else:
        cdf = dt(0.5) * (dt(1) + erf_rounded(x * dt(M_SQRT1_2)))
        pdf = dt(M_2_SQRTPI * M_SQRT1_2 * 0.5) * libm.exp(x * x * dt(-0.5))
        values = g * (cdf + x * pdf)
    return kernel_output(GeluBackwardBackward0, values, grad_output, self,
                         approximate=approximate, grad_output=grad_output, self=self)


def _gelu_second_derivative_tanh(x: Tensor) -> Tensor:
    """2 f'gh + g'fh + h'fg for gelu = f g' with f = x/2, g = 1 - tanh²(u), h = u'."""
    beta = M_SQRT2 * M_2_SQRTPI * 0.5
    inner = mul_scalar(add(x, mul_scalar(pow_scalar(x, 3), GELU_KAPPA)), beta)
    tanh_inner = tanh(inner)
    c = cosh(inner)
    sech_inner = div(full_like(c, 1), c)
    f = mul_scalar(x, 0.5)
    square = mul(tanh_inner, tanh_inner)
    g = sub(full_like(square, 1), square)
    h = mul_scalar(add_scalar(mul(mul_scalar(x, 3 * GELU_KAPPA), x), 1), beta)
    f_prime_gh = mul(mul_scalar(g, 0.5), h)
    right = mul(neg(sech_inner), tanh_inner)
    g_prime = mul(mul(mul_scalar(sech_inner, 2), right), h)
    g_prime_fh = mul(mul(f, h), g_prime)
    h_prime = mul_scalar(mul_scalar(x, 6 * GELU_KAPPA), beta)
    h_prime_fg = mul(mul(f, g), h_prime)
    return add(add(mul_scalar(f_prime_gh, 2), g_prime_fh), h_prime_fg)


def gelu_double_backward(grad: Tensor, grad_output: Tensor, self: Tensor,
                         approximate: str) -> Tensor:
    """grad * grad_output * gelu''(self)."""
    if approximate == "tanh":
        second = _gelu_second_derivative_tanh(self)
        return mul(mul(grad, grad_output), second)
    input_sq = mul(self, self)
    pdf = mul_scalar(exp(mul_scalar(input_sq, -0.5)), M_2_SQRTPI * M_SQRT1_2 * 0.5)
    right = mul(input_sq, pdf)
    second = sub(mul_scalar(pdf, 2), right)
    return mul(mul(grad, grad_output), second)


class GeluBackwardBackward0(Node):
    """grad_output gets the kernel of grad, self gets gelu_double_backward."""

    name = "GeluBackwardBackward0"
    saved_names = ("approximate", "grad_output", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, approximate = self.saved_value("self"), self.saved_value("approximate")
        first = gelu_backward(grad, x, approximate) if self.needs_input_grad(0) else None
        second = None
        if self.needs_input_grad(1):
            second = gelu_double_backward(grad, self.saved_value("grad_output"), x, approximate)
        return [first, second]


# -- leaky_relu, softplus, elu ----------------------------------------------------------

def leaky_relu_backward(grad_output: Tensor, self: Tensor, negative_slope: Number) -> Tensor:
    g = np.broadcast_to(values_as(grad_output, self.dtype), self.shape)
    values = np.where(self.data > 0, g, g * self.data.dtype.type(negative_slope))
    return kernel_output(LeakyReluBackwardBackward0, values, grad_output, self,
                         negative_slope=negative_slope, self=self)


class LeakyReluBackwardBackward0(Node):
    """grad_output gets the kernel of grad, self gets zeros."""

    name = "LeakyReluBackwardBackward0"
    saved_names = ("negative_slope", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        first = None
        if self.needs_input_grad(0):
            first = leaky_relu_backward(grad, self.saved_value("self"),
                                        self.saved_value("negative_slope"))
        return [first, zeros_like(grad) if self.needs_input_grad(1) else None]


def softplus_backward(grad_output: Tensor, self: Tensor, beta: Number,
                      threshold: Number) -> Tensor:
    """grad * sigmoid(beta * x), or grad where beta * x > threshold."""
    dt = self.data.dtype.type
    g = values_as(grad_output, self.dtype)
    scaled = self.data * dt(beta)
    z = libm.exp(scaled)
    values = np.where(scaled > dt(threshold), g, g * z / (z + dt(1)))
    return kernel_output(SoftplusBackwardBackward0, values, grad_output, self,
                         beta=beta, grad_output=grad_output, self=self, threshold=threshold)


def softplus_double_backward(grad: Tensor, self: Tensor, beta: Number,
                             threshold: Number) -> Tensor:
    """sigmoid_backward(grad, sigmoid(beta x)) * (beta x < threshold) * beta."""
    x = mul_scalar(self, beta)
    slope = fused.sigmoid_backward(grad, sigmoid(x))
    return mul_scalar(mul(slope, _mask(compare("lt", x, threshold), grad)), beta)


class SoftplusBackwardBackward0(Node):
    """grad_output gets the kernel of grad, self softplus_double_backward(grad * go)."""

    name = "SoftplusBackwardBackward0"
    saved_names = ("beta", "grad_output", "self", "threshold")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self")
        beta, threshold = self.saved_value("beta"), self.saved_value("threshold")
        first = softplus_backward(grad, x, beta, threshold) if self.needs_input_grad(0) else None
        second = None
        if self.needs_input_grad(1):
            scaled = mul(grad, self.saved_value("grad_output"))
            second = softplus_double_backward(scaled, x, beta, threshold)
        return [first, second]


def elu_backward(grad_output: Tensor, alpha: Number, scale: Number, input_scale: Number,
                 is_result: bool, self_or_result: Tensor) -> Tensor:
    """grad * scale where x > 0; else grad * input_scale * alpha * scale * exp(x *
    input_scale) (with x the input), or grad * input_scale * (x + alpha * scale) (x the
    result)."""
    x = self_or_result.data
    dt = x.dtype.type
    g = values_as(grad_output, self_or_result.dtype)
    neg_coef, pos_coef, in_coef = dt(alpha) * dt(scale), dt(scale), dt(input_scale)
    negative = (g * in_coef * (x + neg_coef) if is_result
                else g * in_coef * neg_coef * libm.exp(x * in_coef))
    values = np.where(x <= 0, negative, g * pos_coef)
    return kernel_output(EluBackwardBackward0, values, grad_output, self_or_result,
                         alpha=alpha, grad_output=grad_output, input_scale=input_scale,
                         is_result=is_result, scale=scale, self_or_result=self_or_result)


class EluBackwardBackward0(Node):
    """elu_backward(grad_output, self_or_result): grad_output gets the kernel of grad,
    self_or_result gets elu_double_backward: the kernel of grad * grad_output *
    input_scale where x < 0 (that product itself when x is the result)."""

    name = "EluBackwardBackward0"
    saved_names = ("alpha", "grad_output", "input_scale", "is_result", "scale",
                   "self_or_result")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x = self.saved_value("self_or_result")
        alpha, scale = self.saved_value("alpha"), self.saved_value("scale")
        input_scale, is_result = self.saved_value("input_scale"), self.saved_value("is_result")
        first = second = None
        if self.needs_input_grad(0):
            first = elu_backward(grad, alpha, scale, input_scale, is_result, x)
        if self.needs_input_grad(1):
            negative = _mask(compare("lt", x, 0), grad)
            g = mul_scalar(mul(grad, self.saved_value("grad_output")), input_scale)
            if not is_result:
                g = elu_backward(g, alpha, scale, input_scale, is_result, x)
            second = mul(g, negative)
        return [first, second]

