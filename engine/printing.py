"""Tensors printed as PyTorch 2.13 prints them: `tensor(28.)`, `tensor([ True, False])`,
`tensor([1.0000e-05, 2.0000e+00], dtype=torch.float64, requires_grad=True)`.

A port of torch/_tensor_str.py with its default print options, for dense CPU tensors of
any real dtype numpy holds (the lab has float32, float64, int64 and bool): `_Formatter`
picks one notation and one width for all values (integer-valued floats as `28.`, others
with 4 decimals, scientific when the finite non-zero values span more than 1000x or leave
[1e-4, 1e8]); tensors of more than 1000 elements are summarised with `...`; rows wrap at
80 columns; suffixes follow `_str_intern`'s order and wrap as `_add_suffixes` does.
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

from engine.scalar_printing import format_scalar

PRECISION: Final = 4
THRESHOLD: Final = 1000      # more elements than this are summarised with "..."
EDGE_ITEMS: Final = 3
LINE_WIDTH: Final = 80
PREFIX: Final = "tensor("
# `has_default_dtype`: dtypes whose values show their type (float32 is the default dtype).
_UNNAMED_DTYPES: Final = frozenset({"float32", "int64", "bool"})
_FLOAT32_SCALAR: Final = np.float32     # a Final: the compiled build keeps it in a C static
_FLOAT32: Final = np.dtype(np.float32)
_FLOAT64: Final = np.dtype(np.float64)


def _printing_kernels() -> Any:
    """The compiled build's C `_Formatter` and body for floats (Note [Printing in C]), or None."""
    try:
        import engine.printing_kernels as printing_kernels  # type: ignore[import-not-found]
    except ImportError:
        return None
    return printing_kernels


NATIVE: Final[Any] = _printing_kernels()


