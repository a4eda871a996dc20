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
from typing import Final

import numpy as np
import numpy.typing as npt

from engine.errors import INT64_OVERFLOW, TorchError
from engine.normal_kernel import fma, normal_fill_16

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
