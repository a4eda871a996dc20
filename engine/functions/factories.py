"""Factories: zeros, ones, full, arange, linspace, eye, empty, the `*_like` forms, and the
random ones (rand, randn, randint, randperm), which draw from the run's generator exactly
as PyTorch's CPU generator draws (engine/random.py). A factory's tensor is a leaf; with
`requires_grad=True` it is one that requires grad."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine import dtypes, errors, op_errors, random
from engine.context import AutogradContext
from engine.dtypes import DType
from engine.tensor import Number, Tensor, set_requires_grad

Shape = tuple[int, ...]


def check_shape(shape: Shape) -> None:
    for d in shape:
        if d < 0:
            dims = ", ".join(str(x) for x in shape)
            raise errors.TorchError("RuntimeError", f"Trying to create tensor with negative "
                                    f"dimension {d}: [{dims}]")


def _leaf(values: np.ndarray, ctx: AutogradContext, requires_grad: bool) -> Tensor:
    out = Tensor(values, ctx)
    if requires_grad:
        set_requires_grad(out, True)
    return out


def filled(ctx: AutogradContext, shape: Shape, value: Number | bool, dtype: DType | None,
           requires_grad: bool = False) -> Tensor:
    """`torch.full(shape, value)`; zeros and ones are `filled` with 0 and 1 in float32
    unless told otherwise. `full` infers its dtype from the value (int64 for an int)."""
    check_shape(shape)
    ctx.check_elements(shape)
    if dtype is None:
        dtype = dtypes.number_dtype(value)
    return _leaf(np.full(shape, value, dtype=dtype.numpy), ctx, requires_grad)


def zeros(ctx: AutogradContext, shape: Shape, dtype: DType | None = None,
          requires_grad: bool = False) -> Tensor:
    if any(d < 0 for d in shape):           # zeros has a check of its own (TensorFactories)
        raise errors.TorchError("RuntimeError", "zeros: Dimension size must be non-negative.")
    return filled(ctx, shape, 0, dtype or dtypes.DEFAULT_FLOAT, requires_grad)


def ones(ctx: AutogradContext, shape: Shape, dtype: DType | None = None,
         requires_grad: bool = False) -> Tensor:
    return filled(ctx, shape, 1, dtype or dtypes.DEFAULT_FLOAT, requires_grad)


def like(t: Tensor, value: Number, dtype: DType | None = None,
         requires_grad: bool = False) -> Tensor:
    """`zeros_like(t)` / `ones_like(t)` / `full_like(t, v)`: t's shape and dtype."""
    return filled(t.ctx, t.shape, value, dtype or t.dtype, requires_grad)


def arange(ctx: AutogradContext, start: Number, end: Number | None = None, step: Number = 1,
           dtype: DType | None = None, requires_grad: bool = False) -> Tensor:
    """`torch.arange`: int64 when every bound is an int, else float32; each value is
    `start + i * step` computed in double, then stored in the dtype."""
    if end is None:         # one statement each: the compiled build types a swap's tuple
        end = start
        start = 0
    if step == 0:
        raise errors.TorchError("RuntimeError", "step must be nonzero")
    if (end - start) * step < 0 and end != start:
        raise errors.TorchError("RuntimeError", op_errors.ARANGE_BOUNDS)
    if dtype is None:
        all_int = all(isinstance(v, int) for v in (start, end, step))
        dtype = dtypes.int64 if all_int else dtypes.DEFAULT_FLOAT
    length = max(0, math.ceil((end - start) / step))
    ctx.check_elements((length,))
    if dtype.is_floating_point:
        return _leaf(_float_range(float(start), float(step), length, dtype.numpy), ctx,
                     requires_grad)
    values = start + np.arange(length, dtype=np.int64) * step
    return _leaf(np.asarray(values).astype(dtype.numpy), ctx, requires_grad)


