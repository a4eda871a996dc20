"""Matrix products summed in MKL's order (engine/functions/blas.py, Note [MKL's summation
order]): recorded PyTorch bits that run without torch, and live torch where it is here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.context import AutogradContext
from engine.functions import blas, chains
from engine.functions.linalg import addmm, dot, mm, mv
from engine.functions.shape import t
from engine.tensor import Tensor

RECORDED = json.loads((Path(__file__).parent / "data" / "mkl_products.json").read_text())
F32 = np.float32


def _operands(seed: int, m: int, k: int, n: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """The recorder's inputs: a transposed operand is stored transposed and passed as a view."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(F32)
    b = rng.standard_normal((k, n)).astype(F32)
    if layout[0] == "T":
        a = np.ascontiguousarray(a.T).T
    if layout[1] == "T":
        b = np.ascontiguousarray(b.T).T
    return a, b


def _digest(values: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()


def test_recorded_products_have_pytorchs_bits() -> None:
    misses_by_numpy = 0
    cases = [c for c in RECORDED["cases"] if c["op"] == "mm"]
    assert len(cases) > 50
    for case in cases:
        m, k, n = case["shape"]
        a, b = _operands(case["seed"], m, k, n, case["layout"])
        ctx = AutogradContext()
        got = mm(Tensor(a, ctx), Tensor(b, ctx)).data
        assert _digest(got) == case["sha256"], case
        misses_by_numpy += _digest((a @ b).astype(F32)) != case["sha256"]
    assert misses_by_numpy > 10       # numpy's sum is not MKL's: the cases have teeth


def test_recorded_double_products_have_pytorchs_bits() -> None:
    """Note [dgemm's chains]: float64 `a @ b` and `a.t() @ b`."""
    cases = [c for c in RECORDED["cases"] if c["op"] == "mm64"]
    misses_by_numpy = 0
    for case in cases:
        rng = np.random.default_rng(case["seed"])
        m, k, n = case["shape"]
        a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        if case["layout"] == "TN":
            a = np.ascontiguousarray(a.T).T
        ctx = AutogradContext()
        assert _digest(mm(Tensor(a, ctx), Tensor(b, ctx)).data) == case["sha256"], case
        misses_by_numpy += _digest(a @ b) != case["sha256"]
    assert len(cases) > 30 and misses_by_numpy > 3


def test_recorded_dots_have_pytorchs_bits() -> None:
    cases = [c for c in RECORDED["cases"] if c["op"] == "dot"]
    misses_by_numpy = 0
    for case in cases:
        rng = np.random.default_rng(case["seed"])
        (k,) = case["shape"]
        x, y = rng.standard_normal(k).astype(F32), rng.standard_normal(k).astype(F32)
        ctx = AutogradContext()
        assert _digest(dot(Tensor(x, ctx), Tensor(y, ctx)).data) == case["sha256"], case
        misses_by_numpy += _digest(np.asarray(np.dot(x, y), F32)) != case["sha256"]
    assert misses_by_numpy > 3


def test_recorded_matrix_vector_products_have_pytorchs_bits() -> None:
    cases = [c for c in RECORDED["cases"] if c["op"] == "mv"]
    misses_by_numpy = 0
    for case in cases:
        rng = np.random.default_rng(case["seed"])
        m, k = case["shape"]
        a, x = rng.standard_normal((m, k)).astype(F32), rng.standard_normal(k).astype(F32)
        ctx = AutogradContext()
        assert _digest(mv(Tensor(a, ctx), Tensor(x, ctx)).data) == case["sha256"], case
        misses_by_numpy += _digest((a @ x).astype(F32)) != case["sha256"]
    assert len(cases) > 8 and misses_by_numpy > 3


def test_the_kernels_are_left_to_numpy_where_mkl_sums_otherwise() -> None:
    """One row times 16 columns or more, one column (sgemv), depth beyond 384 (blocks
    by shape), float64 `a @ b.t()`."""
    rng = np.random.default_rng(0)
    assert blas.gemm(rng.standard_normal((1, 8)).astype(F32),
                     rng.standard_normal((8, 20)).astype(F32)) is None
    assert blas.gemm(rng.standard_normal((4, 8)).astype(F32),
                     rng.standard_normal((8, 1)).astype(F32)) is None
    assert blas.gemm(rng.standard_normal((4, 385)).astype(F32),
                     rng.standard_normal((385, 4)).astype(F32)) is None
    assert blas.gemm(rng.standard_normal((4, 8)), rng.standard_normal((4, 8)).T) is None
    tall = rng.standard_normal((200, 100)).astype(F32)       # rows split between threads
    assert blas.gemv(tall, rng.standard_normal(100).astype(F32)) is None
    assert blas.gemv(np.ascontiguousarray(tall.T).T[:8], tall[0]) is None   # transposed
    assert blas.dot(rng.standard_normal(8), rng.standard_normal(8)) is None


def test_a_negative_zero_sum_is_positive_zero() -> None:
    """MKL starts each chain from +0.0 (Note [Signs of zero products])."""
    a = np.array([[-0.0, 0.0], [1.0, 2.0]], F32)
    b = np.array([[1.0, 1.0], [-0.0, -1.0]], F32)
    got = blas.gemm(a, b)
    assert got is not None and not np.signbit(got[0, 0])
    summed = blas.dot(np.array([-0.0], F32), np.array([1.0], F32))
    assert summed is not None and not np.signbit(summed)


def test_the_step_by_step_chains_have_pytorchs_bits() -> None:
    """As where numpy's BLAS does not sum the chains (Note [numpy's BLAS as the chain])."""
    cases = [c for c in RECORDED["cases"] if c["op"] == "mm"]
    chained = 0
    for case in cases:
        m, k, n = case["shape"]
        a, b = _operands(case["seed"], m, k, n, case["layout"])
        if blas._packed(a, b):
            assert _digest(chains._step_by_step(a, b)) == case["sha256"], case
            chained += 1
    assert chained > 30


def test_numpys_blas_sums_the_chains_step_by_steps_way() -> None:
    """Note [numpy's BLAS as the chain]: every layout, one row, zeros, infinities, and
    products small enough that a chain ends in -0.0."""
    if not chains.NUMPY_CHAINS:
        pytest.skip("this numpy's BLAS does not sum as one chain: the chains go step by step")
    rng = np.random.default_rng(7)
    layouts, negative_zeros = set(), 0
    for trial in range(600):
        m, n = int(rng.integers(1, 24)), int(rng.integers(2, 24))
        k = int(rng.integers(1, 4 if trial % 3 == 0 else 385))
        layout = "NN" if m == 1 else str(rng.choice(["NN", "NT", "TN"]))
        a, b = _operands(trial, m, k, n, layout)
        if trial % 5 == 0:
            a *= rng.integers(0, 2, a.shape).astype(F32)
        if trial % 7 == 0:
            a *= F32(2.0 ** -80)
            b *= F32(2.0 ** -80)
        if trial % 11 == 0:
            b[0, 0] = np.inf
        if not blas._packed(a, b):
            continue
        layouts.add(layout)
        with np.errstate(invalid="ignore"):
            got, want = chains._by_openblas(a, b), chains._step_by_step(a, b)
        assert _digest(got) == _digest(want), (m, k, n, layout)
        negative_zeros += int(np.sum((want == 0) & np.signbit(want)))
    assert layouts == {"NN", "NT", "TN"} and negative_zeros > 0


@pytest.mark.skipif(chains.NATIVE is None, reason="this build has no C chains (the pure build)")
def test_the_c_chains_sum_as_step_by_step_does() -> None:
    """Note [The chains in C]: every layout, views with gaps, one row, zeros, infinities,
    chains that end in -0.0, and float64 as numpy's BLAS sums its chains."""
    rng = np.random.default_rng(8)
    negative_zeros = doubles = 0
    for trial in range(600):
        m, n = int(rng.integers(1, 24)), int(rng.integers(1, 24))
        k = int(rng.integers(1, 4 if trial % 3 == 0 else 385))
        a, b = _operands(trial, m, k, n, str(rng.choice(["NN", "NT", "TN", "TT"])))
        if trial % 4 == 0:
            a, b = np.repeat(a, 2, axis=1)[:, ::2], b[:, :]     # a view with gaps
        if trial % 5 == 0:
            a *= rng.integers(0, 2, a.shape).astype(F32)
        if trial % 7 == 0:
            a *= F32(2.0 ** -80)
            b *= F32(2.0 ** -80)
        if trial % 11 == 0:
            b[0, 0] = np.inf
        with np.errstate(invalid="ignore"):
            got, want = chains._in_c(a, b), chains._step_by_step(a, b)
        assert _digest(got) == _digest(want), (m, k, n, trial)
        negative_zeros += int(np.sum((want == 0) & np.signbit(want)))
        if chains.NUMPY_DOUBLE_CHAINS and m > 1 and n > 1 and trial % 11:
            a64, b64 = a.astype(np.float64) * np.pi, b.astype(np.float64) / 3
            got = chains._in_c(a64, b64)
            assert _digest(got) == _digest(chains._in_chain_layout(a64, b64)), (m, k, n)
            doubles += 1
    assert negative_zeros > 0 and (doubles > 100 or not chains.NUMPY_DOUBLE_CHAINS)
    with pytest.raises(ValueError, match="float32 or three float64"):
        chains.NATIVE.chains(np.ones((2, 2), F32), np.ones((2, 2)), np.ones((2, 2), F32))
    with pytest.raises(ValueError, match="shapes"):
        chains.NATIVE.chains(np.ones((2, 3), F32), np.ones((2, 2), F32), np.ones((2, 2), F32))


# -- live PyTorch -------------------------------------------------------------------------


def test_double_products_have_live_torchs_bits(torch_mkl: Any) -> None:
    """Note [dgemm's chains]: every claimed float64 shape, and the limits of the claim."""
    torch = torch_mkl
    rng = np.random.default_rng(64)
    claimed = 0
    for seed in range(300):
        m, n = (int(v) for v in rng.integers(1, 90, 2))
        k = int(rng.integers(1, 20) if seed % 3 == 0 else rng.integers(1, 400))
        layout = ("NN", "TN", "NT")[seed % 3]
        a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        if seed % 7 == 0:
            a *= rng.integers(0, 2, a.shape)
        a, b = (np.ascontiguousarray(a.T).T if layout[0] == "T" else a,
                np.ascontiguousarray(b.T).T if layout[1] == "T" else b)
        got = blas.gemm(a, b)
        if got is None:
            assert (layout == "NT" or min(m, n) == 1 or k > blas.PACKED_DEPTH
                    or m * k * n > chains.DOUBLE_PRODUCTS)
            continue
        want = (_torch_operand(torch, a) @ _torch_operand(torch, b)).numpy()
        assert _digest(got) == _digest(want), (m, k, n, layout)
        claimed += 1
    assert claimed > 100


def _torch_operand(torch: Any, values: np.ndarray) -> Any:
    if values.strides[0] == values.itemsize and values.shape[0] > 1:
        return torch.from_numpy(np.ascontiguousarray(values.T)).t()
    return torch.from_numpy(values)


@pytest.mark.parametrize("layout", ["NN", "NT", "TN"])
def test_every_claimed_shape_has_live_torchs_bits(torch_mkl: Any, layout: str) -> None:
    torch = torch_mkl
    rng = np.random.default_rng(len(layout) + ord(layout[1]))
    claimed = 0
    for seed in range(150):
        m, n = (int(v) for v in rng.integers(1, 48, 2))
        k = int(rng.integers(1, 20) if seed % 2 else rng.integers(1, 385))
        a, b = _operands(seed, m, k, n, layout)
        got = blas.gemm(a, b)
        if got is None:
            continue
        claimed += 1
        want = _torch_operand(torch, a) @ _torch_operand(torch, b)
        assert got.tobytes() == want.numpy().tobytes(), (layout, m, k, n)
    assert claimed > 60


def test_linear_layers_have_live_torchs_bits(torch_mkl: Any) -> None:
    """nn.Linear's addmm: the bias added to the finished chain; its backward's products."""
    torch = torch_mkl
    rng = np.random.default_rng(7)
    for batch, inputs, outputs in [(8, 16, 32), (8, 32, 4), (16, 8, 16), (64, 10, 10)]:
        x = rng.standard_normal((batch, inputs)).astype(F32)
        w = rng.standard_normal((outputs, inputs)).astype(F32)
        bias = rng.standard_normal(outputs).astype(F32)
        g = rng.standard_normal((batch, outputs)).astype(F32)
        tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
        want = torch.nn.functional.linear(tx, tw, torch.tensor(bias))
        want.backward(torch.tensor(g))
        ctx = AutogradContext()
        lx, lw = Tensor(x, ctx, requires_grad=True), Tensor(w, ctx, requires_grad=True)
        got = addmm(Tensor(bias, ctx), lx, t(lw))
        assert got.data.tobytes() == want.detach().numpy().tobytes()
        assert got.grad_fn is not None
        _, grad_x, grad_wt = got.grad_fn.apply([Tensor(g, ctx)])
        assert grad_x is not None and grad_wt is not None
        assert grad_x.data.tobytes() == tx.grad.numpy().tobytes()
        assert np.ascontiguousarray(grad_wt.data.T).tobytes() == tw.grad.numpy().tobytes()


def test_dots_of_every_length_have_live_torchs_bits(torch_mkl: Any) -> None:
    torch = torch_mkl
    rng = np.random.default_rng(3)
    for k in [*range(1, 140), 255, 256, 257, 1000, 4099]:
        x = rng.standard_normal(k + 3).astype(F32)[3:]        # a view starting anywhere
        y = rng.standard_normal(k).astype(F32)
        got = blas.dot(x, y)
        want = torch.dot(torch.from_numpy(x), torch.from_numpy(y)).numpy()
        assert got is not None and got.tobytes() == want.tobytes(), k


def test_matrix_vector_products_have_live_torchs_bits(torch_mkl: Any) -> None:
    """Rows in fours (any depth), rows left over (up to 32), mm with one column."""
    torch = torch_mkl
    rng = np.random.default_rng(11)
    for _ in range(300):
        m = int(rng.integers(1, 40))
        k = int(rng.integers(1, 40) if rng.random() < 0.5 else rng.integers(1, 300))
        a, x = torch.randn(m, k), torch.randn(k)
        got = blas.gemv(a.numpy(), x.numpy())
        if got is None:
            continue
        known = np.arange(m) < m - m % 4 if k > 32 else np.ones(m, bool)
        want = torch.mv(a, x).numpy()
        assert got[known].tobytes() == want[known].tobytes(), (m, k)
        if m > 1:                                        # mm to one column: the same call
            assert torch.equal(a @ x[:, None], torch.mv(a, x)[:, None])


def test_short_rows_times_a_transpose_have_live_torchs_bits(torch_mkl: Any) -> None:
    """nn.Linear on a small batch: `x @ w.t()` by the dot-product kernel, bias after."""
    torch = torch_mkl
    rng = np.random.default_rng(12)
    claimed = 0
    for _ in range(400):
        m, n = (int(v) for v in rng.integers(2, 20, 2))
        k = int(rng.integers(1, 32))
        x = rng.standard_normal((m, k)).astype(F32)
        w = rng.standard_normal((n, k)).astype(F32)
        bias = rng.standard_normal(n).astype(F32)
        if blas._packed(x, w.T):
            continue
        claimed += 1
        ctx = AutogradContext()
        got = addmm(Tensor(bias, ctx), Tensor(x, ctx), t(Tensor(w, ctx))).data
        want = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(bias))
        assert got.tobytes() == want.numpy().tobytes(), (m, k, n)
    assert claimed > 30


