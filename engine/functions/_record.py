"""What every op does the same way: wrap numbers, promote dtypes, broadcast, record a node.

A Python number becomes a "wrapped number" tensor (int64 for an int, float64 for a float,
bool for a bool) that never widens a tensor's dtype (Note [Type promotion]): `a * 0.1`
runs in float32 with 0.1 rounded to float32, exactly as PyTorch computes it.

An op records a node only when grad mode is on, some input requires grad and its output
is a floating-point tensor (comparisons and integer results are never differentiable);
otherwise it takes no sequence number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from engine import dtypes, errors, op_errors
from engine.dtypes import DType
from engine.node import InputMetadata, Node
from engine.tensor import Number, Tensor, as_array, filled

N = TypeVar("N", bound=Node)
Operand = Tensor | Number


WRAPPED_KEPT = 256      # wrapped numbers one run keeps for reuse (Note [Wrapped numbers])


def wrap(x: Operand, like: Tensor) -> Tensor:
    """A Python number as PyTorch wraps it: a 0-d int64, float64 or bool tensor."""
    if isinstance(x, Tensor):
        return x
    ctx = like.ctx
    # the sign is in the key, as 0.0 == -0.0 (and nan is never found: made anew)
    key = (type(x), x, math.copysign(1.0, x) if isinstance(x, float) else 1.0,
           ctx.inference_mode)
    kept: Tensor | None = ctx.wrapped.get(key)
    if kept is not None:
        return kept
    wrapped = _wrap(x, like)
    # (nan is never found again; math.isnan also gives a bool for a numpy float)
    if len(ctx.wrapped) < WRAPPED_KEPT and not (isinstance(x, float) and math.isnan(x)):
        wrapped.data.flags.writeable = False
        ctx.wrapped[key] = wrapped
    return wrapped


# Note [Wrapped numbers]
# A loop's `lr * w.grad` or `a * h + 0.01` wraps the same number at every step. A wrapped
# number is the op's own 0-d tensor, which no program can reach or change (its values are
# made read-only to be sure), so one run keeps the first WRAPPED_KEPT it makes and uses
# each again. MEASURED, compiled: wrapping a float took 0.38 us, finding it kept 0.13 us
# (best of 5 x 20,000); bench/programs.py's 1,000-step scalar loop wraps five numbers a
# step, about 1.3 ms of its 50 ms trace.


def _wrap(x: Number, like: Tensor) -> Tensor:
    if isinstance(x, bool):
        data = np.array(x)
    elif isinstance(x, float):
        data = np.array(x, dtype=np.float64)
    elif -(2**63) <= x < 2**63:
        data = np.array(x, dtype=np.int64)
    elif 0 <= x < 2**64:          # PyTorch still takes an unsigned 64-bit number
        data = np.array(float(x), dtype=np.float64)
    else:
        raise errors.TorchError("OverflowError", op_errors.INT_TOO_BIG)
    return Tensor(data, like.ctx, is_wrapped_number=True)


def result_type(*operands: Tensor) -> DType:
    """`torch.result_type` of tensors, wrapped numbers among them (Note [Type promotion])."""
    if len(operands) == 2:        # the common cases first: a number never widens a float
        a, b = operands           # tensor, and tensors of one dtype keep it
        if not a.is_wrapped_number and a.dtype.is_floating_point and (
                b.is_wrapped_number or b.dtype is a.dtype):
            return a.dtype
    dims: list[DType] = []
    zeros: list[DType] = []
    numbers: list[DType] = []
    for t in operands:
        if t.is_wrapped_number:
            numbers.append(dtypes.DEFAULT_FLOAT if t.dtype.is_floating_point else t.dtype)
        elif t.ndim:
            dims.append(t.dtype)
        else:
            zeros.append(t.dtype)
    return dtypes.result_type(dims, zeros, numbers)


def float_dtype(*operands: Tensor) -> DType:
    """The dtype of an op that always gives floats (true division, exp, mean ...):
    integers and bools promote to the default float dtype."""
    dtype = result_type(*operands)
    return dtype if dtype.is_floating_point else dtypes.DEFAULT_FLOAT


def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast shape, or PyTorch's size-mismatch error (ATen's `infer_size` walks
    from the last dimension, so the message names the last one that clashes)."""
    if a == b:
        return a
    n = max(len(a), len(b))
    out = [0] * n
    for i in range(n - 1, -1, -1):
        k = n - i
        da = a[-k] if k <= len(a) else 1
        db = b[-k] if k <= len(b) else 1
        if da != db and da != 1 and db != 1:
            raise errors.TorchError(
                "RuntimeError",
                f"The size of tensor a ({da}) must match the size of tensor b ({db}) at "
                f"non-singleton dimension {i}")
        out[i] = db if da == 1 else da
    return tuple(out)