class _Formatter:
    """`_Formatter`: one notation and one width for every value of a tensor (its summary,
    when summarised). Floats decide by their finite non-zero values only, in double
    (`tensor_totype`). `cells` are the values' texts in C order, aligned as `format`
    writes each; see Note [Each value formatted once]."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if NATIVE is not None and (values.dtype == _FLOAT32 or values.dtype == _FLOAT64):
            # the same facts and texts, from C (Note [Printing in C])
            facts: tuple[bool, bool, int, list[str]] = NATIVE.formatted(
                np.ascontiguousarray(values))
            self.int_mode, self.sci_mode, self.max_width, self.cells = facts
            return
        flat = values.reshape(-1).tolist()     # Python ints, bools, floats (doubles)
        if not self.floating:           # ints and bools: as str() writes them
            self.max_width = max([1, *[len(str(v)) for v in flat]])
        else:
            double = values.astype(np.float64, copy=False).reshape(-1)
            finite = double[np.isfinite(double) & (double != 0)]
            if finite.size:
                lo, hi = float(np.abs(finite).min()), float(np.abs(finite).max())
                self.int_mode = bool((finite == np.ceil(finite)).all())
                self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
                extremes = [float(x) for part in (finite[finite > 0], finite[finite < 0])
                            if part.size for x in (part.min(), part.max())]
                self.max_width = max(len(t) for t in self._aligned(extremes, 1))
        self.cells = self._aligned(flat, self.max_width)

    def _aligned(self, flat: list[Any], width: int) -> list[str]:
        """The values' texts, right-aligned to `width` (the "." that int_mode appends to
        finite values counted in)."""
        if not self.floating:
            return [str(v).rjust(width) for v in flat]
        # `%` with the width in the spec: the digits of `{:.4e}` (PRECISION) aligned, in a
        # fifth of the time an f-string with a nested width takes (Note [One % for all])
        if self.sci_mode:
            return _each(f"%{width}.4e", flat)
        if self.int_mode:
            if not all(map(math.isfinite, flat)):
                return ["%*.0f" % (width, v) if math.isinf(v) or math.isnan(v) else  # noqa: UP031
                        "%*.0f." % (width - 1, v) for v in flat]  # noqa: UP031
            return _each(f"%{width - 1}.0f.", flat)
        return _each(f"%{width}.4f", flat)

    def format(self, value: Any) -> str:
        """One value (a Python or numpy scalar), right-aligned to the common width."""
        return self._aligned([float(value) if self.floating else value], self.max_width)[0]


def _each(spec: str, values: list[float]) -> list[str]:
    """`spec % v` for each value, written by one `%` over them all."""
    return ((spec + "\0") * len(values) % tuple(values)).split("\0")[:-1]


# Note [One % for all]
# One `%` with the spec repeated, split at the NULs between the texts, makes the same
# texts as one `%` per value without a tuple and a call for each. MEASURED (pure Python,
# 512 float32 values, best of 2,000): 179 us a tensor against 111 us.


# Note [Printing in C]
# The compiled build also compiles printing_kernels.c beside this file. For float32 and
# float64 values its `formatted` finds int_mode, sci_mode and max_width in one loop over the
# values (in double, from the finite non-zero ones; the width from the extremes' texts) and
# writes the cells as `_aligned` does, with PyOS_double_to_string (the function `%` calls
# for a float) padded as `%` pads: the texts are `%`'s own. In Python, each of `__init__`'s
# numpy calls (astype, isfinite, abs, min, max, ceil, the masks, tolist) costs a
# microsecond or more on the small tensors a trace prints, and `_each`'s one `%` builds and
# splits a string of all the texts. MEASURED (this file compiled alone by mypyc, opt level
# 3, in-process, best of 200 x 50 calls): `tensor_repr(v, requires_grad=True)` of float32
# standard normal values x 0.1 took, the Python's way / the C's,
#     (8, 32): 65 / 36 us    (16, 32): 167 / 102 us (scientific)    (8, 4): 27 / 10 us
#     (32,): 24 / 7 us
# `_Formatter` alone: 53 / 26 us, 140 / 81 us, 20 / 4.4 us, 20 / 4.5 us; the C spends
# about 100 ns a value (150 in scientific notation), 45 (100) of them in
# PyOS_double_to_string, the rest making and freeing the str objects. So a body that is not
# summarised (every text a trace keeps by content, app/trace/values.py) is written whole by
# the C's `body`, `_nested` and `_vector` over the cells without a str for each: MEASURED
# (pure build with the C, best of 7 x 2,000) (8, 32) 44 -> 31 us, (16, 32) 122 -> 80 us,
# (8, 4) 15 -> 6 us against the C's cells joined in Python.
# The pure build, other dtypes and byte orders take the Python (the definition);
# tests/test_printing_kernels.py holds the C's facts and texts to it.


# Note [Each value formatted once]
# A trace prints every gradient a pass sends. `_Formatter` used to format each value of a
# tensor twice (once for the common width, once to print, by a method call per value).
# Now numpy finds the finite non-zero values, their range and whether all are integers,
# and the width comes from four values only: a text's length grows with the value's
# magnitude for either sign (`{:.4f}`, `{:.0f}`), except that `{:.4e}`'s exponent takes a
# third digit at both ends (below 1e-99, from 1e100), so the widest text is that of the
# largest or the smallest magnitude of the positive or of the negative values. Each value
# is then formatted once, aligned by its format spec. On the 2,100 tensors (4 to 512
# values) the bench/programs.py MLP trace prints: MEASURED (pure Python).
# tests/test_printing.py holds the texts to live torch's.


def tensor_repr(values: Any, *, grad_fn: str | None = None, requires_grad: bool = False,
                parameter: bool = False) -> str:
    """`repr(t)` of a tensor with these values: `_str_intern` for a dense CPU tensor.

    Empty tensors print `[]`, then `size=` unless 1-d and `dtype=` unless float32 (no
    value shows the type); others print `dtype=` unless float32, int64 or bool. Then
    `grad_fn=<Name>` for a non-leaf, else `requires_grad=True` if set; an
    `nn.Parameter` prints `Parameter containing:` on a line of its own above it."""
    array = np.asarray(values)
    dtype = array.dtype.name
    suffixes = []
    if array.size == 0:
        if array.ndim != 1:
            suffixes.append(f"size={array.shape}")
        if dtype != "float32":
            suffixes.append(f"dtype=torch.{dtype}")
        body = "[]"
    else:
        if dtype not in _UNNAMED_DTYPES:
            suffixes.append(f"dtype=torch.{dtype}")
        body = format_values(values, len(PREFIX))
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    text = _add_suffixes(PREFIX + body, suffixes, len(PREFIX))
    return "Parameter containing:\n" + text if parameter else text


def format_tensor(t: Any, *, suffixes: bool = True) -> str:
    """`repr(t)` of an engine tensor, read duck-typed (`data`, `grad_fn.type_name`,
    `requires_grad`, `is_parameter`); `suffixes=False` leaves out the autograd ones."""
    if not suffixes:
        return tensor_repr(t.data)
    return tensor_repr(t.data, grad_fn=None if t.grad_fn is None else t.grad_fn.type_name,
                       requires_grad=t.requires_grad,
                       parameter=bool(getattr(t, "is_parameter", False)))


def format_values(data: Any, indent: int = len(PREFIX)) -> str:
    """`_tensor_str`: the bracketed body PyTorch prints for these values (without
    `tensor(` ... `)`), its rows indented to follow a prefix of `indent` characters."""
    if type(data) is _FLOAT32_SCALAR:
        return format_scalar(float(data))
    values = np.asarray(data)
    if values.ndim == 0:
        if values.dtype.kind == "f":    # one value: its own formatter is format_scalar's
            return format_scalar(float(values))
        return _Formatter(values).format(values[()])
    if values.size == 0:
        return "[]"
    summarize = values.size > THRESHOLD
    if NATIVE is not None and not summarize and (values.dtype == _FLOAT32
                                                 or values.dtype == _FLOAT64):
        body: str = NATIVE.body(np.ascontiguousarray(values), indent)  # Note [Printing in C]
        return body
    shown = _summarized(values) if summarize else values
    formatter = _Formatter(shown)
    return _nested(_shaped(formatter.cells, shown.shape), values.shape, formatter.max_width,
                   indent, summarize)


def format_suffix(data: Any) -> str:
    """`, size=(2, 0)` for empty tensors that are not 1-d, as PyTorch adds it (only that:
    `tensor_repr` writes every suffix)."""
    if type(data) is _FLOAT32_SCALAR:
        return ""
    shape = np.shape(data)
    return f", size={shape}" if np.size(data) == 0 and len(shape) != 1 else ""


def _summarized(values: np.ndarray) -> np.ndarray:
    """`get_summarized_data`: the first and last EDGE_ITEMS along every dimension."""
    for axis in range(values.ndim):
        size = values.shape[axis]
        if size > 2 * EDGE_ITEMS:
            keep = [*range(EDGE_ITEMS), *range(size - EDGE_ITEMS, size)]
            values = np.take(values, keep, axis=axis)
    return values


def _shaped(cells: list[str], shape: tuple[int, ...]) -> list[Any]:
    """The texts in C order as nested lists of `shape` (no dimension is empty)."""
    nested: list[Any] = cells
    for size in reversed(shape[1:]):
        nested = [nested[i:i + size] for i in range(0, len(nested), size)]
    return nested


def _nested(rows: list[Any], shape: tuple[int, ...], width: int, indent: int,
            summarize: bool) -> str:
    """`_tensor_str_with_formatter`: rows of rows, blank lines between blocks of rows.
    `rows` are the cells of the (summarised) values, `shape` the tensor's own."""
    long = summarize and shape[0] > 2 * EDGE_ITEMS
    if len(shape) == 1:
        return _vector(rows, width, indent, long)
    inner = [_nested(row, shape[1:], width, indent + 1, summarize) for row in rows]
    if long:
        inner = [*inner[:EDGE_ITEMS], "...", *inner[EDGE_ITEMS:]]
    separator = "," + "\n" * (len(shape) - 1) + " " * (indent + 1)
    return "[" + separator.join(inner) + "]"


def _vector(items: list[str], width: int, indent: int, long: bool) -> str:
    """`_vector_str`: one row, wrapped after as many values as fit in LINE_WIDTH."""
    if long:
        items = [*items[:EDGE_ITEMS], " ...", *items[EDGE_ITEMS:]]
    per_line = max(1, (LINE_WIDTH - indent) // (width + 2))
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """`_add_suffixes`: `, suffix` after the values, or on a new line (indented) where it
    would pass LINE_WIDTH. (PyTorch counts the last line one character long: kept.)"""
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINE_WIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    parts.append(")")
    return "".join(parts)
