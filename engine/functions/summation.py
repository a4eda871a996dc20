"""Floating-point sums in the order PyTorch's CPU kernel adds (SumKernel.cpp `cascade_sum`).

# Note [Summation order]
In float32 the order of additions changes the result, and a printed loss shows it
(`tensor([-3.])` against `tensor([-3.0000])`). PyTorch's kernel sums each output's
elements with `row_sum`: four interleaved partial sums (instruction-level parallelism),
each a cascade of up to four levels of accumulators, then the partials added in order;
a contiguous row of at least one vector (16 floats with AVX512, 8 doubles) is summed as
vectors first, its leftover elements one by one, then the vector's lanes in order. The
result is added to the output's initial 0 (so a sum of -0.0s is +0.0). The additions
below are the same ones, in the same order, done on numpy arrays a block at a time
(`np.cumsum` adds strictly left to right).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

NUM_LEVELS: Final = 4
ILP: Final = 4
VECTOR_BYTES: Final = 64          # AVX512, the capability PyTorch 2.13 picks on this CPU


def _ceil_log2(n: int) -> int:
    return 0 if n <= 1 else (n - 1).bit_length()


def _running(acc: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """acc + rows[0] + rows[1] + ..., left to right, in acc's dtype (acc has one row's
    shape; rows is a stack of them)."""
    if not len(rows):
        return acc
    stacked = np.concatenate([acc[None], rows], axis=0)
    total: np.ndarray = np.add.accumulate(stacked, axis=0, dtype=acc.dtype)[-1]  # cumsum
    return total


def multi_row_sum(rows: np.ndarray) -> np.ndarray:
    """`multi_row_sum`: the sum over axis 0 of `rows` (size x nrows, or size x nrows x
    lanes) through the cascade of accumulators."""
    size = rows.shape[0]
    level_power = max(4, _ceil_log2(size) // NUM_LEVELS)
    level_step = 1 << level_power
    level_mask = level_step - 1
    if size < level_step:       # one level: its running sum, the others staying 0 (adding
        return _running(np.zeros(rows.shape[1:], dtype=rows.dtype), rows)  # +0 changes none)
    # (a shortcut for speed: a bias's gradient, a batch of 8 summed, is always one level;
    # MEASURED on bench/programs.py's MLP, 400 sums, 89 -> 64 million instructions)
    acc = np.zeros((NUM_LEVELS, *rows.shape[1:]), dtype=rows.dtype)
    i = 0
    while i + level_step <= size:
        acc[0] = _running(acc[0], rows[i:i + level_step])
        i += level_step
        for j in range(1, NUM_LEVELS):
            acc[j] = acc[j] + acc[j - 1]
            acc[j - 1] = 0
            if i & (level_mask << (j * level_power)):
                break
    acc[0] = _running(acc[0], rows[i:])
    for j in range(1, NUM_LEVELS):
        acc[0] = acc[0] + acc[j]
    total: np.ndarray = acc[0]
    return total


def row_sum(values: np.ndarray) -> np.ndarray:
    """`row_sum` over axis 0 (of scalars, or of vectors along the last axis)."""
    n = values.shape[0]
    size_ilp = n // ILP
    body = values[:size_ilp * ILP].reshape(size_ilp, ILP, *values.shape[1:])
    partial = multi_row_sum(body)
    partial[0] = _running(partial[0], values[size_ilp * ILP:])
    total: np.ndarray = partial[0]
    for k in range(1, ILP):
        total = total + partial[k]
    return total


def _inner(row: np.ndarray) -> np.floating:
    """One contiguous row: vectors first when it holds at least one (vectorized_inner_sum)."""
    lanes = VECTOR_BYTES // row.dtype.itemsize
    zero = row.dtype.type(0)
    if row.shape[0] < lanes:
        return zero + row_sum(row)  # type: ignore[no-any-return]
    vec_size = row.shape[0] // lanes
    vec_acc = row_sum(row[:vec_size * lanes].reshape(vec_size, lanes))
    final = _running(np.asarray(zero), row[vec_size * lanes:])
    final = _running(final, vec_acc)
    return zero + final  # type: ignore[no-any-return]


def cascade_sum(values: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """`torch.sum(values, axes, keepdim)` for floats, added as Note [Summation order] says."""
    ndim = values.ndim
    axes = tuple(sorted(a % ndim for a in axes)) if ndim else ()
    kept = [a for a in range(ndim) if a not in axes]
    moved = values.transpose(kept + list(axes))
    out_shape = tuple(values.shape[a] for a in kept)
    n = math.prod(values.shape[a] for a in axes)
    rows = moved.reshape(math.prod(out_shape), n)
    contiguous = not kept or (axes == tuple(range(ndim - len(axes), ndim))
                              and values.flags.c_contiguous)
    if n == 0:
        result = np.zeros(out_shape, dtype=values.dtype)
    elif contiguous:
        result = np.array([_inner(r) for r in rows], dtype=values.dtype).reshape(out_shape)
    else:
        zero = values.dtype.type(0)
        result = (zero + row_sum(rows.T)).reshape(out_shape)
    if keepdims:
        result = result.reshape(tuple(1 if a in axes else d for a, d in
                                      enumerate(values.shape)))
    return np.asarray(result, dtype=values.dtype)


def full_sum(values: np.ndarray) -> np.ndarray:
    """The sum of every element, as a 0-d array."""
    if values.dtype.kind != "f":
        return np.asarray(np.sum(values, dtype=np.int64))
    return cascade_sum(values, tuple(range(values.ndim)), False)
