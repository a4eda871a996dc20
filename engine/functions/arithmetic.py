"""+ - * / ** and unary minus: each op's forward and its backward formula side by side.

Formulas follow PyTorch's derivatives.yaml. They are written with tensor operators, so a
`create_graph=True` backward records them as new nodes, as PyTorch does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine import errors
from engine.functions._record import (
    binary_values,
    cast,
    float_values,
    record,
    result_dtype,
    wrap,
)
from engine.functions.higher_order import where
from engine.functions.pointwise import log
from engine.node import Node
from engine.tensor import FLOAT32, INT64, Number, Tensor, Values, as_values


class AddBackward0(Node):
    """self + alpha * other: the gradient passes through to both inputs unchanged."""

    name = "AddBackward0"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        return [grad if self.needs_input_grad(0) else None,
                grad if self.needs_input_grad(1) else None]


def add(self: Tensor, other: Tensor | Number) -> Tensor:
    # `2 + a` is `a.__radd__(2)`: the number is always slot 1.
    other_t = wrap(other, self)
    out, node = record(AddBackward0, [self, other_t], binary_values(np.add, self, other_t), self)
    if node:
        node.save("alpha", 1)
    return out


class SubBackward0(Node):
    """self - alpha * other: self gets grad, other gets -grad."""

    name = "SubBackward0"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        return [grad if self.needs_input_grad(0) else None,
                -grad if self.needs_input_grad(1) else None]


def sub(self: Tensor, other: Tensor | Number) -> Tensor:
    other_t = wrap(other, self)
    out, node = record(SubBackward0, [self, other_t],
                       binary_values(np.subtract, self, other_t), self)
    if node:
        node.save("alpha", 1)
    return out


class RsubBackward1(Node):
    """`number - self` (rsub.Scalar): one edge, and self gets -grad."""

    name = "RsubBackward1"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        return [-grad]


def rsub(self: Tensor, other: Number) -> Tensor:
    other_t = wrap(other, self)
    out, node = record(RsubBackward1, [self], binary_values(np.subtract, other_t, self), self)
    if node:
        node.save("alpha", 1)
    return out


class MulBackward0(Node):
    """self * other: self gets grad * other, other gets grad * self.

    Each side saves only what the other side's gradient needs (`a * 2` saves just 2).
    """

    name = "MulBackward0"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        saved = self.unpack_saved()
        return [grad * saved["other"] if self.needs_input_grad(0) else None,
                grad * saved["self"] if self.needs_input_grad(1) else None]


def mul(self: Tensor, other: Tensor | Number) -> Tensor:
    other_t = wrap(other, self)
    out, node = record(MulBackward0, [self, other_t],
                       binary_values(np.multiply, self, other_t), self)
    if node:
        if node.needs_input_grad(1):
            node.save("self", self)
        if node.needs_input_grad(0):
            node.save("other", other_t)
    return out


class DivBackward0(Node):
    """self / other: self gets grad / other, other gets -grad * ((self / other) / other)."""

    name = "DivBackward0"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        saved = self.unpack_saved()
        other = saved["other"]
        return [grad / other if self.needs_input_grad(0) else None,
                -grad * ((saved["self"] / other) / other) if self.needs_input_grad(1) else None]


def div(self: Tensor, other: Tensor | Number) -> Tensor:
    other_t = wrap(other, self)
    dtype = FLOAT32       # true division: integers divide to float32
    out, node = record(DivBackward0, [self, other_t],
                       binary_values(np.divide, self, other_t, dtype), self)
    if node:
        if node.needs_input_grad(1):
            node.save("self", self)
        node.save("other", other_t)
    return out


class ReciprocalBackward0(Node):
    """1 / self, saving the result: self gets -grad * (result * result).

    `2 / a` is recorded as reciprocal(a) then * 2 (torch/_tensor.py `__rdiv__`).
    """

    name = "ReciprocalBackward0"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        result = self.unpack_saved()["result"]
        return [-grad * (result * result)]


def reciprocal(self: Tensor) -> Tensor:
    values = as_values(np.float32(1) / float_values(self), FLOAT32)
    out, node = record(ReciprocalBackward0, [self], values, self)
    if node:
        node.save("result", out)
    return out


class NegBackward0(Node):
    """-self: self gets -grad."""

    name = "NegBackward0"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        return [-grad]


def neg(self: Tensor) -> Tensor:
    out, _ = record(NegBackward0, [self], np.negative(self.data), self)
    return out


# -- powers ----------------------------------------------------------------------------

def _power(base: Values, exponent: float, dtype: np.dtype[Any]) -> Values:
    """pow(Tensor, Scalar) as PyTorch's CPU kernel special-cases common exponents."""
    if exponent == 2:
        return base * base
    if exponent == 3:
        return base * base * base
    if exponent == 0.5:
        return np.sqrt(base)
    if exponent == -0.5:
        return dtype.type(1) / np.sqrt(base)          # rsqrt: -inf at -0.0
    if exponent == -1:
        return dtype.type(1) / base
    if exponent == -2:
        return dtype.type(1) / (base * base)
    return np.power(base, dtype.type(exponent))


