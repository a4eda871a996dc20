"""nll_loss's kernel (LossNLL.cpp `nll_loss_out_frame`): its bounds check and the cascade
in which it adds a reduced loss and its total weight."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from engine import errors
from engine.tensor import Tensor


def in_bounds(classes: list[int], n_classes: int) -> None:
    """The kernel's check, in sample order: the first class out of range is named."""
    for c in classes:
        if not 0 <= c < n_classes:
            raise errors.TorchError("IndexError", f"Target {c} is out of bounds.")


CASCADE_LEVELS = 8


def _nll_kernels() -> Any:
    """The compiled build's C cascade and scatter (Note [The cascade in C]), or None."""
    try:
        import engine.functions.nll_kernels as nll_kernels  # type: ignore[import-not-found]
    except ImportError:
        return None
    return nll_kernels


NATIVE: Final[Any] = _nll_kernels()
_INT64: Final = np.dtype(np.int64)


def cascaded_sums(rows: np.ndarray, targets: np.ndarray, weight: Tensor | None,
                   ignore_index: int) -> tuple[Any, Any]:
    """`nll_loss_out_frame` (LossNLL.cpp) for a reduced loss: the sum of -input[b, target]
    (times the class weight) and the total weight, in the input's dtype, added as the
    kernel adds them. Each sample goes into level 0; after sample b, every level j whose
    bits of b are all 0 is carried into level j+1 (so sample 0 climbs to the top); an
    ignored sample is skipped before its carry. The levels are then added from 0, in
    order. Without weights the total weight is the count of samples kept."""
    if NATIVE is not None and targets.dtype == _INT64:
        return _in_c(rows, targets, weight, ignore_index)
    return _cascade(rows, targets.tolist(), weight, ignore_index)


def _in_c(rows: np.ndarray, targets: np.ndarray, weight: Tensor | None,
          ignore_index: int) -> tuple[Any, Any]:
    """The cascade by nll_kernels.c, which returns the first sample out of range, if any."""
    out = np.empty(2, rows.dtype)
    weights = None if weight is None else np.ascontiguousarray(weight.data, rows.dtype)
    bad = NATIVE.cascade(rows, np.ascontiguousarray(targets), weights, ignore_index, out)
    if bad is not None:
        in_bounds([int(targets[bad])], rows.shape[1])
    return out[0], out[1]


def scattered(out: np.ndarray, targets: np.ndarray, share: Any, weight: Tensor | None,
              ignore_index: int) -> None:
    """`nll_loss_backward_out_frame` for a reduced loss: at each sample's target class `out`
    (zeros, batch x classes) gets `share` (-grad, divided by the total weight for `mean`),
    times the class weight; ignored samples keep their zeros."""
    if NATIVE is not None and targets.dtype == _INT64 and out.flags.c_contiguous:
        weights = None if weight is None else np.ascontiguousarray(weight.data, out.dtype)
        bad = NATIVE.scatter(out, np.ascontiguousarray(targets), np.asarray(share, out.dtype),
                             weights, ignore_index)
        if bad is not None:
            in_bounds([int(targets[bad])], out.shape[1])
        return
    (samples,) = (targets != ignore_index).nonzero()
    classes = targets[samples]
    out[samples, classes] = share if weight is None else weight.data[classes] * share


# Note [The cascade in C]
# The cascade adds a numpy scalar at a time, some forty of them for a batch of 8, and
# picks the samples' values by fancy indexing: 10 us a call in the compiled build, a
# twentieth of a step of bench/programs.py's MLP. The compiled build runs nll_kernels.c,
# the same additions in C. MEASURED (8 x 4 float32, best of 25,000, this module
# interpreted): 13.2 us in Python, 1.35 us in C; in the compiled MLP trace (perf, 200
# steps) 10 us a call before, 1.6 us after. Its backward's scatter, a few numpy calls
# (the samples kept, their classes, a fancy assignment), is C's too: MEASURED (8 x 4
# float32, best of 7 x 20,000, this module interpreted) 3.3 us in numpy, 0.5 us in C.
# tests/test_nll_kernels.py holds the C to this Python's bits, and
# tests/test_class_losses.py both to live torch's.


def _cascade(rows: np.ndarray, targets: list[int], weight: Tensor | None,
             ignore_index: int) -> tuple[Any, Any]:
    """The cascade, in numpy scalars of the input's dtype."""
    zero = rows.dtype.type(0)
    n_classes = rows.shape[1]
    batch = len(targets)
    level_power = max(4, (batch - 1).bit_length() // CASCADE_LEVELS if batch > 1 else 0)
    level_mask = (1 << level_power) - 1
    loss = [zero] * CASCADE_LEVELS
    weights = [zero] * CASCADE_LEVELS
    class_weights = None if weight is None else list(weight.data.astype(rows.dtype))
    picked = rows[np.arange(batch), [0 if t == ignore_index else t % n_classes
                                    for t in targets]]
    ignored = 0
    for b in range(batch):
        t = targets[b]
        if t == ignore_index:
            ignored += 1
            continue
        in_bounds([t], n_classes)
        if class_weights is None:
            loss[0] = loss[0] - picked[b]
        else:
            w = class_weights[t]
            loss[0] = loss[0] - picked[b] * w
            weights[0] = weights[0] + w
        for j in range(CASCADE_LEVELS - 1):
            if b & (level_mask << (j * level_power)):
                break
            weights[j + 1] = weights[j + 1] + weights[j]
            loss[j + 1] = loss[j + 1] + loss[j]
            weights[j] = loss[j] = zero
    total = rows.dtype.type(batch - ignored) if weight is None else added(zero, weights)
    return added(zero, loss), total


def added(zero: Any, values: list[Any]) -> Any:
    """std::accumulate from 0: left to right."""
    total = zero
    for v in values:
        total = total + v
    return total
