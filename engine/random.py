"""PyTorch's CPU random numbers, to the bit: `at::CPUGeneratorImpl` and the CPU sampling kernels.

A `Generator` is one program run's default generator; the samplers draw from it in PyTorch's
order and round as its x86-64 kernels round, to PyTorch 2.13's bits (tests/test_random.py).

Note [CPU capability]
These are the kernels PyTorch runs on x86-64 with AVX2 or AVX512 (the same ones: normal_stub is
never dispatched to AVX512, native/cpu/DistributionKernels.cpp). They are built with FMA, and
GCC fuses `a * b + c` wherever it can (float32 uniform_(-0.37, 1.9) matched in 67% of elements
without `fma`, in all with it). ATEN_CPU_CAPABILITY=default (no FMA; glibc's logf, cosf, sinf),
ARM, and bernoulli_(p) on Intel CPUs (MKL) draw the same uniforms but give other values.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from engine.errors import INT64_OVERFLOW, TorchError

DEFAULT_RNG_SEED: Final = 67280421310721          # c10::default_rng_seed_val
UINT64_MASK: Final = (1 << 64) - 1
FLOAT32: Final = np.dtype(np.float32)
FLOAT64: Final = np.dtype(np.float64)
INT64: Final = np.dtype(np.int64)
F32: Final = np.float32

Shape = tuple[int, ...]
Array = npt.NDArray[np.generic]
Floats = npt.NDArray[np.floating]


class Generator:
    """at::CPUGeneratorImpl (ATen/CPUGeneratorImpl.cpp): an mt19937 and the cached Box-Muller
    sample. numpy's MT19937 is the same engine, seeded here as PyTorch seeds it."""

    def __init__(self, seed: int = DEFAULT_RNG_SEED) -> None:
        self._engine = np.random.MT19937()
        # normal_distribution<double> caches here; no CPU kernel uses the float one.
        self.next_double_normal_sample: float | None = None
        self.next_float_normal_sample: float | None = None
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> Generator:
        """torch.manual_seed: any int in [-2**63, 2**64); a negative one is the uint64 with its
        bits (-1 is 2**64 - 1). Reseeding forgets the cached normal samples."""
        if not -(1 << 63) <= seed <= UINT64_MASK:
            raise TorchError("ValueError", INT64_OVERFLOW)
        self._seed = seed & UINT64_MASK
        self.next_double_normal_sample = self.next_float_normal_sample = None
        # at::mt19937(seed)'s init_with_uint32 (ATen/core/MT19937RNGEngine.h) on 32 bits of
        # it: state[0] = seed, state[j] = 1812433253 * (state[j-1] ^ (state[j-1] >> 30)) + j,
        # the next draw twisting first. numpy's legacy seeding (RandomState's) is that same
        # init_genrand, in C; see Note [Seeding in C].
        self._engine._legacy_seeding(self._seed & 0xFFFFFFFF)
        return self

    def initial_seed(self) -> int:
        return self._seed

    def random(self, n: int = 1) -> npt.NDArray[np.uint64]:
        """What the next n calls of PyTorch's `random()` return: one 32-bit draw each."""
        return np.asarray(self._engine.random_raw(n), dtype=np.uint64)

    def random64(self, n: int = 1) -> npt.NDArray[np.uint64]:
        """What n calls of `random64()` return: two draws each, the first the high word."""
        pairs = self.random(2 * n)
        return (pairs[0::2] << np.uint64(32)) | pairs[1::2]


# Note [Seeding in C]
# The recurrence above, written out in Python, took 0.4 ms a seeding, twice a run for a
# program that calls torch.manual_seed (the fresh seed first), 7% of bench/programs.py's
# 200-step MLP trace (callgrind, compiled: 26 of 357 million instructions). numpy's
# `_legacy_seeding` runs it in C (2 us); tests/test_random.py holds it to the recurrence.


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