class PowBackward0(Node):
    """self ** exponent (a number): self gets grad * (exponent * self ** (exponent - 1))."""

    name = "PowBackward0"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        saved = self.unpack_saved()
        base, exponent = saved["self"], saved["exponent"]
        if exponent == 0:
            return [Tensor(as_values(np.zeros(base.shape, np.float32), FLOAT32), grad.ctx)]
        return [grad * ((base ** (exponent - 1)) * float(exponent))]


def pow(self: Tensor, exponent: Tensor | Number) -> Tensor:
    if isinstance(exponent, Tensor) and not exponent.is_wrapped_number:
        return _pow_tensor(self, exponent)
    exp = exponent.data.item() if isinstance(exponent, Tensor) else exponent
    if self.dtype == INT64 and isinstance(exp, int):
        if exp < 0:
            raise errors.TorchError("RuntimeError", errors.INTEGER_NEGATIVE_POWER)
        values = as_values(np.power(self.data, np.int64(exp)), INT64)
    else:
        values = as_values(_power(float_values(self), exp, FLOAT32), FLOAT32)
    out, node = record(PowBackward0, [self], values, self)
    if node:
        node.save("self", self)
        node.save("exponent", exp)
    return out


class PowBackward1(Node):
    """self ** exponent (both tensors).

    self gets grad * (exponent * self ** (exponent - 1)), or 0 where exponent is 0;
    exponent gets grad * (result * log(self)), or 0 where self is 0 and exponent >= 0.
    """

    name = "PowBackward1"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        saved = self.unpack_saved()
        base, exponent, result = saved["self"], saved["exponent"], saved["result"]
        grad_self = grad_exponent = None
        if self.needs_input_grad(0):
            term = grad * (exponent * base ** (exponent - 1))
            grad_self = where(np.asarray(exponent.data) == 0, np.float32(0), term)
        if self.needs_input_grad(1):
            zero_base = (np.asarray(base.data) == 0) & (np.asarray(exponent.data) >= 0)
            grad_exponent = grad * where(zero_base, np.float32(0), result * log(base))
        return [grad_self, grad_exponent]


def _integer_power(base: Values, exponent: Values) -> Values:
    """powi: integer powers, where a negative exponent gives 1 for 1, ±1 for -1, else 0
    (only `int_tensor ** negative_number` is an error, raised in `pow`)."""
    base, exponent = np.broadcast_arrays(base, exponent)
    negative = exponent < 0
    safe = np.power(base, np.where(negative, 0, exponent))
    odd = np.abs(exponent) % 2 == 1
    inverse = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, inverse, safe)


def _pow_tensor(self: Tensor, exponent: Tensor) -> Tensor:
    dtype = result_dtype(self, exponent)
    kernel = _integer_power if dtype == INT64 else np.power
    out, node = record(PowBackward1, [self, exponent],
                       binary_values(kernel, self, exponent, dtype), self)
    if node:
        node.save("self", self)
        node.save("exponent", exponent)
        node.save("result", out)
    return out


class PowBackward2(Node):
    """number ** exponent (`2 ** a`, pow.Scalar): exponent gets grad * (result * log(number)),
    or 0 where the number is 0 and exponent >= 0."""

    name = "PowBackward2"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        saved = self.unpack_saved()
        base, exponent, result = saved["self"], saved["exponent"], saved["result"]
        log_base = math.log(base) if base > 0 else (-math.inf if base == 0 else math.nan)
        term = result * log_base
        if base == 0:
            term = where(np.asarray(exponent.data) >= 0, np.float32(0), term)
        return [grad * term]


def pow_scalar_base(base: Number, exponent: Tensor) -> Tensor:
    """`number ** tensor`: torch/_tensor.py `__rpow__` calls torch.pow(number, tensor)."""
    base_t = wrap(base, exponent)
    dtype = result_dtype(base_t, exponent)
    kernel = _integer_power if dtype == INT64 else np.power
    values = as_values(kernel(cast(base_t.data, dtype), cast(exponent.data, dtype)), dtype)
    out, node = record(PowBackward2, [exponent], values, exponent)
    if node:
        node.save("self", base)
        node.save("exponent", exponent)
        node.save("result", out)
    return out
