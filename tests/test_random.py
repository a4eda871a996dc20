"""engine/random.py draws PyTorch's CPU random numbers to the bit.

The tests marked `torch` compare every sampler with live PyTorch over hundreds of seeds, every
size from 1 to 40 (both sides of normal_fill's 16) and a few large ones, 0-d to 3-d shapes,
both float dtypes, and mixed sequences after one seed, bit for bit. The others need no torch:
the engine against the C++ standard's mt19937 value, determinism, shapes and dtypes, the cached
normal sample, and `fma` against exact rational arithmetic.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import normal_kernel
from engine import random as rnd
from engine.context import fresh_seed
from engine.errors import INT64_OVERFLOW, TorchError

DTYPES = ("float32", "float64")
SIZES = (*range(1, 41), 255, 1000, 4099)


def same_bits(ours: Any, theirs: Any) -> bool:
    """Equal dtype, shape and raw bytes: float32 values identical, not close."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    return bool(ours.dtype == theirs.dtype and ours.shape == theirs.shape
                and ours.tobytes() == theirs.tobytes())


def intel_cpu() -> bool:
    cpuinfo = Path("/proc/cpuinfo")
    return cpuinfo.exists() and "GenuineIntel" in cpuinfo.read_text(encoding="utf-8")


# --- without torch -------------------------------------------------------------------------

def test_engine_is_the_standard_mt19937() -> None:
    """C++ [rand.predef]: the 10000th draw of mt19937 seeded with 5489 is 4123659995."""
    assert int(rnd.Generator(5489).random(10_000)[-1]) == 4123659995


@pytest.mark.parametrize("seed", [0, 1, 5489, 2**31, 2**32 - 1])
def test_seeding_is_pytorchs_init_with_uint32(seed: int) -> None:
    """Note [Seeding in C]: the state numpy's legacy seeding makes is the recurrence of
    at::mt19937's init_with_uint32, with the next draw twisting first (pos 624)."""
    state = [seed]
    for j in range(1, 624):
        state.append((1812433253 * (state[-1] ^ (state[-1] >> 30)) + j) & 0xFFFFFFFF)
    engine = rnd.Generator(seed)._engine.state["state"]
    assert engine["key"].tolist() == state and engine["pos"] == 624


def test_the_engine_sees_32_bits_of_the_seed_the_generator_keeps_64() -> None:
    low, high = rnd.Generator(5), rnd.Generator(2**32 + 5)
    assert np.array_equal(low.random(700), high.random(700))
    assert (low.initial_seed(), high.initial_seed()) == (5, 2**32 + 5)


def test_negative_seeds_are_their_uint64_bits() -> None:
    assert rnd.Generator(-1).initial_seed() == 2**64 - 1
    assert np.array_equal(rnd.Generator(-(2**63)).random(5), rnd.Generator(2**63).random(5))


@pytest.mark.parametrize("seed", [2**64, -(2**63) - 1, 10**30])
def test_out_of_range_seeds_raise_pytorchs_value_error(seed: int) -> None:
    with pytest.raises(TorchError) as raised:
        rnd.Generator().manual_seed(seed)
    assert (raised.value.type_name, raised.value.message) == ("ValueError", INT64_OVERFLOW)


def test_random64_is_two_draws_high_word_first() -> None:
    hi, lo = (int(v) for v in rnd.Generator(9).random(2))
    assert int(rnd.Generator(9).random64()[0]) == (hi << 32) | lo


