"""The rules that the fifth round (tests/data/corpus/activations_round5.jsonl) found the lab
getting wrong, each as a small program compared with live PyTorch: in-place activations
(LeakyReluBackward1 and EluBackward1 save the result; silu_ saves a clone of its input),
their errors and module attributes, `flip` and `reversed(tensor)`,
`torch.get_default_dtype()`, the node a version error names (PowBackward1 is "Pow1"),
`F.one_hot`, `detach_()` of a view, an optimizer's `state` and a module's dtype.

The corpus pins each through a tutorial-style program; these say the rule on its own."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="these compare with live PyTorch (pip install torch==2.13.0)")

from tests.differential import assert_same_as_torch

pytestmark = pytest.mark.torch

_H = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
      "x = torch.tensor([-2.0, 0.5, 1.5], requires_grad=True)\ny = x * 2 - 1\n")

CASES = {
    # in place, the input is gone: the node saves the result, and is the op's Backward1
    "leaky-relu-in-place": _H + "z = F.leaky_relu(y, 0.1, inplace=True)\n"
                                "print(z is y, z.grad_fn, z.grad_fn._saved_result)\n"
                                "z.sum().backward()\nprint(x.grad)\n",
    "leaky-relu-underscore": _H + "z = F.leaky_relu_(y)\nz.sum().backward()\nprint(x.grad)\n",
    "leaky-relu-module": _H + "m = nn.LeakyReLU(0.2, inplace=True)\n"
                              "print(m, m.inplace, m.negative_slope)\nm(y).sum().backward()\n",
    # ... from which a negative slope cannot be undone: PyTorch refuses it in backward
    "leaky-relu-negative-slope": _H + "F.leaky_relu(y, -0.5, inplace=True).sum().backward()\n",
    "elu-in-place": _H + "z = F.elu(y, 0.5, inplace=True)\nprint(z.grad_fn._saved_alpha)\n"
                         "z.sum().backward()\nprint(x.grad)\n",
    "elu-underscore-module": _H + "m = nn.ELU(inplace=True)\nprint(m, m.alpha)\n"
                                  "F.elu_(m(y)).sum().backward()\nprint(x.grad)\n",
    "elu-negative-alpha": _H + "F.elu(y, -1.0, inplace=True).sum().backward()\n",
    # silu_ needs its input: PyTorch saves a clone, whose node takes the next number
    "silu-in-place": _H + "z = nn.SiLU(inplace=True)(y)\nprint(z.grad_fn.next_functions)\n"
                          "(z * z).sum().backward()\nprint(x.grad)\n",
    "in-place-activation-double-backward": _H + "z = F.leaky_relu(y * y, 0.1, inplace=True)\n"
                                                "g, = torch.autograd.grad(z.sum(), x, "
                                                "create_graph=True)\ng.sum().backward()\n"
                                                "print(g, x.grad)\n",
    "in-place-activation-on-a-leaf": _H + "F.elu(x, inplace=True)\n",
    # the saved result changed again: the message names the node without "Backward0"
    "version-error-names-backward1": _H + "z = F.leaky_relu(y, 0.1, inplace=True)\n"
                                          "z.mul_(2)\nz.sum().backward()\n",
    "flip": "import torch\nx = torch.arange(6.).reshape(2, 3).requires_grad_()\n"
            "y = x.flip(0, -1)\nprint(y, y.grad_fn._saved_dims)\n"
            "(y * torch.arange(6.).reshape(2, 3)).sum().backward()\nprint(x.grad)\n",
    "flip-duplicate-dims": "import torch\nx = torch.ones(2, 2, requires_grad=True)\n"
                           "x.flip(1, -1)\n",
    # Tensor.__reversed__ is flip(0); iterating it then unbinds
    "reversed-tensor": "import torch\nx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
                       "s = 0\nfor i, v in enumerate(reversed(x)):\n    s = s + v * (i + 1)\n"
                       "s.backward()\nprint(x.grad, reversed(x))\n",
    "one-hot": "import torch\nimport torch.nn.functional as F\n"
               "print(F.one_hot(torch.tensor([[2, 0], [1, 1]])))\n"
               "print(F.one_hot(torch.tensor([0]), 4))\n",
    "one-hot-negative": "import torch\nimport torch.nn.functional as F\n"
                        "F.one_hot(torch.tensor([1, -1]))\n",
    "detach-a-view-in-place": "import torch\nx = torch.ones(2, 2)\nx.t().detach_()\n",
    "optimizer-state": "import torch\nw = torch.tensor([1.0, -2.0], requires_grad=True)\n"
                       "a = torch.tensor([0.5], requires_grad=True)\n"
                       "sgd = torch.optim.SGD([w], lr=0.1, momentum=0.5)\n"
                       "adam = torch.optim.Adam([a], lr=0.1, amsgrad=True)\n"
                       "for _ in range(2):\n    (w * w).sum().backward()\n"
                       "    (a * 3).sum().backward()\n"
                       "    sgd.step()\n    adam.step()\n"
                       "print(sgd.state[w], sorted(adam.state[a]))\n"
                       "print(adam.state[a]['max_exp_avg_sq'])\n",
    "module-dtype": "import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\n"
                    "m = nn.Linear(2, 1)\nm(torch.ones(1, 2)).sum().backward()\nm.double()\n"
                    "print(m.weight.dtype, m.weight.grad.dtype, m.weight._version)\n"
                    "m.to(dtype=torch.float32)\nprint(m.bias)\n",
    "default-dtype": "import torch\nprint(torch.get_default_dtype())\n"
                     "x = torch.ones(2, dtype=torch.get_default_dtype(), requires_grad=True)\n"
                     "print(x.dtype == torch.get_default_dtype())\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_lab_does_what_pytorch_does(name: str) -> None:
    assert_same_as_torch(CASES[name])
