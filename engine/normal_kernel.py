"""NormalFill16 (native/cpu/DistributionTemplates.h): Box-Muller on rows of 16 uniforms, as
PyTorch's x86-64 kernel computes it (engine/random.py, Note [CPU capability]), and the fused
multiply-add it rounds with, emulated in float64."""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
import numpy.typing as npt

FLOAT32: Final = np.dtype(np.float32)
F32: Final = np.float32

Floats = npt.NDArray[np.floating]


def _two_sum(a: Floats, b: Floats) -> tuple[Floats, Floats]:
    """a + b as the rounded sum and its exact error (Knuth)."""
    s = a + b
    return s, (a - (s - (s - a))) + (b - (s - a))


def _odd_sum(a: Floats, b: Floats) -> Floats:
    """a + b rounded to odd: an inexact sum keeps the neighbour whose last bit is 1."""
    s, err = _two_sum(a, b)
    toward = np.nextafter(s, np.where(err > 0, np.inf, -np.inf))
    return np.where((err != 0) & ((s.view(np.int64) & 1) == 0), toward, s)


def fma(a: npt.ArrayLike, b: npt.ArrayLike, c: npt.ArrayLike, dtype: np.dtype[np.floating]
        ) -> Floats:
    """a * b + c rounded once to dtype, as a fused multiply-add: exact products (Dekker's for
    float64) and a sum rounded to odd before the last rounding (Boldo & Melquiond, 2008)."""
    a64, b64, c64 = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    if dtype == FLOAT32:
        return _odd_sum(a64 * b64, c64).astype(np.float32)
    big_a, big_b = a64 * 134217729.0, b64 * 134217729.0      # Veltkamp: halves of 26 bits
    a_hi, b_hi = big_a - (big_a - a64), big_b - (big_b - b64)
    a_lo, b_lo, hi = a64 - a_hi, b64 - b_hi, a64 * b64
    lo = ((a_hi * b_hi - hi) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    s, t = _two_sum(c64, hi)
    return s + _odd_sum(t, lo)


LOG_P: Final = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                3.3333331174E-1)                                  # avx_mathfun.h's Cephes
SINCOF: Final = (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1)
COSCOF: Final = (2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002)
MINUS_DP: Final = (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8)


def log256_ps(x: npt.NDArray[np.float32]) -> Floats:
    """avx_mathfun.h's log256_ps (Cephes logf), a product GCC fuses with an add one `fma`. For
    x in (0, 1], as in normal_fill, its clamp of denormals and NaN mask never act: left out."""
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(F32) + F32(1)
    x = ((bits & ~0x7F800000) | F32(0.5).view(np.int32)).view(F32)
    small = x < F32(0.707106781186547524)                    # x < SQRTHF: e -= 1; x = x + x - 1
    e, x = e - np.where(small, F32(1), F32(0)), (x - F32(1)) + np.where(small, x, F32(0))
    z = x * x
    y = np.full_like(x, F32(LOG_P[0]))
    for p in LOG_P[1:]:
        y = fma(y, x, F32(p), FLOAT32)
    y = fma(y * x, z, e * F32(-2.12194440e-4), FLOAT32)
    y = fma(-z, F32(0.5), y, FLOAT32)
    return fma(e, F32(0.693359375), x + y, FLOAT32)


def sincos256_ps(x: npt.NDArray[np.float32]) -> tuple[Floats, Floats]:
    """avx_mathfun.h's sincos256_ps (Cephes sinf and cosf), rounded as log256_ps is."""
    j = ((np.abs(x) * F32(1.27323954473516)).astype(np.int32) + 1) & ~1   # octant, by 4/pi
    y, sign_sin, sign_cos = j.astype(F32), np.signbit(x) ^ ((j & 4) != 0), (~(j - 2) & 4) != 0
    use_cos_poly, x = (j & 2) != 0, np.abs(x)
    for dp in MINUS_DP:                                       # extended precision x - y * pi/4
        x = fma(y, F32(dp), x, FLOAT32)
    z = x * x
    yc = fma(F32(COSCOF[0]), z, F32(COSCOF[1]), FLOAT32)
    yc = fma(yc, z, F32(COSCOF[2]), FLOAT32) * z
    yc = fma(yc, z, -(z * F32(0.5)), FLOAT32) + F32(1)
    ys = fma(F32(SINCOF[0]), z, F32(SINCOF[1]), FLOAT32)
    ys = fma(fma(ys, z, F32(SINCOF[2]), FLOAT32) * z, x, x, FLOAT32)
    sin, cos = np.where(use_cos_poly, yc, ys), np.where(use_cos_poly, ys, yc)
    return np.where(sign_sin, -sin, sin), np.where(sign_cos, -cos, cos)


# Note [Normal samples in C]
# The compiled build also compiles normal_kernels.c beside this file: normal_fill_16's
# float32 rows, log256_ps and sincos256_ps included, operation for operation, an element at
# a time, with C's own fmaf for each `fma(..., FLOAT32)` here (both round once).
# The Python is some 400 numpy operations (21 `fma`s of about 18) whatever the rows:
# MEASURED (best of 40 x 100, pure build, numpy 2.4): normal_fill_16 on 48 rows of 16
# float32 uniforms (768 samples, a program's three randn calls) took 355 us in Python and
# 4.4 us in C (15 us where fmaf is glibc's call), on one row 265 us and 0.5 us; a program's
# three calls, each with its tail row, had cost about 1.5 ms in the compiled build.
# The pure build, and float64, take the Python below; tests/test_normal_kernels.py checks
# the two against each other.


def _normal_kernels() -> Any:
    """The compiled build's C normal_fill_16 (Note [Normal samples in C]), or None."""
    try:
        import engine.normal_kernels as normal_kernels  # type: ignore[import-not-found]
    except ImportError:
        return None
    return normal_kernels


NATIVE: Final[Any] = _normal_kernels()


def normal_fill_16(data: Floats, mean: float, std: float) -> Floats:
    """NormalFill16 (native/cpu/DistributionTemplates.h) on rows of 16 uniforms, 8 radii then 8
    angles: AVX2's for float32, the scalar one with libm's log, cos, sin (math) for float64."""
    if data.dtype == FLOAT32 and NATIVE is not None:            # Note [Normal samples in C]
        rows = np.ascontiguousarray(data)
        out = np.empty_like(rows)
        NATIVE.normal_fill_16(rows, out, mean, std)
        return out
    if data.dtype == FLOAT32:
        radius = np.sqrt(F32(-2) * log256_ps(F32(1) - data[:, :8]))
        sin, cos = sincos256_ps(F32(2.0 * math.pi) * data[:, 8:])
        n1, n2 = radius * cos, radius * sin
    else:
        u1, theta = (1.0 - data[:, :8]).ravel().tolist(), (2.0 * math.pi * data[:, 8:]).ravel()
        radius = np.array([math.sqrt(-2 * math.log(u)) for u in u1])
        n1 = (radius * np.array([math.cos(t) for t in theta.tolist()])).reshape(-1, 8)
        n2 = (radius * np.array([math.sin(t) for t in theta.tolist()])).reshape(-1, 8)
    opmath = data.dtype.type                                     # mean and std in opmath_t
    return fma(np.concatenate([n1, n2], axis=1), opmath(std), opmath(mean), data.dtype)
