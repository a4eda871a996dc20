"""The rules that the seventh round (tests/data/corpus/round7.jsonl) found the lab getting
wrong, each as a small program compared with live PyTorch.

The corpus pins each through a course-style program; these say the rule on its own."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="these compare with live PyTorch (pip install torch==2.13.0)")

from tests.differential import assert_same_as_torch

pytestmark = pytest.mark.torch

_NN = "import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\n"
_SEQ = _NN + "model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))\n"
_LIN = _NN + "model = nn.Linear(3, 2)\nx = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)\n"

CASES = {
    # a dict's keys(), values() and items() are views, printed as such
    "dict-views": "import torch\nd = {'a': 1, 'b': 2}\nk = d.keys()\nd['c'] = 3\n"
                  "print(k, d.values(), d.items(), len(k), 'a' in k, 3 in d.values())\n"
                  "print(bool({}.keys()), list(d.items()))\n",
    # None assigned to a parameter or a submodule keeps its name registered; a
    # Parameter assigned again keeps its place in named_parameters()
    "module-none-parameter": _NN + "m = nn.Linear(2, 1)\nm.weight = nn.Parameter("
                             "torch.tensor([[1.0, -1.0]]))\nprint([n for n, _ in "
                             "m.named_parameters()])\nm.bias = None\nprint(m)\n"
                             "print(m(torch.tensor([[2.0, 3.0]])))\n",
    # ModuleList's repr writes a run of equal modules once
    "modulelist-repr": _NN + "ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + "
                       "[nn.ReLU(), nn.ReLU(), nn.Linear(2, 1)])\nprint(ml)\n",
    # the module's registries: named_children, buffers, add_module, Sequential's
    # append/extend/insert, apply
    "named-children-buffers": _SEQ + "for name, m in model.named_children():\n"
                              "    print(name, m)\nprint(list(model.buffers()))\n",
    "add-module-append-insert": _SEQ + "model.add_module('act', nn.Sigmoid())\n"
                                "model.append(nn.Tanh()).extend([nn.ReLU()])\n"
                                "print(model, len(model))\nmodel.insert(1, nn.Tanh())\n",
    "add-module-checks": _SEQ + "model.add_module('x.y', nn.ReLU())\n",
    "apply-init": _SEQ + "def init(m):\n    if isinstance(m, nn.Linear):\n"
                  "        nn.init.xavier_uniform_(m.weight)\n        m.bias.data.fill_(0.01)\n"
                  "    print(type(m).__name__)\nprint(model.apply(init) is model)\n"
                  "print(model[0].weight, model[2].bias)\n",
    "register-buffer": _NN + "class Net(nn.Module):\n    def __init__(self):\n"
                       "        super().__init__()\n        self.w = nn.Parameter(torch.randn(2))\n"
                       "        self.register_buffer('scale', torch.tensor(2.0))\n"
                       "        self.register_buffer('tmp', torch.zeros(2), persistent=False)\n"
                       "    def forward(self, x):\n        return (self.w * x).sum() * self.scale\n"
                       "net = Net()\nprint(net.state_dict(), list(net.named_buffers()))\n"
                       "net(torch.ones(2)).backward()\nnet.scale = torch.tensor(3.0)\n"
                       "print(net.w.grad, net.state_dict()['scale'])\n",
    # state_dict(): an OrderedDict of detached tensors; load_state_dict copies in place
    "state-dict": _SEQ + "sd = model.state_dict()\nprint(sd)\nprint(sd.keys())\n"
                  "print(sd['0.bias'].requires_grad, sd['0.bias'].grad_fn)\n",
    "load-state-dict": _SEQ + "m2 = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))\n"
                       "print(m2.load_state_dict(model.state_dict()))\n"
                       "print(m2[0].bias, m2[0].bias._version)\n",
    "load-state-dict-not-strict": _LIN + "r = model.load_state_dict({'weight': "
                                  "torch.zeros(2, 3), 'extra': torch.ones(1)}, strict=False)\n"
                                  "print(r, r.missing_keys)\n",
    "load-state-dict-errors": _LIN + "model.load_state_dict({'weight': torch.zeros(3, 3), "
                              "'extra': torch.ones(1)})\n",
    # forward pre-hooks and hooks (a result replaces the input or the output), and full
    # backward pre-hooks (a result replaces the gradient that flows)
    "forward-hooks": _LIN + "model.register_forward_pre_hook(lambda m, inp: inp[0] * 0.5)\n"
                     "h = model.register_forward_hook(lambda m, inp, out: print('fwd', len(inp),"
                     " out.shape))\nmodel.register_forward_hook(lambda m, inp, out: out * 2)\n"
                     "y = model(x)\nprint(y.grad_fn, y.grad_fn.next_functions)\nh.remove()\n"
                     "y.sum().backward()\nprint(model.bias.grad, x.grad)\n",
    "backward-pre-hook": _LIN + "model.register_full_backward_pre_hook(lambda m, go: "
                         "print('pre', go))\nmodel.register_full_backward_pre_hook(lambda m, "
                         "go: (go[0] * 3,))\nmodel.register_full_backward_hook(lambda m, gi, go:"
                         " print('post', gi, go))\nmodel(x).sum().backward()\n"
                         "print(model.bias.grad)\n",
    # an optimizer's groups: the program's dicts, their own keys kept, the defaults after
    # them; a parameter in two groups; add_param_group; state_dict; `state` by parameter
    "param-groups": _LIN + "g = {'lr': 0.3, 'params': model.weight, 'name': 'w'}\n"
                    "opt = torch.optim.SGD([g, {'params': model.bias}], lr=0.1, momentum=0.9)\n"
                    "print(opt)\nprint(g)\nopt.add_param_group({'params': [x]})\n"
                    "model(x).sum().backward()\nopt.step()\nprint(opt.state_dict())\n"
                    "print(opt.state[model.bias])\n",
    "param-group-twice": _LIN + "opt = torch.optim.SGD([{'params': model.weight}, "
                         "{'params': model.parameters()}], lr=0.1)\n",
    "optimizer-unexpected-keyword": _LIN + "opt = torch.optim.Adam(model.parameters(), "
                                    "momentum=0.9)\n",
    "sgd-state-without-momentum": _LIN + "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                                  "model(x).sum().backward()\nopt.step()\nprint(opt.state, "
                                  "len(opt.state))\nprint(opt.state_dict())\n",
    "adam-defaults-order": _LIN + "opt = torch.optim.Adam(model.parameters())\n"
                           "print(opt.defaults)\n",
    # matrix products' sums start at +0.0; only an outer product keeps a product's -0.0
    "mm-signed-zeros": "import torch\nw = torch.zeros(3, 2, requires_grad=True)\n"
                       "x = torch.tensor([[-1.0, 2.0, -3.0], [0.5, -1.0, 2.0]])\n"
                       "(x @ w * 0).sum().backward()\nprint(w.grad)\nz = torch.zeros(3, 1).neg()\n"
                       "print(z @ torch.ones(1, 2), z.t() @ torch.ones(3, 2), z[0] @ torch.ones(1),"
                       " torch.mv(z, torch.ones(1)))\n",
    # default values are evaluated once, when the def or lambda is made
    "lambda-default-captures": "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                               "y = x ** 2\nhs = []\nfor i in range(3):\n"
                               "    hs.append(y.register_hook(lambda g, i=i: g * (i + 1)))\n"
                               "hs[0].remove()\ny.sum().backward()\nprint(x.grad)\n",
    "def-defaults-once": "import torch\ndef f(x, acc=[]):\n    acc.append(x)\n"
                         "    return len(acc)\nk = 2\ndef g(x, k=k):\n    return x * k\nk = 5\n"
                         "print(f(1), f(2), f(3, []), g(3))\n",
    # a post-accumulate hook may step and clear .grad, as an optimizer in backward does
    "post-accumulate-hook-clears-grad": "import torch\nw = torch.tensor(2.0, requires_grad=True)\n"
                                        "def step(p):\n    with torch.no_grad():\n"
                                        "        p -= 0.1 * p.grad\n        p.grad = None\n"
                                        "w.register_post_accumulate_grad_hook(step)\n"
                                        "for i in range(2):\n    ((w - 1) ** 2).backward()\n"
                                        "    print(i, w, w.grad)\n",
    # retain_grad's first write is a clone, recorded under create_graph
    "retain-grad-create-graph": "import torch\nx = torch.tensor([1.2, 1.3], requires_grad=True)\n"
                                "y = x * 2\ny.retain_grad()\nz = y.cos().sum()\n"
                                "z.backward(create_graph=True)\nprint(y.grad, x.grad.grad_fn)\n"
                                "(y.grad * x).sum().backward()\nprint(x.grad)\n",
    # Adam's betas: both floats (an int is neither) or both tensors, kept as a tuple; a
    # tensor lr is kept, checked and written by its value
    "adam-betas-int": _LIN + "opt = torch.optim.Adam(model.parameters(), betas=(0, 0.99))\n",
    "adam-betas-list": _LIN + "opt = torch.optim.Adam(model.parameters(), betas=[0.5, 0.9])\n"
                       "print(opt)\n",
    "tensor-lr": _LIN + "opt = torch.optim.SGD(model.parameters(), lr=torch.tensor(0.1), "
                 "momentum=0.5)\nprint(opt, opt.param_groups[0]['lr'])\n"
                 "model(x).sum().backward()\nopt.step()\nprint(model.bias)\n",
    "tensor-lr-checks": _LIN + "opt = torch.optim.SGD(model.parameters(), lr=torch.tensor(-0.1))\n",
    # a Module subclass's extra_repr is part of its print, one line or several
    "extra-repr": "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n"
                  "    def __init__(self, k):\n        super().__init__()\n        self.k = k\n"
                  "        self.fc = nn.Linear(2, 2)\n    def extra_repr(self):\n"
                  "        return f'k={self.k}'\nclass Leaf(nn.Module):\n"
                  "    def extra_repr(self):\n        return 'size=2\\nmode=a'\n"
                  "print(Net(3), Leaf(), nn.Sequential(Leaf()))\n",
    # a custom Function's post-hooks (and so a module's full backward hook) see what its
    # backward returned for an input that needs no gradient
    "function-post-hook-unneeded-grad": "import torch\nclass F(torch.autograd.Function):\n"
                                        "    @staticmethod\n    def forward(ctx, a, b):\n"
                                        "        return a * b\n    @staticmethod\n"
                                        "    def backward(ctx, g):\n        return g * 3, g * 5\n"
                                        "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                                        "y = F.apply(a, torch.tensor([3.0, 4.0]))\n"
                                        "y.grad_fn.register_hook(lambda gi, go: print(gi, go))\n"
                                        "y.sum().backward()\n",
    "module-hook-input-without-grad": "import torch\nimport torch.nn as nn\n"
                                      "class Two(nn.Module):\n    def forward(self, a, b):\n"
                                      "        return a * b, a + b\nm = Two()\n"
                                      "m.register_full_backward_hook(lambda mod, gi, go: "
                                      "print(gi, go))\na = torch.tensor([1.0, 2.0], "
                                      "requires_grad=True)\np, s = m(a, torch.tensor([3.0, 4.0]))"
                                      "\n(p.sum() + s.sum() * 2).backward()\n",
    # `obj.__class__` is type(obj): DCGAN's weights_init reads `m.__class__.__name__`
    "dunder-class": _SEQ + "def init(m):\n    name = m.__class__.__name__\n"
                    "    if name.find('Linear') != -1:\n        nn.init.constant_(m.bias, 0.5)\n"
                    "    print(name, m.__class__)\nmodel.apply(init)\nprint(model[2].bias, "
                    "torch.ones(1).__class__)\n",
    # `%` and `//` on tensors are recorded: RemainderBackward0/1, and floor_divide's (and
    # number % tensor's) NotImplemented node, which takes no sequence number and raises
    "remainder-recorded": "import torch\nw = torch.tensor([2.0, -3.5], requires_grad=True)\n"
                          "v = torch.tensor([1.5, 2.0], requires_grad=True)\ny = w % v + w % 2\n"
                          "print(y, y.grad_fn.next_functions)\ny.sum().backward()\n"
                          "print(w.grad, v.grad)\ng = torch.autograd.grad((w % v).sum(), v, "
                          "create_graph=True)[0]\nprint(g, g.grad_fn.next_functions)\n",
    "floor-divide-not-implemented": "a = 2.0\nb = 3.0\ny = a % b + b // a\n",
    "number-remainder-tensor": "import torch\nw = torch.tensor([2.0, -3.5], requires_grad=True)\n"
                               "r = 5 % w\nprint(r, r.grad_fn, r.grad_fn.name())\n"
                               "r.sum().backward()\n",
    # a Sequential's slice keeps its modules' names; a ModuleList's is numbered afresh;
    # an index that is no integer is operator.index's error
    "sequential-slices": _NN + "layers = [nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1), nn.Tanh()]\n"
                         "model = nn.Sequential(*layers)\nprint(model[-2:], model[::2])\n"
                         "ml = nn.ModuleList(layers)\nprint(ml[1:3], type(ml[1:3]).__name__)\n"
                         "print(model['0'])\n",
    # a subclass that never called super().__init__() has no module state
    "module-without-init": "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n"
                           "    def __init__(self):\n        self.k = 3\n"
                           "def make():\n    n = Net()\n    return str(n)\nprint(make())\n",
    # zip, map, filter, enumerate, reversed and iter give Python's lazy iterators: next()
    # draws from them, map calls its function as items are drawn, len() has none
    "python-iterators": "import torch\nws = [torch.tensor(float(i), requires_grad=True) "
                        "for i in range(3)]\npairs = zip(ws, [1.0, 2.0, 3.0])\n"
                        "w, c = next(pairs)\nprint(w, c, type(pairs), list(pairs)[0][1])\n"
                        "m = map(lambda v: print('drawn', v) or v * 2, [1, 2])\n"
                        "print('made')\nprint(next(m), list(m))\n"
                        "it = iter(ws)\nloss = next(it) * 3 + sum(it)\nloss.backward()\n"
                        "print([w.grad for w in ws], list(reversed(range(2))))\n"
                        "print(next(enumerate(ws, 1))[0], list(filter(None, [0, 2])))\n"
                        "len(zip(ws))\n",
    # tutorials open with the version they were written for
    "torch-version": "import torch\nprint(torch.__version__)\nx = torch.ones(2)\n"
                     "print(x.__version__)\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_lab_does_what_pytorch_does(name: str) -> None:
    assert_same_as_torch(CASES[name])