def _fma(a: float, k: np.ndarray, c: Any) -> np.ndarray:
    """a * k + c rounded once (C's fma, which PyTorch's compiled kernel uses), for integers
    k below 2**26: the product split exactly (Dekker), the sum with its error (Knuth)."""
    big = 134217729.0 * a
    a_hi = big - (big - a)
    p = a * k
    p_err = (a_hi * k - p) + (a - a_hi) * k
    s = p + c
    b = s - p
    return np.asarray(s + (((p - (s - b)) + (c - b)) + p_err))


def _float_range(start: float, step: float, length: int, out: np.dtype[Any]) -> np.ndarray:
    """arange's values as PyTorch 2.13's CPU kernel makes them (checked element by element
    on 7,509 values in float32 and float64): 256-bit vectors of V values, two per round;
    each vector's first value fma(step, i, start) stored in the dtype, the others
    fma(k, step, first) from it; the values past the last whole round fma(step, i, start)."""
    index = np.arange(length, dtype=np.float64)
    lanes = 32 // out.itemsize
    rounds = length // (2 * lanes) * 2 * lanes
    first = _fma(step, index[:rounds] - index[:rounds] % lanes, start).astype(out)
    inside = _fma(step, index[:rounds] % lanes, first.astype(np.float64))
    tail = _fma(step, index[rounds:], start)
    return np.concatenate([inside, tail]).astype(out)


