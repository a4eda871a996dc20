"""The rules that the eighth round (tests/data/corpus/round8.jsonl) found the lab getting
wrong, each as a small program compared with live PyTorch.

The corpus pins each through a course-style program; these say the rule on its own."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="these compare with live PyTorch (pip install torch==2.13.0)")

from tests.differential import assert_same_as_torch

pytestmark = pytest.mark.torch

_NN = "import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\n"
_SEQ = _NN + "m = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))\n"
_LIST = _NN + "m = nn.ModuleList([nn.Linear(2, 2), nn.ReLU()])\n"
_X = ("import torch\nx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
      "(x * x).sum().backward()\n")

CASES = {
    # `t.grad = g`: the dtype is checked first, then the size, in PyTorch's words
    "grad-setter-size": _X + "x.grad = torch.tensor([1.0, 2.0])\n",
    "grad-setter-size-0d": _X + "x.grad = torch.tensor(1.0)\n",
    "grad-setter-dtype": _X + "x.grad = torch.tensor([1.0, 2.0], dtype=torch.float64)\n",
    "grad-setter-int": _X + "x.grad = torch.tensor([1, 2, 3])\n",
    "grad-setter-double-leaf": "import torch\nx = torch.ones(2, dtype=torch.double, "
                               "requires_grad=True)\nx.grad = torch.ones(2)\n",
    # `model[i] = module` replaces the module under its name (Sequential.__setitem__)
    "sequential-setitem": _SEQ + "for p in m.parameters():\n    p.requires_grad_(False)\n"
                          "m[2] = nn.Linear(2, 3)\nprint(m)\nprint([n for n, p in "
                          "m.named_parameters() if p.requires_grad])\n"
                          "m(torch.ones(1, 2)).sum().backward()\n",
    "sequential-setitem-negative": _SEQ + "m[-1] = nn.Tanh()\nm[torch.tensor(0)] = None\n"
                                   "print(m)\n",
    "sequential-setitem-range": _SEQ + "m[3] = nn.ReLU()\n",
    "sequential-setitem-float": _SEQ + "m[1.0] = nn.ReLU()\n",
    "sequential-setitem-slice": _SEQ + "m[0:1] = nn.ReLU()\n",
    "sequential-setitem-tensor": _SEQ + "m[1] = torch.ones(2)\n",
    "sequential-setitem-int": _SEQ + "m[1] = 3\n",
    "modulelist-setitem": _LIST + "m[-1] = nn.Tanh()\nm[0] = None\nprint(m, len(m))\n",
    "modulelist-setitem-range": _LIST + "m[-3] = nn.Tanh()\n",
    # a pack hook may not change its input in place (checked by version, after the hook)
    "pack-hook-in-place": "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                          "def pack(t):\n    t.mul_(2)\n    return t\n"
                          "with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):\n"
                          "    y = x.sin()\n",
    "pack-hook-in-place-result": "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)"
                                 "\nwith torch.autograd.graph.saved_tensors_hooks(lambda t: "
                                 "t.add_(1), lambda t: t):\n    y = x.exp()\nprint(x)\n",
}


@pytest.mark.parametrize("source", CASES.values(), ids=list(CASES))
def test_rule_matches_pytorch(source: str) -> None:
    assert_same_as_torch(source)
