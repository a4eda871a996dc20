"""What every op does the same way: wrap numbers, promote dtypes, broadcast, record a node.

A Python number becomes a "wrapped number" tensor (int64 for an int, float64 for a
float) that never promotes a tensor's dtype: `a * 0.1` runs in float32 with 0.1 rounded
to float32, exactly as PyTorch computes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from engine import errors
from engine.node import Node
from engine.tensor import (
    FLOAT32,
    FLOAT32_SCALAR,
    FLOAT64_SCALAR,
    INT64,
    INT64_SCALAR,
    Number,
    Tensor,
    Values,
    as_values,
)

N = TypeVar("N", bound=Node)


class TensorTooLarge(Exception):
    """An op would make a tensor with more elements than the run allows."""

    def __init__(self, elements: int, limit: int) -> None:
        super().__init__(f"this makes a tensor of {elements} elements; the lab allows {limit}")


def wrap(x: Tensor | Number, like: Tensor) -> Tensor:
    """A Python number as PyTorch wraps it: a 0-d int64 or float64 tensor."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, float):
        data: np.generic = FLOAT64_SCALAR(x)
    elif -(2**63) <= x < 2**63:
        data = INT64_SCALAR(x)
    elif 0 <= x < 2**64:          # PyTorch still takes an unsigned 64-bit number
        data = FLOAT64_SCALAR(x)
    else:
        raise errors.TorchError("OverflowError", errors.INT_TOO_BIG)
    return Tensor(data, like.ctx, is_wrapped_number=True)


def result_dtype(a: Tensor, b: Tensor) -> np.dtype[Any]:
    """torch.result_type for the lab's dtypes: float32 wins; wrapped numbers never promote
    a tensor beyond its category (an int64 tensor times 0.5 is float32, the default)."""
    if a.dtype == FLOAT32 or b.dtype == FLOAT32:
        return FLOAT32
    if a.dtype == INT64 and b.dtype == INT64:
        return INT64
    return FLOAT32       # a float64 wrapped number with an int64 tensor


def cast(values: Values, dtype: np.dtype[Any]) -> Values:
    if type(values) is FLOAT32_SCALAR and dtype is FLOAT32:   # the common case, at once
        return values
    if values.dtype == dtype:
        return values
    if isinstance(values, np.ndarray):
        return values.astype(dtype)
    return dtype.type(values)


def float_values(t: Tensor) -> Values:
    """Values for a float-only kernel (tanh, exp, ...): integers promote to float32."""
    return cast(t.data, FLOAT32)


def broadcast(a: Tensor, b: Tensor) -> tuple[int, ...]:
    """The broadcast shape, or PyTorch's size-mismatch error."""
    if a.shape == b.shape:
        return a.shape
    try:
        shape = tuple(np.broadcast_shapes(a.shape, b.shape))
    except ValueError:
        raise errors.broadcast_mismatch(a.shape, b.shape) from None
    check_size(a.ctx.max_elements, shape)
    return shape


def check_size(limit: int, shape: tuple[int, ...]) -> None:
    elements = int(np.prod(shape, dtype=np.int64))
    if elements > limit:
        raise TensorTooLarge(elements, limit)


def binary_values(kernel: Callable[[Any, Any], Any], a: Tensor, b: Tensor,
                  dtype: np.dtype[Any] | None = None) -> Values:
    """kernel(a, b) computed in the promoted dtype."""
    x, y = a.data, b.data
    if type(x) is FLOAT32_SCALAR and dtype is None:
        # The common case, two 0-d values in float32 (or a number with a float32 tensor):
        # no broadcasting to check, and numpy's scalar kernel keeps float32.
        if type(y) is FLOAT32_SCALAR:
            return kernel(x, y)
        if type(y) is FLOAT64_SCALAR or type(y) is INT64_SCALAR:
            return kernel(x, FLOAT32_SCALAR(y))
    dtype = dtype or result_dtype(a, b)
    broadcast(a, b)
    return as_values(kernel(cast(a.data, dtype), cast(b.data, dtype)), dtype)


def _any_requires_grad(inputs: list[Tensor | None]) -> bool:
    """An explicit loop: this runs for every op, and a generator costs more here."""
    for t in inputs:  # noqa: SIM110
        if t is not None and t.requires_grad:
            return True
    return False


def record(node_type: type[N], inputs: list[Tensor | None], values: Values,
           ctx_from: Tensor) -> tuple[Tensor, N | None]:
    """The op's output, and its new node when grad mode is on and an input requires grad.

    An op whose inputs need no grad makes no node and takes no sequence number.
    """
    ctx = ctx_from.ctx
    if not ctx.grad_mode or not _any_requires_grad(inputs):
        return Tensor(values, ctx), None
    node = node_type(ctx, inputs)
    out = Tensor(values, ctx, grad_fn=node)
    node.input_shape = out.shape
    node.input_dtype = out.dtype
    return out, node
