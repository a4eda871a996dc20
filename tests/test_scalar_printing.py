"""`format_scalar` makes its digits by integer arithmetic (engine/scalar_printing.py): it must
write exactly what PyTorch's `_Formatter` writes for one value, which is Python's own
`{:.4f}` / `{:.4e}` / `{:.0f}` formatting. Checked against that formatting directly and
against the general `_Formatter` path, over every kind of float the lab prints."""

from __future__ import annotations

import math
import struct

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.printing import _Formatter
from engine.scalar_printing import format_scalar


def python_formatted(v: float) -> str:
    """PyTorch's rule for one value, in Python's formatting (torch/_tensor_str.py)."""
    a = abs(v)
    if v == 0 or math.isinf(v) or math.isnan(v):
        return "{:.0f}".format(v) + ("." if v == 0 else "")      # noqa: UP032
    if 1.0e-4 <= a <= 1.0e8:
        return "{:.0f}.".format(v) if v == math.floor(v) else "{:.4f}".format(v)  # noqa: UP032
    return "{:.4e}".format(v)                                     # noqa: UP032


TIES = [
    1.03125,                # 10312.5 ten-thousandths exactly: rounds to even, 1.0312
    1.09375, -2.34375,      # more exact ties
    9.99995e-5, 9.99996e-5, 99999.5e-9,   # rounding carries into the exponent
    1.0e-4, 1.0e8, 100000000.5, 0.5e-4,   # the edges of fixed notation
    1.0e300, 1.0e-300, 5e-324, 1.7e308,   # extreme doubles take %-formatting
    0.0, -0.0, math.inf, -math.inf, math.nan,
]


@settings(max_examples=1500, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_every_kind_of_float32_prints_as_python_formats_it(bits: int) -> None:
    (v,) = struct.unpack("<f", struct.pack("<I", bits))
    assert format_scalar(v) == python_formatted(v)
    assert format_scalar(v, "tensor(", ")") == f"tensor({python_formatted(v)})"


@settings(max_examples=1500, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_every_kind_of_float64_prints_as_python_formats_it(v: float) -> None:
    assert format_scalar(v) == python_formatted(v)


@settings(max_examples=1000, deadline=None)
@given(st.integers(min_value=-(10**9), max_value=10**9), st.integers(min_value=-40, max_value=12))
@example(103125, -5)
def test_values_near_a_rounding_tie_print_as_python_formats_them(digits: int, exp: int) -> None:
    """Decimal values with a 5 in the fifth significant place or the fifth decimal: the
    float nearest them lies a hair off the tie, on either side."""
    v = float(f"{digits}5e{exp}")
    for value in (v, math.nextafter(v, math.inf), math.nextafter(v, -math.inf),
                  float(np.float32(v))):
        assert format_scalar(value) == python_formatted(value)


def test_ties_and_edges_print_as_python_formats_them() -> None:
    for v in TIES:
        assert format_scalar(v) == python_formatted(v), v


@settings(max_examples=1000, deadline=None)
@given(st.floats(width=32, allow_nan=True, allow_infinity=True))
def test_the_scalar_path_agrees_with_the_general_formatter(v: float) -> None:
    value = np.float32(v)
    assert format_scalar(float(value)) == _Formatter(np.asarray(value)).format(value)


@settings(max_examples=1000, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_the_scalar_path_agrees_with_the_general_formatter_for_float64(v: float) -> None:
    """format_values prints every 0-d float tensor (float64 too) through format_scalar."""
    assert format_scalar(v) == _Formatter(np.asarray(v, np.float64)).format(v)
