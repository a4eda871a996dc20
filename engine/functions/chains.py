"""The packed kernels' sums: every entry of `a @ b` one chain of fused multiply-adds in k
order from +0.0 (blas.py, Note [MKL's summation order]), step by step or by numpy's own
BLAS where it sums them so, or in C in the compiled build (Note [The chains in C]);
float64 products likewise (Note [dgemm's chains])."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

F32: Final = np.dtype(np.float32)
F64: Final = np.dtype(np.float64)


def _chain_kernels() -> Any:
    """The compiled build's C chains (Note [The chains in C]), or None."""
    try:
        import engine.functions.chain_kernels as chain_kernels  # type: ignore[import-not-found]
    except ImportError:
        return None
    return chain_kernels


NATIVE: Final[Any] = _chain_kernels()


def float_chains(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """float32 `a @ b` as the packed kernel sums it."""
    if NATIVE is not None:
        return _in_c(a, b)
    return _by_openblas(a, b) if NUMPY_CHAINS else _step_by_step(a, b)


def _in_c(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The chains by chain_kernels.c: C's own fused multiply-add, step by step."""
    c = np.empty((a.shape[0], b.shape[1]), a.dtype)
    NATIVE.chains(a, b, c)
    return c


# Note [The chains in C]
# The compiled build sums the chains in C (chain_kernels.c): a loop of C's fmaf, which
# rounds once as MKL's fused multiply-add does, compiled for the CPU's FMA instructions
# where it has them. No layout copies, no check for a chain's -0.0 (C keeps its sign), no
# float64 products. MEASURED (compiled, 8 x 16 x 32 float32, best of 10,000): 4.4 us by
# numpy's BLAS in the chain layout (`_by_openblas`), 2.2 us in C. In bench/programs.py's
# MLP trace the five products of a step took 25 us, a tenth of the trace, and take 9 us
# (perf, compiled, 200 steps). Built with -O3, which vectorizes the loop over a row's
# entries, the five products' C took 5.3 us a step against 6.1 (best of 15,000): not worth
# a flag of its own. tests/test_blas.py holds the C to PyTorch's recorded bits and to
# `_step_by_step`.


def _step_by_step(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Every entry's chain of fused multiply-adds, one step of k at a time for all entries."""
    products = a.T.astype(F64)[:, :, None] * b.astype(F64)[:, None, :]    # (k, m, n)
    c = np.zeros((a.shape[0], b.shape[1]), F32)
    for p in products:                       # c = fma(a[:, p], b[p, :], c), in k order
        np.add(p, c, out=c, casting="unsafe")
    return c


# Note [numpy's BLAS as the chain]
# `_step_by_step` costs a numpy call per step of k: 0.2 ms of a course MLP's 0.7 ms step.
# numpy's own BLAS sums the same chains for one layout of the operands. MEASURED with
# numpy 2.4's OpenBLAS 0.3.31 on this AVX512 CPU: `a @ b` with `a` column-major (at least
# two rows) and `b` row-major is one fused multiply-add chain per entry in k order from
# +0.0, bit for bit as `_step_by_step` on 4,000 random shapes up to 69 x 384 x 69 (a fifth
# of them with zeros in `a`); the same operands row-major split the chain once k >= 32. So
# the operands are copied into that layout (a few KB) and a single row gets a zero row
# below it. Whether this process's numpy sums so (another BLAS or CPU might not) is checked
# once, on probes whose sums depend on the order (`NUMPY_CHAINS`); where it does not, the
# chains go step by step. One difference remains: for some shapes (k = 1) OpenBLAS adds
# the finished chain to a zeroed result, which turns a chain's -0.0 (a negative sum too
# small for float32) into +0.0; a result with a zero whose products are small enough for
# that goes step by step. The MLPs' five products per step (8 x 16 x 32 and the like)
# took 216 us step by step, 30 us so, and 9 us as numpy's plain `a @ b` (MEASURED, pure
# Python); in the whole compiled trace of the MLP, about 60 us a step.

PROBE_SHAPES: Final = ((1, 40, 20), (2, 1, 2), (2, 31, 3), (3, 32, 5), (8, 16, 32),
                       (5, 100, 7), (17, 384, 9))
SMALLEST_EXACT_PRODUCT: Final = 2.0 ** -101


def _in_chain_layout(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a @ b` by numpy's BLAS with `a` column-major and `b` row-major (see the Note)."""
    rows = a if a.shape[0] > 1 else np.concatenate([a, np.zeros_like(a)])
    c: np.ndarray = (np.asfortranarray(rows) @ np.ascontiguousarray(b))[:a.shape[0]]
    return c


def _by_openblas(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The chains by numpy's BLAS, in the layout where it sums them so (see the Note)."""
    c = _in_chain_layout(a, b)
    if not c.all() and _may_round_to_zero(a, b, SMALLEST_EXACT_PRODUCT):
        return _step_by_step(a, b)            # a zero that may be the chain's -0.0
    return c


def _may_round_to_zero(a: np.ndarray, b: np.ndarray, smallest_exact: float) -> bool:
    """Whether a nonzero sum of `a @ b`'s products could round to zero. It cannot when no
    nonzero product is below `smallest_exact` (float32: 2**-101): each then has no bits
    below the dtype's smallest step (2**-149), nor has any sum of them, and a nonzero
    multiple of that step stays nonzero."""
    a_abs, b_abs = np.abs(a[a != 0]), np.abs(b[b != 0])
    return bool(a_abs.size and b_abs.size
                and float(a_abs.min()) * float(b_abs.min()) < smallest_exact)


def _numpy_sums_chains() -> bool:
    """Whether numpy's BLAS sums `_by_openblas`'s products as `_step_by_step` does (about
    1 ms, once, when the module is imported)."""
    rng = np.random.default_rng(384)
    probes = [(rng.standard_normal((m, k), F32), rng.standard_normal((k, n), F32))
              for m, k, n in PROBE_SHAPES]
    return all(np.array_equal(_by_openblas(a, b).view(np.int32),
                              _step_by_step(a, b).view(np.int32)) for a, b in probes)


NUMPY_CHAINS: Final = _numpy_sums_chains()


# Note [dgemm's chains]
# MKL's dgemm (float64) sums `a @ b` and `a.t() @ b` as one fused multiply-add chain per
# entry too, where the operands have at least two rows and two columns and k <= 384.
# MEASURED against PyTorch 2.13: numpy's BLAS in the layout of Note [numpy's BLAS as the
# chain] gave its bits on 2,000 random shapes up to 130 x 384 x 130, with one exception:
# numpy shares a product of more than about a million multiplications between threads,
# which changes the bits (one thread kept them), so the lab stops at 2**19. `a @ b.t()`
# (nn.Linear's layout), one row or one column go through other kernels, and numpy's own
# order stands in. There is no wider float in which to step through a float64 chain, so
# where numpy's BLAS does not sum chains (its probe, on float32 values whose products are
# exact in float64), numpy's own order stands in for all of them; the compiled build's C
# sums them with C's fma (Note [The chains in C]).

DOUBLE_PRODUCTS: Final = 1 << 19
SMALLEST_EXACT_DOUBLE_PRODUCT: Final = 2.0 ** -968    # float64's smallest step: 2**-1074


def double_chains(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """float64 `a @ b` (at least two rows and two columns, k <= 384, `b` not transposed)
    as dgemm sums it (Note [dgemm's chains]), or None."""
    if a.shape[0] * a.shape[1] * b.shape[1] > DOUBLE_PRODUCTS:
        return None
    if NATIVE is not None:
        return _in_c(a, b)
    if not NUMPY_DOUBLE_CHAINS:
        return None
    c = _in_chain_layout(a, b)
    if not c.all() and _may_round_to_zero(a, b, SMALLEST_EXACT_DOUBLE_PRODUCT):
        return None
    return c


def _numpy_sums_double_chains() -> bool:
    """Whether numpy's BLAS sums float64 products as chains in k order: checked on float32
    values, whose products float64 holds exactly, so that each step rounds only its sum."""
    rng = np.random.default_rng(1074)
    for m, k, n in PROBE_SHAPES[1:]:
        a = rng.standard_normal((m, k), F32).astype(F64)
        b = rng.standard_normal((k, n), F32).astype(F64)
        chains = np.zeros((m, n), F64)
        for p in range(k):
            chains += np.multiply.outer(a[:, p], b[p])
        if not np.array_equal(_in_chain_layout(a, b), chains):
            return False
    return True


NUMPY_DOUBLE_CHAINS: Final = _numpy_sums_double_chains()
