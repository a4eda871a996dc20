"""The rules that the third round of network programs (tests/data/corpus/network_round3.jsonl)
found the lab getting wrong, each as a small program compared with live PyTorch.

The corpus pins each through a course-style program; these say the rule on its own."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="these compare with live PyTorch (pip install torch==2.13.0)")

from tests.differential import assert_same_as_torch

pytestmark = pytest.mark.torch

_NN = "import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\n"

CASES = {
    # type() names PyTorch's classes as Python does: torch.Size is no plain tuple, a
    # parameter is a Parameter, a layer's class lives in its torch.nn.modules file
    "type-of-torch-objects": _NN + "x = torch.ones(2, 3)\nm = nn.Linear(3, 1)\n"
                                   "print(type(x.shape), type(m), type(m.weight), type(x))\n"
                                   "print(type(x.max(dim=0)), type(torch.float32))\n"
                                   "print(type(torch.optim.SGD(m.parameters(), lr=0.1)))\n"
                                   "print(type(x.shape) is tuple,\n"
                                   "      type(m.weight) is torch.Tensor)\n",
    # a layer's class and an optimizer's class print as classes and isinstance() takes them
    "isinstance-of-a-layer": _NN + "m = nn.Sequential(nn.Linear(2, 2), nn.ReLU())\n"
                                   "print(nn.Linear, nn.ReLU, nn.Module, torch.optim.Adam)\n"
                                   "print(isinstance(m[0], nn.Linear), isinstance(m[1], "
                                   "nn.Linear), isinstance(m, (nn.Linear, nn.Sequential)))\n"
                                   "print(type(m[0]) == nn.Linear, type(m[1]) is nn.Linear)\n",
    # ... and so does the program's own nn.Module class
    "isinstance-of-a-module-class": _NN + "class Net(nn.Module):\n"
                                          "    def __init__(self):\n"
                                          "        super().__init__()\n"
                                          "        self.fc = nn.Linear(2, 1)\n"
                                          "    def forward(self, x):\n"
                                          "        return self.fc(x)\n"
                                          "net = Net()\n"
                                          "print(isinstance(net, Net), isinstance(net, nn.Linear),"
                                          " type(net) is Net, type(net) is nn.Module)\n",
    # modules() and named_modules(): the module itself first, then depth first, dotted names
    "named-modules": _NN + "s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(),\n"
                           "                  nn.Sequential(nn.Linear(3, 1), nn.Sigmoid()))\n"
                           "for name, mod in s.named_modules():\n"
                           "    print(name, type(mod))\n"
                           "print(len(list(s.modules())))\n"
                           "print([type(m) for m in s.modules() if isinstance(m, nn.Linear)])\n",
    # reshape of a tensor that is not contiguous but can be viewed is _reshape_alias
    # (ReshapeAliasBackward0, a view); of a contiguous one `view`; else clone + _unsafe_view
    "reshape-alias": "import torch\nx = torch.arange(8.0, requires_grad=True)\n"
                     "p = x.view(2, 2, 2).permute(2, 0, 1)\nt = x.view(2, 4).t()\n"
                     "a, b, c = p.flatten(1), t.reshape(2, 2, 2), x[::2].reshape(2, 2)\n"
                     "print(a.grad_fn.name(), b.grad_fn.name(), c.grad_fn.name(), "
                     "p.reshape(8).grad_fn.name(), x[2:6].reshape(2, 2).grad_fn.name())\n"
                     "print(b._base is x, b.grad_fn._saved_self_sym_sizes, b)\n"
                     "(a.sum() + (b * b).sum() + c.sum()).backward()\nprint(x.grad)\n",
    # F.mse_loss (and nn.MSELoss) broadcast their operands first: an ExpandBackward0 for
    # each operand that requires grad and has another shape
    "mse-loss-broadcasts": "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
                           "x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
                           "t = torch.tensor([[1.0], [2.0]], requires_grad=True)\n"
                           "F.mse_loss(x, t).backward()\n"
                           "nn.MSELoss(reduction='sum')(x, torch.ones(2, 3)).backward()\n"
                           "print(x.grad, t.grad)\n",
    # label smoothing: ATen's formula op by op, for every reduction, weight and ignore_index
    "label-smoothing-mean": "import torch\nimport torch.nn.functional as F\n"
                            "z = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3], "
                            "[1.0, -1.0, 0.0]], requires_grad=True)\n"
                            "t = torch.tensor([0, 2, -100])\n"
                            "loss = F.cross_entropy(z, t, label_smoothing=0.1)\n"
                            "loss.backward()\nprint(f'{loss.item():.4f}')\nprint(z.grad)\n",
    "label-smoothing-weight": "import torch\nimport torch.nn as nn\n"
                              "z = torch.tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3], "
                              "[1.0, -1.0, 0.0]], requires_grad=True)\n"
                              "w = torch.tensor([1.0, 2.0, 0.5])\n"
                              "crit = nn.CrossEntropyLoss(weight=w, ignore_index=1, "
                              "label_smoothing=0.3)\nprint(crit)\n"
                              "loss = crit(z, torch.tensor([0, 1, 2]))\nloss.backward()\n"
                              "print(f'{loss.item():.4f}')\nprint(z.grad)\n",
    "label-smoothing-none-and-1d": "import torch\nimport torch.nn.functional as F\n"
                                   "z = torch.tensor([[1.0, 2.0], [0.5, -0.5]], "
                                   "requires_grad=True)\n"
                                   "l = F.cross_entropy(z, torch.tensor([1, 0]), "
                                   "reduction='none', label_smoothing=0.2)\n"
                                   "print(l)\nl.sum().backward()\n"
                                   "m = F.cross_entropy(z[0], torch.tensor(1), "
                                   "label_smoothing=0.5, reduction='sum')\n"
                                   "m.backward()\nprint(z.grad)\n"
                                   "F.cross_entropy(z, torch.tensor([1, 0]), "
                                   "label_smoothing=1.5)\n",
    # a parameter group's "params" may be one tensor, which PyTorch puts in a list
    "param-group-of-one-tensor": _NN + "m = nn.Linear(2, 1)\n"
                                       "opt = torch.optim.SGD([{'params': m.weight}, "
                                       "{'params': m.bias, 'lr': 0.5}], lr=0.1)\n"
                                       "m(torch.ones(3, 2)).sum().backward()\nopt.step()\n"
                                       "print(len(opt.param_groups[0]['params']), m.weight, "
                                       "m.bias)\n",
    # softmax and log_softmax take floating inputs only; the kernel's name tells the dim
    "softmax-of-integers": "import torch\nx = torch.tensor([[1, 2], [3, 4]])\n"
                           "print(torch.softmax(x, 1, dtype=torch.float64))\n"
                           "torch.log_softmax(x, dim=0)\n",
    "softmax-of-integers-last-dim": "import torch\ntorch.softmax(torch.tensor([1, 2]), dim=-1)\n",
    # nll_loss's checks in ATen's order: batch sizes, one target per sample, dtype, 1-D
    "nll-multi-target": "import torch\nimport torch.nn as nn\n"
                        "nn.CrossEntropyLoss()(torch.ones(2, 3, requires_grad=True), "
                        "torch.tensor([[1.0], [0.0]]))\n",
    "nll-zero-d-target": "import torch\nimport torch.nn.functional as F\n"
                         "F.nll_loss(torch.ones(2, 3), torch.tensor(1))\n",
    "nll-1d-input-targets": "import torch\nimport torch.nn.functional as F\n"
                            "x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)\n"
                            "print(F.nll_loss(x, torch.tensor([2]), reduction='none'))\n"
                            "F.cross_entropy(x, torch.tensor([0])).backward()\n",
    "nll-1d-input-two-targets": "import torch\nimport torch.nn.functional as F\n"
                                "F.nll_loss(torch.ones(3), torch.tensor([0, 1]))\n",
    # nn.GELU prints its approximation always
    "gelu-repr": "import torch.nn as nn\nprint(nn.GELU(), nn.GELU(approximate='tanh'))\n",
    # ReLU(inplace=True) and F.relu(inplace=True) apply relu_ to the input
    "relu-in-place": _NN + "model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True))\n"
                           "print(model)\nh = model[0](torch.randn(2, 3))\n"
                           "out = model[1](h)\nprint(out is h, h._version)\n"
                           "out.sum().backward()\nprint(model[0].bias.grad)\n"
                           "import torch.nn.functional as F\n"
                           "y = torch.tensor([-1.0, 2.0], requires_grad=True)\n"
                           "z = y * 2\nprint(F.relu(z, inplace=True) is z, z._version)\n"
                           "F.relu(y, inplace=True)\n",
}


@pytest.mark.parametrize("source", list(CASES.values()), ids=list(CASES))
def test_network_rules_match_pytorch(source: str) -> None:
    assert_same_as_torch(source)
