"""var and std: the spread of values about their mean (Note [Welford]), and its backward
as var_backward and std_backward write it."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine.functions._record import record
from engine.functions.arithmetic import div, mul, mul_scalar, sub
from engine.functions.compare import compare, masked_fill
from engine.functions.reduction import mean, mean_check, normalize_dims, unsqueeze_multiple
from engine.functions.summation import cascade_sum
from engine.node import Node
from engine.tensor import Tensor, as_array


class _Spread(Node):
    """var / std: var_backward, `(2 / (n - correction)) * grad * (self - self.mean(...))`;
    std first makes `(grad / (result * 2)).masked_fill_(result == 0, 0)` its grad. As ops,
    so create_graph records PyTorch's nodes."""

    saved_names = ("correction", "dim", "keepdim", "result", "self")

    def apply(self, grads: list[Tensor | None]) -> list[Tensor | None]:
        (grad,) = grads
        assert grad is not None
        x, result, dim, keepdim = map(self.saved_value, ("self", "result", "dim", "keepdim"))
        correction = self.saved_value("correction")
        correction = 1 if correction is None else correction
        dims = normalize_dims(dim, x.ndim)
        if self.name == "StdBackward0":
            grad = masked_fill(div(grad, mul_scalar(result, 2)), compare("eq", result, 0), 0.0)
        if dim is not None and not keepdim and x.ndim > 1:
            grad = unsqueeze_multiple(grad, dims, x.ndim)
        dof = math.prod(x.shape[d] for d in dims) - correction
        if dof <= 0 and (dim is None or x.ndim == 0):   # grad * where(self == mean, nan, inf)
            nan_inf = np.where(x.data == mean(x).data, np.nan, np.inf)
            return [mul(grad, Tensor(as_array(nan_inf, x.data.dtype), grad.ctx))]
        centred = sub(x, mean(x) if dim is None or x.ndim == 0 else mean(x, dims, True))
        return [mul(mul_scalar(grad, 2.0 / dof if dof > 0 else math.inf), centred)]


class VarBackward0(_Spread):
    name = "VarBackward0"


class StdBackward0(_Spread):
    name = "StdBackward0"


def _spread_all(x: np.ndarray, correction: int) -> np.ndarray:
    """`std_var_all_cpu` (a reduction to one value): the mean as `mean()` gives it (in
    x's dtype), widened to double; the squared deviations added in double, in order;
    divided by n - correction (0 at least) in double."""
    mean = float(cascade_sum(x, tuple(range(x.ndim)), False) / x.dtype.type(max(x.size, 1)))
    deviations = x.reshape(-1).astype(np.float64) - mean
    squares = np.cumsum(deviations * deviations)[-1] if x.size else np.float64(0)
    return np.asarray(squares / np.float64(max(0.0, x.size - correction)))


WELFORD_LIMIT = 4096    # reduced elements per value updated one by one (Note [Welford])


def _welford(x: np.ndarray, reduced: tuple[int, ...], correction: int) -> np.ndarray:
    """`std_var_kernel`'s WelfordOps in double: each value's running mean and sum of
    squared deviations, updated element by element over the reduced dims in order."""
    rows = np.moveaxis(x.astype(np.float64), reduced, tuple(range(len(reduced))))
    rows = rows.reshape(-1, *rows.shape[len(reduced):])
    n = rows.shape[0]
    if n > WELFORD_LIMIT:
        m2 = np.sum((rows - np.mean(rows, axis=0)) ** 2, axis=0)
    else:
        mean = np.zeros(rows.shape[1:])
        m2 = np.zeros(rows.shape[1:])
        for i in range(n):
            delta = rows[i] - mean
            mean = mean + delta / float(i + 1)
            m2 = m2 + delta * (rows[i] - mean)
    spread: np.ndarray = m2 / np.float64(max(0.0, n - correction))
    return spread


# Note [Welford]
# PyTorch reduces var and std over some dims with Welford's updates in double, and to a
# single value by a mean in the tensor's dtype and a sum of squares in double. Either way
# the float32 result is the double one rounded, so the order of the double additions only
# shows in a last bit now and then. The lab follows both exactly (tests/test_summation.py
# holds them to live torch's bits); over more than WELFORD_LIMIT elements a value, where
# PyTorch's threads split the updates anyway, it takes the two-pass sum in double.


def var(self: Tensor, dim: Any = None, correction: int | None = None, keepdim: bool = False,
        std: bool = False) -> Tensor:
    """`var` / `std`: a correction of None (the default, saved as None) is 1; a dim of None
    (saved as None) reduces every dim."""
    mean_check(self)
    dims = normalize_dims(dim, self.ndim)
    saved_correction = correction
    correction = 1 if correction is None else correction
    reduced = dims if dims else tuple(range(self.ndim))
    x = self.data
    kept = [n for d, n in enumerate(x.shape) if d not in reduced]
    if math.prod(kept) == 1:
        spread = _spread_all(x, correction)
    else:
        spread = _welford(x, reduced, correction)
    values = np.sqrt(spread) if std else spread
    shape = tuple(1 if d in reduced else n for d, n in enumerate(x.shape)) if keepdim \
        else tuple(kept)
    out, node = record(StdBackward0 if std else VarBackward0, [self],
                       as_array(values.astype(x.dtype).reshape(shape), x.dtype), self)
    if node:
        node.save("correction", saved_correction)
        node.save("dim", None if dim is None else dims)
        node.save("keepdim", keepdim)
        node.save("self", self)
        node.save("result", out)
    return out
