"""Fixtures shared by the test modules."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def torch() -> Any:
    """Live PyTorch, for the tests that compare with it; they skip, saying why, without it."""
    return pytest.importorskip("torch", reason="torch is not installed: these tests compare "
                               "with live PyTorch 2.13 (pip install torch==2.13.0)")


@pytest.fixture(scope="session")
def torch_avx2(torch: Any) -> Any:
    """Live PyTorch running the x86-64 AVX2/AVX512 kernels that engine/random.py reproduces
    (its Note [CPU capability]); elsewhere float draws may round differently, so the tests skip."""
    capability = torch.backends.cpu.get_cpu_capability()
    if capability not in ("AVX2", "AVX512"):
        pytest.skip(f"PyTorch runs its {capability} CPU kernels here; engine/random.py "
                    "reproduces the AVX2 and AVX512 ones")
    return torch
