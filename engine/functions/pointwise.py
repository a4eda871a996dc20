"""One-input functions: forward kernels and backward formulas, side by side.

Which value each node saves follows PyTorch: functions whose derivative is easiest from
their output (exp, tanh, sigmoid, relu, sqrt) save `result`, the others save `self`.
Formulas are derivatives.yaml's, written with the engine's ops (see Note [Scalar
overloads] and Note [Order of gradient formulas] in arithmetic.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from engine.functions import fused, libm
from engine.functions._record import float_dtype, record, values_as, zeros_like
from engine.functions.arithmetic import (
    add_scalar,
    div,
    mul,
    mul_scalar,
    neg,
)
from engine.node import Node
from engine.tensor import Tensor, as_array


class _Pointwise(Node):
    """A one-input function node; `backward` gets the gradient and the saved value."""

    saves: ClassVar[str] = "result"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [self.backward(grad, self.saved_value(self.saves))]

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        raise NotImplementedError


class TanhBackward0(_Pointwise):
    """tanh: tanh_backward(grad, result) = grad * (1 - result²), one fused kernel."""

    name = "TanhBackward0"
    saved_names = ("result",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return fused.tanh_backward(grad, saved)


class SigmoidBackward0(_Pointwise):
    """sigmoid: sigmoid_backward(grad, result) = grad * (1 - result) * result."""

    name = "SigmoidBackward0"
    saved_names = ("result",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return fused.sigmoid_backward(grad, saved)


class ReluBackward0(_Pointwise):
    """relu: threshold_backward(grad, result, 0): grad where result > 0, else 0."""

    name = "ReluBackward0"
    saved_names = ("result",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return fused.threshold_backward(grad, saved, 0)


class ExpBackward0(_Pointwise):
    """exp: grad * result."""

    name = "ExpBackward0"
    saved_names = ("result",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return mul(grad, saved)


class SqrtBackward0(_Pointwise):
    """sqrt: grad / (2 * result)."""

    name = "SqrtBackward0"
    saved_names = ("result",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return div(grad, mul_scalar(saved, 2))


class RsqrtBackward0(_Pointwise):
    """rsqrt: -0.5 * grad * result³."""

    name = "RsqrtBackward0"
    saved_names = ("result",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        from engine.functions.power import pow_scalar

        cube = pow_scalar(saved, 3)
        return mul(mul_scalar(grad, -0.5), cube)


class Expm1Backward0(_Pointwise):
    """expm1: grad * (result + 1)."""

    name = "Expm1Backward0"
    saved_names = ("result",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return mul(grad, add_scalar(saved, 1))


class TanBackward0(_Pointwise):
    """tan: grad * (1 + result²)."""

    name = "TanBackward0"
    saved_names = ("result",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        from engine.functions.power import pow_scalar

        return mul(grad, add_scalar(pow_scalar(saved, 2), 1))


class LogBackward0(_Pointwise):
    """log: grad / self."""

    name = "LogBackward0"
    saves = "self"
    saved_names = ("self",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return div(grad, saved)


class Log1PBackward0(_Pointwise):
    """log1p: grad / (self + 1)."""

    name = "Log1PBackward0"
    saves = "self"
    saved_names = ("self",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return div(grad, add_scalar(saved, 1))


class SinBackward0(_Pointwise):
    """sin: grad * cos(self)."""

    name = "SinBackward0"
    saves = "self"
    saved_names = ("self",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return mul(grad, cos(saved))


class CosBackward0(_Pointwise):
    """cos: grad * -sin(self)."""

    name = "CosBackward0"
    saves = "self"
    saved_names = ("self",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return mul(grad, neg(sin(saved)))


class AbsBackward0(_Pointwise):
    """abs: grad * sgn(self) (0 at 0)."""

    name = "AbsBackward0"
    saves = "self"
    saved_names = ("self",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return mul(grad, fused.sgn(saved))


class ErfBackward0(_Pointwise):
    """erf: 2 / sqrt(pi) * exp(-self²) * grad."""

    name = "ErfBackward0"
    saves = "self"
    saved_names = ("self",)

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        from engine.functions.power import pow_scalar

        gauss = exp(neg(pow_scalar(saved, 2)))
        return mul(mul_scalar(gauss, 2.0 / math.sqrt(math.pi)), grad)


class _ZeroGradient(_Pointwise):
    """Step functions (floor, ceil, round, sign): the gradient is 0 everywhere."""

    saves = ""

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [zeros_like(grad)]


class FloorBackward0(_ZeroGradient):
    name = "FloorBackward0"


class CeilBackward0(_ZeroGradient):
    name = "CeilBackward0"


class RoundBackward0(_ZeroGradient):
    name = "RoundBackward0"


class SignBackward0(_ZeroGradient):
    name = "SignBackward0"


def _sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)), step by step in x's dtype, as PyTorch's kernel (libm.vector_exp)."""
    one = x.dtype.type(1)
    return one / (one + libm.vector_exp(-x))


def unary(node_type: type[_Pointwise], kernel: Callable[[Any], Any],
          keeps_integers: bool = False) -> Callable[[Tensor], Tensor]:
    """The forward function of a one-input op: compute, record, save."""

    def forward(self: Tensor) -> Tensor:
        if keeps_integers and not self.is_floating_point:
            values = as_array(kernel(self.data), self.data.dtype)
        else:
            dtype = float_dtype(self)
            values = as_array(kernel(values_as(self, dtype)), dtype.numpy)
        out, node = record(node_type, [self], values, self)
        if node and node_type.saves:
            node.save(node_type.saves, out if node_type.saves == "result" else self)
        return out

    forward.__name__ = node_type.name.removesuffix("Backward0").lower()
    return forward


def _relu(x: Any) -> Any:
    """0 where x < 0, else x: -0.0 and nan stay (ATen's clamp_min keeps them)."""
    return np.where(x < 0, x.dtype.type(0), x)


def _erf(x: Any) -> Any:
    import math

    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.ndim else x.dtype.type(
        math.erf(float(x)))


tanh = unary(TanhBackward0, libm.tanh)
exp = unary(ExpBackward0, libm.exp)
log = unary(LogBackward0, libm.log)
log1p = unary(Log1PBackward0, libm.log1p)
expm1 = unary(Expm1Backward0, libm.expm1)
sin = unary(SinBackward0, libm.sin)
cos = unary(CosBackward0, libm.cos)
tan = unary(TanBackward0, libm.tan)
sigmoid = unary(SigmoidBackward0, _sigmoid)
relu = unary(ReluBackward0, _relu, keeps_integers=True)
sqrt = unary(SqrtBackward0, np.sqrt)
rsqrt = unary(RsqrtBackward0, lambda x: x.dtype.type(1) / np.sqrt(x))
abs = unary(AbsBackward0, np.abs, keeps_integers=True)
erf = unary(ErfBackward0, _erf)
floor = unary(FloorBackward0, np.floor, keeps_integers=True)
ceil = unary(CeilBackward0, np.ceil, keeps_integers=True)
round = unary(RoundBackward0, np.round, keeps_integers=True)
sign = unary(SignBackward0, np.sign, keeps_integers=True)
