"""Floating-point sums in the order PyTorch's CPU kernel adds (SumKernel.cpp `cascade_sum`).

# Note [Summation order]
In float32 the order of additions changes the result, and a printed loss shows it
(`tensor([-3.])` against `tensor([-3.0000])`). PyTorch's kernel sums each output's
elements with `row_sum`: four interleaved partial sums (instruction-level parallelism),
each a cascade of up to four levels of accumulators, then the partials added in order;
a contiguous row of at least one vector (8 floats, 4 doubles) is summed as vectors first,
its leftover elements one by one, then the vector's lanes in order. A sum over leading
dims whose kept dims are contiguous (a bias's gradient, summed over the batch) goes
column-wise: blocks of four vectors' columns (four columns, when there are fewer columns
than a vector holds) are each one cascade down the rows, without the interleaving; the
columns left over are summed as rows are. The result is added to the output's initial 0
(so a sum of -0.0s is +0.0). The additions below are the same ones, in the same order,
done on numpy arrays a block at a time (`np.cumsum` adds strictly left to right).

The vectors are AVX2's even on an AVX512 CPU: SumKernel.cpp registers its kernels
without AVX512 (slower there, it says). MEASURED against PyTorch 2.13 on this AVX512 CPU
(tests/test_summation.py): 16-lane vectors gave other bits for rows of 16 or more.

# Note [Sums in C]
The compiled build also compiles sum_kernels.c beside this file: `_kernel`'s additions, the
same ones in the same order, a lane (or a column) an accumulator, for float32 and float64
inputs in any layout; it adds its sums into the output as the loop does (`_add_sums`),
which spares numpy's add of the output's initial 0 too. A numpy call costs 0.2 to 1 us
whatever its size, and the sums the MLP takes every step are small ones of several calls
(a bias gradient's 8 x 32 or 8 x 4 over the batch, in `sum_to`; a loss's 8 x 4 whole, more
calls: vectors first). MEASURED (cascade_sum compiled by mypyc as the build compiles it,
float32, best of 31 x 2,000 calls, one process): the two bias gradients 5.0 and 4.0 us
before, 4.2 and 3.3 us with this cascade_sum in numpy, 2.0 and 1.8 us in C; the 8 x 4 loss
6.6 us before, 1.5 us in C; a 1000 x 1000 array over dim 1, 20 ms -> 0.8 ms. The C gives
the Python's bits, but where two NaNs of other bits meet in an add (the input's and the
one inf - inf makes): which comes out is the add instruction's operand order, kept by
neither C compilers nor numpy (whose float32 `a + b` gives b's NaN in the last element of
17, a's in the first 16); a NaN either way. The pure build, and float16, run the Python;
tests/test_sum_kernels.py checks the two against each other.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

NUM_LEVELS: Final = 4
ILP: Final = 4
VECTOR_BYTES: Final = 32          # AVX2's: the sum kernels are not built for AVX512


def _sum_kernels() -> Any:
    """The compiled build's C `_kernel` (Note [Sums in C]), or None."""
    try:
        import engine.functions.sum_kernels as sum_kernels  # type: ignore[import-not-found]
    except ImportError:
        return None
    return sum_kernels


NATIVE: Final[Any] = _sum_kernels()
IN_C: Final = (np.dtype(np.float32), np.dtype(np.float64))


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
        return _from_zero(rows)  # +0 changes none). See Note [One level].
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


def _from_zero(rows: np.ndarray) -> np.ndarray:
    """0 + rows[0] + rows[1] + ..., left to right, up to the sign of a zero."""
    if not len(rows):
        return np.zeros(rows.shape[1:], dtype=rows.dtype)
    total: np.ndarray = np.add.accumulate(rows, axis=0)[-1]
    return total


# Note [One level]
# A cascade shorter than a level's step (16 rows: a bias's gradient over a batch of 8)
# is one running sum from 0. Adding rows[0] to the +0 it starts from changes nothing but
# the sign of a -0.0, and that sign can only reach a sum that is zero, which every sum
# adds to the output's initial +0 at the end (Note [Summation order]); so the running sum
# starts at rows[0]. MEASURED on bench/programs.py's MLP (compiled, best of 7 traces of 200
# steps, 400 bias sums): 15 -> 6 us a sum with the shortcuts of `_outer`, and 89 -> 64
# million instructions earlier for the single-level branch itself.