def uniform_real(gen: Generator, n: int, dtype: np.dtype[np.floating]) -> Floats:
    """n draws of uniform_real_distribution<T>(0, 1) (ATen/core/TransformationHelper.h): a
    float32 keeps 24 bits of `random()`, a float64 53 bits of `random64()`, times 2**-digits."""
    if dtype == FLOAT32:
        return (gen.random(n) & np.uint64(0xFFFFFF)).astype(np.float32) * F32(2.0 ** -24)
    return (gen.random64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53


def normal_distribution(gen: Generator, mean: float, std: float) -> float:
    """One normal_distribution<double> draw (ATen/core/DistributionsHelper.h): Box-Muller on two
    uniforms; the sine half is cached and returned, without drawing, by the next call."""
    cached = gen.next_double_normal_sample
    if cached is not None:
        gen.next_double_normal_sample = None
        return float(fma(cached, std, mean, FLOAT64))
    u1, u2 = uniform_real(gen, 2, FLOAT64).tolist()
    r, theta = math.sqrt(-2.0 * math.log1p(-u2)), 2.0 * math.pi * u1
    gen.next_double_normal_sample = r * math.sin(theta)
    return float(fma(r * math.cos(theta), std, mean, FLOAT64))


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
# The compiled build also compiles random_kernels.c beside this file: normal_fill_16's
# float32 rows, log256_ps and sincos256_ps included, operation for operation, an element at
# a time, with C's own fmaf for each `fma(..., FLOAT32)` here (both round once).
# The Python is some 400 numpy operations (21 `fma`s of about 18) whatever the rows:
# MEASURED (best of 40 x 100, pure build, numpy 2.4): normal_fill_16 on 48 rows of 16
# float32 uniforms (768 samples, a program's three randn calls) took 355 us in Python and
# 4.4 us in C (15 us where fmaf is glibc's call), on one row 265 us and 0.5 us; a program's
# three calls, each with its tail row, had cost about 1.5 ms in the compiled build.
# The pure build, and float64, take the Python below; tests/test_random_kernels.py checks
# the two against each other.


def _random_kernels() -> Any:
    """The compiled build's C normal_fill_16 (Note [Normal samples in C]), or None."""
    try:
        import engine.random_kernels as random_kernels  # type: ignore[import-not-found]
    except ImportError:
        return None
    return random_kernels


NATIVE: Final[Any] = _random_kernels()


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


def normal_fill(gen: Generator, n: int, mean: float, std: float, dtype: np.dtype[np.floating]
                ) -> Floats:
    """normal_fill: n uniforms, Box-Muller on each block of 16, then 16 fresh uniforms for the
    last 16 elements if n is no multiple of 16 (overwriting some already done)."""
    out = uniform_real(gen, n, dtype)
    whole = n // 16 * 16
    out[:whole] = normal_fill_16(out[:whole].reshape(-1, 16), mean, std).ravel()
    if n % 16:
        out[n - 16:] = normal_fill_16(uniform_real(gen, 16, dtype).reshape(1, 16), mean, std)[0]
    return out


def _floating(dtype: npt.DTypeLike, kernel: str) -> np.dtype[np.floating]:
    """The dtype, if AT_DISPATCH_FLOATING_TYPES takes it; else PyTorch's NotImplementedError."""
    dt = np.dtype(dtype)
    if dt in (FLOAT32, FLOAT64):
        return FLOAT32 if dt == FLOAT32 else FLOAT64
    name = {"int64": "Long", "bool": "Bool"}.get(dt.name, dt.name)
    raise TorchError("NotImplementedError", f'"{kernel}" not implemented for \'{name}\'')


def normal_(gen: Generator, shape: Shape, mean: float = 0.0, std: float = 1.0,
            dtype: npt.DTypeLike = FLOAT32) -> Array:
    """Tensor.normal_ (native/cpu/DistributionTemplates.h's normal_kernel): normal_fill for 16
    or more elements, else one normal_distribution<double> draw each, cast to the dtype."""
    if not std >= 0.0:
        raise TorchError("RuntimeError", f"normal expects std >= 0.0, but found std {std:g}")
    dt, n = _floating(dtype, "normal_kernel_cpu"), math.prod(shape)
    if n >= 16:
        return normal_fill(gen, n, mean, std, dt).reshape(shape)
    values = np.array([normal_distribution(gen, mean, std) for _ in range(n)], dtype=np.float64)
    return values.astype(dt).reshape(shape)


def randn(gen: Generator, shape: Shape, dtype: npt.DTypeLike = FLOAT32) -> Array:
    return normal_(gen, shape, 0.0, 1.0, dtype)                 # at::empty(size).normal_(0, 1)


def uniform_(gen: Generator, shape: Shape, low: float = 0.0, high: float = 1.0,
             dtype: npt.DTypeLike = FLOAT32) -> Array:
    """Tensor.uniform_: per element `x * (to - from) + from` in the dtype, one fma (Note [CPU
    capability]); a value that rounds up to `to` becomes `from`."""
    dt = _floating(dtype, "check_uniform_bounds")
    if not low <= high:
        raise TorchError("RuntimeError", "uniform_ expects to return a [from, to) range, "
                         f"but found from={low:g} > to={high:g}")
    start, stop = dt.type(low), dt.type(high)
    value = fma(uniform_real(gen, math.prod(shape), dt), stop - start, start, dt)
    return np.where(value == stop, start, value).astype(dt).reshape(shape)


def rand(gen: Generator, shape: Shape, dtype: npt.DTypeLike = FLOAT32) -> Array:
    return uniform_(gen, shape, 0.0, 1.0, dtype)                # at::empty(size).uniform_(0, 1)


def _update_bound(bound: int, step: int, dt: np.dtype[np.generic]) -> int:
    """update_from (step 1), update_to (-1): move a bound a float cannot hold inward."""
    near = int(dt.type(bound + step))
    if not (near < bound if step > 0 else near >= bound):
        return bound
    return near + step * (1 << (abs(bound + step).bit_length() - (24 if dt == FLOAT32 else 53)))


def random_(gen: Generator, shape: Shape, dtype: npt.DTypeLike = INT64, low: int = 0,
            high: int | None = None) -> Array:
    """Tensor.random_(low, high) (native/DistributionTemplates.h): `random() % range + low`, or
    random64() for a range of 2**28 or more. random_() draws as random_(0, None) does."""
    dt, n, floating = np.dtype(dtype), math.prod(shape), np.dtype(dtype).kind == "f"
    if high is not None:
        if low >= high:
            raise TorchError("RuntimeError", "random_ expects 'from' to be less than 'to', "
                             f"but got from={low} >= to={high}")
        if floating:
            low, high = _update_bound(low, 1, dt), _update_bound(high, -1, dt)
        span = high - low
    elif low == -(1 << 63):
        return gen.random64(n).view(np.int64).astype(dt).reshape(shape)
    else:
        top = 1 << (24 if dt == FLOAT32 else 53) if floating else int(np.iinfo(dt).max)
        low = _update_bound(low, 1, dt) if floating else low
        if floating and low >= top:
            raise TorchError("RuntimeError", "random_ expects 'from' casted to dtype to be less "
                             "than or equal to 'to_inc' casted to dtype, but got "
                             f"from={low} > to_inc={top}")
        span = top - low + 1
    draws = gen.random64(n) if span >= 1 << 28 else gen.random(n)
    values = draws % np.uint64(span) + np.uint64(low & UINT64_MASK)
    return values.view(np.int64).astype(dt).reshape(shape)


def randint(gen: Generator, low: int, high: int, shape: Shape,
            dtype: npt.DTypeLike = INT64) -> Array:
    return random_(gen, shape, dtype, low, high)                # at::empty(size).random_(low, high)


def randperm(gen: Generator, n: int) -> npt.NDArray[np.int64]:
    """randperm_cpu (native/TensorFactories.cpp) for n below 2**32 / 20, as the lab's tensors
    are: for each i, swap element i with element i + random() % (n - i)."""
    perm = list(range(n))
    offsets = gen.random(max(n - 1, 0)) % np.arange(n, 1, -1, dtype=np.uint64)
    for i, z in enumerate(offsets.tolist()):
        perm[i], perm[i + z] = perm[i + z], perm[i]
    return np.array(perm, dtype=np.int64)


def bernoulli_(gen: Generator, shape: Shape, p: float, dtype: npt.DTypeLike = FLOAT32) -> Array:
    """Tensor.bernoulli_(p), which F.dropout draws its mask from: one uniform double per
    element, 1 where it is below p (the kernel without MKL; Note [CPU capability])."""
    if not 0 <= p <= 1:
        raise TorchError("RuntimeError", f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return (uniform_real(gen, math.prod(shape), FLOAT64) < p).astype(dtype).reshape(shape)
