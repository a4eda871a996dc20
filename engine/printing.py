"""Tensors printed as PyTorch prints them: `tensor(28.)`, `tensor([1.0000e-05, 2.0000e+00])`.

A port of torch/_tensor_str.py's `_Formatter` for the dtypes and sizes the lab has:
integer-valued floats print as `28.`, others with 4 decimals, and scientific notation
when the values span more than 1000x or leave [1e-4, 1e8].
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

PRECISION: Final = 4


class _Formatter:
    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = [float(v) if self.floating else int(v) for v in values.reshape(-1)]
        if not self.floating:
            self.max_width = max([len(str(v)) for v in flat] + [1])
            return
        finite = [v for v in flat if math.isfinite(v) and v != 0]
        if not finite:
            return
        lo, hi = min(abs(v) for v in finite), max(abs(v) for v in finite)
        self.int_mode = all(v == math.ceil(v) for v in finite)
        if self.int_mode:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8
            texts = ([f"{v:.{PRECISION}e}" for v in finite] if self.sci_mode
                     else [f"{v:.0f}." for v in finite])
        else:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
            texts = [f"{v:.{PRECISION}{'e' if self.sci_mode else 'f'}}" for v in finite]
        self.max_width = max(len(t) for t in texts)

    def format(self, value: Any) -> str:
        if not self.floating:
            text = str(int(value))
        else:
            v = float(value)
            if self.sci_mode:
                text = f"{v:.{PRECISION}e}"
            elif self.int_mode:
                text = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
            else:
                text = f"{v:.{PRECISION}f}"
        return " " * (self.max_width - len(text)) + text


THRESHOLD: Final = 1000      # more elements than this are summarised with "..."
EDGE_ITEMS: Final = 3
LINE_WIDTH: Final = 80


def format_values(data: Any, indent: int = 7) -> str:
    """The bracketed body PyTorch prints for these values (without `tensor(` ... `)`)."""
    if type(data) is np.float32:
        return format_scalar(float(data))
    values = np.asarray(data)
    if values.ndim == 0:
        return _Formatter(values).format(values[()])
    if values.size == 0:
        return "[]"
    summarize = values.size > THRESHOLD
    formatter = _Formatter(_summarized(values) if summarize else values)
    return _nested(values, formatter, indent, summarize)


def format_suffix(data: Any) -> str:
    """`size=(2, 0)` for empty tensors that are not 1-d, as PyTorch adds it."""
    if type(data) is np.float32:
        return ""
    shape = np.shape(data)
    return f", size={shape}" if np.size(data) == 0 and len(shape) != 1 else ""


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


def _summarized(values: np.ndarray) -> np.ndarray:
    """`get_summarized_data`: the first and last EDGE_ITEMS along every dimension."""
    for axis in range(values.ndim):
        if values.shape[axis] > 2 * EDGE_ITEMS:
            keep = list(range(EDGE_ITEMS)) + list(range(values.shape[axis] - EDGE_ITEMS,
                                                        values.shape[axis]))
            values = np.take(values, keep, axis=axis)
    return values


def _nested(values: np.ndarray, formatter: _Formatter, indent: int, summarize: bool) -> str:
    """`_tensor_str_with_formatter`: rows of rows, 1-d rows wrapped at 80 columns."""
    long = summarize and values.shape[0] > 2 * EDGE_ITEMS
    if values.ndim == 1:
        if long:
            items = [*map(formatter.format, values[:EDGE_ITEMS]), " ...",
                     *map(formatter.format, values[-EDGE_ITEMS:])]
        else:
            items = [formatter.format(v) for v in values]
        per_line = max(1, (LINE_WIDTH - indent) // (formatter.max_width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    def row(v: np.ndarray) -> str:
        return _nested(v, formatter, indent + 1, summarize)

    if long:
        rows = [*map(row, values[:EDGE_ITEMS]), "...", *map(row, values[-EDGE_ITEMS:])]
    else:
        rows = [row(v) for v in values]
    separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(rows) + "]"


def format_tensor(t: Any, *, suffixes: bool = True) -> str:
    """`repr(t)`: values, then `requires_grad=True` for a leaf or `grad_fn=<...>`."""
    text = "tensor(" + format_values(t.data) + format_suffix(t.data)
    if suffixes:
        if t.grad_fn is not None:
            text += f", grad_fn=<{t.grad_fn.name}>"
        elif t.requires_grad:
            text += ", requires_grad=True"
    return text + ")"
