"""The rules that the sixth round (tests/data/corpus/round6.jsonl) found the lab getting
wrong, each as a small program compared with live PyTorch.

The corpus pins each through a course-style program; these say the rule on its own."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="these compare with live PyTorch (pip install torch==2.13.0)")

from tests.differential import assert_same_as_torch

pytestmark = pytest.mark.torch

_W = "import torch\nw = torch.tensor(0.5, requires_grad=True)\n"
_Y = _W + "y = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]) * w\n"
_BITS = ("import torch\nimport torch.nn.functional as F\n"
         "x = torch.tensor([0.048, 0.52, 1.172, -1.624, -0.786], requires_grad=True)\n"
         "y = {}\nprint(y.tolist())\ny.sum().backward()\nprint(x.grad.tolist())\n")
_SHOW = "print(y.grad_fn.name(), y.grad_fn.next_functions)\ny.sum().backward()\nprint(w.grad)\n"

CASES = {
    # fill_ of a number is FillBackward2; of a 0-d tensor FillBackward3, whose value
    # gets the gradient summed
    "fill-number": _Y + "y.fill_(2.0)\n" + _SHOW,
    "fill-tensor": _W + "y = torch.ones(3)\ny.fill_(w * 3)\n" + _SHOW,
    "fill-1d-tensor": _W + "torch.ones(3).fill_(torch.ones(1))\n",
    # an index that takes all of y writes into y itself, not into a view of it:
    # a number or 0-d value fills (FillBackward3), a value of another shape is copied
    "setitem-whole-slice": _Y + "y[:] = 0.5\n" + _SHOW,
    "setitem-ellipsis-tensor": _Y + "y[...] = torch.tensor([1.0, 2.0, 3.0])\n" + _SHOW,
    "setitem-whole-slices-value": _Y + "y[:, :] = w * 2\n" + _SHOW,
    "setitem-0d-ellipsis": _W + "y = w * 3\ny[...] = 1.0\n" + _SHOW,
    "setitem-slice-to-the-end": _Y + "y[0:10] = 1.0\n" + _SHOW,
    # ... but a slice whose start is written negative is a slice (applySlice's test)
    "setitem-negative-start": _Y + "y[-2:] = 1.0\n" + _SHOW,
    "getitem-negative-start": _Y + "z = y[-2:, 0]\nprint(z.grad_fn.next_functions)\n",
    # None and True write through unsqueeze(0); False writes nothing
    "setitem-none": _Y + "y[None] = torch.tensor([1.0, 2.0, 3.0])\n" + _SHOW,
    "setitem-false": _Y + "y[False] = 3.0\n" + _SHOW,
    "getitem-true": _Y + "z = y[True]\nprint(z.shape, z.grad_fn.next_functions)\n",
    # basic parts select a view first, then one index op (or index_put_ into the view)
    "getitem-select-then-index": _Y + "z = y[0, [0, 2]]\nprint(z.grad_fn.next_functions)\n"
                                      "(z * z).sum().backward()\nprint(w.grad)\n",
    "getitem-slice-then-mask": _Y + "z = y[1:, torch.tensor([True, False, True])]\n"
                                    "print(z, z.grad_fn.next_functions)\n",
    "setitem-select-then-index-put": _Y + "y[1, [0, 1]] = w\n" + _SHOW,
    # index_put_'s checks: the value's dtype (any, with one mask) and shape
    "setitem-index-dtype": _Y + "y[[0, 1]] = torch.tensor(2)\n",
    "setitem-mask-any-dtype": _Y + "y[y > 0] = torch.tensor(2)\n" + _SHOW,
    "setitem-index-shape": _Y + "y[y > 0] = torch.tensor([1.0, 2.0])\n",
    "setitem-value-leading-ones": _Y + "y[:, [0, 1]] = torch.tensor([[[1.0, 2.0]]])\n" + _SHOW,
    # a 0-d tensor has no dimension to slice or index
    "slice-of-0d": _W + "z = (w * 2)[:]\n",
    "setitem-0d-too-many": _W + "y = w * 2\ny[..., 0] = 1.0\n",
    "getitem-0d-list": _W + "z = (w * 2)[[0]]\n",
    # a 0-d integer tensor indexes as its number, but counts as a dimension
    "getitem-0d-by-0d-tensor": _W + "z = (w * 2)[torch.tensor(1)]\n",
    "getitem-by-0d-tensor": _Y + "i = torch.tensor(1)\nz = y[i, i]\nprint(z, z.grad_fn)\n",
    # a version error names the node as PyTorch does: CopyBackwards whole, a custom
    # Function's SqBackward as "Sq"
    "version-error-copy-backwards": _W + "y = w * 1.0\nz = w * y\ny[...] = 0.5\n"
                                         "z.backward()\n",
    # relu and clamp keep x where it is not past the bound: -0.0 and nan stay
    "relu-clamp-negative-zero": "import torch\nx = torch.tensor([-0.0, 0.0, float('nan'), -2.0])\n"
                                "print(x.relu(), x.clamp(min=0.0), x.clamp(max=-0.0), "
                                "x.clamp(0.0, 0.0), x.clamp(2.0, 1.0))\n",
    # next() of model.parameters(), as tutorials find a model's device
    "next-parameter": "import torch\nimport torch.nn as nn\ntorch.manual_seed(3)\n"
                      "model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))\n"
                      "p = next(model.parameters())\n"
                      "print(p.shape, p.device, p is model[0].weight)\n"
                      "ps = model.parameters()\n"
                      "print(next(ps).shape, next(ps).shape, next(ps, 7))\n"
                      "print(next(model.named_parameters())[0])\nnext([1, 2])\n",
    # a device prints as `cpu` (str), `device(type='cpu')` in a container (repr)
    "device-str": "import torch\nx = torch.ones(2)\nprint(x.device, repr(x.device), "
                  "f'{x.device}', [x.device], x.device.type)\n",
    # float32 functions are correctly rounded, as PyTorch's are on this CPU (numpy's are an
    # ulp off for a third of the inputs): Note [Float32 functions]
    **{f"float32-{name}": _BITS.format(expr) for name, expr in [
        ("exp", "x.exp()"), ("log", "x.abs().log()"), ("tanh", "torch.tanh(x)"),
        ("sigmoid", "torch.sigmoid(x)"), ("elu", "F.elu(x)")]},
    # pow(tensor, number) raises to the exponent as written (double) in the scalar kernel
    "pow-double-exponent": _BITS.format("x.abs() ** 0.7"),
    "pow-tensor-exponent": _BITS.format("x.abs() ** x"),
    # silu's backward kernel fuses 1 + x * (1 - s); gelu's computes in float32
    "silu-backward-fma": _BITS.format("F.silu(x)"),
    "gelu-one-element": "import torch\nimport torch.nn.functional as F\n"
                        "x = torch.tensor([-0.361], requires_grad=True)\ny = F.gelu(x)\n"
                        "y.sum().backward()\nprint(y.item(), x.grad.item())\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_lab_does_what_pytorch_does(name: str) -> None:
    assert_same_as_torch(CASES[name])
