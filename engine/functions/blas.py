"""Matrix products of float32 as MKL's kernels add them up (PyTorch's CPU build calls MKL
for mm, addmm and dot), where the order is known: see Note [MKL's summation order].

# Note [MKL's summation order]
A float32 sum rounds after every addition, so its last bits depend on the order of the
additions, and `print(loss.item())` shows them. MEASURED with PyTorch 2.13 (MKL 2024.2)
on this AVX512 CPU, against the order-revealing probes of a large value and two halves of
its ulp, then on random matrices:

* `sgemm`'s packed kernel computes each entry as one chain of fused multiply-adds in k
  order, from +0.0: `c = fma(a[i, p], b[p, j], c)` for p = 0 .. k-1. It runs for every
  shape of 2-D operands that are row-major or transposed views (PyTorch passes both to
  MKL without copying) with k <= 384, except the shapes where MKL picks a small-matrix
  or matrix-vector kernel: one row or one column, and for `a @ b.t()` (nn.Linear's
  layout) the few-rows shapes in `_packed` below. 2,100 random shapes of up to 47 x 384
  x 47 agree with that rule to the bit, and so do (64, 300, 64) and (200, 300, 50).
  addmm (nn.Linear with a bias) adds the bias to the finished sum.
* For `a @ b.t()` with rows shorter than 32 where the packed kernel is not taken (few
  rows or few columns: nn.Linear(2, 3) on a small batch), a dot-product kernel puts each
  entry's products in 16 lanes (k = 17 .. 31 fused-multiply-added onto the first 16)
  and halves the lanes as sdot does. Measured on 3,000 such shapes; k = 32 and one-row
  products sum otherwise.
* Beyond k = 384 the kernel splits k into blocks whose sizes depend on m and n (384 and
  two halves of the rest for 8 x k x 4; four equal blocks for 64 x 1000 x 64), and the
  small-matrix kernels sum in vector lanes whose layout depends on the shape. Those
  shapes keep numpy's sum: the same value within float32 rounding, not always the bits.
* `sdot` (torch.dot) fused-multiply-adds into four accumulators of 16 lanes, 64
  elements per round; what is left goes 32 at a time into the first two, then 16 at a
  time and a masked tail into the first. The accumulators are added (0 + 1) + (2 + 3),
  then the lanes halved: lane j plus lane j + 8, then j + 4, then j + 2 and at last the
  pairs (0 + 1) + (2 + 3). Every length from 1 to 1,000 tried, and views starting
  anywhere, give PyTorch's bits.
* `sgemv` with a row-major matrix (torch.mv, `W @ x`, and mm with one column, which is
  the same call: nn.Linear(k, 1)) takes the rows four at a time: each row's first
  product starts lane 0 of 16 lanes, the next elements go 16 at a time into the lanes,
  the lanes are halved (j + 8, j + 4, j + 2, j + 1), and what is left (up to 16) goes
  into a fresh vector whose lane 0 holds that sum (8 lanes for up to 8 elements), halved
  again. The rows left over (m mod 4) go one at a time: the elements after the first
  in 16 lanes aligned to the row's end, halved, then the first product added. Measured
  for every k below 400 with m*k up to 12,800 (one thread) and, for the rows left over,
  k up to 32; beyond those MKL splits the rows between threads or sums the leftover
  rows otherwise, and numpy's sum stands in. One row times a transpose (`x @ W.t()`,
  nn.Linear on one sample) is the same call as mv(W, x). One row times a matrix
  (`x @ W`) is one fused multiply-add chain per column, as the packed kernel's, for
  fewer than 16 columns and depth below 256, or depth below 8 (3,000 shapes); more
  columns go through another kernel, not reproduced. mv of a transposed matrix
  (`X.t() @ g`, mv's backward) is that same call: `g @ X`.

Each fused multiply-add is computed as the float32 product, exact in float64, plus the
float32 sum, rounded once from float64 to float32: it differs from the fused one only
when the float64 sum rounds onto a float32 halfway point (about once in 2**28 adds).
The packed kernel's chains are summed in chains.py, by numpy's own BLAS where it sums
them so (Note [numpy's BLAS as the chain]); float64 products too (Note [dgemm's chains]).
"""

