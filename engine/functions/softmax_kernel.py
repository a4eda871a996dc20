"""softmax and log_softmax of float32 over the last dim, as PyTorch's CPU kernels compute
them (SoftMaxKernel.cpp `_vec_softmax_lastdim`, `_vec_log_softmax_lastdim` and their
backward): SLEEF's vectorized expf and logf, and sums in the vectors' lane order.

# Note [Vectorized softmax]
The kernels run on whole rows with `Vectorized<float>`: exp and log are SLEEF's
(`Sleef_expf16_u10`, `Sleef_logf16_u10`), which are within an ulp but not correctly
rounded, and `vec::reduce_all` sums a row in 16 lanes (each lane adding every 16th
element, the row's tail into the first lanes), then halves the lanes pairwise (lane j
plus lane j + 8, then j + 4, j + 2, j + 1); a row shorter than a vector is added in
order. The log_softmax backward's `g - exp(y) * sum` is contracted to one fused
multiply-add. The lab computes each step on numpy arrays, all rows at once: SLEEF's
polynomials with their fused multiply-adds (`_fma`: the exact product in double, then
one rounding after the add; a double rounding can differ from the fused one only when
the double lands on a float32 halfway point, about once in 2**29), its double-float
arithmetic for logf, and the same lane order. MEASURED against PyTorch 2.13 on this
AVX512 CPU: every one of 20,000 random rows of 2 to 40 classes gives PyTorch's bits,
forward and backward (tests/test_softmax_kernel.py keeps 600 rows of 1 to 100), where
numpy's exp and sums gave them for none of forty 8 x 4 softmaxes and a quarter of the
log_softmaxes. The 16 lanes are AVX512's: these kernels are built for it. It costs time:
some 60 numpy calls on tiny arrays, about 0.1 ms for an 8 x 4 log_softmax against 0.02 ms.
Other dims and float64 keep numpy's arithmetic (an ulp off now and then).

# Note [The kernels in C]
The compiled build also compiles sleef_kernels.c beside this file: the same functions,
operation for operation, a row at a time, with C's own fmaf where `_fma` rounds a double
(the one place the two may differ: the double rounding above, which the C does not have).
MEASURED (compiled build, an 8 x 4 batch, best of 5 x 2,000): log_softmax forward 111 us
and backward 52 us with numpy, 3.4 and 3.2 us in C (the call and its arrays); numpy's
were a fifth of the two-layer MLP's 200-step trace (bench.courses). The pure build, and
any build without the C, runs the numpy functions here; tests/test_softmax_kernel.py
checks the two against each other and against PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

F32: Final = np.dtype(np.float32)
LANES: Final = 16                  # Vectorized<float>::size() with AVX512


F64: Final = np.dtype(np.float64)


def _sleef_kernels() -> Any:
    """The compiled build's C kernels (Note [The kernels in C]), or None."""
    try:
        import engine.functions.sleef_kernels as sleef_kernels  # type: ignore[import-not-found]
    except ImportError:
        return None
    return sleef_kernels


NATIVE: Final[Any] = _sleef_kernels()


def _rows(kernel: Callable[..., None], *arrays: np.ndarray) -> np.ndarray:
    """A C kernel run on whole rows (the last axis) of float32 arrays of one shape."""
    inputs = [np.ascontiguousarray(a, dtype=F32) for a in arrays]
    out = np.empty_like(inputs[0])
    if out.size:
        kernel(*inputs, out, out.shape[-1])
    return out


