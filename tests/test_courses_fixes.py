"""The rules that the second round of course programs (tests/data/corpus/courses_extra.jsonl)
found the lab getting wrong, each as small programs compared with live PyTorch.

The corpus pins each through a recorded tutorial program; these say the rule on its own,
with its neighbours that must not change (a Python-written function keeps refusing NumPy's
names, a tuple index keeps skipping whole slices)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="these compare with live PyTorch (pip install torch==2.13.0)")

from tests.differential import lab, report
from tests.matching import differences
from tests.torch_recorder import record

pytestmark = pytest.mark.torch

_X = "import torch\nx = torch.tensor([[1.0, 2.0, 3.0], [4.0, 0.5, -1.0]], requires_grad=True)\n"

_NN = "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"

CASES = {
    # PyTorch's argument parser takes NumPy's names for dim/keepdim of native functions
    "axis-of-a-reduction": _X + "y = x.sum(axis=1)\nprint(y, x.mean(axis=0, keepdims=True))\n"
                                "y.sum().backward()\n",
    "axis-of-argmax": _X + "print(x.argmax(axis=1), torch.argmax(x, axis=0))\n",
    "axis-of-torch-functions": _X + "y = torch.cat([x, x], axis=0).softmax(axis=1)\n"
                                    "z = torch.max(y, axis=1, keepdims=True).values\n"
                                    "z.sum().backward()\nprint(z)\n",
    # ... but not of the functions PyTorch writes in Python: Python's TypeError there
    "no-axis-for-F-softmax": _X + "import torch.nn.functional as F\n"
                                  "y = F.softmax(x, axis=1)\n",
    "no-axis-for-torch-norm": _X + "y = torch.norm(x, axis=1)\n",
    # a range in an index is a sequence of ints, as a list is (d2l's cross_entropy)
    "range-in-a-tuple-index": _X + "y = x[range(len(x)), torch.tensor([2, 0])]\n"
                                   "print(y)\n(-torch.log(y.abs())).sum().backward()\n",
    "range-alone": _X + "y = x[range(1, 2)]\ny.sum().backward()\nprint(y.grad_fn.name())\n",
    # a lone slice always slices (SliceBackward0), even when it covers the whole dimension;
    # inside a tuple a whole slice is skipped, and nothing at all left is an alias
    "lone-whole-slice": _X + "y = x[:]\nz = x[:5]\nw = x[0:1][:2]\n"
                             "print(y.grad_fn.name(), z.grad_fn.name(), w.grad_fn.name())\n"
                             "(y.sum() + z.sum() + w.sum()).backward()\n",
    "whole-slices-in-a-tuple": _X + "y = x[:, :]\nz = x[:, :3]\nv = x[..., :]\n"
                                    "print(y.grad_fn.name(), z.grad_fn.name(), v.grad_fn.name())\n"
                                    "(y.sum() * z.sum() * v.sum()).backward()\n",
    # a factory's sizes can be given as `size=` (d2l's torch.randn(size=(), requires_grad=True))
    "size-keyword-of-factories": "import torch\ntorch.manual_seed(3)\n"
                                 "a = torch.randn(size=(), requires_grad=True)\n"
                                 "b = torch.rand(size=(2,)) + torch.zeros(size=(2,))\n"
                                 "(a * b + torch.ones(size=(1, 2))).sum().backward()\n"
                                 "print(a, b, a.grad)\n",
    "size-twice": "import torch\nz = torch.zeros(2, size=(3,))\n",
    # `input` is the program's own variable where the program binds it (PyTorch's docs and
    # tutorials do: `input = torch.randn(3, 5)`, `def forward(ctx, input)`); reading the
    # builtin stays refused (tests/bad_input_rows.py)
    "input-as-a-variable": "import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\n"
                           "input = torch.randn(3, 5, requires_grad=True)\n"
                           "target = torch.tensor([1, 0, 4])\n"
                           "output = nn.CrossEntropyLoss()(input, target)\noutput.backward()\n"
                           "print(output, input.grad)\n",
    "input-as-a-parameter": "import torch\nclass Cube(torch.autograd.Function):\n"
                            "    @staticmethod\n    def forward(ctx, input):\n"
                            "        ctx.save_for_backward(input)\n        return input ** 3\n"
                            "    @staticmethod\n    def backward(ctx, grad_output):\n"
                            "        input, = ctx.saved_tensors\n"
                            "        return grad_output * 3 * input ** 2\n"
                            "x = torch.tensor([0.5, -2.0], requires_grad=True)\n"
                            "Cube.apply(x).sum().backward()\nprint(x.grad)\n",
    # gradcheck records nodes as PyTorch's does (its calls run with grad on, then its own
    # arithmetic): the nodes after it have PyTorch's numbers
    "nodes-after-gradcheck": "import torch\n"
                             "x = torch.tensor([0.5, -2.0, 1.5], dtype=torch.double, "
                             "requires_grad=True)\n"
                             "print(torch.autograd.gradcheck(lambda t: (t * t.sin()).sum(),\n"
                             "                               (x,)))\n"
                             "y = (x * 2).exp().sum()\ny.backward()\n",
    "nodes-after-gradcheck-of-two-inputs": "import torch\n"
                                           "a = torch.tensor([0.3, 0.4], dtype=torch.double, "
                                           "requires_grad=True)\n"
                                           "b = torch.tensor(0.7, dtype=torch.double, "
                                           "requires_grad=True)\n"
                                           "ok = torch.autograd.gradcheck(lambda p, q: p * q, "
                                           "(a, b), check_undefined_grad=False)\n"
                                           "(a * b).sum().backward()\nprint(ok)\n",
    "nodes-after-gradcheck-of-a-custom-function": "import torch\n"
                            "class Cube(torch.autograd.Function):\n"
                            "    @staticmethod\n    def forward(ctx, t):\n"
                            "        print('forward')\n"
                            "        ctx.save_for_backward(t)\n        return t ** 3\n"
                            "    @staticmethod\n    def backward(ctx, g):\n"
                            "        t, = ctx.saved_tensors\n        return g * 3 * t ** 2\n"
                            "x = torch.tensor([0.5, -2.0], dtype=torch.double,\n"
                            "                 requires_grad=True)\n"
                            "print(torch.autograd.gradcheck(Cube.apply, (x,), eps=1e-6,\n"
                            "                               atol=1e-4))\n"
                            "Cube.apply(x).sum().backward()\n",
    # a Linear's sizes are attributes (fine-tuning: nn.Linear(model.fc.in_features, 2))
    "linear-in-features": "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
                          "fc = nn.Linear(3, 4)\nhead = nn.Linear(fc.out_features, 2)\n"
                          "print(fc.in_features, head)\n"
                          "head(fc(torch.ones(1, 3))).sum().backward()\n",
    # a layer's constructor and forward raise Python's argument errors, named as PyTorch
    # names them (the class that defines __init__; `Linear.forward()`)
    "linear-missing-out-features": _NN + "m = nn.Linear(3)\n",
    "loss-too-many-arguments": _NN + "m = nn.MSELoss(None, None, 'sum', 4)\n",
    "cross-entropy-weight-first": _NN + "m = nn.CrossEntropyLoss(None, None, 1)\n"
                                        "print(m(torch.tensor([[0.5, 1.0]]), torch.tensor([1])))\n",
    "forward-extra-argument": _NN + "m = nn.Linear(2, 2)\ny = m(torch.ones(1, 2), 3)\n",
    "forward-no-argument": _NN + "m = nn.Sequential(nn.ReLU())\ny = m()\n",
    "loss-missing-target": _NN + "y = nn.MSELoss()(torch.ones(2))\n",
    # a layer's class without its parentheses (a common slip) is named as torch.typename does
    "class-without-parentheses": _NN + "model = nn.Sequential(nn.Linear(2, 2), nn.ReLU)\n",
    "loss-class-in-sequential": _NN + "model = nn.Sequential(nn.Linear(2, 2), nn.MSELoss)\n",
    "tensor-in-sequential": _NN + "model = nn.Sequential(torch.ones(2))\n",
    # model.parameters without its call: a method, as Python says
    "parameters-not-called": _NN + "opt = torch.optim.SGD(nn.Linear(2, 1).parameters, lr=0.1)\n",
    # arange with a fractional step has the values of PyTorch's vectorised kernel (fused
    # multiply-adds per vector), not start + i * step: -2.0 + 5 * 0.4 is 1.1102e-16 there
    "arange-of-d2l": "import torch\nx = torch.arange(-2.0, 2.0, 0.4, requires_grad=True)\n"
                     "y = torch.tanh(x)\nprint(y.detach(), x[5].item())\n"
                     "print(torch.arange(-8.0, 8.0, 0.1)[75:85])\n"
                     "print(torch.arange(0, 3, 0.1, dtype=torch.float64)[15:])\n"
                     "y.sum().backward()\n",
    # contiguous() copies into row-major order, so that a view of it works (clone keeps the
    # layout: PyTorch's preserve_format, and a view of that still raises)
    "view-after-contiguous": "import torch\nx = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "
                             "requires_grad=True)\ny = x.permute(1, 0).contiguous().view(-1)\n"
                             "print(y, y.grad_fn.next_functions, x.t().clone().is_contiguous())\n"
                             "(y * torch.arange(6.0)).sum().backward()\nprint(x.grad)\n"
                             "z = x.t().clone().view(-1)\n",
    # autograd.grad takes any iterable of inputs (tuple(inputs)): model.parameters()
    "grad-of-model-parameters": _NN + "model = nn.Linear(2, 1)\n"
                                      "loss = model(torch.ones(3, 2)).pow(2).mean()\n"
                                      "grads = torch.autograd.grad(loss, model.parameters())\n"
                                      "print(grads, model.weight.grad)\n",
    # an optimizer of two parameter groups prints a blank line between them
    "optimizer-of-two-groups-printed": _NN + "a = nn.Linear(2, 2)\nb = nn.Linear(2, 1)\n"
                                             "opt = torch.optim.SGD([{'params': a.parameters()}, "
                                             "{'params': b.parameters(), 'lr': 0.5}], lr=0.1)\n"
                                             "print(opt)\n",
    # ATen's parameter names: view(size=), expand(size=), repeat(repeats=)
    "shape-keywords": "import torch\nx = torch.tensor([[1.0], [2.0]], requires_grad=True)\n"
                      "y = x.expand(size=(2, 3)) * x.repeat(repeats=(1, 3))\n"
                      "z = y.view(size=(6,))\nz.sum().backward()\nprint(z, x.grad)\n",
    # a generator expression runs as its consumer asks: sum() records each element's nodes
    # and then its add, in turn (a gradient penalty's numbers)
    "sum-of-a-generator": "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                          "parts = [x * 1, x * 2, x * 3]\n"
                          "penalty = sum((g ** 2).sum() for g in parts)\n"
                          "penalty.backward()\n"
                          "g = (i * i for i in range(4))\nprint(list(g), list(g))\n",
    "parameter-slice-printed": "import torch\nfrom torch import nn\ntorch.manual_seed(0)\n"
                               "model = nn.Linear(3, 1)\nprint(model.weight[:2], model.bias[:2])\n",
}


@pytest.mark.parametrize("source", list(CASES.values()), ids=list(CASES))
def test_course_rules_match_pytorch(source: str) -> None:
    diffs = differences(lab(source), record(source))
    assert not diffs, report(source, diffs)
