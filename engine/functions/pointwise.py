"""tanh exp log sin cos sigmoid relu sqrt abs: forward kernels and backward formulas.

Which value each node saves follows PyTorch: functions whose derivative is easiest from
their output save `result`, the others save `self`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Final

import numpy as np

from engine.functions._record import float_values, record
from engine.functions.higher_order import (
    SgnBackward0,
    SigmoidBackwardBackward0,
    TanhBackwardBackward0,
    ThresholdBackwardBackward0,
    recorded,
)
from engine.node import Node
from engine.tensor import FLOAT32, FLOAT32_SCALAR, ONE, Tensor, as_values

EXP: Final = np.exp     # a Final name: a C static in the compiled build, not a lookup per op


class _Pointwise(Node):
    """A one-input function node; `apply` unpacks the saved value for `backward`."""

    saves: ClassVar[str] = "result"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        return [self.backward(grad, self.saved_value(self.saves))]

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        raise NotImplementedError


def _fused(node_type: type[Node], grad: Tensor, saved: Tensor, values: Any) -> Tensor:
    """A gradient from one fused backward kernel (tanh_backward, threshold_backward ...)."""
    return recorded(node_type, as_values(values, FLOAT32), [grad, saved], grad)


class TanhBackward0(_Pointwise):
    """tanh: grad * (1 - result²), with 1 - y*y rounded once, as the FMA kernel does."""

    name = "TanhBackward0"

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        y = saved.data
        if type(y) is FLOAT32_SCALAR:  # 0-d: a Python float is the same double, made faster
            one_minus = FLOAT32_SCALAR(1.0 - float(y) * float(y))
        else:
            y = y.astype(np.float64)
            one_minus = (1.0 - y * y).astype(np.float32)
        return _fused(TanhBackwardBackward0, grad, saved, float_values(grad) * one_minus)


class ExpBackward0(_Pointwise):
    """exp: grad * result."""

    name = "ExpBackward0"

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return grad * saved


class SigmoidBackward0(_Pointwise):
    """sigmoid: grad * (1 - result) * result (sigmoid_backward)."""

    name = "SigmoidBackward0"

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        y = float_values(saved)
        return _fused(SigmoidBackwardBackward0, grad, saved,
                      float_values(grad) * (ONE - y) * y)


class ReluBackward0(_Pointwise):
    """relu: grad where result > 0, else 0 (threshold_backward)."""

    name = "ReluBackward0"

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        g = np.broadcast_to(float_values(grad), saved.shape)
        return _fused(ThresholdBackwardBackward0, grad, saved,
                      np.where(float_values(saved) <= 0, np.float32(0), g))


class SqrtBackward0(_Pointwise):
    """sqrt: grad / (2 * result)."""

    name = "SqrtBackward0"

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return grad / (saved * 2)


class LogBackward0(_Pointwise):
    """log: grad / self."""

    name = "LogBackward0"
    saves = "self"

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return grad / saved


class SinBackward0(_Pointwise):
    """sin: grad * cos(self)."""

    name = "SinBackward0"
    saves = "self"

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return grad * cos(saved)


class CosBackward0(_Pointwise):
    """cos: grad * -sin(self)."""

    name = "CosBackward0"
    saves = "self"

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        return grad * -sin(saved)


class AbsBackward0(_Pointwise):
    """abs: grad * sgn(self) (0 at 0)."""

    name = "AbsBackward0"
    saves = "self"

    def backward(self, grad: Tensor, saved: Tensor) -> Tensor:
        # sgn, as PyTorch defines it, is 0 at nan (np.sign gives nan there).
        sign = np.nan_to_num(np.sign(float_values(saved)), nan=0.0)
        sgn = recorded(SgnBackward0, as_values(sign, FLOAT32), [saved], saved)
        return grad * sgn


def _sigmoid(x: Any) -> Any:
    return ONE / (ONE + EXP(-x))


def _unary(node_type: type[_Pointwise], kernel: Callable[[Any], Any],
           keeps_integers: bool = False) -> Callable[[Tensor], Tensor]:
    """The forward function of a one-input op: compute, record, save."""

    def forward(self: Tensor) -> Tensor:
        if keeps_integers and not self.is_floating_point:
            values = as_values(kernel(self.data), self.dtype)
        else:
            values = as_values(kernel(float_values(self)), FLOAT32)
        out, node = record(node_type, [self], values, self)
        if node:
            node.save(node_type.saves, out if node_type.saves == "result" else self)
        return out

    forward.__name__ = node_type.name.removesuffix("Backward0").lower()
    return forward


tanh = _unary(TanhBackward0, np.tanh)
exp = _unary(ExpBackward0, EXP)
log = _unary(LogBackward0, np.log)
sin = _unary(SinBackward0, np.sin)
cos = _unary(CosBackward0, np.cos)
sigmoid = _unary(SigmoidBackward0, _sigmoid)
relu = _unary(ReluBackward0, lambda x: np.maximum(x, x.dtype.type(0)), keeps_integers=True)
sqrt = _unary(SqrtBackward0, np.sqrt)
abs = _unary(AbsBackward0, np.abs, keeps_integers=True)