SAMPLERS: dict[str, Callable[[rnd.Generator, tuple[int, ...], str], np.ndarray[Any, Any]]] = {
    "randn": lambda g, s, d: rnd.randn(g, s, d),
    "rand": lambda g, s, d: rnd.rand(g, s, d),
    "normal_": lambda g, s, d: rnd.normal_(g, s, 1.5, 0.25, d),
    "uniform_": lambda g, s, d: rnd.uniform_(g, s, -2.0, 3.0, d),
    "random_": lambda g, s, d: rnd.random_(g, s, d, -3, 9),
    "bernoulli_": lambda g, s, d: rnd.bernoulli_(g, s, 0.5, d),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
@pytest.mark.parametrize("shape", [(), (1,), (7,), (4, 5), (2, 3, 4), (3, 0)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_samplers_are_deterministic_and_shaped(name: str, shape: tuple[int, ...],
                                               dtype: str) -> None:
    first = SAMPLERS[name](rnd.Generator(11), shape, dtype)
    assert first.shape == shape and first.dtype == np.dtype(dtype)
    assert same_bits(first, SAMPLERS[name](rnd.Generator(11), shape, dtype))


def test_integer_samplers_give_int64() -> None:
    g = rnd.Generator(3)
    assert rnd.randint(g, 0, 10, (2, 2)).dtype == np.int64
    assert rnd.random_(g, (3,)).dtype == np.int64
    assert sorted(rnd.randperm(g, 9).tolist()) == list(range(9))


def test_empty_tensors_draw_nothing() -> None:
    g = rnd.Generator(4)
    for sample in (rnd.randn, rnd.rand):
        sample(g, (0, 3))
    rnd.randint(g, 0, 5, (0,))
    rnd.bernoulli_(g, (0,), 0.5)
    rnd.randperm(g, 1)
    assert np.array_equal(g.random(10), rnd.Generator(4).random(10))


def test_a_small_randn_caches_its_sine_half_for_the_next_call() -> None:
    """One Box-Muller pair (two random64, four draws) gives two samples: the second randn(1)
    takes the cached one and draws nothing."""
    g = rnd.Generator(7)
    first, second = rnd.randn(g, (1,), "float64"), rnd.randn(g, (1,), "float64")
    pair = rnd.randn(rnd.Generator(7), (2,), "float64")
    assert same_bits(np.concatenate([first, second]), pair)
    reference = rnd.Generator(7)
    reference.random(4)
    assert np.array_equal(g.random(3), reference.random(3))


def test_reseeding_forgets_the_cached_normal_sample() -> None:
    g = rnd.Generator(1)
    rnd.randn(g, (3,))
    assert g.next_double_normal_sample is not None
    g.manual_seed(1)
    assert g.next_double_normal_sample is None and g.next_float_normal_sample is None
    assert same_bits(rnd.randn(g, (5,)), rnd.randn(rnd.Generator(1), (5,)))


def test_a_fresh_generator_tells_its_53_bit_seed() -> None:
    first, second = rnd.Generator(fresh_seed()), rnd.Generator(fresh_seed())
    assert first.initial_seed() != second.initial_seed()     # 2**-53 chance of a false alarm
    assert 0 <= first.initial_seed() < 2**53
    replay = rnd.Generator(first.initial_seed())
    assert same_bits(rnd.randn(first, (20,)), rnd.randn(replay, (20,)))


def exact_fma(a: float, b: float, c: float, dtype: str) -> float:
    """a * b + c in rationals, rounded once to the nearest float of dtype (ties to even)."""
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if dtype == "float64":
        return float(exact)                                  # int / int rounds correctly
    near = np.float32(float(exact))
    candidates = [np.nextafter(near, np.float32(-np.inf)), near,
                  np.nextafter(near, np.float32(np.inf))]
    return float(min(candidates, key=lambda v: (abs(Fraction(float(v)) - exact),
                                                 int(v.view(np.uint32)) & 1)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fma_rounds_once(dtype: str) -> None:
    """Against exact rational arithmetic, on products and sums of unlike magnitudes."""
    rng = np.random.default_rng(5)
    n = 20_000
    a = rng.random(n).astype(dtype)
    b = (rng.normal(size=n) * rng.choice([1.0, 1e-3, 7.0, 1e3], n)).astype(dtype)
    c = (rng.normal(size=n) * rng.choice([1.0, 1e-7, 0.5, 1e7], n)).astype(dtype)
    got = normal_kernel.fma(a, b, c, np.dtype(dtype))
    wanted = np.array([exact_fma(x, y, z, dtype) for x, y, z in
                       zip(a.tolist(), b.tolist(), c.tolist(), strict=True)], dtype=dtype)
    assert same_bits(got, wanted)
    assert not same_bits(a * b + c, wanted), "the inputs never tell fma from a * b + c"


def test_value_checks_raise_before_drawing() -> None:
    g = rnd.Generator(0)
    calls: list[Callable[[], Any]] = [
        partial(rnd.normal_, g, (2,), 0.0, -1.0), partial(rnd.uniform_, g, (2,), 1.0, 0.0),
        partial(rnd.bernoulli_, g, (2,), 1.5), partial(rnd.randint, g, 5, 5, (2,)),
        partial(rnd.randn, g, (2,), "int64")]
    for call in calls:
        with pytest.raises(TorchError):
            call()
    assert np.array_equal(g.random(4), rnd.Generator(0).random(4))


# --- against live PyTorch ------------------------------------------------------------------

def mismatches(torch: Any, seeds: range, ours: Callable[[rnd.Generator], Any],
               theirs: Callable[[], Any]) -> list[int]:
    """The seeds after which our draw and PyTorch's differ in any bit."""
    bad = []
    for seed in seeds:
        torch.manual_seed(seed)
        if not same_bits(ours(rnd.Generator(seed)), theirs().numpy()):
            bad.append(seed)
    return bad


def filled(torch: Any, shape: Any, dtype: str, method: str, *args: Any) -> Callable[[], Any]:
    """A call of PyTorch's in-place sampler `method` on a new tensor."""
    return lambda: getattr(torch.empty(shape, dtype=getattr(torch, dtype)), method)(*args)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", DTYPES)
def test_randn_and_rand_every_size(torch_avx2: Any, dtype: str) -> None:
    """Sizes 1 to 40 take the scalar path below 16 and normal_fill (with its recomputed tail)
    from 16 on; six seeds per size, 258 seeds in all."""
    torch, tdt = torch_avx2, getattr(torch_avx2, dtype)
    bad = {}
    for size in SIZES:
        seeds = range(size * 6, size * 6 + 6)
        for ours, theirs in ((rnd.randn, torch.randn), (rnd.rand, torch.rand)):
            if found := mismatches(torch, seeds, partial(ours, shape=(size,), dtype=dtype),
                                   partial(theirs, size, dtype=tdt)):
                bad[(theirs.__name__, size)] = found
    assert not bad


@pytest.mark.torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (3, 4), (4, 4), (5, 7), (16, 3), (2, 3, 4), (7, 9, 11)])
def test_shapes_draw_as_their_number_of_elements(torch_avx2: Any, dtype: str,
                                                 shape: tuple[int, ...]) -> None:
    torch, tdt = torch_avx2, getattr(torch_avx2, dtype)
    assert not mismatches(torch, range(40), lambda g: rnd.randn(g, shape, dtype),
                          lambda: torch.randn(shape, dtype=tdt))
    assert not mismatches(torch, range(40), lambda g: rnd.rand(g, shape, dtype),
                          lambda: torch.rand(shape, dtype=tdt))


@pytest.mark.torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("mean", "std"), [(0.5, 2.5), (-3.0, 0.01), (100.0, 7.0), (0.0, 0.0)])
def test_normal_with_mean_and_std(torch_avx2: Any, dtype: str, mean: float, std: float) -> None:
    for size in (1, 5, 15, 16, 17, 33, 1000):
        ours = partial(rnd.normal_, shape=(size,), mean=mean, std=std, dtype=dtype)
        theirs = filled(torch_avx2, size, dtype, "normal_", mean, std)
        assert not mismatches(torch_avx2, range(30), ours, theirs)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("low", "high"), [(-0.37, 1.9), (-0.5773502691896258, 0.5773502691896258),
                                           (3.0, 7.5), (-1e-3, 5e4), (2.0, 2.0), (-1e30, 1e30)])
def test_uniform_with_bounds(torch_avx2: Any, dtype: str, low: float, high: float) -> None:
    torch, tdt = torch_avx2, getattr(torch_avx2, dtype)
    assert not mismatches(torch, range(60), lambda g: rnd.uniform_(g, (257,), low, high, dtype),
                          lambda: torch.empty(257, dtype=tdt).uniform_(low, high))


@pytest.mark.torch
@pytest.mark.parametrize(("low", "high"), [(0, 10), (-5, 17), (0, 2**28 - 1), (0, 2**28),
                                           (-2**62, 2**62), (-2**63, 2**63 - 1), (7, 8)])
def test_randint(torch: Any, low: int, high: int) -> None:
    for size in (1, 2, 17, 500):
        assert not mismatches(torch, range(40), partial(rnd.randint, low=low, high=high,
                                                        shape=(size,)),
                              partial(torch.randint, low, high, (size,)))


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:.*is out of bounds")
@pytest.mark.parametrize("dtype", [*DTYPES, "int64"])
@pytest.mark.parametrize(("low", "high"), [(0, None), (-7, None), (3, 2**30), (-2**40, 2**40),
                                           (-2**63, None), (-(2**60) + 3, None),
                                           (2**53 - 5, 2**62)])
def test_random_with_and_without_bounds(torch: Any, dtype: str, low: int,
                                        high: int | None) -> None:
    """Bounds beyond 2**24 (float32) or 2**53 (float64) move inward as update_from/update_to
    move them (PyTorch warns that it cannot draw evenly there)."""
    tdt = getattr(torch, dtype)
    assert not mismatches(torch, range(40), lambda g: rnd.random_(g, (33,), dtype, low, high),
                          lambda: torch.empty(33, dtype=tdt).random_(low, high))


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [*DTYPES, "int64"])
def test_random_without_arguments(torch: Any, dtype: str) -> None:
    tdt = getattr(torch, dtype)
    assert not mismatches(torch, range(60), lambda g: rnd.random_(g, (2, 9), dtype),
                          lambda: torch.empty((2, 9), dtype=tdt).random_())


