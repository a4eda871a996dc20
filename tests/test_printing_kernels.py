"""The compiled build's `_Formatter` for floats in C (engine/printing.py, Note [Printing in
C]) finds the Python's notation and width and writes its texts, character for character:
`formatted` is compared with engine/printing.py loaded from its source as plain Python,
without the C. The pure build has no C to compare and skips these."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from engine import printing

try:
    from engine import printing_kernels  # type: ignore[attr-defined]
except ImportError:
    printing_kernels = None

pytestmark = pytest.mark.skipif(printing_kernels is None, reason="this build has no C "
                                "_Formatter (engine.printing_kernels: the pure build)")

SOURCE = Path(__file__).resolve().parents[1] / "engine" / "printing.py"


def _pure_printing() -> Any:
    """engine/printing.py run as plain Python with NATIVE off: the definition, in any build
    (the compiled build's own printing module is compiled, and uses the C)."""
    spec = importlib.util.spec_from_file_location("pure_printing", SOURCE)
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.NATIVE = None
    return module


PURE: Any = _pure_printing()


def _check(values: np.ndarray) -> None:
    """The C's facts and cells are the pure `_Formatter`'s (and Python's own types)."""
    assert printing_kernels is not None
    want = PURE._Formatter(values)
    got = printing_kernels.formatted(values)
    assert got == (want.int_mode, want.sci_mode, want.max_width, want.cells), values
    int_mode, sci_mode, max_width, cells = got
    assert type(int_mode) is bool and type(sci_mode) is bool and type(max_width) is int
    assert type(cells) is list and all(type(c) is str for c in cells)
    if values.ndim and 0 < values.size <= printing.THRESHOLD:
        _check_body(values, len(printing.PREFIX))


def _check_body(values: np.ndarray, indent: int) -> None:
    """The C's whole body is the pure `format_values`' (`_nested` over the cells)."""
    assert printing_kernels is not None
    want = PURE.format_values(values, indent)
    assert printing_kernels.body(np.ascontiguousarray(values), indent) == want, values


SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan]
DTYPES = [np.float32, np.float64]
FLOAT_DTYPES: list[np.dtype[Any]] = [np.dtype(np.float32), np.dtype(np.float64)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("exponent", range(-12, 13))
@pytest.mark.parametrize("size", [1, 4, 33, 512])
def test_random_values_of_every_scale(dtype: Any, exponent: int, size: int) -> None:
    rng = np.random.default_rng(1000 * (exponent + 12) + size)
    values = (rng.standard_normal(size) * 10.0 ** exponent).astype(dtype)
    _check(values)                                      # sci mode for most scales
    _check(np.abs(values))
    _check((rng.random(size) * 9.0 + 1.0) * 10.0 ** exponent)   # within 10x: plain at 1e0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [1, 1000, 10 ** 7, 10 ** 9, 10 ** 12])
def test_integer_valued_floats(dtype: Any, scale: int) -> None:
    rng = np.random.default_rng(scale)
    values = rng.integers(-scale, scale + 1, 64).astype(dtype)
    _check(values)
    _check(np.abs(values))
    _check(values.reshape(4, 4, 4))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("base", [
    [1.5, -2.25, 3.0],                  # 4 decimals
    [1.0, -2.0, 300.0],                 # int mode
    [1.0e-7, -2.0e5, 3.0],              # sci mode
    [1.0e9, 2.0e9],                     # integers, sci mode
])
def test_specials_among_the_values(dtype: Any, base: list[float]) -> None:
    rng = np.random.default_rng(len(base))
    for special in SPECIALS:
        _check(np.array([*base, special], dtype))
        _check(np.array([special, *base], dtype))
    for _ in range(20):
        mixed = rng.choice(np.array([*base, *SPECIALS]), size=rng.integers(1, 12))
        _check(mixed.astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("values", [
    [0.0], [-0.0], [0.0, 0.0, 0.0], [-0.0, 0.0], [np.nan], [np.nan, np.nan], [np.inf],
    [-np.inf], [np.nan, -np.inf, np.inf], [np.nan, 0.0, -0.0, np.inf], [7.0], [-7.0],
    [0.5], [-0.5], [1.0e-4], [1.0e8], [1.0e8, 1.0], [1.0, 1000.0], [1.0, 1001.0],
    [1.0e-4, 0.1], [2.0, -2000.0], [123456789.0], [0.00015], [-0.99995],
])
def test_edge_cases(dtype: Any, values: list[float]) -> None:
    _check(np.array(values, dtype))


def test_no_values_and_shapes() -> None:
    _check(np.zeros(0, np.float32))
    _check(np.array(2.5))                                       # 0-d
    _check(np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7)


@pytest.mark.parametrize("values", [
    [1.0e100, 2.0], [-1.0e-100, 2.0], [1.0e100, -1.0e-100, 0.5], [1.0e300, 1.0e-300],
    [1.7976931348623157e308, -1.7976931348623157e308], [5.0e-324, 1.0], [5.0e-324],
    [-2.2250738585072014e-308, 1.0e-310], [9.99995e99, 9.99994e99, 1.0e-99, 9.99996e-100],
    [1.0e16, 3.0], [1.0e22], [-1.0e22, 12345678901234567890.0],
])
def test_three_digit_exponents_and_subnormals(values: list[float]) -> None:
    _check(np.array(values, np.float64))


@pytest.mark.parametrize("values", [
    [1.0e-45], [1.0e-40, 1.0], [-1.4e-45, 3.4028235e38], [1.17549435e-38, 2.0],
])
def test_float32_extremes_and_subnormals(values: list[float]) -> None:
    _check(np.array(values, np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [1.0, 1.0e-3, 1.0e5, 1.0e-6])
def test_values_straddling_the_fourth_decimal(dtype: Any, scale: float) -> None:
    """Halfway cases of `.4f` (and, off [1e-4, 1e8], of `.4e`) and their neighbours."""
    halves = (np.arange(1, 200) + 0.5) * 1.0e-4 * scale
    wide = halves.astype(dtype)
    for v in (wide, np.nextafter(wide, dtype(np.inf)), np.nextafter(wide, dtype(-np.inf))):
        _check(v)
        _check(-v)
        _check(np.concatenate([v, np.array([dtype(1.0)])]))   # the integer changes no mode


@settings(max_examples=500, deadline=None)
@given(hnp.arrays(st.sampled_from(FLOAT_DTYPES),
                  hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=9)))
def test_any_float_array(values: np.ndarray) -> None:
    _check(values)


def test_other_buffers_are_refused() -> None:
    """`_Formatter` sends only C-contiguous native float32 and float64 arrays to the C."""
    assert printing_kernels is not None
    for other in (np.arange(3), np.array([True]), np.ones(3, ">f4"), np.ones(3, np.float16),
                  b"abcd"):
        with pytest.raises(TypeError):
            printing_kernels.formatted(other)
    with pytest.raises(ValueError, match="contiguous"):               # numpy's refusal
        printing_kernels.formatted(np.ones((3, 3), np.float32).T)


@pytest.mark.parametrize("values", [
    np.arange(12, dtype=np.float32).reshape(3, 4).T / 3,             # not C-contiguous
    np.arange(20, dtype=np.float64)[::3] * 1.0e9,                    # strided
    np.array([1.5, -np.inf, 2.0], ">f4"),                            # big-endian: Python
    np.array([1, -2, 300], np.int64),
    np.array([True, False]),
])
def test_the_engines_formatter_matches_the_python(values: np.ndarray) -> None:
    """engine.printing's own `_Formatter` (the C in a compiled build made from this
    source) and its one-value `format` are the Python's, for any layout and dtype."""
    got, want = printing._Formatter(values), PURE._Formatter(values)
    assert (got.int_mode, got.sci_mode, got.max_width, got.cells) == (
        want.int_mode, want.sci_mode, want.max_width, want.cells)
    for v in values.reshape(-1)[:3]:
        assert got.format(v) == want.format(v)
    assert printing.format_values(values) == PURE.format_values(values)


@pytest.mark.parametrize("shape", [(1,), (5,), (13,), (100,), (1000,), (1, 1), (3, 1), (1, 7),
                                   (8, 32), (32, 4), (2, 3, 4), (4, 1, 5), (2, 2, 2, 3),
                                   (1, 1, 1, 1, 2), (10, 100)])
@pytest.mark.parametrize("indent", [0, 7, 8, 30, 76, 79, 80, 95])
def test_the_whole_body_is_format_values(shape: tuple[int, ...], indent: int) -> None:
    """`body`: rows wrapped at 80 columns after the indent, blocks of rows apart, nested
    rows indented one more, for every notation."""
    rng = np.random.default_rng(len(shape) * 100 + indent)
    for dtype in DTYPES:
        for scale in (1.0, 1e-6, 1e9):
            values = (rng.standard_normal(shape) * scale).astype(dtype)
            _check_body(values, indent)
            _check_body(np.round(values), indent)
        values = rng.standard_normal(shape).astype(dtype)
        values.flat[0] = np.nan
        _check_body(values, indent)
        _check_body(np.zeros(shape, dtype), indent)
    transposed = rng.standard_normal(shape[::-1]).astype(np.float32).T
    assert printing.format_values(transposed, indent) == PURE.format_values(transposed, indent)


def test_a_body_needs_a_dimension_and_a_value() -> None:
    assert printing_kernels is not None
    with pytest.raises(ValueError):
        printing_kernels.body(np.zeros((), np.float32), 7)
    with pytest.raises(ValueError):
        printing_kernels.body(np.zeros((0, 3), np.float32), 7)
    with pytest.raises(ValueError):
        printing_kernels.body(np.zeros(3, np.float32), -1)
    with pytest.raises(TypeError):
        printing_kernels.body(np.zeros(3, np.int64), 7)
