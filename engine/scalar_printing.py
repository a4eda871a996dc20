"""One float value as PyTorch prints a 0-d tensor (`tensor(28.)`, `tensor(0.1235)`,
`tensor(1.0000e-05)`): engine/printing.py's `_Formatter` for a single value, without its
general machinery, because a trace prints every scalar it shows (each gradient of a
scalar program, each loss)."""

from __future__ import annotations

import math
from typing import Final


def format_scalar(v: float, before: str = "", after: str = "") -> str:
    """`_Formatter` for one float value: the common case, without the general machinery,
    with `before` and `after` around it (`tensor(`, `)`) in the same one string build.

    This runs for every value a trace prints, so the digits come from `_rounded` (one
    float product rounded to an integer: in the compiled build 1,800 instructions a value
    where `%.4e` took 3,100); the rare value it cannot round with certainty takes
    `%`-formatting. tests/test_scalar_printing.py holds it to Python's formatting."""
    a = abs(v)
    sign = "-" if v < 0 else ""
    if 1.0e-4 <= a <= 1.0e8:            # the usual range: no scientific notation
        if v == math.floor(v):
            return f"{before}{int(v)}.{after}"
        whole = _rounded(a * 10000.0, _FIXED_MARGIN)
        if whole < 0:
            return f"{before}{sign}{'%.4f' % a}{after}"  # noqa: UP031  (a tie, or nearly)
        digits = str(whole)
        if whole < 10000:
            digits = "0000"[:5 - len(digits)] + digits
        return f"{before}{sign}{digits[:-4]}.{digits[-4:]}{after}"
    if v == 0:
        return f"{before}-0.{after}" if math.copysign(1.0, v) < 0 else f"{before}0.{after}"
    if math.isinf(v) or math.isnan(v):  # (built in to the compiled build, math.isfinite
        return f"{before}{'nan' if math.isnan(v) else sign + 'inf'}{after}"   # is not)
    if not 1.0e-300 < a < 1.0e300:
        return f"{before}{sign}{'%.4e' % a}{after}"  # noqa: UP031
    e = math.floor(math.log(a) / _LN10)     # outside [1e-4, 1e8]: 4 decimals, exponent e
    whole = -1
    for _ in range(3):                  # log's guess may be one off: correct it
        shift = 4 - e
        y = a * _POWERS_OF_TEN[shift] if shift >= 0 else a / _POWERS_OF_TEN[-shift]
        if y < 10000.0:
            e -= 1
        elif y >= 100000.0:
            e += 1
        else:
            whole = _rounded(y, _SCIENTIFIC_MARGIN)
            break
    if whole < 0:
        return f"{before}{sign}{'%.4e' % a}{after}"  # noqa: UP031
    if whole == 100000:                 # 9.99996e-05 prints as 1.0000e-04
        whole, e = 10000, e + 1
    digits = str(whole)
    return f"{before}{sign}{digits[0]}.{digits[1:]}{_EXPONENTS[e + 310]}{after}"


# The products below are a or a * 10**k for one correctly rounded power of ten: off by at
# most half a unit in their last place (under 1e-4 for `a * 10000.0` up to 1e12; under
# 1e-9 for the scientific products, below 1e5). A product whose fraction lies further than
# the margin from 0.5 therefore rounds as the exact value does.
_FIXED_MARGIN: Final = 1.0e-3
_SCIENTIFIC_MARGIN: Final = 1.0e-6
_POWERS_OF_TEN: Final = tuple(float(f"1e{k}") for k in range(310))
_EXPONENTS: Final = tuple(f"e{'-' if k < 0 else '+'}{abs(k):02d}" for k in range(-310, 310))
_LN10: Final = math.log(10.0)


def _rounded(y: float, margin: float) -> int:
    """y rounded to the nearest integer, or -1 if its fraction is within margin of 0.5,
    where the product's own rounding error could decide (ties to even need the exact
    value: `%`-formatting has it)."""
    whole = math.floor(y)
    fraction = y - whole
    if abs(fraction - 0.5) < margin:
        return -1
    return whole + 1 if fraction > 0.5 else whole
