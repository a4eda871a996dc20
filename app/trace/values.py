"""How values are written in the trace: float32 widened to JSON numbers, and as PyTorch
prints them. Plain functions, kept apart from the document's models because they run a
few times per step (and so are among the modules the compiled build compiles)."""

from __future__ import annotations

import math
from typing import Any, Final, Union

import numpy as np

from engine.printing import THRESHOLD, tensor_repr
from engine.scalar_printing import format_scalar

FLOAT32: Final = np.dtype(np.float32)

_MAX_SHARED_NUMBER: Final = 1 << 22     # ids and sequence numbers stay below the node limit

JSONValue = Union[bool, float, int, str, None, list[Any]]


def encode(values: Any) -> JSONValue:
    """Values widened to JSON numbers (bools stay bools); nan and infinities as strings."""
    if values is None:
        return None
    if type(values) is np.ndarray and values.ndim == 0:
        x = values.item()
        if isinstance(x, float) and (math.isinf(x) or math.isnan(x)):
            return _finite(x)  # type: ignore[no-any-return]
        return x  # type: ignore[no-any-return]
    if isinstance(values, (bool, int, float)):
        return _finite(values)  # type: ignore[no-any-return]
    array = np.asarray(values)
    out: JSONValue = array.tolist()
    if array.dtype.kind == "f" and not np.isfinite(array).all():   # see Note [Finite lists]
        return _finite(out)  # type: ignore[no-any-return]
    return out


# Note [Finite lists]
# Walking every list a trace writes to replace nan and the infinities took a sixth of
# the MLP trace's time (bench/programs.py, 60 full passes: 0.93 s of 5.6 s under
# cProfile); numpy says in one call whether there is anything to replace.


def encode_step(values: Any) -> JSONValue:
    """A gradient inside a step: in full up to PyTorch's print threshold (1000 elements);
    bigger ones only as printed (summarised) text, so that a trace stays proportional to
    its steps and not to steps x elements. Final `grads` are always in full."""
    if type(values) is np.ndarray:          # (np.size is a Python function: slower)
        if values.size > THRESHOLD:
            return None
    elif values is not None and np.size(values) > THRESHOLD:
        return None
    return encode(values)


def _finite(x: Any) -> Any:
    if isinstance(x, list):
        return [_finite(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def printed(values: Any) -> str | None:
    """The values as PyTorch prints them: `tensor(28.)` (`Texts` for a whole trace)."""
    if values is None:
        return None
    return tensor_repr(np.asarray(values))


class Texts:
    """The texts of one trace, each made once: values as PyTorch prints them, node ids as
    JSON object keys, and node ids and sequence numbers as Python ints.

    Every gradient is printed where it is sent and again where it arrives, and many values
    recur (a batch that every pass saves, a constant gradient), so a 0-d float32 value is
    formatted once per trace, and so is each other value up to PyTorch's print threshold
    (see Note [Texts by content]); other dtypes print with their `dtype=` as PyTorch
    prints them.
    """

    __slots__ = ("_scalars", "_arrays", "_keys", "_numbers")

    def __init__(self) -> None:
        self._scalars: dict[float, str] = {}
        self._arrays: dict[tuple[str, tuple[int, ...], bytes], str] = {}
        self._keys: list[str] = []          # node ids are 0, 1, 2 ... in a run
        self._numbers: list[object] = []

    def number(self, n: int) -> Any:
        """n as one Python int object per trace. A node's id and sequence number go into
        the document once per step that shows the node; the compiled build keeps ints
        unboxed, and would otherwise make (and later free) a new int object each time.
        (Typed Any, not int, so that the compiled build passes the object on as it is.)"""
        numbers = self._numbers
        if 0 <= n < len(numbers):
            return numbers[n]
        if not 0 <= n <= _MAX_SHARED_NUMBER:    # AccumulateGrad's UINT64_MAX, for one
            return n
        while len(numbers) <= n:
            numbers.append(len(numbers))
        return numbers[n]

    def by_id(self, counts: dict[int, int]) -> dict[str, int]:
        """Counts keyed by node id as text, as JSON writes object keys anyway (orjson then
        writes the whole document 60% faster than one it must check for other keys)."""
        keys = self._keys
        out: dict[str, int] = {}
        for node, count in counts.items():
            while len(keys) <= node:
                keys.append(str(len(keys)))
            out[keys[node]] = count
        return out

    def printed(self, values: Any) -> str | None:
        if values is None:
            return None
        if type(values) is not np.ndarray:
            return printed(values)
        if values.ndim or values.dtype != FLOAT32:
            return self._printed_array(values)
        x = float(values)
        text = self._scalars.get(x)
        if text is None:
            text = format_scalar(x, "tensor(", ")")
            if x != 0:              # 0.0 and -0.0 are one key but print differently
                self._scalars[x] = text
        return text

    def _printed_array(self, values: np.ndarray) -> str:
        """An array's text, made once per content (dtype, shape and bytes) in a trace."""
        if values.size > THRESHOLD:      # summarised: cheap to print, costly to key
            return tensor_repr(values)
        key = (values.dtype.str, values.shape, values.tobytes())
        text = self._arrays.get(key)
        if text is None:
            text = self._arrays[key] = tensor_repr(values)
        return text


# Note [Texts by content]
# The MLP trace of bench/programs.py prints 2,100 arrays in its 60 full passes, 783 of
# them different (each gradient is printed as sent and as received; the batch `x`, a
# weight between two updates, the zero `.grad` before and after are printed again and
# again). Keyed by their bytes, MEASURED.
