"""Tensor: a value (numpy, float32 by default) with PyTorch's autograd fields.

`requires_grad`, `grad_fn`, `is_leaf` and `.grad` mean what they mean in PyTorch: a leaf
is a tensor with no `grad_fn`; `.grad` stays None until backward writes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

from engine import errors

if TYPE_CHECKING:
    from engine.accumulate_grad import AccumulateGrad
    from engine.context import AutogradContext
    from engine.node import Node

# A tensor's values: a numpy scalar (np.float32 / np.int64) for 0-d tensors, an ndarray
# otherwise. Scalars keep 0-d arithmetic fast and still round exactly like float32.
Values = Any
Number = int | float
FLOAT32: Final = np.dtype(np.float32)
INT64: Final = np.dtype(np.int64)
# numpy's scalar types as Final names: the compiled build keeps a Final in a C static, where
# `np.float32` is an attribute lookup on the module each time, several times per op.
FLOAT32_SCALAR: Final = np.float32
FLOAT64_SCALAR: Final = np.float64
INT64_SCALAR: Final = np.int64
NUMPY_SCALAR: Final = np.generic
ONE: Final = np.float32(1)             # numpy scalars are immutable: one serves every op


def as_values(array: Any, dtype: np.dtype[Any]) -> Values:
    """Normalise numpy output: 0-d results become numpy scalars of `dtype`."""
    if type(array) is dtype.type:           # already a scalar of the right dtype: fast path
        return array
    out = np.asarray(array, dtype=dtype)
    return out[()] if out.ndim == 0 else out


class Tensor:
    """A tensor of one program run."""

    __slots__ = ("data", "requires_grad", "grad", "grad_fn", "name", "is_wrapped_number",
                 "ctx", "_grad_accumulator")

    def __init__(self, data: Values, ctx: AutogradContext, *, requires_grad: bool = False,
                 grad_fn: Node | None = None, is_wrapped_number: bool = False) -> None:
        self.data = data
        self.ctx = ctx
        self.requires_grad = requires_grad or grad_fn is not None
        self.grad_fn = grad_fn
        self.grad: Tensor | None = None
        self.name: str | None = None          # the variable a grad-requiring leaf was created as
        self.is_wrapped_number = is_wrapped_number
        self._grad_accumulator: AccumulateGrad | None = None

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape  # type: ignore[no-any-return]

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.data.dtype  # type: ignore[no-any-return]

    @property
    def is_floating_point(self) -> bool:
        return self.dtype == FLOAT32

    def numel(self) -> int:
        return int(self.data.size)

    def grad_accumulator(self) -> AccumulateGrad:
        """The leaf's one AccumulateGrad node, shared by every use of the leaf."""
        from engine.accumulate_grad import AccumulateGrad

        if self._grad_accumulator is None:
            self._grad_accumulator = AccumulateGrad(self)
        return self._grad_accumulator

    def tolist(self) -> Any:
        """Values widened to Python numbers, as `Tensor.tolist()` gives them."""
        return self.data.tolist()

    def __repr__(self) -> str:
        from engine.printing import format_tensor

        return format_tensor(self)

    # Python operators, as torch.Tensor defines them (see engine/functions.py).
    def __add__(self, other: Tensor | Number) -> Tensor:
        return functions.add(self, other)

    def __radd__(self, other: Number) -> Tensor:
        return functions.add(self, other)

    def __sub__(self, other: Tensor | Number) -> Tensor:
        return functions.sub(self, other)

    def __rsub__(self, other: Number) -> Tensor:
        return functions.rsub(self, other)

    def __mul__(self, other: Tensor | Number) -> Tensor:
        return functions.mul(self, other)

    def __rmul__(self, other: Number) -> Tensor:
        return functions.mul(self, other)

    def __truediv__(self, other: Tensor | Number) -> Tensor:
        return functions.div(self, other)

    def __rtruediv__(self, other: Number) -> Tensor:
        # torch/_tensor.py: `__rdiv__` returns `self.reciprocal() * other`.
        return functions.mul(functions.reciprocal(self), other)

    def __pow__(self, exponent: Tensor | Number) -> Tensor:
        return functions.pow(self, exponent)

    def __rpow__(self, base: Number) -> Tensor:
        return functions.pow_scalar_base(base, self)

    def __neg__(self) -> Tensor:
        return functions.neg(self)


def tensor(data: Any, ctx: AutogradContext, *, requires_grad: bool = False) -> Tensor:
    """`torch.tensor(data, requires_grad=...)` for numbers and nested lists of numbers."""
    shape, flat = _shape_and_values(data)
    # torch infers float32 from any float (and for an empty list), int64 otherwise.
    dtype = FLOAT32 if not flat or any(isinstance(v, float) for v in flat) else INT64
    if requires_grad and dtype != FLOAT32:
        raise errors.TorchError("RuntimeError", errors.ONLY_FLOAT_REQUIRES_GRAD)
    if dtype == INT64 and any(not -(2**63) <= v < 2**63 for v in flat):
        raise errors.TorchError("ValueError", errors.INT64_OVERFLOW)
    if len(flat) > ctx.max_elements:
        raise ValueError(f"a tensor of {len(flat)} elements is larger than the lab allows")
    values = as_values(np.array(flat, dtype=dtype).reshape(shape), dtype)
    return Tensor(values, ctx, requires_grad=requires_grad)


def _shape_and_values(data: Any) -> tuple[tuple[int, ...], list[Number]]:
    """The shape of nested lists and their numbers in row-major order, checked as torch
    checks them: the shape comes from the first elements, then every part must fit it."""
    shape: list[int] = []
    first = data
    while isinstance(first, list):
        shape.append(len(first))
        if not first:
            break
        first = first[0]
    flat: list[Number] = []

    def store(x: Any, dim: int) -> None:
        if dim == len(shape):
            if isinstance(x, list):
                raise errors.TorchError("TypeError", errors.NUMBER_NOT_LIST)
            flat.append(x)
            return
        if not isinstance(x, list):
            raise errors.TorchError("TypeError", errors.NOT_A_SEQUENCE)
        if len(x) != shape[dim]:
            raise errors.ragged(shape[dim], dim, len(x))
        for item in x:
            store(item, dim + 1)

    store(data, 0)
    return tuple(shape), flat


from engine import functions  # noqa: E402  (operators need the op table; it needs Tensor)
