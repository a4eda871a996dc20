"""+ - * / ** and unary minus: each op's forward and its backward formula side by side.

Formulas follow PyTorch's derivatives.yaml. They are written with tensor operators, so a
`create_graph=True` backward records them as new nodes, as PyTorch does.

Kernels are Python's operators, not numpy's ufuncs: the same float32 arithmetic, at a
twentieth of a ufunc call's cost on the 0-d scalars most programs use.
"""

from __future__ import annotations

import operator
from typing import Final

from engine.functions._record import (
    binary_values,
    float_values,
    record,
    wrap,
)
from engine.node import Node
from engine.tensor import FLOAT32, ONE, Number, Tensor, as_values

# The kernels as Final names, which the compiled build keeps as C statics (`operator.mul`
# would be a lookup on the module at every op).
ADD: Final = operator.add
SUB: Final = operator.sub
MUL: Final = operator.mul
TRUEDIV: Final = operator.truediv


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
    out, node = record(AddBackward0, [self, other_t],
                       binary_values(ADD, self, other_t), self)
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
                       binary_values(SUB, self, other_t), self)
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
    out, node = record(RsubBackward1, [self], binary_values(SUB, other_t, self), self)
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
                       binary_values(MUL, self, other_t), self)
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
                       binary_values(TRUEDIV, self, other_t, dtype), self)
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
        result = self.saved_value("result")
        return [-grad * (result * result)]


def reciprocal(self: Tensor) -> Tensor:
    values = as_values(ONE / float_values(self), FLOAT32)
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
    out, _ = record(NegBackward0, [self], -self.data, self)
    return out