def values_as(t: Tensor, dtype: DType) -> np.ndarray:
    """t's values in `dtype` (a copy only when the dtype differs)."""
    data = t.data
    return data if data.dtype == dtype.numpy else data.astype(dtype.numpy)


def binary_values(kernel: Callable[[Any, Any], Any], a: Tensor, b: Tensor,
                  dtype: DType) -> np.ndarray:
    """kernel(a, b) computed in `dtype`, broadcasting checked first (and the element
    limit checked before any work is done)."""
    shape = broadcast_shapes(a.shape, b.shape)
    a.ctx.check_elements(shape)
    return as_array(kernel(values_as(a, dtype), values_as(b, dtype)), dtype.numpy)


def _differentiable(inputs: Sequence[Tensor | None]) -> bool:
    for t in inputs:  # noqa: SIM110  (an explicit loop: this runs for every op)
        if t is not None and t.requires_grad:
            return True
    return False


def record(node_type: type[N], inputs: list[Tensor | None], values: np.ndarray,
           like: Tensor) -> tuple[Tensor, N | None]:
    """The op's output, and its new node when the op is recorded (see the module's doc)."""
    ctx = like.ctx
    if (not ctx.grad_mode or not _differentiable(inputs)
            or values.dtype.kind != "f"):
        return _untracked(Tensor(values, ctx), inputs), None
    node = node_type(ctx, inputs)
    out = Tensor(values, ctx, grad_fn=node)
    node.input_metadata = [InputMetadata(out.shape, out.dtype)]
    return out, node


def record_outputs(node_type: type[N], inputs: list[Tensor | None],
                   outputs: list[np.ndarray], like: Tensor) -> tuple[list[Tensor], N | None]:
    """`record` for an op with several outputs (each output i is the node's input i)."""
    ctx = like.ctx
    if not ctx.grad_mode or not _differentiable(inputs):
        return [_untracked(Tensor(v, ctx), inputs) for v in outputs], None
    node = node_type(ctx, inputs)
    tensors = [Tensor(v, ctx, grad_fn=node, output_nr=i) if v.dtype.kind == "f"
               else Tensor(v, ctx) for i, v in enumerate(outputs)]
    node.input_metadata = [InputMetadata(t.shape, t.dtype) for t in tensors]
    return tensors, node


def _untracked(out: Tensor, inputs: list[Tensor | None]) -> Tensor:
    """Note why an op's result is outside the graph: grad mode kept it out, or it was
    made from a tensor that was (a detached one, say)."""
    if not out.ctx.grad_mode and _differentiable(inputs):
        out.untracked = "no_grad"
    else:
        for t in inputs:
            if t is not None and t.untracked is not None:
                out.untracked = t.untracked
                break
    return out


def recorded(node_type: type[Node], values: np.ndarray, inputs: list[Tensor | None],
             like: Tensor) -> Tensor:
    """A backward kernel's result, recorded when grad mode is on and an input requires grad
    (that is, under create_graph)."""
    out, _ = record(node_type, inputs, values, like)
    return out


def zeros_like(t: Tensor, dtype: DType | None = None) -> Tensor:
    """`at::zeros_like` (it records nothing: a constant)."""
    return Tensor(np.zeros(t.shape, dtype=(dtype or t.dtype).numpy), t.ctx)


def full_like(t: Tensor, value: Number) -> Tensor:
    return Tensor(filled(t.shape, value, t.dtype.numpy), t.ctx)
