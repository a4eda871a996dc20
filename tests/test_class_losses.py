"""nll_loss and cross_entropy with class indices against live PyTorch: every reduction,
ignore_index, class weights (and the kernel's checks of them: one weight per class, in the
input's dtype, checked after the targets' batch and dtype and before their bounds),
1-D inputs, and the gradients of each, down to a double backward."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="these compare with live PyTorch (pip install torch==2.13.0)")

from tests.differential import assert_same_as_torch

pytestmark = pytest.mark.torch

_H = ("import torch\nimport torch.nn.functional as F\n"
      "x = torch.tensor([[0.5, -1.0, 2.0, 0.1], [1.5, 0.2, -0.3, 0.9], [-2.0, 0.7, 0.4, 1.1],"
      " [0.3, 0.3, -0.8, 2.2], [1.0, -0.5, 0.6, -1.2]], requires_grad=True)\n"
      "t = torch.tensor([2, 0, 3, 3, 1])\n"
      "w = torch.tensor([0.5, 2.0, 1.0, 0.25])\n")

CASES = {
    **{f"{loss}-{reduction}-{weighted}": _H + f"y = F.{loss}(x, t, reduction='{reduction}'"
       f"{', weight=w' if weighted == 'weighted' else ''})\nprint(y)\n"
       "(y * torch.arange(1.0, 6.0) if y.dim() else y).sum().backward()\nprint(x.grad)\n"
       for loss in ("nll_loss", "cross_entropy") for reduction in ("mean", "sum", "none")
       for weighted in ("weighted", "plain")},
    "ignore-index": _H + "y = F.cross_entropy(x, t, weight=w, ignore_index=3)\n"
                         "y.backward()\nprint(y, x.grad)\n",
    "ignore-every-target": _H + "y = F.nll_loss(x, t, ignore_index=3, reduction='none')\n"
                                "print(y)\nz = F.nll_loss(x[2:4], t[2:4], ignore_index=3)\n"
                                "print(z)\n",
    "one-sample": _H + "y = F.cross_entropy(x[1], t[1], weight=w)\ny.backward()\n"
                       "print(y, x.grad)\n",
    "double-backward": _H + "y = F.cross_entropy(x * x, t, weight=w)\n"
                            "g, = torch.autograd.grad(y, x, create_graph=True)\n"
                            "g.pow(2).sum().backward()\n",   # x.grad: in grads
    "float64": _H + "y = F.nll_loss(x.double(), t, weight=w.double(), reduction='sum')\n"
                    "y.backward()\nprint(y, x.grad)\n",
    # the kernel's checks, in PyTorch's order
    "weight-double": _H + "F.nll_loss(x, t, weight=w.double())\n",
    "weight-long": _H + "F.cross_entropy(x, t, weight=torch.tensor([1, 2, 3, 4]))\n",
    "weight-too-long": _H + "F.nll_loss(x, t, weight=torch.ones(5))\n",
    "weight-2d": _H + "F.nll_loss(x, t, weight=torch.ones(2, 2))\n",
    "weight-of-a-1d-input": _H + "F.nll_loss(x[0], t[0], weight=torch.ones(3))\n",
    "weight-dtype-before-bounds": _H + "F.nll_loss(x, torch.tensor([0, 1, 9, 2, 2]), "
                                       "weight=w.double())\n",
    "batch-before-weight": _H + "F.nll_loss(x, t[:2], weight=w.double())\n",
    "target-dtype-before-weight": _H + "F.nll_loss(x, t.float(), weight=torch.ones(9))\n",
    "out-of-bounds": _H + "F.cross_entropy(x, torch.tensor([0, 4, 1, -1, 2]))\n",
    "negative-target": _H + "F.nll_loss(x, torch.tensor([0, 1, -1, 2, 2]))\n",
    "saved-total-weight": _H + "for kw in ({}, {'weight': w}):\n"
                               "    for r in ('none', 'sum', 'mean'):\n"
                               "        y = F.nll_loss(x, t, reduction=r, **kw)\n"
                               "        print(r, y.grad_fn._saved_total_weight)\n"
                               "        z = F.nll_loss(x[1], t[1], reduction=r, **kw)\n"
                               "        print(r, z, z.grad_fn._saved_total_weight)\n",
    "ignored-out-of-bounds": _H + "y = F.nll_loss(x, torch.tensor([0, 9, 1, 9, 2]), "
                                  "ignore_index=9)\ny.backward()\nprint(y, x.grad)\n",
}


@pytest.mark.parametrize("source", CASES.values(), ids=CASES.keys())
def test_class_losses_as_pytorch(source: str) -> None:
    assert_same_as_torch(source)


def test_reduced_losses_add_in_the_kernels_order_to_the_bit() -> None:
    """nll_loss_out_frame's cascade of partial sums (and its backward's -(g / total) times
    the weight): batches from 1 to 5,000, weighted or not, some samples ignored, give live
    torch's bits, loss and gradient, in float32 and float64."""
    import numpy as np
    import torch

    from engine.context import AutogradContext
    from engine.functions.classification import nll_loss
    from engine.tensor import Tensor

    rng = np.random.default_rng(3)
    ctx = AutogradContext()
    for batch in (1, 3, 8, 16, 17, 33, 100, 257, 5000):
        for trial in range(6):
            dtype = np.float64 if trial == 5 else np.float32
            values = (rng.standard_normal((batch, 5)) * rng.choice([1.0, 1e4])).astype(dtype)
            targets = rng.integers(0, 5, batch)
            if trial % 2:
                targets[rng.random(batch) < 0.3] = -100
            weight = rng.uniform(0.1, 3.0, 5).astype(dtype) if trial in (2, 3) else None
            for reduction in ("mean", "sum"):
                x = torch.tensor(values, requires_grad=True)
                want = torch.nn.functional.nll_loss(
                    x, torch.tensor(targets), None if weight is None else torch.tensor(weight),
                    reduction=reduction)
                want.backward(torch.tensor(0.37, dtype=x.dtype))
                lab_x = Tensor(values, ctx, requires_grad=True)
                got = nll_loss(lab_x, Tensor(targets, ctx),
                               None if weight is None else Tensor(weight, ctx),
                               reduction=reduction)
                assert got.data.tobytes() == want.detach().numpy().tobytes(), (batch, trial)
                assert got.grad_fn is not None
                (grad,) = got.grad_fn.apply([Tensor(np.asarray(0.37, dtype), ctx)])
                assert grad is not None and grad.data.tobytes() == x.grad.numpy().tobytes(), (
                    batch, trial, reduction)
