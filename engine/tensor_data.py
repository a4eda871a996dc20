"""`torch.tensor(data)`'s reading of its data: nested lists of numbers (and 0-d tensors),
their shape and their inferred dtype, checked as torch checks them."""

from __future__ import annotations

from typing import Any

from engine import dtypes, errors, op_errors
from engine.dtypes import DType
from engine.tensor import Tensor


def infer_dtype(flat: list[Any]) -> DType:
    """torch infers the default float dtype from any float (and for an empty list), int64
    from integers, bool only when every value is a bool."""
    if not flat:
        return dtypes.DEFAULT_FLOAT
    if any(isinstance(v, float) for v in flat):
        return dtypes.DEFAULT_FLOAT
    if all(isinstance(v, bool) for v in flat):
        return dtypes.bool_
    return dtypes.int64


def shape_and_values(data: Any) -> tuple[tuple[int, ...], list[Any]]:
    """The shape of nested lists and their numbers in row-major order, checked as torch
    checks them: the shape comes from the first elements, then every part must fit it.
    0-d tensors inside the lists count as their one number."""
    shape: list[int] = []
    first = data
    while isinstance(first, (list, tuple)):
        shape.append(len(first))
        if not first:
            break
        first = first[0]
    flat: list[Any] = []
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:                                   # no recursion: deep lists are fine
        x, dim = stack.pop()
        if dim == len(shape):
            if isinstance(x, (list, tuple)):
                raise errors.TorchError("TypeError", op_errors.NUMBER_NOT_LIST)
            flat.append(_scalar(x))
            continue
        if not isinstance(x, (list, tuple)):
            raise errors.TorchError("TypeError", op_errors.NOT_A_SEQUENCE)
        if len(x) != shape[dim]:
            raise op_errors.ragged(shape[dim], dim, len(x))
        stack.extend((item, dim + 1) for item in reversed(x))
    return tuple(shape), flat


def _scalar(x: Any) -> Any:
    if isinstance(x, Tensor):
        if x.numel() != 1:
            raise errors.TorchError("ValueError", op_errors.ONLY_ONE_ELEMENT_TENSORS)
        return x.item()
    if isinstance(x, (bool, int, float)):
        return x
    raise errors.TorchError("TypeError", f"must be real number, not {type(x).__name__}")