def test_one_sample_through_a_linear_layer_is_mv(torch_mkl: Any) -> None:
    """`x @ W.t()` of one row is sgemv on W's rows, as mv(W, x) is."""
    torch = torch_mkl
    rng = np.random.default_rng(13)
    for _ in range(200):
        n, k = int(rng.integers(2, 40)), int(rng.integers(1, 33))
        x = rng.standard_normal((1, k)).astype(F32)
        w = rng.standard_normal((n, k)).astype(F32)
        ctx = AutogradContext()
        got = mm(Tensor(x, ctx), t(Tensor(w, ctx))).data
        want = torch.from_numpy(x) @ torch.from_numpy(w).t()
        assert got.tobytes() == want.numpy().tobytes(), (n, k)


def test_one_row_times_a_matrix_has_live_torchs_bits(torch_mkl: Any) -> None:
    """`x @ W` of one row: a chain per column, where the Note says the order is known."""
    torch = torch_mkl
    rng = np.random.default_rng(14)
    claimed = 0
    for _ in range(300):
        n, k = int(rng.integers(2, 40)), int(rng.integers(1, 300))
        x = rng.standard_normal((1, k)).astype(F32)
        w = rng.standard_normal((k, n)).astype(F32)
        got = blas.gemm(x, w)
        if got is None:
            continue
        claimed += 1
        want = torch.from_numpy(x) @ torch.from_numpy(w)
        assert got.tobytes() == want.numpy().tobytes(), (n, k)
    assert claimed > 50


def test_mv_of_a_transposed_matrix_is_one_row_times_the_matrix(torch_mkl: Any) -> None:
    """mv's backward `mv(self.t(), grad)`: sgemv on a column-major matrix, `g @ X`."""
    torch = torch_mkl
    rng = np.random.default_rng(15)
    claimed = 0
    for _ in range(300):
        n, k = int(rng.integers(2, 20)), int(rng.integers(1, 300))
        x = rng.standard_normal((k, n)).astype(F32)
        g = rng.standard_normal(k).astype(F32)
        ctx = AutogradContext()
        got = mv(t(Tensor(x, ctx)), Tensor(g, ctx)).data
        want = torch.mv(torch.from_numpy(x).t(), torch.from_numpy(g)).numpy()
        if blas.gemm(g[None, :], x) is not None:
            claimed += 1
            assert got.tobytes() == want.tobytes(), (n, k)
    assert claimed > 50
