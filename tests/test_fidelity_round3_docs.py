"""The rules that the programs drawn from PyTorch's own reference docs
(tests/data/corpus/docs_round3.jsonl) found the lab getting wrong, each as a small program
compared with live PyTorch.

The corpus pins each through a docstring's example; these say the rule on its own."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="these compare with live PyTorch (pip install torch==2.13.0)")

from tests.differential import assert_same_as_torch

pytestmark = pytest.mark.torch

_F = "import torch\nimport torch.nn.functional as F\ntorch.manual_seed(0)\n"

CASES = {
    # a target of the input's shape holds class probabilities (F.cross_entropy's docs):
    # -(log_softmax * target).sum() / samples, op by op, for every reduction, with weight
    # and label smoothing, 1-D too
    "cross-entropy-probabilities": _F + "x = torch.randn(3, 5, requires_grad=True)\n"
                                        "t = torch.randn(3, 5).softmax(dim=1)\n"
                                        "for r in ['mean', 'sum', 'none']:\n"
                                        "    loss = F.cross_entropy(x, t, reduction=r)\n"
                                        "    print(loss, loss.grad_fn.next_functions)\n"
                                        "    loss.sum().backward()\n"
                                        "w = torch.tensor([1.0, 2.0, 0.5, 1.0, 1.0])\n"
                                        "F.cross_entropy(x, t, weight=w).backward()\n"
                                        "F.cross_entropy(x, t, label_smoothing=0.2).backward()\n"
                                        "v = torch.randn(4, requires_grad=True)\n"
                                        "F.cross_entropy(v, torch.tensor([0.5, 0.0, 0.25, "
                                        "0.25])).backward()\n"
                                        "print(v.grad)\n",     # x.grad: in "grads"
    # ... and its checks: an integer target of the input's shape, ignore_index, the weight
    "cross-entropy-probabilities-int": _F + "x = torch.randn(4, requires_grad=True)\n"
                                            "F.cross_entropy(x, torch.tensor([1, 2, 3, 0]))\n",
    "cross-entropy-probabilities-ignore": _F + "x = torch.randn(2, 3, requires_grad=True)\n"
                                               "F.cross_entropy(x, torch.rand(2, 3), "
                                               "ignore_index=1)\n",
    "cross-entropy-probabilities-weight": _F + "x = torch.randn(2, 3, requires_grad=True)\n"
                                               "F.cross_entropy(x, torch.rand(2, 3), "
                                               "weight=torch.ones(4))\n",
    # torch.Size(iterable) makes a Size; its items must be ints (or int tensors of one value)
    "torch-size": "import torch\nx = torch.zeros(3, 2)\ns = torch.Size([3, 2])\n"
                  "print(s, torch.Size(), torch.Size(range(3)), torch.Size([torch.tensor(4)]))\n"
                  "print(x.shape == s, s + (1,), torch.ones(s).shape, x.view(torch.Size([6])))\n",
    "torch-size-float": "import torch\ntorch.Size([3, 2.5])\n",
    "torch-size-int": "import torch\ntorch.Size(3)\n",
    # max(dim)'s result is a structseq: a tuple whose class is named `max`, one per kind
    "return-types-are-tuples": "import torch\nx = torch.tensor([[1.0, 5.0], [3.0, 2.0]])\n"
                               "r = x.max(0)\n"
                               "print(isinstance(r, tuple), type(r).__name__, type(r) == tuple,\n"
                               "      type(r) is type(x.max(1)), type(r) is type(x.min(1)))\n",
    # __name__ is the class's or function's own name, without its module
    "dunder-name": "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
                   "class Net(nn.Module):\n    def forward(self, x):\n        return x\n"
                   "m = nn.Linear(2, 2)\n"
                   "print(type(m).__name__, type(m.weight).__name__, type(m.weight.shape)"
                   ".__name__, type(torch.float32).__name__, type(Net()).__name__)\n"
                   "print(torch.tanh.__name__, F.relu.__name__, nn.Linear.__name__, "
                   "Net.__name__, torch.optim.SGD.__name__)\n",
    # torch.where of two numbers: the default float for a float, int64 for ints, bool
    "where-of-two-numbers": "import torch\nc = torch.tensor([True, False])\n"
                            "for a, b in [(1.0, 0.0), (1, 0), (1, 0.5), (True, False), "
                            "(True, 2)]:\n    r = torch.where(c, a, b)\n    print(r, r.dtype)\n",
    # randint takes requires_grad=: a float dtype may, int64 raises the factory's error
    "randint-requires-grad": "import torch\ntorch.manual_seed(0)\n"
                             "x = torch.randint(3, 10, (2, 2), dtype=torch.float32, "
                             "requires_grad=True)\n(x * x).sum().backward()\nprint(x, x.grad)\n"
                             "torch.randint(3, 10, (2,), requires_grad=True)\n",
    # nn.Identity takes any arguments and ignores them
    "identity-arguments": "import torch\nimport torch.nn as nn\n"
                          "m = nn.Identity(54, unused_argument1=0.1, unused_argument2=False)\n"
                          "x = torch.randn(128, 20)\nprint(m(x).size(), m, m(x) is x)\n",
    # a post-accumulate hook that returns its argument (`p.add_(...)`, its docs' SGD step)
    # counts as returning None; any other tensor is still refused
    "post-accumulate-hook-returns-its-argument": "import torch\n"
        "v = torch.tensor([0., 0., 0.], requires_grad=True)\n"
        "h = v.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-0.01))\n"
        "v.backward(torch.tensor([1., 2., 3.]))\nprint(v)\nh.remove()\n"
        "h = v.register_post_accumulate_grad_hook(lambda p: p.mul_(1).detach())\n"
        "v.backward(torch.tensor([1., 2., 3.]))\n",
    # `Exp(x)` makes an instance (PyTorch only warns); calling one is the legacy call
    "function-instance": "import torch\nclass Exp(torch.autograd.Function):\n"
                         "    @staticmethod\n    def forward(ctx, i):\n        return i.exp()\n"
                         "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
                         "x = torch.tensor(1.0, requires_grad=True)\ny = Exp(x)\n"
                         "print(y, type(y).__name__, y.apply(x))\ny(x)\n",
    # the program's classes and functions print as the recorder runs them (no __name__ in
    # its namespace: module builtins), a method by its qualified name
    "class-and-function-reprs": "import torch\nimport torch.nn as nn\n"
                                "class Net(nn.Module):\n    def forward(self, x):\n"
                                "        return x\nclass Sq(torch.autograd.Function):\n"
                                "    @staticmethod\n    def forward(ctx, i):\n"
                                "        return i * i\ndef f(x):\n    return x\n"
                                "print(Net, type(Net()), Sq, f, Net.forward)\nf(*3)\n",
    # strict mode: an output that does not require grad is refused before any gradient
    "functional-strict-outputs": "import torch\nfrom torch.autograd.functional import "
                                 "jacobian, vjp\ndef f(x):\n    return torch.ones(2)\n"
                                 "x = torch.tensor([1.0, 2.0])\n"
                                 "print(jacobian(f, x), vjp(f, x, torch.ones(2)))\n"
                                 "jacobian(f, x, strict=True)\n",
}


@pytest.mark.parametrize("source", list(CASES.values()), ids=list(CASES))
def test_docs_rules_match_pytorch(source: str) -> None:
    assert_same_as_torch(source)