@pytest.mark.torch
def test_randperm(torch: Any) -> None:
    for n in (*range(0, 41), 1000, 5000):
        assert not mismatches(torch, range(n, n + 5), partial(rnd.randperm, n=n),
                              partial(torch.randperm, n))


@pytest.mark.torch
@pytest.mark.skipif(intel_cpu(), reason="PyTorch draws bernoulli_(p) with MKL on Intel CPUs; "
                    "engine/random.py reproduces the kernel of other CPUs (Note [CPU capability])")
@pytest.mark.parametrize("dtype", DTYPES)
def test_bernoulli_as_dropout_draws_it(torch: Any, dtype: str) -> None:
    for p in (0.0, 0.2, 0.5, 0.9, 1.0):
        ours = partial(rnd.bernoulli_, shape=(6, 7), p=p, dtype=dtype)
        assert not mismatches(torch, range(40), ours, filled(torch, (6, 7), dtype, "bernoulli_", p))


@pytest.mark.torch
@pytest.mark.parametrize("seed", [0, 1, -1, -5, 2**32, 2**32 + 7, 2**63, -(2**63), 2**64 - 1,
                                  12345678901234567])
def test_any_seed_pytorch_takes(torch_avx2: Any, seed: int) -> None:
    torch = torch_avx2
    torch.manual_seed(seed)
    theirs = (torch.initial_seed(), torch.randn(3, 5).numpy())
    g = rnd.Generator(seed)
    assert g.initial_seed() == theirs[0] and same_bits(rnd.randn(g, (3, 5)), theirs[1])


