"""+ - * / and unary minus: each op's forward and its backward formula side by side.

Formulas follow PyTorch's derivatives.yaml. They are written with the engine's own ops, so
a `create_graph=True` backward records them as new nodes, exactly as PyTorch does.

# Note [Scalar overloads]
From Python, a number operand is wrapped into a 0-d tensor, so `a * 2` is `mul.Tensor`
(MulBackward0). Inside C++ backward formulas a number is a `Scalar`, so `grad * 2` there is
`mul.Scalar` and records MulBackward1. The `*_scalar` functions below are those overloads.

# Note [Order of gradient formulas]
A node computes its inputs' gradients in the alphabetical order of the inputs' names in
derivatives.yaml (`other` before `self`, `mat1` before `mat2`, `exponent` before `self`),
as PyTorch's generated code does; and in a formula `x * y` the right operand is
evaluated first, as GCC evaluates C++ operator arguments. Under create_graph both decide
the sequence numbers of the nodes a backward records.
"""

from __future__ import annotations

import operator
from typing import Final

import numpy as np

from engine import dtypes, errors, op_errors
from engine.functions._record import (
    Operand,
    binary_values,
    float_dtype,
    record,
    result_type,
    values_as,
    wrap,
)
from engine.node import Node
from engine.tensor import Number, Tensor, as_array

ADD: Final = operator.add
SUB: Final = operator.sub
MUL: Final = operator.mul
TRUEDIV: Final = operator.truediv


def _binary(node_type: type[Node], kernel: object, self: Tensor, other: Tensor,
            dtype: dtypes.DType) -> tuple[Tensor, Node | None]:
    return record(node_type, [self, other],
                  binary_values(kernel, self, other, dtype), self)  # type: ignore[arg-type]


