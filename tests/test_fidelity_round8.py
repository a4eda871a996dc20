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

_FUNCTIONAL = """import torch
from torch.autograd.functional import jacobian, hessian, vjp, jvp, hvp, vhp
def f(x):
    return (x ** 3).sum() + x[0] * x[1]
def g(x):
    return x ** 3
def two(x, y):
    return (x * y).sum()
x = torch.tensor([1.0, 2.0])
y = torch.tensor([3.0, 4.0])
s = torch.tensor(2.0)
v = torch.tensor([1.0, -1.0])
print(CALL)
w = torch.tensor(1.0, requires_grad=True)
(w * 2).backward()
"""
_UNPACKED_IS_NEW = """import torch
def unpack_hook(x):
    print("Unpacking")
    return x
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack_hook):
    y = x.pow(2)
print(y.grad_fn._saved_self)
print(y.grad_fn._saved_self is x)
y.sum().backward()
"""
_UNPACKED_CREATE_GRAPH = """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
def pack(t):
    print(torch.is_grad_enabled(), t.requires_grad)
    return t * 2
def unpack(t):
    print("unpack", torch.is_grad_enabled(), t.requires_grad)
    return t / 2
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x * x
y.sum().backward(create_graph=True)
print(x.grad)
"""
_UNPACKED_CUSTOM_FUNCTION = """import torch
class Sq(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda t: print("pack", t) or t,
                                              lambda t: print("unpack", t) or t):
    y = Sq.apply(x)
y.sum().backward()
print(x.grad)
"""
_APPLY_KEYWORDS = """import torch
from torch.autograd import Function
class Mul(Function):
    @staticmethod
    def forward(ctx, x, w=None, k=2.0):
        print("forward", w, k)
        ctx.save_for_backward(x)
        return x * k if w is None else x * w * k
    @staticmethod
    def backward(ctx, g):
        print("needs", ctx.needs_input_grad)
        x, = ctx.saved_tensors
        return g, g, None
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 4.0], requires_grad=True)
y = Mul.apply(x, w=w)
print(y.grad_fn.next_functions)
y.sum().backward()
print(x.grad, w.grad)
"""
_SECOND_ORDER = """import torch
x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 2.0, -0.5]], requires_grad=True)
y = (EXPR).sum()
g, = torch.autograd.grad(y, x, create_graph=True)
print(g)
(g * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(x.grad)
w = torch.tensor(1.0, requires_grad=True)
(w * 2).backward()
"""
_MV_GRAD = """import torch
A = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
v = torch.tensor([0.5, -1.0], requires_grad=True)
y = (A @ v).pow(2).sum()
g1, g2 = torch.autograd.grad(y, (A, v), create_graph=True)
print(g1, g2)
(g1.sum() + g2.sum()).backward()
print(A.grad, v.grad)
w = torch.tensor(1.0, requires_grad=True)
(w * 2).backward()
"""
_NO_GRAD_VIEW = """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    v = x[0]
y = x * 2
g = torch.autograd.grad(y.sum(), v, allow_unused=True)
print(g)
z = x * 3
z.sum().backward(inputs=[v])
print(x.grad, v.grad)
w = x * 4
w.sum().backward()
"""
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
    # an input that no node has used gets an Identity edge, which takes a sequence number
    "grad-unused-input-seq": "import torch\nx = torch.tensor(1.0, requires_grad=True)\n"
                             "y = torch.tensor(2.0, requires_grad=True)\n"
                             "g = torch.autograd.grad(x * 2, [x, y], allow_unused=True)\n"
                             "w = x * 3\ng = torch.autograd.grad(w, [y, x], allow_unused=True, "
                             "materialize_grads=True)\nprint(g, (x * 4).grad_fn)\n"
                             "(x * y).backward()\n",
    "backward-unused-input-seq": "import torch\nx = torch.tensor(1.0, requires_grad=True)\n"
                                 "y = torch.tensor(2.0, requires_grad=True)\n"
                                 "(x * 2).backward(inputs=[y])\nw = x * 3\n"
                                 "w.backward(inputs=[x, y])\nprint(x.grad, y.grad)\n",
    # under saved_tensors_hooks a saved tensor comes back as a new tensor on the saved
    # one's place in the graph: not `is` the input, and differentiable under create_graph
    "unpacked-is-new": _UNPACKED_IS_NEW,
    "unpacked-create-graph": _UNPACKED_CREATE_GRAPH,
    "unpacked-custom-function": _UNPACKED_CUSTOM_FUNCTION,
    # Function.apply takes keywords: each goes to its place among forward's parameters
    # (an input like the others); Python's "takes from 2 to 4 positional arguments"
    **{f"apply-keywords-{i}": _APPLY_KEYWORDS.replace("CALL", call) for i, call in enumerate(
        ["Mul.apply(x, w=w)", "Mul.apply(x, k=5.0)", "Mul.apply(x, k=1.0, w=w)",
         "Mul.apply(w=w, x=x)", "Mul.apply(x, x, w=x)", "Mul.apply(w=x)", "Mul.apply(x, foo=1)",
         "Mul.apply(x, None, 3.0, 4.0)"])},
    "defaults-too-many": "import torch\ndef f(x, k=2.0):\n    return x * k\n"
                         "y = f(torch.tensor(1.0), 1.0, 3.0)\n",
    "defaults-too-many-one": "import torch\ndef f(x=1.0):\n    return x\ny = f(1, 2)\n",
    # norm (p = 2 and 1), var and std backward as PyTorch's formulas' ops: create_graph
    # records their nodes (second derivatives, sequence numbers); a full reduction's
    # `_saved_dim` is None
    **{f"second-order-{i}": _SECOND_ORDER.replace("EXPR", e) for i, e in enumerate([
        "x.norm()", "x.norm(dim=1)", "x.norm(dim=0, keepdim=True)", "x.std()", "x.std(dim=0)",
        "x.std(dim=1, keepdim=True)", "x.var(unbiased=False)", "x.var(dim=1)", "(x * 0).norm()",
        "(x * 0).std()", "x[0, 0].var()", "x.norm(2, (0, 1))"])},
    # amax/amin backward reshapes its result (restore_reduced_dims): a view node under
    # create_graph; mv's grad for the matrix is at::outer, `grad.reshape(n, 1) * vec`
    **{f"amax-create-graph-{i}": _SECOND_ORDER.replace("EXPR", e) for i, e in enumerate([
        "x.amax()", "x.amax(dim=1)", "x.amin(dim=0, keepdim=True)", "(x ** 2).amax(dim=1)"])},
    "mv-create-graph": _SECOND_ORDER.replace("EXPR", "x @ (x[0] ** 2)"),
    "mv-grad-create-graph": _MV_GRAD,
    "saved-dim-none": "import torch\nx = torch.tensor([[0.5, -1.0], [1.5, 2.0]], "
                      "requires_grad=True)\nfor y in [x.var(), x.std(dim=0), x.norm(), "
                      "x.norm(dim=1)]:\n    print(y.grad_fn._saved_dim)\n",
    # ... and so does a view of a leaf made under no_grad (it has neither grad_fn nor
    # accumulator), where the lab crashed
    "grad-input-no-grad-view": _NO_GRAD_VIEW,
    # optimizer arguments of the wrong type: PyTorch's (Python's) errors, not a crash
    "optim-lr-str": "import torch\nw = torch.ones(2, requires_grad=True)\n"
                    "opt = torch.optim.SGD([w], lr='0.1')\n",
    "optim-betas-number": "import torch\nw = torch.ones(2, requires_grad=True)\n"
                          "opt = torch.optim.Adam([w], betas=0.9)\n",
    "optim-group-without-params": "import torch\nw = torch.ones(2, requires_grad=True)\n"
                                  "opt = torch.optim.SGD([{'lr': 0.1}], lr=0.1)\n",
    # torch.autograd.functional: hvp by the double-backward trick (its own nodes and
    # sequence numbers), PyTorch's checks of v and of the function's outputs, strict mode's
    # messages in PyTorch's order, and Python's binding of the arguments
    **{f"functional-{i}": _FUNCTIONAL.replace("CALL", call) for i, call in enumerate([
        "hvp(f, x, v)", "hvp(f, x, v, create_graph=True)", "vhp(g, x, x)", "hvp(f, x)",
        "jvp(g, x)", "vjp(g, x, torch.ones(3))", "hvp(f, x, (x, x))",
        "vhp(two, (x, y), (x,))", "hvp(two, (x, y), (x, s))", "vhp(lambda v: (v, v), x, x)",
        "hvp(lambda v: s, x, x, strict=True)", "vhp(lambda v: v.sum(), x, x, strict=True)",
        "hessian(lambda v: (v * 2).sum(), x, strict=True)", "jacobian(g, [x])",
        "jacobian(g, x, vectorize=False, strategy='reverse-mode')", "jacobian(g, x, foo=1)",
        "jacobian(g)", "hessian(f, x, outer_jacobian_strategy='reverse-mode')",
        "jacobian(g, x, strategy='backward')", "vjp(g, x, x, False, False, 3)",
        "jacobian(g, x, create_graph=False, func=g)", "jvp(g, x, 2.0)"])},
}


@pytest.mark.parametrize("source", CASES.values(), ids=list(CASES))
def test_rule_matches_pytorch(source: str) -> None:
    assert_same_as_torch(source)
