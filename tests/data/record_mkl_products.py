"""Records PyTorch's matrix-product bits into tests/data/mkl_products.json (tests/test_blas.py).

Run from the project's root with PyTorch 2.13 installed:
`python tests/data/record_mkl_products.py`. Only products whose order the lab claims to
reproduce (engine/functions/blas.py) are kept; each is stored as the inputs' seed and the
SHA-256 of PyTorch's result bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, os.getcwd())
from engine.functions import blas

F32 = np.float32
OUT = Path("tests/data/mkl_products.json")


def _digest(values: torch.Tensor) -> str:
    return hashlib.sha256(values.numpy().tobytes()).hexdigest()


def _operands(seed: int, m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)).astype(F32), rng.standard_normal((k, n)).astype(F32)


def _layout(values: np.ndarray, transposed: bool) -> tuple[np.ndarray, torch.Tensor]:
    """(the lab's operand, torch's): a transposed one stored transposed, used as a view."""
    if not transposed:
        return values, torch.from_numpy(values)
    stored = np.ascontiguousarray(values.T)
    return stored.T, torch.from_numpy(stored).t()


def products() -> list[dict[str, object]]:
    rng = np.random.default_rng(2026)
    shapes = [(8, 16, 32, "NN"), (8, 32, 4, "NN"), (8, 4, 32, "NT"), (32, 8, 4, "TN"),
              (16, 8, 32, "TN"), (2, 2, 3, "NN"), (5, 3, 2, "TN"), (4, 4, 4, "NT"),
              (64, 10, 10, "NT"), (16, 300, 20, "NN"), (3, 7, 12, "NT"), (11, 40, 3, "NT")]
    shapes += [(int(rng.integers(2, 40)), int(rng.integers(1, 385)), int(rng.integers(2, 40)),
                ("NN", "NT", "TN")[t % 3]) for t in range(60)]
    shapes += [(2, 2, 3, "NT"), (2, 3, 3, "NT"), (5, 3, 2, "NT"), (8, 7, 3, "NT"),
               (3, 16, 5, "NT"), (4, 20, 2, "NT"), (6, 31, 9, "NT")]
    cases: list[dict[str, object]] = []
    for seed, (m, k, n, layout) in enumerate(shapes):
        a, b = _operands(seed, m, k, n)
        lab_a, torch_a = _layout(a, layout[0] == "T")
        lab_b, torch_b = _layout(b, layout[1] == "T")
        if blas.gemm(lab_a, lab_b) is not None:
            cases.append({"op": "mm", "seed": seed, "shape": [m, k, n], "layout": layout,
                          "sha256": _digest(torch_a @ torch_b)})
    for i, (m, k) in enumerate([(4, 1), (4, 3), (8, 16), (8, 17), (12, 40), (4, 399), (2, 3),
                                (3, 32), (5, 9), (8, 100), (1, 20)]):
        r = np.random.default_rng(20_000 + i)
        a, x = r.standard_normal((m, k)).astype(F32), r.standard_normal(k).astype(F32)
        cases.append({"op": "mv", "seed": 20_000 + i, "shape": [m, k],
                      "sha256": _digest(torch.mv(torch.from_numpy(a), torch.from_numpy(x)))})
    for i, k in enumerate([1, 2, 3, 15, 16, 17, 31, 33, 63, 64, 65, 100, 129, 200, 257, 1000]):
        r = np.random.default_rng(10_000 + i)
        x, y = r.standard_normal(k).astype(F32), r.standard_normal(k).astype(F32)
        cases.append({"op": "dot", "seed": 10_000 + i, "shape": [k],
                      "sha256": _digest(torch.dot(torch.from_numpy(x), torch.from_numpy(y)))})
    for i in range(40):                 # float64 (Note [dgemm's chains])
        m, k, n = int(rng.integers(2, 60)), int(rng.integers(1, 385)), int(rng.integers(2, 60))
        r = np.random.default_rng(30_000 + i)
        a, b = r.standard_normal((m, k)), r.standard_normal((k, n))
        layout = ("NN", "TN")[i % 2]
        lab_a, torch_a = _layout(a, layout == "TN")
        if blas.gemm(lab_a, b) is not None:
            cases.append({"op": "mm64", "seed": 30_000 + i, "shape": [m, k, n],
                          "layout": layout, "sha256": _digest(torch_a @ torch.from_numpy(b))})
    return cases


def main() -> None:
    cases = products()
    OUT.write_text(json.dumps({
        "recorded_with": f"torch {torch.__version__}, MKL, "
                         f"{torch.backends.cpu.get_cpu_capability()}",
        "inputs": "numpy.random.default_rng(seed).standard_normal: (m, k) then (k, n) float32 "
                  "(mv: (m, k) then k; dot: two of k; mm64: float64, drawn from "
                  "default_rng(seed) in float64); layout T: stored transposed, passed as a "
                  ".t() view",
        "cases": cases}, indent=1) + "\n")
    print(f"{len(cases)} cases -> {OUT}")


if __name__ == "__main__":
    main()