class AddBackward0(Node):
    """self + alpha * other: both inputs get the gradient unchanged (alpha is 1)."""

    name = "AddBackward0"
    saved_names = ("alpha",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        return [grad if self.needs_input_grad(0) else None,
                grad if self.needs_input_grad(1) else None]


def add(self: Tensor, other: Operand) -> Tensor:
    # `2 + a` is `a.__radd__(2)`: the number is always slot 1.
    other_t = wrap(other, self)
    out, node = _binary(AddBackward0, ADD, self, other_t, result_type(self, other_t))
    if node:
        node.save("alpha", 1)
    return out


class AddBackward1(Node):
    """self + number (add.Scalar, from backward formulas): self gets the gradient."""

    name = "AddBackward1"
    saved_names = ("alpha",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return [grads[0]]


def add_scalar(self: Tensor, other: Number) -> Tensor:
    other_t = wrap(other, self)
    out, node = record(AddBackward1, [self],
                       binary_values(ADD, self, other_t, result_type(self, other_t)), self)
    if node:
        node.save("alpha", 1)
    return out


class SubBackward0(Node):
    """self - alpha * other: self gets grad, other gets -grad."""

    name = "SubBackward0"
    saved_names = ("alpha",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        grad_other = neg(grad) if self.needs_input_grad(1) else None
        return [grad if self.needs_input_grad(0) else None, grad_other]


def _subtrahend(self: Tensor, other: Operand) -> Tensor:
    """`other` wrapped, once PyTorch's `sub_check` passes: no bool (tensor or number)."""
    other_t = wrap(other, self)
    if dtypes.bool_ in (self.dtype, other_t.dtype):
        raise errors.TorchError("RuntimeError", op_errors.SUB_TWO_BOOLS
                                if self.dtype is other_t.dtype else op_errors.SUB_BOOL)
    return other_t


def sub(self: Tensor, other: Operand) -> Tensor:
    other_t = _subtrahend(self, other)
    out, node = _binary(SubBackward0, SUB, self, other_t, result_type(self, other_t))
    if node:
        node.save("alpha", 1)
    return out


class SubBackward1(Node):
    """self - number (sub.Scalar): self gets the gradient."""

    name = "SubBackward1"
    saved_names = ("alpha",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return [grads[0]]


def sub_scalar(self: Tensor, other: Number) -> Tensor:
    other_t = _subtrahend(self, other)
    out, node = record(SubBackward1, [self],
                       binary_values(SUB, self, other_t, result_type(self, other_t)), self)
    if node:
        node.save("alpha", 1)
    return out


class RsubBackward1(Node):
    """`number - self` (rsub.Scalar): one edge, and self gets -grad."""

    name = "RsubBackward1"
    saved_names = ("alpha",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [neg(grad)]


def rsub(self: Tensor, other: Number) -> Tensor:
    other_t = _subtrahend(self, other)
    out, node = record(RsubBackward1, [self],
                       binary_values(SUB, other_t, self, result_type(self, other_t)), self)
    if node:
        node.save("alpha", 1)
    return out


class MulBackward0(Node):
    """self * other: self gets grad * other, other gets grad * self.

    Each side saves only what the other side's gradient needs (`a * 2` saves just 2)."""

    name = "MulBackward0"
    saved_names = ("other", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        grad_other = mul(grad, self.saved_value("self")) if self.needs_input_grad(1) else None
        grad_self = mul(grad, self.saved_value("other")) if self.needs_input_grad(0) else None
        return [grad_self, grad_other]


def mul(self: Tensor, other: Operand) -> Tensor:
    other_t = wrap(other, self)
    out, node = _binary(MulBackward0, MUL, self, other_t, result_type(self, other_t))
    if node:
        if node.needs_input_grad(0):       # see Note [Saving order]
            node.save("other", other_t)
        if node.needs_input_grad(1):
            node.save("self", self)
    return out


class MulBackward1(Node):
    """self * number (mul.Scalar, from backward formulas): self gets grad * number."""

    name = "MulBackward1"
    saved_names = ("other",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [mul_scalar(grad, self.saved_value("other"))]


def mul_scalar(self: Tensor, other: Number) -> Tensor:
    other_t = wrap(other, self)
    out, node = record(MulBackward1, [self],
                       binary_values(MUL, self, other_t, result_type(self, other_t)), self)
    if node:
        node.save("other", other)
    return out


class DivBackward0(Node):
    """self / other: self gets grad / other, other gets -grad * ((self / other) / other)."""

    name = "DivBackward0"
    saved_names = ("other", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        grad_other = grad_self = None
        other = self.saved_value("other")
        if self.needs_input_grad(1):
            ratio = div(div(self.saved_value("self"), other), other)   # right operand first
            grad_other = mul(neg(grad), ratio)
        if self.needs_input_grad(0):
            grad_self = div(grad, other)
        return [grad_self, grad_other]


def div(self: Tensor, other: Operand) -> Tensor:
    other_t = wrap(other, self)
    out, node = _binary(DivBackward0, TRUEDIV, self, other_t, float_dtype(self, other_t))
    if node:
        node.save("other", other_t)        # see Note [Saving order]
        if node.needs_input_grad(1):
            node.save("self", self)
    return out


class DivBackward1(Node):
    """self / number (div.Scalar, from backward formulas): self gets grad / number."""

    name = "DivBackward1"
    saved_names = ("other",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [div_scalar(grad, self.saved_value("other"))]


def div_scalar(self: Tensor, other: Number) -> Tensor:
    other_t = wrap(other, self)
    out, node = record(DivBackward1, [self],
                       binary_values(TRUEDIV, self, other_t, float_dtype(self, other_t)), self)
    if node:
        node.save("other", other)
    return out


class ReciprocalBackward0(Node):
    """1 / self, saving the result: self gets -grad * (result * result).

    `2 / a` is recorded as reciprocal(a) then * 2 (torch/_tensor.py `__rdiv__`)."""

    name = "ReciprocalBackward0"
    saved_names = ("result",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        result = self.saved_value("result")
        square = mul(result, result)
        return [mul(neg(grad), square)]


def reciprocal(self: Tensor) -> Tensor:
    dtype = float_dtype(self)
    values = as_array(np.reciprocal(values_as(self, dtype)), dtype.numpy)
    out, node = record(ReciprocalBackward0, [self], values, self)
    if node:
        node.save("result", out)
    return out


class NegBackward0(Node):
    """-self: self gets -grad."""

    name = "NegBackward0"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [neg(grad)]


def neg(self: Tensor) -> Tensor:
    if self.dtype is dtypes.bool_:
        raise errors.TorchError("RuntimeError", op_errors.NEGATIVE_BOOL)
    out, _ = record(NegBackward0, [self], as_array(np.negative(self.data), self.data.dtype),
                    self)
    return out
