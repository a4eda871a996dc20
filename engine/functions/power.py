"""Powers: `a ** n`, `a ** b` and `n ** a`, three forms with three backward nodes
(PowBackward0, PowBackward1, PowBackward2), each formula beside its forward."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine import errors
from engine.functions._record import binary_values, cast, float_values, record, result_dtype, wrap
from engine.functions.higher_order import where
from engine.functions.pointwise import log
from engine.node import Node
from engine.tensor import FLOAT32, INT64, Number, Tensor, Values, as_values


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
