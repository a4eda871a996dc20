"""`Texts`, the per-trace memo of printed values, prints as the general `printed` does."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.trace.values import Texts, printed

SCALARS = [0.0, -0.0, 1.0, -2.0, 28.0, 0.52, -1.5e-15, 3.0e9, 1.0e-5, 123456.78,
           math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("value", [*SCALARS, 7.0, -3.0])
def test_wrapped_numbers_print_the_short_way_as_the_general_way(value: float) -> None:
    """The 0-d float64 and int64 values that ops wrap and save take `Texts`' short way;
    it prints them as the general `printed` does."""
    texts = Texts()
    for number in (np.float64(value), *([np.int64(value)] if math.isfinite(value) else [])):
        assert texts.printed(number) == printed(number)
        assert texts.printed(number) == printed(number)      # and once remembered


def test_float32_scalars_print_as_the_general_way() -> None:
    texts = Texts()
    for value in [*SCALARS, *SCALARS[::-1]]:
        assert texts.printed(np.float32(value)) == printed(np.float32(value))


def test_node_ids_become_keys_in_any_order() -> None:
    texts = Texts()
    for counts in ({5: 0, 2: 1}, {0: 3, 12: 2, 5: 1}, {}):
        keyed = texts.by_id(counts)
        assert list(keyed.items()) == [(str(node), n) for node, n in counts.items()]


def test_numbers_are_the_same_int_objects_within_a_trace() -> None:
    texts = Texts()
    for n in [5, 0, 700, 2**64 - 1, 700, -3, 5, 1 << 30]:
        assert texts.number(n) == n and type(texts.number(n)) is int
    assert texts.number(700) is texts.number(700)        # made once, in both builds
    other = Texts()
    assert other.number(700) == 700
