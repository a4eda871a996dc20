"""The compiled build's float32 normal_fill_16 in C (engine/normal_kernel.py, Note [Normal
samples in C]) gives the Python's bits, row by row and randn by randn; the pure build has no C
and skips these.

The Python path is engine/normal_kernel.py (and engine/random.py, which draws with it) loaded
afresh as modules of their own with NATIVE None: in the compiled build both are compiled, and
their NATIVE cannot be patched away."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from engine import normal_kernel
from engine import random as rnd
from engine.normal_kernel import normal_fill_16 as fill

NATIVE: Any = getattr(normal_kernel, "NATIVE", None)
pytestmark = pytest.mark.skipif(NATIVE is None,
                                reason="this build has no C normal_fill_16 (the pure build)")

MEAN_STD = [(0.0, 1.0), (0.5, 2.0), (-3.0, 1e-3), (1e3, 7.5)]


def _load(name: str) -> ModuleType:
    """engine/<name>.py as a module of its own, as the pure build runs it."""
    spec = importlib.util.spec_from_file_location(f"{name}_in_python",
                                                  Path(rnd.__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pure() -> ModuleType:
    """engine/random.py drawing with engine/normal_kernel.py's Python normal_fill_16."""
    kernel, random = _load("normal_kernel"), _load("random")
    setattr(kernel, "NATIVE", None)  # noqa: B010  (modules the type checker does not know)
    setattr(random, "normal_fill_16", kernel.normal_fill_16)  # noqa: B010
    return random


def _uniforms(seed: int, rows: int) -> np.ndarray:
    """Float32 uniforms as uniform_real makes them, k * 2**-24 for k in [0, 2**24): random
    ones and, in each half of some rows, 0 and the values nearest 1 and 1/2."""
    rng = np.random.default_rng(seed)
    k = rng.integers(0, 1 << 24, (rows, 16))
    ends = [0, 1, 2, (1 << 23) - 1, 1 << 23, (1 << 24) - 2, (1 << 24) - 1]
    for i, end in enumerate(ends[:rows]):
        k[i, rng.integers(0, 8)] = end
        k[i, 8 + rng.integers(0, 8)] = end
    return (k.astype(np.float32) * np.float32(2.0 ** -24)).astype(np.float32)


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize(("mean", "std"), MEAN_STD)
def test_the_c_rows_are_the_pythons_to_the_bit(pure: ModuleType, mean: float,
                                               std: float) -> None:
    for seed in range(40):
        data = _uniforms(seed, 1 + seed % 7 * 50)
        got, want = fill(data, mean, std), pure.normal_fill_16(data, mean, std)
        assert got.dtype == want.dtype == np.float32
        assert _bits(got) == _bits(want), seed


def test_a_stride_through_all_uniforms(pure: ModuleType) -> None:
    """Every 37th run of 8 of the 2**24 uniforms, as radii and (reversed) as angles."""
    k = np.arange(1 << 24, dtype=np.int64).reshape(-1, 8)[::37]
    k = np.concatenate([k, k[::-1]], axis=1)
    data = (k.astype(np.float32) * np.float32(2.0 ** -24)).astype(np.float32)
    assert _bits(fill(data, 0.0, 1.0)) == _bits(pure.normal_fill_16(data, 0.0, 1.0))


def test_the_c_reads_any_layout_of_rows(pure: ModuleType) -> None:
    data = np.asfortranarray(_uniforms(3, 20))
    assert _bits(fill(data, 0.0, 1.0)) == _bits(pure.normal_fill_16(data, 0.0, 1.0))
    wide = _uniforms(4, 30).reshape(10, 48)[:, 16:32]                  # strided rows
    assert _bits(fill(wide, 0.0, 1.0)) == _bits(pure.normal_fill_16(wide, 0.0, 1.0))


SIZES = [1, 2, 7, 15, 16, 17, 31, 32, 33, 48, 100, 256, 1000, 4099]


@pytest.mark.parametrize("size", SIZES)
def test_randn_with_the_c_is_randn_without(pure: ModuleType, size: int) -> None:
    for seed in [0, 1, 2, 42, 67280421310721, 2**32 - 1, -(2**63), 2**64 - 1]:
        for shape in [(size,), (1, size), (size, 1)]:
            got = rnd.randn(rnd.Generator(seed), shape)
            want = pure.randn(pure.Generator(seed), shape)
            assert got.shape == want.shape == shape
            assert got.dtype == want.dtype == np.float32
            assert _bits(got) == _bits(want), (seed, shape)


@pytest.mark.parametrize(("mean", "std"), MEAN_STD)
def test_normal_with_the_c_is_normal_without(pure: ModuleType, mean: float,
                                             std: float) -> None:
    for seed in range(10):
        for shape in [(3, 16), (5, 7), (64,), (2, 3, 11)]:
            got = rnd.normal_(rnd.Generator(seed), shape, mean, std)
            want = pure.normal_(pure.Generator(seed), shape, mean, std)
            assert _bits(got) == _bits(want), (seed, shape)


def test_float64_takes_the_python(pure: ModuleType) -> None:
    data = _uniforms(5, 4).astype(np.float64)
    assert _bits(fill(data, 0.0, 1.0)) == _bits(pure.normal_fill_16(data, 0.0, 1.0))


def test_misuse_is_an_error_not_a_crash() -> None:
    rows, out = np.zeros((2, 16), np.float32), np.zeros((2, 16), np.float32)
    with pytest.raises(ValueError):
        NATIVE.normal_fill_16(rows, np.zeros((1, 16), np.float32), 0.0, 1.0)
    with pytest.raises(ValueError):
        NATIVE.normal_fill_16(rows[:, :15].copy(), out[:, :15].copy(), 0.0, 1.0)
    with pytest.raises(TypeError):
        NATIVE.normal_fill_16(rows.astype(np.float64), out, 0.0, 1.0)
    with pytest.raises(TypeError):
        NATIVE.normal_fill_16(rows, out.astype(np.float64), 0.0, 1.0)
    with pytest.raises((TypeError, ValueError, BufferError)):
        NATIVE.normal_fill_16(rows.T, out, 0.0, 1.0)                      # not C-contiguous
    read_only = out.copy()
    read_only.flags.writeable = False
    with pytest.raises((TypeError, ValueError, BufferError)):
        NATIVE.normal_fill_16(rows, read_only, 0.0, 1.0)
    with pytest.raises(TypeError):
        NATIVE.normal_fill_16(rows, out, "0", 1.0)
    with pytest.raises(TypeError):
        NATIVE.normal_fill_16(rows, out, 0.0)
