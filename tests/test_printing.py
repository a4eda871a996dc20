"""Values print as PyTorch prints them: compared with live torch's repr when installed."""

from __future__ import annotations

import numpy as np
import pytest

from app.trace.values import Texts
from engine.printing import format_suffix, format_values

torch = pytest.importorskip("torch", reason="torch is not installed: the printing comparison "
                            "with live PyTorch is skipped (pip install -e '.[torch]')")

RNG = np.random.RandomState(0)
CASES = {
    "wraps-at-80": np.arange(20, dtype=np.float32) * 1.5,
    "summarised-1d": np.arange(2000, dtype=np.float32) / 7,
    "summarised-2d": np.ones((50, 50), np.float32) * 0.5,
    "summarised-rows": np.arange(1200, dtype=np.float32).reshape(3, 400),
    "empty-2d": np.zeros((2, 0), np.float32),
    "empty-1d": np.array([], np.float32),
    "sci": np.array([1.5, 1e-5], np.float32),
    "2d": np.array([[1.0, 2.0], [3.0, 4.0]], np.float32),
    "int64": np.arange(30, dtype=np.int64),
    "3d": RNG.randn(4, 5, 6).astype(np.float32),
    "huge-ints": np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 1e9,
    "specials": np.array([np.nan, np.inf, -np.inf, -0.0, 2.0], np.float32),
}
SCALARS = [0.0, -0.0, np.nan, np.inf, 28.0, 1e9, 0.1, 1e-5, 123456.7891, -3.25, 1e8, 0.7616]


@pytest.mark.torch
@pytest.mark.parametrize("values", CASES.values(), ids=CASES.keys())
def test_tensors_print_as_pytorch_prints_them(values: np.ndarray) -> None:
    want = repr(torch.from_numpy(values.copy()))
    assert "tensor(" + format_values(values) + format_suffix(values) + ")" == want


@pytest.mark.torch
@pytest.mark.parametrize("value", SCALARS)
def test_scalars_print_as_pytorch_prints_them(value: float) -> None:
    want = repr(torch.tensor(value))
    assert f"tensor({format_values(np.float32(value))})" == want


@pytest.mark.torch
def test_a_trace_remembers_texts_without_mixing_up_signed_zeros() -> None:
    """`Texts` formats each value once per trace: printed twice, in any order, every value
    still reads as torch prints it (0.0 and -0.0 are one dict key, nan is never equal)."""
    texts = Texts()
    for value in [*SCALARS, *SCALARS[::-1]]:
        assert texts.printed(np.float32(value)) == repr(torch.tensor(value))
    assert texts.printed(None) is None
    assert texts.printed(CASES["2d"]) == repr(torch.from_numpy(CASES["2d"].copy()))
