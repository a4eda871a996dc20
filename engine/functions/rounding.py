"""`//` and `%` on tensors: floor_divide, which has no derivative (its node is
NotImplemented, whose backward raises), and remainder (Python's sign rule), whose gradient
passes to self unchanged and, for a tensor divisor, -grad * floor(self / other) to it.
`number % tensor` (remainder.Scalar_Tensor) has no derivative either."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from engine.context import UINT64_MAX, AutogradContext
from engine.errors import TorchError
from engine.functions._record import binary_values, record, result_type, zeros_like
from engine.functions.arithmetic import mul, neg
from engine.node import Node
from engine.tensor import Tensor


class NotImplementedBackward(Node):
    """`torch::autograd::NotImplemented`: an edge for each input that requires grad; its
    backward raises. Like AccumulateGrad it takes no sequence number (basic_ops.h)."""

    name = "torch::autograd::NotImplemented"
    op: ClassVar[str] = ""
    __slots__ = ()

    def __init__(self, ctx: AutogradContext, inputs: list[Tensor | None]) -> None:
        super().__init__(ctx, inputs, sequence_nr=UINT64_MAX)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        raise TorchError("RuntimeError", f"derivative for aten::{self.op} is not implemented")


class FloorDivideNotImplemented(NotImplementedBackward):
    op = "floor_divide"


class RemainderNotImplemented(NotImplementedBackward):
    op = "remainder"


class RemainderBackward0(Node):
    """`self % number`: self gets grad."""

    name = "RemainderBackward0"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        return [grads[0]]


class RemainderBackward1(Node):
    """`self % other`: self gets grad, other gets -grad * self.div(other, "floor")."""

    name = "RemainderBackward1"
    saved_names = ("other", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        grad_other = None
        if self.needs_input_grad(1):
            quotient = _floor_div(self.saved_value("self"), self.saved_value("other"))
            grad_other = mul(neg(grad), quotient)
        return [grad, grad_other]


class DivBackward2(Node):
    """`self.div(other, rounding_mode="floor")` (recorded here only inside remainder's
    backward under create_graph): a step function, so both get zeros."""

    name = "DivBackward2"

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [zeros_like(grad) if self.needs_input_grad(i) else None for i in range(2)]


def _floor_div(a: Tensor, b: Tensor) -> Tensor:
    out, _ = record(DivBackward2, [a, b],
                    binary_values(np.floor_divide, a, b, result_type(a, b)), a)
    return out


def floor_divide(a: Tensor, b: Tensor) -> Tensor:
    values = binary_values(np.floor_divide, a, b, result_type(a, b))
    out, _ = record(FloorDivideNotImplemented, [t for t in (a, b) if t.requires_grad], values,
                    a)
    return out


def remainder(a: Tensor, b: Tensor, b_is_number: bool = False,
              a_is_number: bool = False) -> Tensor:
    """`a % b`; a number on either side was wrapped as a tensor by the caller."""
    values = binary_values(np.mod, a, b, result_type(a, b))
    if a_is_number:
        out, _ = record(RemainderNotImplemented, [b], values, b)
    elif b_is_number:
        out, _ = record(RemainderBackward0, [a], values, a)
    else:
        out, node = record(RemainderBackward1, [a, b], values, a)
        if node:
            node.save("other", b)
            node.save("self", a)
    return out
