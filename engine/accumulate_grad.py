"""AccumulateGrad: the node that writes a leaf's `.grad`.

It has sequence number UINT64_MAX (accumulate_grad.h), so among ready nodes it always
runs first. The first write stores the incoming gradient; later writes add to it. Under
`create_graph=True` both are recorded: the first write as a copy (CopyBackwards), an add
as AddBackward0, so `.grad` itself gets a grad_fn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.context import UINT64_MAX
from engine.node import Node

if TYPE_CHECKING:
    from engine.tensor import Tensor


class AccumulateGrad(Node):
    """`torch::autograd::AccumulateGrad`, one per leaf that requires grad."""

    name = "AccumulateGrad"
    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__(variable.ctx, [], sequence_nr=UINT64_MAX)
        self.variable = variable
        self.input_shape = variable.shape
        self.input_dtype = variable.dtype

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        from engine.tensor import Tensor

        (new_grad,) = grads
        leaf = self.variable
        if leaf.grad is None:
            if self.ctx.grad_mode and new_grad.requires_grad:
                leaf.grad = copy(new_grad)
            else:
                leaf.grad = Tensor(new_grad.data, self.ctx)
        elif self.ctx.grad_mode:
            leaf.grad = leaf.grad + new_grad          # out of place: .grad gets a grad_fn
        else:
            # `variable_grad += new_grad` in place: the same tensor object, new values.
            leaf.grad.data = leaf.grad.data + new_grad.data
        return []


class CopyBackwards(Node):
    """copy_(src): the gradient passes to src (clone_obey_contract's copy of a first grad)."""

    name = "CopyBackwards"

    def apply(self, grads: list[Tensor]) -> list[Tensor | None]:
        (grad,) = grads
        return [None, grad]


def copy(src: Tensor) -> Tensor:
    from engine.functions._record import record

    out, _ = record(CopyBackwards, [None, src], src.data, src)
    return out