from __future__ import annotations

from typing import Final

import numpy as np

from engine.functions import chains
from engine.functions.libm import fma

F32: Final = np.dtype(np.float32)
F64: Final = np.dtype(np.float64)
PACKED_DEPTH: Final = 384          # the largest k that sgemm sums in one chain
PRODUCTS: Final = 1 << 22          # more products than this: numpy's sum (speed)
LANES: Final = 16                  # an AVX512 vector of float32
ACCUMULATORS: Final = 4
GEMV_ONE_THREAD: Final = 12_800    # m*k beyond this: MKL's sgemv splits rows between threads
GEMV_GROUP: Final = 4              # rows sgemv takes together
GEMV_LEFTOVER_DEPTH: Final = 32    # the longest leftover row whose order is known


def transposed(a: np.ndarray) -> bool:
    """A transposed view (column-major): BLAS reads it with trans='T'."""
    return a.strides[0] == a.itemsize and a.shape[0] > 1


def _packed(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether MKL's sgemm takes its packed kernel for `a @ b` (see the Note). Shapes
    are PyTorch's row-major ones; MKL sees the product transposed (C^T = B^T A^T), so
    `a @ b.t()` is its `TN` case with its m and n swapped."""
    m, k = a.shape
    n = b.shape[1]
    if m == 1 and n > 1 and not transposed(b):         # x @ W, one row: sgemv's own chains
        return bool(k < 8 or (n < 16 and k < 256))
    if k > PACKED_DEPTH or m == 1 or n == 1 or m * k * n > PRODUCTS:
        return False
    if transposed(a):
        return not transposed(b)           # a.t() @ b: packed; a.t() @ b.t(): not known
    if not transposed(b):
        return True
    if k >= 22 * m:                         # a @ b.t(), long rows: a dot-product kernel
        return False
    if m <= 10:
        return bool(n >= 4 and (n <= max(m, k - 1) or n >= 12))
    return n >= 3 if m <= 15 else True


def gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """`a @ b` for float32 matrices as sgemm sums it where the order is known (its packed
    kernel, and `a @ b.t()` of short rows), and for float64 ones as dgemm does (Note
    [dgemm's chains]), or None (the caller keeps numpy's sum)."""
    if a.dtype == F64 and b.dtype == F64:
        if transposed(b) or a.shape[0] == 1 or b.shape[1] == 1 or a.shape[1] > PACKED_DEPTH:
            return None                    # other kernels (Note [dgemm's chains])
        return chains.double_chains(a, b)
    if a.dtype != F32 or b.dtype != F32:
        return None
    if not _packed(a, b):
        m, k = a.shape
        if (transposed(b) and not transposed(a) and m > 1 and b.shape[1] > 1
                and k < 2 * LANES):
            return _row_dots(a, b.T)
        return None
    return chains.float_chains(a, b)



def _row_dots(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """`a @ w.t()` by sgemm's small kernel for rows shorter than 32: each entry's products
    in 16 lanes (the first 16 rounded, the rest fused-multiply-added onto them), then the
    lanes halved (see the Note)."""
    k = a.shape[1]
    head = min(k, LANES)
    acc = np.zeros((a.shape[0], w.shape[0], LANES), F32)
    acc[:, :, :head] = np.multiply(a[:, None, :head], w[None, :, :head], dtype=F64)
    if k > LANES:
        acc[:, :, :k - LANES] = fma(a[:, None, LANES:], w[None, :, LANES:],
                                     acc[:, :, :k - LANES])
    return _halve(acc.reshape(-1, LANES)).reshape(a.shape[0], w.shape[0])


def dot(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """`x · y` for float32 vectors as MKL's sdot sums it (see the Note), or None for
    other dtypes."""
    if x.dtype != F32 or y.dtype != F32:
        return None
    k = x.shape[0]
    per_round = LANES * ACCUMULATORS
    padded = -(-k // LANES) * LANES
    products = np.zeros(padded, F64)
    np.multiply(x, y, out=products[:k], dtype=F64)
    lanes = products.reshape(-1, LANES)      # row r: the r-th 16 elements
    acc = np.zeros((ACCUMULATORS, LANES), F32)
    rounds = k // per_round
    row = 0
    for _ in range(rounds):
        for i in range(ACCUMULATORS):
            np.add(lanes[row + i], acc[i], out=acc[i], casting="unsafe")
        row += ACCUMULATORS
    while lanes.shape[0] - row >= 2 and k - row * LANES >= 2 * LANES:
        for i in range(2):
            np.add(lanes[row + i], acc[i], out=acc[i], casting="unsafe")
        row += 2
    while row < lanes.shape[0]:              # 16 at a time, then the masked tail
        np.add(lanes[row], acc[0], out=acc[0], casting="unsafe")
        row += 1
    v = (acc[0] + acc[1]) + (acc[2] + acc[3])
    v = v[:8] + v[8:]
    v = v[:4] + v[4:]
    return np.asarray((v[0] + v[1]) + (v[2] + v[3]), F32)


def _halve(acc: np.ndarray) -> np.ndarray:
    """Each row's lanes added pairwise, lane j plus lane j + width/2, down to one."""
    while acc.shape[1] > 1:
        half = acc.shape[1] // 2
        acc = acc[:, :half] + acc[:, half:]
    return acc[:, 0]


def _grouped_rows(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """sgemv's four-row kernel, all rows at once (see the Note)."""
    m, k = a.shape
    total: np.ndarray = fma(a[:, 0], x[0], np.zeros(m, F32))
    p = 1
    if (k - 1) // LANES:
        acc = np.zeros((m, LANES), F32)
        acc[:, 0] = total
        while k - p >= LANES:
            acc = fma(a[:, p:p + LANES], x[p:p + LANES], acc)
            p += LANES
        total = _halve(acc)
    if p < k:
        acc = np.zeros((m, LANES if k - p > LANES // 2 else LANES // 2), F32)
        acc[:, 0] = total
        acc[:, :k - p] = fma(a[:, p:], x[p:], acc[:, :k - p])
        total = _halve(acc)
    return total


def _single_rows(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """sgemv's one-row kernel for rows of at most 32 elements (see the Note)."""
    m, k = a.shape
    if k == 1:                          # the one product, rounded once: an underflow keeps its sign
        product: np.ndarray = fma(a[:, 0], x[0], np.zeros(m, F32))
        return product
    acc = np.zeros((m, LANES), F32)
    rest = k - 1
    head = rest % LANES
    if head:
        acc[:, LANES - head:] = fma(a[:, 1:1 + head], x[1:1 + head], acc[:, LANES - head:])
    if rest >= LANES:
        acc = fma(a[:, 1 + head:], x[1 + head:], acc)
    return np.asarray(_halve(acc) + a[:, 0] * x[0], F32)


def gemv(a: np.ndarray, x: np.ndarray) -> np.ndarray | None:
    """`a @ x` for a row-major float32 matrix and a vector as MKL's sgemv sums it, with
    numpy's sum for the rows whose order is not known; None where no row's is."""
    m, k = a.shape
    if (a.dtype != F32 or x.dtype != F32 or k == 0 or m * k > GEMV_ONE_THREAD
            or a.strides[1] != a.itemsize or x.strides[0] != x.itemsize):
        return None
    grouped = m - m % GEMV_GROUP
    if grouped == 0 and k > GEMV_LEFTOVER_DEPTH:
        return None
    out = np.empty(m, F32)
    if grouped:
        out[:grouped] = _grouped_rows(a[:grouped], x)
    if grouped < m:
        rest = a[grouped:]
        out[grouped:] = (_single_rows(rest, x) if k <= GEMV_LEFTOVER_DEPTH
                         else np.asarray(rest @ x, F32) + 0)
    return out
