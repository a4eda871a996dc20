"""dtypes: float32 (the default), float64, int64 and bool, and how they promote.

# Note [Type promotion]
`torch.result_type` sorts the operands of an op into three groups: tensors with at least
one dimension, 0-d tensors, and Python numbers ("wrapped numbers"). Each group promotes
within itself; a group of lower priority can only raise the *category* of the result
(bool < integer < floating), never its width. So `int64 vector * 2.5` is float32 (the
default float dtype stands in for a Python float), `float32 vector * float64 0-d tensor`
stays float32, and `int64 vector * float64 0-d tensor` is float64 (c10's
`combine_categories`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

import numpy as np


@dataclass(frozen=True, slots=True, eq=False)
class DType:
    """One torch dtype: its names and the numpy dtype that holds its values."""

    name: str                    # "float32"
    numpy: np.dtype[Any]
    is_floating_point: bool
    legacy: str                  # the type's old name, `torch.FloatTensor`, in messages
    category: int                # 0 bool, 1 integer, 2 floating

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    @property
    def is_signed(self) -> bool:
        return self.category > 0


float32: Final = DType("float32", np.dtype(np.float32), True, "FloatTensor", 2)
float64: Final = DType("float64", np.dtype(np.float64), True, "DoubleTensor", 2)
int64: Final = DType("int64", np.dtype(np.int64), False, "LongTensor", 1)
bool_: Final = DType("bool", np.dtype(np.bool_), False, "BoolTensor", 0)

DEFAULT_FLOAT: Final = float32
ALL: Final = (float32, float64, int64, bool_)
# torch's other names for the same objects: torch.float is torch.float32.
ALIASES: Final[Mapping[str, DType]] = MappingProxyType({
    "float32": float32, "float": float32, "float64": float64, "double": float64,
    "int64": int64, "long": int64, "bool": bool_,
})
_BY_NUMPY: Final[Mapping[Any, DType]] = MappingProxyType({d.numpy: d for d in ALL})


def from_numpy(dtype: np.dtype[Any]) -> DType:
    """The lab dtype of numpy values (an int32 or float16 array would be a lab bug)."""
    return _BY_NUMPY[dtype]


def promote_types(a: DType, b: DType) -> DType:
    """`torch.promote_types` for the lab's dtypes: the wider of the higher category."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    return float64 if float64 in (a, b) else a


def _promote_all(dtypes: Iterable[DType]) -> DType | None:
    result: DType | None = None
    for d in dtypes:
        result = d if result is None else promote_types(result, d)
    return result


def _combine_categories(higher: DType | None, lower: DType | None) -> DType | None:
    """c10's `combine_categories`: a lower-priority group raises only the category."""
    if higher is None:
        return lower
    if lower is None or higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(dims: Iterable[DType], zero_dims: Iterable[DType],
                numbers: Iterable[DType]) -> DType:
    """`torch.result_type` of an op's operands, grouped as Note [Type promotion] says.

    `numbers` are the dtypes the Python numbers stand for: int64 for an int, bool for a
    bool and the default float dtype for a float."""
    zero = _combine_categories(_promote_all(zero_dims), _promote_all(numbers))
    out = _combine_categories(_promote_all(dims), zero)
    assert out is not None, "an op with no operands"
    return out


def number_dtype(x: bool | int | float) -> DType:
    """The dtype a Python number takes part in promotion as."""
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return int64
    return DEFAULT_FLOAT