def row_sum(values: np.ndarray) -> np.ndarray:
    """`row_sum` over axis 0 (of scalars, or of vectors along the last axis)."""
    n = values.shape[0]
    if n < ILP:                  # the other partial sums stay 0 (Note [One level])
        return _from_zero(values)
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
    # the leftover elements one by one, then the lanes (Note [One level]: from 0)
    final = _from_zero(np.concatenate((row[vec_size * lanes:], vec_acc)))
    return zero + final  # type: ignore[no-any-return]


def _outer(rows: np.ndarray, block: int) -> np.ndarray:
    """`vectorized_outer_sum` / `scalar_outer_sum`: each column of `rows` (n x m) summed
    down; the first columns in whole blocks (four vectors' columns, or four columns) by one
    cascade each, the rest by `row_sum`. Columns never mix, so a block's go together."""
    whole = rows.shape[1] // block * block
    if whole == rows.shape[1]:                 # (whole blocks only, as a bias's gradient)
        return multi_row_sum(rows)
    if whole == 0:
        return row_sum(rows)
    out = np.empty(rows.shape[1], dtype=rows.dtype)
    out[:whole] = multi_row_sum(rows[:, :whole])
    out[whole:] = row_sum(rows[:, whole:])
    return out


def _kernel(rows: np.ndarray, strides: tuple[int, int]) -> np.ndarray:
    """The 2-D loop of SumKernel.cpp's `cascade_sum`: `rows` is size0 x size1, size0 the
    reduced dim; `strides` their strides in the input (bytes). One sum per column."""
    item = rows.dtype.itemsize
    lanes = VECTOR_BYTES // item
    n, m = rows.shape
    if strides[0] == item and n >= lanes:                       # vectorized_inner_sum
        return np.array([_inner(rows[:, j]) for j in range(m)], dtype=rows.dtype)
    if strides[1] == item and m >= lanes:                       # vectorized_outer_sum
        return _outer(rows, ILP * lanes)
    if strides[0] < strides[1]:                                 # scalar_inner_sum
        return row_sum(rows)
    return _outer(rows, ILP)                                    # scalar_outer_sum


def _in_c(dtype: np.dtype) -> bool:
    """Whether the build sums this dtype's arrays in C (Note [Sums in C])."""
    return NATIVE is not None and dtype in IN_C


def _add_sums(out: np.ndarray, rows: np.ndarray, strides: tuple[int, int]) -> None:
    """out += `_kernel(rows, strides)`, as the 2-D loop adds its sums into the output (Note
    [Sum loops]); in C where the build has it. `out` is contiguous."""
    if _in_c(rows.dtype):
        NATIVE.kernel(rows, out, strides[0], strides[1])
    else:
        np.add(out, _kernel(rows, strides), out=out)


