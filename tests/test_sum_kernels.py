"""The compiled build's C sum loop (engine/functions/sum_kernels.c, summation.py Note [Sums
in C]) adds what summation.py's `_kernel` adds, in its order, to the bit: every loop of
the kernel, cascades of one to four levels, float32 and float64, any layout, zeros of both
signs, infinities, NaNs, huge and tiny values. The Python is summation.py read from the
sources and run as Python (the compiled build's own is mypyc's), once with the C taken
away and once with it. The pure build has no C loop and skips these."""

from __future__ import annotations

import importlib
import importlib.util
import itertools
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from engine.functions import summation


def _c_loop() -> Any:
    try:
        return importlib.import_module("engine.functions.sum_kernels")
    except ImportError:
        return None


C: Any = _c_loop()
pytestmark = pytest.mark.skipif(C is None, reason="this build has no C sum loop, "
                                "engine.functions.sum_kernels (the pure build)")
SOURCE = Path(__file__).resolve().parents[1] / "engine" / "functions" / "summation.py"
INTS = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}


def _from_the_sources(name: str, native: Any) -> ModuleType:
    """summation.py as Python, whatever the build, its NATIVE (the C, or None) set."""
    spec = importlib.util.spec_from_file_location(name, SOURCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    setattr(module, "NATIVE", native)  # noqa: B010
    return module


@pytest.fixture(autouse=True)
def _quietly() -> Iterator[None]:
    with np.errstate(all="ignore"):         # the overflows and NaNs are the point
        yield


@pytest.fixture(scope="module")
def in_python() -> ModuleType:
    return _from_the_sources("summation_in_python", None)


@pytest.fixture(scope="module")
def in_c() -> ModuleType:
    return _from_the_sources("summation_in_c", C)


def bits(values: np.ndarray) -> bytes:
    return np.ascontiguousarray(values).view(INTS[values.dtype]).tobytes()


def default_nan(dtype: type) -> np.floating:
    """The NaN the CPU makes (inf - inf): a sum's every NaN then has the same bits, whatever
    the order of two NaN operands (which NaN comes out is not the Python's to say: the Note)."""
    inf: np.ndarray = np.array(np.inf, dtype=dtype)
    with np.errstate(invalid="ignore"):
        nan: np.floating = (inf - inf)[()]
    return nan


def draw(rng: np.random.Generator, shape: tuple[int, ...], dtype: type,
         specials: float) -> np.ndarray:
    """Values whose sums depend on the order (many magnitudes, both signs, zeros of both
    signs), a `specials` share of them inf, -inf, NaN, huge (their sums overflow) or tiny
    (subnormal)."""
    info = np.finfo(dtype)
    pool = np.array([1e8, -1e8, 3.0, 0.1, -0.7, 1e-3, 2.5e4, -0.0, 0.0, 7.25, -1e-7])
    scaled = rng.choice(pool, size=shape) * rng.uniform(0.5, 2.0, size=shape)
    values: np.ndarray = scaled.astype(dtype)
    odd: np.ndarray = np.array([np.inf, -np.inf, default_nan(dtype), info.max / 3,
                                -info.max / 3, info.smallest_subnormal,
                                -3 * info.smallest_subnormal, -0.0], dtype=dtype)
    where = rng.random(shape) < specials
    values[where] = rng.choice(odd, size=int(where.sum()))
    return values


# rows: around a vector (4 doubles, 8 floats), four of them (the partial sums), a level
# (16), and enough for cascades of two to four levels down columns and rows
SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 70, 255, 256, 257, 300,
         1030, 4100, 8200]


def laid_out(rng: np.random.Generator, values: np.ndarray) -> np.ndarray:
    """values (n x m) as they are, transposed in memory, or a slice of a larger array."""
    how = rng.integers(3)
    if how == 1:
        return np.ascontiguousarray(values.T).T
    if how == 2:
        wide = np.zeros((values.shape[0], 2 * values.shape[1] + 1), dtype=values.dtype)
        wide[:, 1::2] = values
        return wide[:, 1::2]
    return values