def mixed_program(step: int) -> list[tuple[Callable[[rnd.Generator], Any], Callable[[Any], Any]]]:
    """A seeded program's calls, ours beside PyTorch's, varied by step."""
    n, d = 1 + step % 23, DTYPES[step % 2]
    return [
        (lambda g: rnd.randn(g, (n,), d), lambda t: t.randn(n, dtype=getattr(t, d))),
        (lambda g: rnd.rand(g, (2, n)), lambda t: t.rand(2, n)),
        (lambda g: rnd.randn(g, (3,), d), lambda t: t.randn(3, dtype=getattr(t, d))),
        (lambda g: rnd.randint(g, 0, n + 1, (n, 2)), lambda t: t.randint(0, n + 1, (n, 2))),
        (lambda g: rnd.randn(g, (), d), lambda t: t.randn((), dtype=getattr(t, d))),
        (lambda g: rnd.normal_(g, (4, n), 1.0, 0.5), lambda t: t.empty(4, n).normal_(1.0, 0.5)),
        (lambda g: rnd.randperm(g, n), lambda t: t.randperm(n)),
        (lambda g: rnd.uniform_(g, (n, 3), -1.0, 1.0, d),
         lambda t: t.empty(n, 3, dtype=getattr(t, d)).uniform_(-1.0, 1.0)),
        (lambda g: rnd.randn(g, (1,)), lambda t: t.randn(1)),
        (lambda g: rnd.random_(g, (5,)), lambda t: t.empty(5, dtype=t.int64).random_()),
        (lambda g: rnd.randn(g, (2, 2, 5), d), lambda t: t.randn(2, 2, 5, dtype=getattr(t, d))),
    ]