def _c(value: float | np.floating, dtype: np.dtype = F32) -> np.ndarray:
    """A constant as a 0-d array: numpy adds a 0-d array to an array several times faster
    than a scalar (MEASURED, numpy 2.4: 0.5 against 1.7 us for 32 floats). Read-only."""
    constant = np.array(value, dtype=dtype)
    constant.flags.writeable = False
    return constant


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once to float32, for float64 arrays holding float32 values (the
    product of two floats is exact in double; see the Note on the double rounding)."""
    total: np.ndarray = (a * b + c).astype(F32)
    return total


def _wide(a: np.ndarray) -> np.ndarray:
    return a.astype(F64)


# -- SLEEF's expf and logf (sleefsimdsp.c: xexpf, xlogf_u1) --------------------------------
# float32 arrays: numpy's float32 arithmetic rounds each step as the vector instructions
# do; a fused multiply-add is done in double on the float32 values (`_fma`).

_R_LN2: Final = _c(1.442695040888963407359924681001892137426645954152985934135449406931)
_MINUS_L2U: Final = _c(-0.693145751953125, F64)
_MINUS_L2L: Final = _c(-np.float32(1.428606765330187045e-06), F64)
_EXP_POLY: Final = tuple(_c(np.float32(c), F64) for c in (
    0.000198527617612853646278381, 0.00139304355252534151077271, 0.00833336077630519866943359,
    0.0416664853692054748535156, 0.166666671633720397949219, 0.5))
_LN2_HI: Final = _c(np.float32(0.69314718246459960938), F64)
_LN2_LO: Final = _c(np.float32(-1.904654323148236017e-09), F64)
_LOG_POLY: Final = tuple(_c(np.float32(c), F64) for c in (0.3027294874, 0.3996108174,
                                                             0.6666694880))
_ONE: Final = _c(1.0)
_ONE64: Final = _c(1.0, F64)
_TWO: Final = _c(2.0)
_FOUR_THIRDS: Final = _c(1.0 / 0.75)
_UNDERFLOW: Final = _c(-104.0)
_OVERFLOW: Final = _c(100.0)
_INF: Final = _c(np.inf)
_ZERO: Final = _c(0.0)


def expf(d: np.ndarray) -> np.ndarray:
    """`xexpf` (softmax's shifted values; sigmoid's and silu's -x, libm.vector_exp):
    exp(d) = 2**q * e**s with s = d - q*ln2 (ln2 in two parts), e**s by a polynomial;
    below -104, 0; above 100, inf (as SLEEF selects them: +inf too)."""
    d = np.asarray(d, dtype=F32)
    q = np.rint(d * _R_LN2)
    q64 = _wide(q)
    s = _wide(_fma(q64, _MINUS_L2L, _wide(_fma(q64, _MINUS_L2U, _wide(d)))))
    u = _fma(s, _EXP_POLY[0], _EXP_POLY[1])
    for c in _EXP_POLY[2:]:
        u = _fma(_wide(u), s, c)
    s32 = s.astype(F32)
    u = _ONE + _fma(_wide(s32 * s32), _wide(u), s)
    u = np.ldexp(u, q.astype(np.int32))     # (vldexp2's two exact scalings: one rounding)
    return np.where(d < _UNDERFLOW, _ZERO, np.where(d > _OVERFLOW, _INF, u))


def logf(d: np.ndarray) -> np.ndarray:
    """`xlogf_u1` (the AVX512 branch) for the sums softmax takes the log of (at least 1,
    finite): d = m * 2**e with m in [0.75, 1.5); log d = e*ln2 + 2 atanh((m-1)/(m+1)),
    in double-float arithmetic (a float32 value and its rounding error)."""
    d = np.asarray(d, dtype=F32)
    e = np.floor(np.log2(_wide(d * _FOUR_THIRDS))).astype(F32)
    e64 = _wide(e)
    m = d / np.exp2(e)                               # exact: a power of two
    s_hi = _fma(_LN2_HI, e64, _c(0.0, F64))          # dfmul_vf2_vf2_vf: (ln2 hi, lo) * e
    s_lo = _fma(_LN2_LO, e64, _wide(_fma(_LN2_HI, e64, -_wide(s_hi))))
    n_hi, n_lo = _add2(-_ONE, m)                     # dfdiv((m - 1), (m + 1))
    d_hi, d_lo = _add2(_ONE, m)
    t = _ONE / d_hi
    x_hi = n_hi * t
    t64, x_hi64 = _wide(t), _wide(x_hi)
    u = _fma(t64, _wide(n_hi), -x_hi64)
    v = _fma(-_wide(d_lo), t64, _wide(_fma(-_wide(d_hi), t64, _ONE64)))
    x_lo = _fma(x_hi64, _wide(v), _wide(_fma(_wide(n_lo), t64, _wide(u))))
    x2 = x_hi * x_hi
    x2_64 = _wide(x2)
    p = _fma(_LOG_POLY[0], x2_64, _LOG_POLY[1])
    p = _fma(_wide(p), x2_64, _LOG_POLY[2])
    two_x_hi, two_x_lo = x_hi * _TWO, x_lo * _TWO
    hi = s_hi + two_x_hi                             # dfadd_vf2_vf2_vf2
    lo = (((s_hi - hi) + two_x_hi) + s_lo) + two_x_lo
    y = (x2 * x_hi) * p                              # dfadd_vf2_vf2_vf
    top = hi + y
    r: np.ndarray = top + (((hi - top) + y) + lo)
    return r


def _add2(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`dfadd2_vf2_vf_vf`: x + y as a float32 and its rounding error."""
    s = x + y
    v = s - x
    return s, (x - (s - v)) + (y - v)


# -- sums in lane order, and the kernels -------------------------------------------------------

def lane_sum(rows: np.ndarray) -> np.ndarray:
    """`vec::reduce_all(+)` of each row (the last axis) of float32 values."""
    n = rows.shape[-1]
    if n < LANES:                                   # one partial vector: lane 0, in order
        total = rows[..., 0]
        for j in range(1, n):
            total = total + rows[..., j]
        return np.asarray(total, dtype=F32)
    full = n - n % LANES
    acc = np.add.accumulate(rows[..., :full].reshape(*rows.shape[:-1], -1, LANES),
                            axis=-2, dtype=F32)[..., -1, :]
    if n > full:                                    # the tail, into the first lanes
        acc = acc.copy()
        acc[..., :n - full] += rows[..., full:]
    while acc.shape[-1] > 1:                        # lane j + lane j + half, halving
        half = acc.shape[-1] // 2
        acc = acc[..., :half] + acc[..., half:]
    return np.asarray(acc[..., 0], dtype=F32)


def softmax_rows(x: np.ndarray) -> np.ndarray:
    """exp(x - max) * (1 / sum), each row."""
    e = expf(x - x.max(axis=-1, keepdims=True))
    out: np.ndarray = e * (_ONE / lane_sum(e))[..., None]
    return out


def log_softmax_rows(x: np.ndarray) -> np.ndarray:
    """x - max - log(sum(exp(x - max))), subtracted in that order."""
    shifted = x - x.max(axis=-1, keepdims=True)
    out: np.ndarray = shifted - logf(lane_sum(expf(shifted)))[..., None]
    return out


def softmax_backward_rows(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(g - sum(g * y)) * y."""
    out: np.ndarray = (g - lane_sum(g * y)[..., None]) * y
    return out


def log_softmax_backward_rows(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    """g - exp(y) * sum(g), one fused multiply-add."""
    total = np.broadcast_to(lane_sum(g)[..., None], g.shape)
    return _fma(_wide(-expf(y)), _wide(total), _wide(g))


# -- what the engine calls: the C kernels where the build has them (Note [The kernels in C])

def softmax_lastdim(x: np.ndarray) -> np.ndarray:
    return _rows(NATIVE.softmax, x) if NATIVE is not None else softmax_rows(x)


def log_softmax_lastdim(x: np.ndarray) -> np.ndarray:
    return _rows(NATIVE.log_softmax, x) if NATIVE is not None else log_softmax_rows(x)


def softmax_backward_lastdim(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    if NATIVE is not None:
        return _rows(NATIVE.softmax_backward, g, y)
    return softmax_backward_rows(g, y)


def log_softmax_backward_lastdim(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    if NATIVE is not None:
        return _rows(NATIVE.log_softmax_backward, g, y)
    return log_softmax_backward_rows(g, y)


def exp_each(x: np.ndarray) -> np.ndarray:
    """SLEEF's expf of each element of a float32 array (libm.vector_exp's blocks)."""
    if NATIVE is None:
        return expf(x)
    flat = _rows(NATIVE.expf, np.reshape(x, -1))
    return flat.reshape(np.shape(x))
