"""Tensors printed as PyTorch prints them: `tensor(28.)`, `tensor([1.0000e-05, 2.0000e+00])`.

A port of torch/_tensor_str.py's `_Formatter` for the dtypes and sizes the lab has:
integer-valued floats print as `28.`, others with 4 decimals, and scientific notation
when the values span more than 1000x or leave [1e-4, 1e8].
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

PRECISION = 4


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


THRESHOLD = 1000      # more elements than this are summarised with "..."
EDGE_ITEMS = 3
LINE_WIDTH = 80


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
    %-formats on purpose: this runs several times per step, and the compiled build turns an
    f-string with a format spec into `str.format`, which parses its template every time
    (twice as slow). PRECISION is 4."""
    if 1.0e-4 <= abs(v) <= 1.0e8:       # the usual range: no scientific notation
        if v == math.floor(v):
            return "%s%.0f.%s" % (before, v, after)  # noqa: UP031
        return "%s%.4f%s" % (before, v, after)  # noqa: UP031
    if v == 0 or math.isinf(v) or math.isnan(v):         # (built in to the compiled build,
        dot = "." if v == 0 else ""                       # where math.isfinite is not)
        return "%s%.0f%s%s" % (before, v, dot, after)  # noqa: UP031
    if v == math.ceil(v) and abs(v) <= 1.0e8:
        return "%s%.0f.%s" % (before, v, after)  # noqa: UP031
    return "%s%.4e%s" % (before, v, after)  # noqa: UP031  (outside [1e-4, 1e8])


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
