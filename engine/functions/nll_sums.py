"""nll_loss's kernel (LossNLL.cpp `nll_loss_out_frame`): its bounds check and the cascade
in which it adds a reduced loss and its total weight."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine import errors
from engine.tensor import Tensor


def in_bounds(classes: list[int], n_classes: int) -> None:
    """The kernel's check, in sample order: the first class out of range is named."""
    for c in classes:
        if not 0 <= c < n_classes:
            raise errors.TorchError("IndexError", f"Target {c} is out of bounds.")


CASCADE_LEVELS = 8


def cascaded_sums(rows: np.ndarray, targets: list[int], weight: Tensor | None,
                   ignore_index: int) -> tuple[Any, Any]:
    """`nll_loss_out_frame` (LossNLL.cpp) for a reduced loss: the sum of -input[b, target]
    (times the class weight) and the total weight, in the input's dtype, added as the
    kernel adds them. Each sample goes into level 0; after sample b, every level j whose
    bits of b are all 0 is carried into level j+1 (so sample 0 climbs to the top); an
    ignored sample is skipped before its carry. The levels are then added from 0, in
    order. Without weights the total weight is the count of samples kept."""
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