def _fused(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once, as the fused multiply-add that PyTorch's compiled kernels use
    (its linspace's `start + step * i` is contracted to one): float32 through float64 (the
    product is exact; a sum that lands on a float32 midpoint is nudged by its rounding
    error), float64 by Dekker's exact product and Knuth's two-sum."""
    if a.dtype == np.float32:
        p = a.astype(np.float64) * b.astype(np.float64)
        c64 = c.astype(np.float64)
        r = p + c64
        back = r - p
        err = (p - (r - back)) + (c64 - back)
        low = r.view(np.uint64) & np.uint64((1 << 29) - 1)
        midpoint = (low == np.uint64(1 << 28)) & (err != 0)
        r = np.where(midpoint, np.nextafter(r, np.copysign(np.inf, err)), r)
        return r.astype(np.float32)
    split = 134217729.0                              # 2**27 + 1
    def halves(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = split * x
        high = t - (t - x)
        return high, x - high
    (ah, al), (bh, bl) = halves(a), halves(b)
    p = a * b
    ep = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    back = s - p
    es = (p - (s - back)) + (c - back)
    return np.asarray(s + (es + ep))


def linspace(ctx: AutogradContext, start: Number, end: Number, steps: int,
             dtype: DType | None = None, requires_grad: bool = False) -> Tensor:
    """`torch.linspace`: the first half counted up from start, the second half down
    from end, as PyTorch's kernel does (so both ends are exact), each value one fused
    multiply-add (so `linspace(-1, 1, 7)[3]` is -2.98e-08, as PyTorch prints it). Integer
    dtypes step in float64 and truncate."""
    if steps < 0:
        raise errors.TorchError("RuntimeError", "number of steps must be non-negative")
    dtype = dtype or dtypes.DEFAULT_FLOAT
    ctx.check_elements((steps,))
    t = dtype.numpy.type
    values = np.empty(steps, dtype=dtype.numpy)
    if steps == 1:
        values[0] = t(start)
    elif steps > 1:
        work = dtype.numpy if dtype.numpy.kind == "f" else np.dtype(np.float64)
        first, last = np.asarray(t(start), work), np.asarray(t(end), work)
        step = np.asarray((last - first) / work.type(steps - 1), work)
        half = steps // 2
        up = np.arange(half, dtype=work)
        down = np.arange(steps - half - 1, -1, -1, dtype=work)
        counted = np.concatenate([_fused(np.broadcast_to(step, up.shape), up,
                                       np.broadcast_to(first, up.shape)),
                                  _fused(np.broadcast_to(-step, down.shape), down,
                                       np.broadcast_to(last, down.shape))])
        values[:] = counted if work == dtype.numpy else counted.astype(dtype.numpy)
    return _leaf(values, ctx, requires_grad)


def eye(ctx: AutogradContext, n: int, m: int | None = None, dtype: DType | None = None,
        requires_grad: bool = False) -> Tensor:
    if n < 0:
        raise errors.TorchError("RuntimeError", f"n must be greater or equal to 0, got {n}")
    m = n if m is None else m
    if m < 0:
        raise errors.TorchError("RuntimeError", f"m must be greater or equal to 0, got {m}")
    ctx.check_elements((n, m))
    return _leaf(np.eye(n, m, dtype=(dtype or dtypes.DEFAULT_FLOAT).numpy), ctx,
                 requires_grad)


def rand(ctx: AutogradContext, shape: Shape, dtype: DType | None = None,
         requires_grad: bool = False) -> Tensor:
    check_shape(shape)
    ctx.check_elements(shape)
    dtype = dtype or dtypes.DEFAULT_FLOAT
    return _leaf(random.rand(ctx.generator, shape, dtype.numpy), ctx, requires_grad)


def randn(ctx: AutogradContext, shape: Shape, dtype: DType | None = None,
          requires_grad: bool = False) -> Tensor:
    check_shape(shape)
    ctx.check_elements(shape)
    dtype = dtype or dtypes.DEFAULT_FLOAT
    return _leaf(random.randn(ctx.generator, shape, dtype.numpy), ctx, requires_grad)


def normal(ctx: AutogradContext, mean: float, std: float, shape: Shape,
           dtype: DType | None = None, requires_grad: bool = False) -> Tensor:
    """torch.normal(mean, std, size) of two numbers: `empty(size).normal_(mean, std)`."""
    check_shape(shape)
    ctx.check_elements(shape)
    dtype = dtype or dtypes.DEFAULT_FLOAT
    return _leaf(random.normal_(ctx.generator, shape, mean, std, dtype.numpy), ctx,
                 requires_grad)


def normal_around(ctx: AutogradContext, mean: Tensor | float, std: Tensor | float) -> Tensor:
    """torch.normal with a tensor mean or std (`normal_out_impl`): draws of N(0, std) plus
    mean for a number std, or of N(0, 1) times std plus mean for a tensor std, each in
    place on a tensor of their broadcast shape; not differentiable (no grad_fn)."""
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    if isinstance(std, Tensor) and bool(np.any(std.data < 0)):
        raise errors.TorchError("RuntimeError", "normal expects all elements of std >= 0.0")
    shape = np.broadcast_shapes(*(t.shape for t in tensors))
    ctx.check_elements(shape)
    dt = tensors[0].data.dtype
    if isinstance(std, Tensor):
        values = random.normal_(ctx.generator, shape, 0.0, 1.0, dt) * std.data
    else:
        values = random.normal_(ctx.generator, shape, 0.0, std, dt)
    values = values + (mean.data if isinstance(mean, Tensor) else dt.type(mean))
    return Tensor(np.asarray(values, dt), ctx)


def randint(ctx: AutogradContext, low: int, high: int, shape: Shape,
            dtype: DType | None = None, requires_grad: bool = False) -> Tensor:
    """Integers drawn in [low, high), int64 unless `dtype=` says otherwise; a float dtype
    may require grad, as every factory's tensor may."""
    check_shape(shape)
    ctx.check_elements(shape)
    values = random.randint(ctx.generator, low, high, shape)
    return _leaf(values.astype((dtype or dtypes.int64).numpy), ctx, requires_grad)


def randperm(ctx: AutogradContext, n: int, dtype: DType | None = None,
             requires_grad: bool = False) -> Tensor:
    """The same permutation in any dtype (int64 by default)."""
    ctx.check_elements((n,))
    values = np.asarray(random.randperm(ctx.generator, n), dtype=(dtype or dtypes.int64).numpy)
    return _leaf(values, ctx, requires_grad)


def values_of(data: Any, dtype: DType) -> np.ndarray:
    return np.asarray(data, dtype=dtype.numpy)