@pytest.mark.torch
def test_mixed_sequences_after_one_seed(torch_avx2: Any) -> None:
    """randn, rand, randint, randperm ... one after another: the draws and the cached normal
    sample carry over from call to call as in PyTorch."""
    torch, bad = torch_avx2, []
    for seed in range(200):
        torch.manual_seed(seed)
        g = rnd.Generator(seed)
        for i, (ours, theirs) in enumerate(mixed_program(seed)):
            if not same_bits(ours(g), theirs(torch).numpy()):
                bad.append((seed, i))
    assert not bad


BAD_CALLS: list[tuple[Callable[[rnd.Generator], Any], Callable[[Any], Any]]] = [
    (lambda g: rnd.normal_(g, (3,), 0.0, -1.5), lambda t: t.empty(3).normal_(0, -1.5)),
    (lambda g: rnd.normal_(g, (0,), 0.0, -1.0), lambda t: t.empty(0).normal_(0, -1)),
    (lambda g: rnd.uniform_(g, (3,), 1.0, 0.0), lambda t: t.empty(3).uniform_(1, 0)),
    (lambda g: rnd.uniform_(g, (3,), 0.5, 0.25), lambda t: t.empty(3).uniform_(0.5, 0.25)),
    (lambda g: rnd.bernoulli_(g, (3,), 1.5), lambda t: t.empty(3).bernoulli_(1.5)),
    (lambda g: rnd.randint(g, 5, 5, (3,)), lambda t: t.randint(5, 5, (3,))),
    (lambda g: rnd.random_(g, (3,), "float32", 3, 2), lambda t: t.empty(3).random_(3, 2)),
    (lambda g: rnd.random_(g, (3,), "float32", 2**30), lambda t: t.empty(3).random_(2**30, None)),
    (lambda g: rnd.randn(g, (2,), "int64"), lambda t: t.randn(2, dtype=t.int64)),
    (lambda g: rnd.rand(g, (2,), "int64"), lambda t: t.rand(2, dtype=t.int64)),
    (lambda g: g.manual_seed(2**64), lambda t: t.manual_seed(2**64)),
]


@pytest.mark.torch
@pytest.mark.parametrize("index", range(len(BAD_CALLS)))
def test_errors_are_pytorchs_word_for_word(torch: Any, index: int) -> None:
    ours, theirs = BAD_CALLS[index]
    with pytest.raises(Exception) as expected:
        theirs(torch)
    with pytest.raises(TorchError) as raised:
        ours(rnd.Generator())
    assert raised.value.type_name == type(expected.value).__name__
    assert raised.value.message == str(expected.value)


PROBE = """
import json, torch
fresh = (torch.initial_seed(), torch.randn(7).tolist())
seeded = {}
for seed in range(5):
    torch.manual_seed(seed)
    seeded[seed] = torch.randn(999).numpy().tobytes().hex()
print(json.dumps([torch.backends.cpu.get_cpu_capability(), fresh, seeded]))
"""


@pytest.fixture(scope="module")
def avx2_process(torch: Any) -> Any:
    """A fresh PyTorch process held to its AVX2 kernels, as on a CPU without AVX512."""
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "avx2"}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         env=env, timeout=120, check=True)
    capability, fresh, seeded = json.loads(out.stdout)
    if capability != "AVX2":
        pytest.skip(f"this CPU cannot run PyTorch's AVX2 kernels (it ran {capability})")
    return fresh, seeded


@pytest.mark.torch
def test_a_fresh_process_draws_from_the_seed_it_reports(avx2_process: Any) -> None:
    (seed, values), _ = avx2_process
    assert rnd.randn(rnd.Generator(seed), (7,)).tolist() == values


@pytest.mark.torch
def test_avx2_kernels_draw_what_avx512_ones_do(avx2_process: Any) -> None:
    _, seeded = avx2_process
    for seed, hexed in seeded.items():
        assert rnd.randn(rnd.Generator(int(seed)), (999,)).tobytes().hex() == hexed
