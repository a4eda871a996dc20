"""Powers: `a ** n`, `a ** b` and `n ** a`, three forms with three backward nodes
(PowBackward0, PowBackward1, PowBackward2), each formula beside its forward."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine import dtypes, errors, op_errors
from engine.functions import libm
from engine.functions._record import (
    Operand,
    binary_values,
    record,
    recorded,
    result_type,
    values_as,
    wrap,
    zeros_like,
)
from engine.functions.arithmetic import mul, mul_scalar, sub_scalar
from engine.functions.pointwise import log
from engine.node import Node
from engine.tensor import Number, Tensor, as_array


def _power(base: np.ndarray, exponent: float) -> Any:
    """pow(Tensor, Scalar) as PyTorch's CPU kernel special-cases common exponents."""
    one = base.dtype.type(1)
    if exponent == 2:
        return base * base
    if exponent == 3:
        return base * base * base
    if exponent == 0.5:
        return np.sqrt(base)
    if exponent == -0.5:
        return one / np.sqrt(base)          # rsqrt: -inf at -0.0
    if exponent == -1:
        return one / base
    if exponent == -2:
        return one / (base * base)
    return libm.pow_tensor_scalar(base, exponent)


class PowBackward0(Node):
    """self ** exponent (a number): self gets grad * (exponent * self ** (exponent - 1)),
    or zeros when the exponent is 0."""

    name = "PowBackward0"
    saved_names = ("exponent", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        base, exponent = self.saved_value("self"), self.saved_value("exponent")
        if exponent == 0:
            return [zeros_like(base)]
        if _kernel_suffices(grad, base, exponent):
            # the same three ops on the values (Note [Formulas as kernels])
            scaled = _power(base.data, exponent - 1) * base.data.dtype.type(exponent)
            return [Tensor(as_array(grad.data * scaled, base.data.dtype), grad.ctx)]
        return [mul(grad, mul_scalar(pow_scalar(base, exponent - 1), exponent))]


# Note [Formulas as kernels]
# Outside grad mode (every backward without create_graph) a formula's ops record nothing,
# so `grad * (n * self.pow(n - 1))` can run on the values alone, with the same roundings
# in the same order, where the dtypes and shapes already agree: `loss = (y - t) ** 2` in a
# training loop pops a PowBackward0 every step. MEASURED, compiled, on a 0-d float32
# tensor (best of 5 x 20,000): the formula's three ops took 3.6 us, the whole apply with
# the kernel 2.1 us; 1.5 ms of bench/programs.py's 1,000-step scalar loop (about 50 ms).


def _kernel_suffices(grad: Tensor, base: Tensor, exponent: Number) -> bool:
    return (not grad.ctx.grad_mode and grad.dtype is base.dtype
            and base.dtype.is_floating_point and grad.shape == base.shape
            and not isinstance(exponent, bool))


def pow_scalar(self: Tensor, exponent: Number) -> Tensor:
    """pow.Tensor_Scalar: `a ** 2`, `a.pow(0.5)`."""
    if not self.is_floating_point and isinstance(exponent, int) and not isinstance(
            exponent, bool):
        if exponent < 0:
            raise errors.TorchError("RuntimeError", op_errors.INTEGER_NEGATIVE_POWER)
        dtype = result_type(self, wrap(exponent, self))        # bool ** 2 is int64
        values = as_array(np.power(values_as(self, dtype), np.int64(exponent)), dtype.numpy)
    else:
        dtype = result_type(self, wrap(exponent, self))
        values = as_array(_power(values_as(self, dtype), exponent), dtype.numpy)
    out, node = record(PowBackward0, [self], values, self)
    if node:
        node.save("self", self)
        node.save("exponent", exponent)
    return out


def pow(self: Tensor, exponent: Operand) -> Tensor:
    """`a ** x`: a number exponent is pow.Tensor_Scalar, a tensor one pow.Tensor_Tensor."""
    if isinstance(exponent, Tensor) and not exponent.is_wrapped_number:
        return _pow_tensor(self, exponent)
    value = exponent.data.item() if isinstance(exponent, Tensor) else exponent
    return pow_scalar(self, value)


def where_zero(condition: np.ndarray, t: Tensor) -> Tensor:
    """`at::where(condition, zeros({}), t)`, recorded as PyTorch records it."""
    from engine.functions.compare import WhereBackward0

    values = as_array(np.where(condition, t.dtype.numpy.type(0), t.data), t.dtype.numpy)
    out = recorded(WhereBackward0, values, [None, t], t)
    if out.grad_fn is not None:
        out.grad_fn.save("condition", condition)
    return out


class PowBackward1(Node):
    """self ** exponent (both tensors).

    exponent gets grad * (result * log(self)), 0 where self is 0 and exponent >= 0;
    self gets grad * (exponent * self ** (exponent - 1)), 0 where exponent is 0."""

    name = "PowBackward1"
    saved_names = ("exponent", "result", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        base, exponent = self.saved_value("self"), self.saved_value("exponent")
        grad_self = grad_exponent = None
        if self.needs_input_grad(1):
            result = self.saved_value("result")
            zero_base = (base.data == 0) & (exponent.data >= 0)
            grad_exponent = mul(grad, where_zero(zero_base, mul(result, log(base))))
        if self.needs_input_grad(0):
            term = mul(grad, mul(exponent, _pow_tensor(base, sub_scalar(exponent, 1))))
            grad_self = where_zero(exponent.data == 0, term)
        return [grad_self, grad_exponent]


def _integer_power(base: Any, exponent: Any) -> Any:
    """powi: integer powers, where a negative exponent gives 1 for 1, ±1 for -1, else 0
    (only `int_tensor ** negative_number` is an error, raised in `pow_scalar`)."""
    base, exponent = np.broadcast_arrays(base, exponent)
    negative = exponent < 0
    safe = np.power(base, np.where(negative, 0, exponent))
    odd = np.abs(exponent) % 2 == 1
    inverse = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, inverse, safe)


def _no_bool_power(dtype: dtypes.DType) -> None:
    if dtype is dtypes.bool_:           # (a bool tensor to a Python number is allowed)
        raise errors.TorchError("NotImplementedError", '"pow" not implemented for \'Bool\'')


def _pow_tensor(self: Tensor, exponent: Tensor) -> Tensor:
    dtype = result_type(self, exponent)
    _no_bool_power(dtype)
    kernel = _integer_power if dtype is dtypes.int64 else libm.power
    out, node = record(PowBackward1, [self, exponent],
                       binary_values(kernel, self, exponent, dtype), self)
    if node:
        node.save("exponent", exponent)    # see Note [Saving order]
        node.save("self", self)
        node.save("result", out)
    return out


class PowBackward2(Node):
    """number ** exponent (`2 ** a`, pow.Scalar): exponent gets grad * (result *
    log(number)), 0 where the number is 0 and exponent >= 0."""

    name = "PowBackward2"
    saved_names = ("exponent", "result", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        base, exponent = self.saved_value("self"), self.saved_value("exponent")
        result = self.saved_value("result")
        log_base = math.log(base) if base > 0 else (-math.inf if base == 0 else math.nan)
        term = mul_scalar(result, log_base)
        if base == 0:
            term = where_zero(exponent.data >= 0, term)
        return [mul(grad, term)]


def pow_scalar_base(base: Number, exponent: Tensor) -> Tensor:
    """`number ** tensor`: torch/_tensor.py `__rpow__` calls torch.pow(number, tensor)."""
    base_t = wrap(base, exponent)
    dtype = result_type(base_t, exponent)
    _no_bool_power(dtype)
    kernel = _integer_power if dtype is dtypes.int64 else libm.power
    values = as_array(kernel(values_as(base_t, dtype), values_as(exponent, dtype)),
                      dtype.numpy)
    out, node = record(PowBackward2, [exponent], values, exponent)
    if node:
        node.save("self", base)
        node.save("exponent", exponent)
        node.save("result", out)
    return out