def strides_for(rng: np.random.Generator, rows: np.ndarray) -> tuple[int, int]:
    """The strides that choose `_kernel`'s loop: those of rows or of other layouts, so that
    each of the four loops runs (and loops that read rows in another layout than theirs)."""
    n, m = rows.shape
    item = rows.dtype.itemsize
    choices = [rows.strides, (item, n * item), (m * item, item), (2 * item, 2 * n * item),
               (2 * m * item, 2 * item), (item, 0), (0, 0)]
    s0, s1 = choices[rng.integers(len(choices))]
    return int(s0), int(s1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_c_loop_is_the_pythons_to_the_bit(in_python: ModuleType, dtype: type) -> None:
    rng = np.random.default_rng(1 if dtype == np.float32 else 2)
    for case in range(1500):
        n = int(rng.choice(SIZES)) if case % 2 else int(rng.integers(0, 71))
        m = int(rng.integers(0, 71)) if n < 1000 else int(rng.integers(1, 9))
        specials = [0.0, 0.01, 0.3][case % 3]
        rows = laid_out(rng, draw(rng, (n, m), dtype, specials))
        strides = strides_for(rng, rows)
        want = in_python._kernel(rows, strides)
        got: np.ndarray = np.full(m, -0.0, dtype=dtype)  # -0.0 + s is s, to the bit
        C.kernel(rows, got, *strides)
        assert bits(got) == bits(want), (n, m, rows.strides, strides, specials)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_c_loop_adds_into_the_output(in_python: ModuleType, dtype: type) -> None:
    """out[j] = out[j] + sum j, out first, as `_loops` adds the sums into the output."""
    rng = np.random.default_rng(3)
    for n, m in [(8, 32), (8, 4), (40, 3), (3, 40), (300, 17)]:
        rows = draw(rng, (n, m), dtype, 0.05)
        out = draw(rng, (m,), dtype, 0.2)
        strides = (rows.strides[0], rows.strides[1])
        want = out + in_python._kernel(rows, strides)
        C.kernel(rows, out, *strides)
        assert bits(out) == bits(want)


def test_a_deep_cascade_is_the_pythons_to_the_bit(in_python: ModuleType) -> None:
    """More than 2**19 rows to one cascade: levels of 32 rows, four of them filled."""
    rng = np.random.default_rng(4)
    rows = draw(rng, (2**19 + 4099, 4), np.float32, 0.0)
    strides = (rows.strides[0], rows.strides[1])    # scalar_outer_sum: one cascade a column
    got = np.full(4, -0.0, dtype=np.float32)
    C.kernel(rows, got, *strides)
    assert bits(got) == bits(in_python._kernel(rows, strides))


def test_nans_of_the_input_stay_nans(in_python: ModuleType) -> None:
    """With the input's NaNs positive, where inf - inf makes a negative one, a sum may meet
    both: its bits are then the add instruction's operand order's (Note [Sums in C]); it is
    a NaN all the same, and every other sum is the Python's to the bit."""
    rng = np.random.default_rng(5)
    for case in range(300):
        dtype = np.float32 if case % 2 else np.float64
        n, m = int(rng.choice(SIZES[:-3])), int(rng.integers(1, 40))
        rows = draw(rng, (n, m), dtype, 0.1)
        rows[rng.random((n, m)) < 0.02] = np.nan
        strides = strides_for(rng, rows)
        got = np.full(m, -0.0, dtype=dtype)
        C.kernel(rows, got, *strides)
        want = in_python._kernel(rows, strides)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert bits(got[~np.isnan(got)]) == bits(want[~np.isnan(want)])


def every_choice_of_axes(ndim: int) -> list[tuple[int, ...]]:
    return [axes for r in range(ndim + 1) for axes in itertools.combinations(range(ndim), r)]


def arrays(rng: np.random.Generator, dtype: type) -> list[np.ndarray]:
    """1-d to 3-d arrays, contiguous, transposed and sliced."""
    shapes = [(5,), (16,), (33,), (300,), (8, 32), (8, 4), (8, 33), (3, 40), (70, 3),
              (16, 17), (9, 1), (1, 9), (64, 65), (257, 5), (4, 3, 40), (3, 9, 5), (2, 20, 3),
              (6, 4, 17), (1, 8, 1), (0, 4), (4, 0, 3)]
    out = []
    for shape in shapes:
        values = draw(rng, shape, dtype, 0.02)
        out.append(values)
        out.append(values.T)
        if values.ndim == 3:
            out.append(values.transpose(1, 2, 0))
        out.append(values[..., ::2])
        out.append(values[::-1])
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cascade_sum_in_c_is_the_pythons_to_the_bit(in_python: ModuleType, in_c: ModuleType,
                                                     dtype: type) -> None:
    """Every choice of axes, keepdim or not: the common layouts' one loop and TensorIterator's
    loops (`_loops`), the sources' cascade_sum with the C and without, and this build's."""
    rng = np.random.default_rng(6)
    for values in arrays(rng, dtype):
        for axes in every_choice_of_axes(values.ndim):
            for keepdims in (False, True):
                case = (values.shape, values.strides, axes, keepdims)
                want = in_python.cascade_sum(values, axes, keepdims)
                got = in_c.cascade_sum(values, axes, keepdims)
                built = summation.cascade_sum(values, axes, keepdims)
                assert got.shape == want.shape == built.shape, case
                assert got.dtype == want.dtype == built.dtype, case
                assert bits(got) == bits(want) == bits(built), case


def test_the_mlps_bias_gradients(in_python: ModuleType, in_c: ModuleType) -> None:
    """What bench's MLP sums every step (reduction.py `sum_to`): 8 x 32 and 8 x 4 over the
    batch, and a loss's every element; -0.0s sum to +0.0 (the output's initial 0)."""
    rng = np.random.default_rng(7)
    for shape in [(8, 32), (8, 4)]:
        g = draw(rng, shape, np.float32, 0.0)
        for axes, keepdims in [((0,), True), ((0,), False), ((0, 1), False)]:
            want = in_python.cascade_sum(g, axes, keepdims)
            assert bits(in_c.cascade_sum(g, axes, keepdims)) == bits(want)
        zeros = np.full(shape, -0.0, dtype=np.float32)
        assert not np.signbit(in_c.cascade_sum(zeros, (0,), True)).any()
        assert not np.signbit(in_c.cascade_sum(zeros, (0, 1), False))


def test_float16_stays_in_python(in_python: ModuleType, in_c: ModuleType) -> None:
    rng = np.random.default_rng(8)
    values = (rng.standard_normal((40, 12)) * 100).astype(np.float16)
    for axes in [(0,), (1,), (0, 1)]:
        want = in_python.cascade_sum(values, axes, False)
        assert in_c.cascade_sum(values, axes, False).tobytes() == want.tobytes()


def test_unaligned_and_read_only_inputs() -> None:
    values = np.arange(1, 97, dtype=np.float32) / 7
    raw = np.zeros(values.nbytes + 1, dtype=np.uint8)
    raw[1:] = values.view(np.uint8)
    unaligned = raw[1:].view(np.float32).reshape(8, 12)
    assert not unaligned.flags.aligned
    read_only = values.reshape(8, 12).copy()
    read_only.flags.writeable = False
    want = np.full(12, -0.0, dtype=np.float32)
    C.kernel(read_only, want, 48, 4)
    got = np.full(12, -0.0, dtype=np.float32)
    C.kernel(unaligned, got, 48, 4)
    assert got.tobytes() == want.tobytes()


def test_misuse_is_an_error_not_a_crash() -> None:
    rows = np.ones((4, 3), dtype=np.float32)
    out = np.zeros(3, dtype=np.float32)
    with pytest.raises(TypeError):
        C.kernel(rows, out, 12)                                      # an argument missing
    with pytest.raises(TypeError):
        C.kernel(rows, out, 12.0, 4)                                 # a stride not an int
    with pytest.raises(TypeError):
        C.kernel(rows.astype(np.int32), out, 12, 4)                  # not floats
    with pytest.raises(TypeError):
        C.kernel(rows.astype(np.float16), out.astype(np.float16), 6, 2)
    with pytest.raises(TypeError):
        C.kernel(rows.reshape(-1), out, 4, 4)                        # not 2-d
    with pytest.raises(TypeError):
        C.kernel(rows, out.astype(np.float64), 12, 4)                # out of another type
    with pytest.raises(TypeError):
        C.kernel(rows.astype(">f4"), out, 12, 4)                     # not native
    with pytest.raises(ValueError):
        C.kernel(rows, np.zeros(4, dtype=np.float32), 12, 4)         # out of another size
    with pytest.raises(ValueError):
        C.kernel(rows, np.zeros(6, dtype=np.float32)[::2], 12, 4)    # out not contiguous
    read_only = out.copy()
    read_only.flags.writeable = False
    with pytest.raises((TypeError, ValueError)):
        C.kernel(rows, read_only, 12, 4)                             # out not writable
    with pytest.raises(TypeError):
        C.kernel([[1.0]], out, 4, 4)                                 # not a buffer
    assert out.tobytes() == np.zeros(3, dtype=np.float32).tobytes()
