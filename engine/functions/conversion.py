"""dtype conversions: `x.double()`, `x.float()`, `x.to(dtype)`, `x.long()`, `x.bool()`.

Converting to the dtype a tensor already has returns the tensor itself; otherwise the
copy is recorded as ToCopyBackward0, whose backward converts the gradient back."""

from __future__ import annotations

from engine.dtypes import DType
from engine.functions._record import record
from engine.node import Node
from engine.tensor import Tensor


class ToCopyBackward0(Node):
    """`_to_copy(dtype)`: the gradient converted back to the source's dtype."""

    name = "ToCopyBackward0"
    saved_names = ("self",)

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        return [to_dtype(grad, self.saved_value("_dtype"))]


def to_dtype(self: Tensor, dtype: DType) -> Tensor:
    if self.dtype is dtype:
        return self
    values = self.data != 0 if dtype.category == 0 else self.data.astype(dtype.numpy)
    out, node = record(ToCopyBackward0, [self], values, self)
    if node:
        node.save("_dtype", self.dtype)
    return out