def cascade_sum(values: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """`torch.sum(values, axes, keepdim)` for floats, added as Note [Summation order] says,
    in the loops TensorIterator makes of the input's layout (Note [Sum loops])."""
    ndim, shape = values.ndim, values.shape
    axes = tuple(sorted(a % ndim for a in axes)) if ndim else ()
    k = len(axes)
    n = math.prod([shape[a] for a in axes])
    item = values.dtype.itemsize
    out_shape = tuple(1 if a in axes else d for a, d in enumerate(shape)) if keepdims else \
        tuple(d for a, d in enumerate(shape) if a not in axes)
    # (shortcuts for the common layouts, one 2-D loop each: see Note [Sum loops])
    if k == ndim and values.flags.c_contiguous:     # everything: one contiguous row
        if not _in_c(values.dtype):
            return np.asarray(_inner(values.reshape(-1))).reshape(out_shape)
        rows, pair = values.reshape(-1, 1), (item, 0)   # (a 1-d loop: added as `_inner` adds)
    elif (n > 1 and values.size > n and values.flags.c_contiguous and 1 not in shape
            and axes in (tuple(range(k)), tuple(range(ndim - k, ndim)))):
        rows = values.reshape(-1, n).T if axes[0] else values.reshape(n, -1)
        pair = (item, n * item) if axes[0] else (rows.shape[1] * item, item)
    else:
        return _loops(values, set(axes)).reshape(out_shape)
    result = np.zeros(rows.shape[1], dtype=values.dtype)   # the output's initial 0
    _add_sums(result, rows, pair)
    return result.reshape(out_shape)


def _loops(values: np.ndarray, reduced: set[int]) -> np.ndarray:
    """The sum over `reduced`, as an array of the kept dims' sizes."""
    dims = [a for a in range(values.ndim) if values.shape[a] > 1]
    if values.size == 0:
        return np.zeros(tuple(d for a, d in enumerate(values.shape) if a not in reduced),
                        dtype=values.dtype)
    # reorder_dimensions: reduced dims first, by input stride; kept dims by the output's
    order = sorted((a for a in dims if a in reduced),
                   key=lambda a: (abs(values.strides[a]), values.shape[a]))
    order += [a for a in reversed(dims) if a not in reduced]
    # coalesce_dimensions: neighbours of one kind whose input strides chain
    groups: list[list[int]] = []
    for a in order:
        if groups:
            last = groups[-1][-1]
            if (a in reduced) == (last in reduced) and (
                    values.shape[last] * values.strides[last] == values.strides[a]):
                groups[-1].append(a)
                continue
        groups.append([a])
    while len(groups) < 2:                                      # (a 1-d loop: size1 = 1)
        groups.append([])
    sizes = [math.prod(values.shape[a] for a in g) for g in groups]
    strides = [values.strides[g[0]] if g else 0 for g in groups]
    kinds = [bool(g) and g[0] in reduced for g in groups]
    # the groups, slowest first, as axes of one logical array
    slowest = [a for g in reversed(groups) for a in reversed(g)]
    rest = [a for a in range(values.ndim) if a not in slowest]
    grid = values.transpose(rest + slowest).reshape(sizes[::-1])
    kept_sizes = [s for s, r in zip(sizes[::-1], kinds[::-1], strict=True) if not r]
    out = np.zeros(kept_sizes, dtype=values.dtype)
    outer = sizes[:1:-1]                                        # outer dims, slowest first
    for index in np.ndindex(*outer):
        plane = grid[index]                                     # size1 x size0
        kept_index = tuple(i for i, r in zip(index, kinds[:1:-1], strict=True) if not r)
        if not kinds[0] and not kinds[1]:                       # not a true reduction
            out[kept_index] = out[kept_index] + plane
            continue
        if kinds[0]:
            rows, pair = plane.T, (strides[0], strides[1])
        else:                                                   # the reduced dim goes first
            rows, pair = plane, (strides[1], strides[0])
        if kinds[0] and kinds[1]:                               # each column into one output
            sums = np.full(rows.shape[1], -0.0, dtype=values.dtype)  # (-0.0 + s is s's bits)
            _add_sums(sums, rows, pair)
            for v in sums:
                out[kept_index] = out[kept_index] + v
        else:
            _add_sums(out[kept_index], rows, pair)
    return out


# Note [Sum loops]
# TensorIterator puts a reduction's reduced dims first (fastest), in the order of their
# strides in the input, then the kept dims in the output's order, and merges neighbours
# whose strides chain (a sum over dims 0 and 1 of a contiguous tensor is one dim). The
# first two dims are the kernel's 2-D loop; it runs once for each index of the others,
# each time adding its sums into the output (which starts at 0). So the layout decides
# the order: the sum over dim 0 of a contiguous 8 x 32 tensor goes down its columns, and
# x.t().sum(1) does the same additions as x.sum(0). tests/test_summation.py holds every
# choice of dims of several shapes, contiguous and transposed, to live torch's bits.
# (A sum over more than 32,768 elements may be split between threads; not reproduced.)


def full_sum(values: np.ndarray) -> np.ndarray:
    """The sum of every element, as a 0-d array."""
    if values.dtype.kind != "f":
        return np.asarray(np.sum(values, dtype=np.int64))
    return cascade_sum(values, tuple(range(values.ndim)), False)
