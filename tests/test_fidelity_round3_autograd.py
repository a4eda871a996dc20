"""The rules that the third round of autograd programs (tests/data/corpus/autograd_round3.jsonl)
found the lab getting wrong, each as a small program compared with live PyTorch.

The corpus pins each through a tutorial-style program; these say the rule on its own."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="these compare with live PyTorch (pip install torch==2.13.0)")

from tests.differential import assert_same_as_torch

pytestmark = pytest.mark.torch

_X = "import torch\nx = torch.tensor(2.0, requires_grad=True)\n"

_SPLIT = ("import torch\n"
          "class Split(torch.autograd.Function):\n"
          "    @staticmethod\n"
          "    def forward(ctx, x):\n"
          "        ctx.set_materialize_grads(MATERIALIZE)\n"
          "        return x + 1, x * 2\n"
          "    @staticmethod\n"
          "    def backward(ctx, ga, gb):\n"
          "        print(ga, gb)\n"
          "        return ga if gb is None else gb * 2\n"
          "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
          "a, b = Split.apply(x)\n")

CASES = {
    # autograd.grad never applies the root unless it leads to an input: grad(x, x) of a
    # leaf captures the seed at x's AccumulateGrad, which is popped but not run (no .grad)
    "grad-of-a-leaf-by-itself": _X + "x.register_hook(lambda g: print('hook', g))\n"
                                     "print(torch.autograd.grad(x, x), x.grad)\n",
    # ... and a root that reaches no input is popped (its tensor hooks fire) but not run
    "grad-root-reaching-no-input": _X + "z = torch.tensor(1.0, requires_grad=True)\n"
                                        "y = x * 3\n"
                                        "y.register_hook(lambda g: print('hook', g))\n"
                                        "y.grad_fn.register_prehook(lambda go: print('pre'))\n"
                                        "print(torch.autograd.grad(y, z, allow_unused=True))\n"
                                        "y.backward()\nprint(x.grad)\n",
    # set_materialize_grads(False): an output that got no gradient reaches backward as None
    "materialize-grads-off": _SPLIT.replace("MATERIALIZE", "False")
                             + "a.sum().backward()\nprint(x.grad)\n",
    # repr() of tensors, nodes and Python values, as print and f"{x!r}" write them
    "repr-builtin": _X + "y = x * 2\nprint(repr(y), repr(y.grad_fn.name()), repr([y, None]))\n"
                         "print(repr(y.shape), repr(y.dtype))\nrepr(y, y)\n",
    # backward gets one gradient per output of forward: None for a number or None returned,
    # zeros for a tensor marked non-differentiable
    "custom-non-tensor-outputs": "import torch\n"
                                 "class F(torch.autograd.Function):\n"
                                 "    @staticmethod\n"
                                 "    def forward(ctx, x):\n"
                                 "        i = (x > 0).float()\n"
                                 "        ctx.mark_non_differentiable(i)\n"
                                 "        return 7, x * 2, i, None, x.sum()\n"
                                 "    @staticmethod\n"
                                 "    def backward(ctx, a, g, gi, gn, gs):\n"
                                 "        print(a, g, gi, gn, gs)\n"
                                 "        return g * 2 + gs\n"
                                 "x = torch.tensor([1.0, -1.0], requires_grad=True)\n"
                                 "a, y, i, n, s = F.apply(x)\n"
                                 "(y.sum() + s * 3).backward()\nprint(x.grad)\n",
    # retain_grad() follows the tensor through an in-place op (its new grad_fn), for the
    # tensor itself, the base of a view changed in place, and the view; tensor hooks stay
    "retain-grad-after-inplace": "import torch\n"
                                 "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                                 "y = x * 2\ny.retain_grad()\n"
                                 "y.register_hook(lambda g: print('old', g))\n"
                                 "y.mul_(3)\n(y * y).sum().backward()\nprint(y.grad, x.grad)\n",
    "retain-grad-of-a-base-and-view": "import torch\n"
                                      "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                                      "b = x * 2\nb.retain_grad()\nv = b[0:1]\nv.retain_grad()\n"
                                      "v.mul_(3)\n(v * b).sum().backward()\n"
                                      "print(b.grad, v.grad, x.grad)\n",
    # the requires_grad setter refuses a non-leaf even for True (requires_grad_() does not),
    # without the advice that the False case gives
    "requires-grad-setter-on-a-non-leaf": _X + "y = x + 1\ny.requires_grad_(True)\n"
                                               "y.requires_grad = True\n",
    # a node pre-hook that raises does so after the pop (it is the pass's last step)
    "node-prehook-raising": _X + "y = x * 2\nz = y * 3\n"
                                 "y.grad_fn.register_prehook(lambda go: (go[0], go[0]))\n"
                                 "z.backward()\n",
}


@pytest.mark.parametrize("source", list(CASES.values()), ids=list(CASES))
def test_autograd_rules_match_pytorch(source: str) -> None:
    assert_same_as_torch(source)
