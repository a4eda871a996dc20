"""The bad-input table's rows (test_bad_input.py), part three: the operations of a small network
(CONTRACT §1c), and modules and optimizers (§1d). The rows' form is bad_input_rows.py's."""

from __future__ import annotations

from tests.bad_input_rows import T, limit, raises, rejected

F = T + "import torch.nn.functional as F\n"
NN = T + "import torch.nn as nn\n"
ELEMENTS = "elements; the lab allows 100000"
DIM = "Dimension out of range (expected to be in range of [-2, 1], but got {})"
NEGATIVE = "Trying to create tensor with negative dimension -1: [-1]"
LOGITS = "x = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], requires_grad=True)\n"
NET = ("class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
       "        self.fc = nn.Linear(2, 1)\n    def forward(self, x):\n        return self.fc(x)\n"
       "net = Net()\n")
W = "w = torch.tensor(1.0, requires_grad=True)\n"

NETWORK = [
    # -- the elements limit, before anything that big is allocated -----------------------------
    limit("matmul-of-a-10000x10000", T + "y = torch.ones(10000) @ torch.ones(10000, 10000)\n",
          2, 25, "100000000 " + ELEMENTS, end=(2, 49)),
    limit("broadcast-to-10-to-the-8", T + "y = torch.ones(10000, 1) + torch.ones(1, 10000)\n",
          2, 5, "100000000 " + ELEMENTS, end=(2, 48)),
    limit("broadcast-just-past",
          T + "a = torch.ones(400, 1)\nb = torch.ones(1, 251)\nc = a * b\n", 4, 5,
          "100400 " + ELEMENTS),
    limit("ones-just-past", T + "x = torch.ones(100001)\n", 2, 5, "100001 " + ELEMENTS),
    limit("randint-of-10-to-the-8", T + "x = torch.randint(0, 10, (100000000,))\n", 2, 5,
          "100000000 " + ELEMENTS),
    limit("arange-of-10-to-the-8", T + "x = torch.arange(10**8)\n", 2, 5,
          "100000000 " + ELEMENTS),
    limit("linspace-of-10-to-the-9", T + "x = torch.linspace(0, 1, 10**9)\n", 2, 5,
          "1000000000 " + ELEMENTS),
    limit("eye-of-1000", T + "x = torch.eye(1000)\n", 2, 5, "1000000 " + ELEMENTS),
    limit("full-400x400", T + "x = torch.full((400, 400), 1.0)\n", 2, 5, "160000 " + ELEMENTS),
    limit("expand-to-10-to-the-6", T + "x = torch.ones(1000)\ny = x.expand(1000, 1000)\n", 3, 5,
          "1000000 " + ELEMENTS),
    # -- shapes -------------------------------------------------------------------------------
    raises("matmul-shapes", T + "y = torch.ones(2, 3) @ torch.ones(2, 3)\n", "RuntimeError",
           2, 5, "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"),
    raises("matmul-of-scalars", T + "y = torch.tensor(1.0) @ torch.tensor(2.0)\n",
           "RuntimeError", 2, 5,
           "both arguments to matmul need to be at least 1D, but they are 0D and 0D"),
    raises("dot-sizes", T + "y = torch.dot(torch.ones(2), torch.ones(3))\n", "RuntimeError", 2,
           5, "inconsistent tensor size, expected tensor [2] and src [3] to have the same number "
           "of elements, but got 2 and 3 elements respectively"),
    raises("mm-of-a-vector", T + "y = torch.mm(torch.ones(2), torch.ones(2, 2))\n",
           "RuntimeError", 2, 5, "self must be a matrix"),
    raises("mv-sizes", T + "y = torch.ones(2, 2).mv(torch.ones(3))\n", "RuntimeError", 2, 5,
           "size mismatch, got input (2), mat (2x2), vec (3)"),
    raises("matmul-dtypes", T + "y = torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)\n",
           "RuntimeError", 2, 5, "expected m1 and m2 to have the same dtype, but got: float != "
           "double"),
    rejected("batched-matmul", T + "x = torch.ones(2, 2, 2) @ torch.ones(2, 2, 2)\n", 2, 5,
             "batched matmul is not supported"),
    raises("size-mismatch", T + "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
           "b = torch.tensor([1.0, 2.0, 3.0])\nc = a * b\n", "RuntimeError", 4, 5,
           "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
           "dimension 0"),
    raises("reshape-invalid", T + "y = torch.ones(6).reshape(4, 2)\n", "RuntimeError", 2, 5,
           "shape '[4, 2]' is invalid for input of size 6"),
    raises("view-invalid", T + "x = torch.ones(2, 2)\ny = x.view(5)\n", "RuntimeError", 3, 5,
           "shape '[5]' is invalid for input of size 4"),
    raises("view-of-a-transpose", T + "y = torch.ones(2, 3).t().view(-1)\n", "RuntimeError", 2,
           5, "view size is not compatible with input tensor's size and stride (at least one "
           "dimension spans across two contiguous subspaces). Use .reshape(...) instead."),
    raises("view-with-two-inferred", T + "x = torch.ones(6).view(2, -1, -1)\n", "RuntimeError",
           2, 5, "only one dimension can be inferred"),
    raises("transpose-dim", T + "y = torch.ones(2, 3).transpose(0, 2)\n", "IndexError", 2, 5,
           DIM.format(2)),
    raises("squeeze-dim", T + "x = torch.ones(2, 3).squeeze(3)\n", "IndexError", 2, 5,
           DIM.format(3)),
    raises("unsqueeze-dim", T + "x = torch.ones(2, 2).unsqueeze(4)\n", "IndexError", 2, 5,
           "Dimension out of range (expected to be in range of [-3, 2], but got 4)"),
    raises("sum-dim", T + "x = torch.ones(3, 4)\ny = x.sum(dim=2)\n", "IndexError", 3, 5,
           DIM.format(2)),
    raises("softmax-dim", T + "x = torch.ones(3, 4)\ny = torch.softmax(x, dim=2)\n",
           "IndexError", 3, 5, DIM.format(2)),
    raises("max-dim", T + "x = torch.ones(2, 3).max(dim=5)\n", "IndexError", 2, 5,
           DIM.format(5)),
    raises("expand-size", T + "x = torch.ones(2).expand(3, 3)\n", "RuntimeError", 2, 5,
           "The expanded size of the tensor (3) must match the existing size (2) at "
           "non-singleton dimension 1.  Target sizes: [3, 3].  Tensor sizes: [2]"),
    raises("permute-dims", T + "x = torch.ones(2, 3).permute(0)\n", "RuntimeError", 2, 5,
           "permute(sparse_coo): number of dimensions in the tensor input does not match the "
           "length of the desired ordering of dimensions i.e. input.dim() = 2 is not equal to "
           "len(dims) = 1"),
    raises("cat-sizes", T + "y = torch.cat([torch.ones(2, 2), torch.ones(2, 3)])\n",
           "RuntimeError", 2, 5, "Sizes of tensors must match except in dimension 0. Expected "
           "size 2 but got size 3 for tensor number 1 in the list."),
    raises("stack-sizes", T + "y = torch.stack([torch.ones(2), torch.ones(3)])\n",
           "RuntimeError", 2, 5,
           "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1"),
    raises("logsumexp-without-dim", T + "x = torch.ones(2, 3)\ny = x.logsumexp()\n",
           "TypeError", 3, 5, "logsumexp() missing 1 required positional arguments: \"dim\""),
    raises("clamp-without-bounds", T + "x = torch.ones(2, 3)\ny = x.clamp()\n", "RuntimeError",
           3, 5, "torch.clamp: At least one of 'min' or 'max' must not be None"),
    # -- indices --------------------------------------------------------------------------------
    raises("index-out-of-range", T + "y = torch.ones(3)[5]\n", "IndexError", 2, 5,
           "index 5 is out of bounds for dimension 0 with size 3"),
    raises("too-many-indices", T + "y = torch.ones(3)[0, 0]\n", "IndexError", 2, 5,
           "too many indices for tensor of dimension 1"),
    raises("float-index", T + "x = torch.ones(3)\ny = x[1.0]\n", "IndexError", 3, 5,
           "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
           "valid indices (got float)"),
    raises("negative-slice-step", T + "x = torch.ones(3)\ny = x[5:2:-1]\n", "ValueError", 3, 5,
           "step must be greater than zero"),
    raises("mask-of-another-shape", T + "x = torch.ones(3)\ny = x[torch.tensor([True, False])]\n",
           "IndexError", 3, 5, "The shape of the mask [2] at index 0 does not match the shape "
           "of the indexed tensor [3] at index 0"),
    raises("index-assign-of-another-size", T + "x = torch.ones(2, 2)\nx[0] = torch.ones(3)\n",
           "RuntimeError", 3, 1, "The expanded size of the tensor (2) must match the existing "
           "size (3) at non-singleton dimension 0.  Target sizes: [2].  Tensor sizes: [3]"),
    raises("index-assign-into-a-leaf",
           T + "x = torch.ones(2, 2, requires_grad=True)\nx[0] = 5.0\n", "RuntimeError", 3, 1,
           "a view of a leaf Variable that requires grad is being used in an in-place operation."),
    # -- dtypes -------------------------------------------------------------------------------
    raises("arange-requires-grad", T + "x = torch.arange(3, requires_grad=True)\n",
           "RuntimeError", 2, 5,
           "Only Tensors of floating point and complex dtype can require gradients"),
    raises("int64-requires-grad", T + "x = torch.zeros(2, dtype=torch.int64, requires_grad=True)\n",
           "RuntimeError", 2, 5,
           "Only Tensors of floating point and complex dtype can require gradients"),
    raises("long-requires-grad-later",
           T + "x = torch.tensor([1.0, 2.0]).long()\nx.requires_grad_()\n",
           "RuntimeError", 3, 1, "only Tensors of floating point dtype can require gradients"),
    raises("mean-of-longs", T + "x = torch.tensor([1, 2]).mean()\n", "RuntimeError", 2, 5,
           "mean(): could not infer output dtype. Input dtype must be either a floating point or "
           "complex dtype. Got: Long"),
    raises("bool-negation", T + "x = torch.zeros(3, dtype=torch.bool)\nz = -x\n",
           "RuntimeError", 3, 5, "Negation, the `-` operator, on a bool tensor is not supported. "
           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."),
    raises("randn-of-longs", T + "x = torch.randn(2, 3, dtype=torch.int64)\n",
           "NotImplementedError", 2, 5, "\"normal_kernel_cpu\" not implemented for 'Long'"),
    raises("where-of-floats", T + "x = torch.where(torch.ones(2), torch.ones(2), torch.zeros(2))\n",
           "RuntimeError", 2, 5,
           "where expected condition to be a boolean tensor, but got a tensor with dtype Float"),
    raises("floor-divide-by-zero", T + "x = torch.tensor([1]) // 0\n", "RuntimeError", 2, 5,
           "ZeroDivisionError"),
    raises("to-cuda", T + 'x = torch.ones(2).to("cuda")\n', "AssertionError", 2, 5,
           "Torch not compiled with CUDA enabled"),
    rejected("int32", F + LOGITS + "loss = F.cross_entropy(x, torch.tensor([0, 1], "
             "dtype=torch.int32))\n", 4, 54, "torch.int32"),
    # -- factories --------------------------------------------------------------------------
    raises("ones-of-a-negative-size", T + "x = torch.ones(-1)\n", "RuntimeError", 2, 5, NEGATIVE),
    raises("randn-of-a-negative-size", T + "x = torch.randn(-1)\n", "RuntimeError", 2, 5,
           NEGATIVE),
    raises("zeros-of-a-negative-size", T + "x = torch.zeros(-1)\n", "RuntimeError", 2, 5,
           "zeros: Dimension size must be non-negative.",
           xfail="the lab gives ones' message (Trying to create tensor with negative dimension)"),
    raises("eye-of-a-negative-size", T + "x = torch.eye(-1)\n", "RuntimeError", 2, 5,
           "n must be greater or equal to 0, got -1"),
    raises("arange-with-a-zero-step", T + "x = torch.arange(0, 10, 0)\n", "RuntimeError", 2, 5,
           "step must be nonzero"),
    raises("arange-backwards", T + "x = torch.arange(10, 0)\n", "RuntimeError", 2, 5,
           "upper bound and lower bound inconsistent with step sign"),
    raises("linspace-of-negative-steps", T + "x = torch.linspace(0, 1, -1)\n", "RuntimeError",
           2, 5, "number of steps must be non-negative"),
    raises("randint-bounds", T + "x = torch.randint(5, 2, (3,))\n", "RuntimeError", 2, 5,
           "random_ expects 'from' to be less than 'to', but got from=5 >= to=2"),
    # -- losses -------------------------------------------------------------------------------
    raises("cross-entropy-of-a-float-target",
           F + LOGITS + "loss = F.cross_entropy(x, torch.tensor([0.0, 1.0]))\n", "RuntimeError",
           4, 8, "expected target dtype to be Long or Byte, but got Float"),
    raises("cross-entropy-target-out-of-range",
           F + "x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)\n"
           "loss = F.cross_entropy(x, torch.tensor([5]))\n", "IndexError", 4, 8,
           "Target 5 is out of bounds."),
    raises("nll-of-a-float-target",
           F + "x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)\n"
           "loss = F.nll_loss(x, torch.tensor([0.0]))\n", "RuntimeError", 4, 8,
           "expected target dtype to be Long or Byte, but got Float"),
    raises("mse-sizes", F + "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
           "loss = F.mse_loss(x, torch.tensor([1.0, 2.0, 3.0]))\n", "RuntimeError", 4, 8,
           "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
           "dimension 0"),
    raises("bce-sizes", F + "x = torch.ones(2, requires_grad=True)\n"
           "loss = F.binary_cross_entropy_with_logits(x, torch.ones(3))\n", "ValueError", 4, 8,
           "Target size (torch.Size([3])) must be the same as input size (torch.Size([2]))"),
    raises("reduction-average",
           F + 'loss = F.mse_loss(torch.ones(2), torch.ones(2), reduction="average")\n',
           "ValueError", 3, 8, "average is not a valid value for reduction"),
]

MODULES = [
    raises("module-without-super-init",
           NN + "class Net(nn.Module):\n    def __init__(self):\n"
           "        self.fc = nn.Linear(2, 1)\nnet = Net()\n", "AttributeError", 5, 9,
           "cannot assign module before Module.__init__() call"),
    raises("parameter-without-super-init",
           NN + "class Net(nn.Module):\n    def __init__(self):\n"
           "        self.w = nn.Parameter(torch.ones(2))\nnet = Net()\n", "AttributeError", 5, 9,
           "cannot assign parameters before Module.__init__() call"),
    raises("undefined-layer",
           NN + "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
           "        self.fc1 = nn.Linear(2, 2)\n    def forward(self, x):\n"
           "        return self.fc2(self.fc1(x))\nnet = Net()\ny = net(torch.ones(2))\n",
           "AttributeError", 8, 16, "'Net' object has no attribute 'fc2'"),
    raises("module-without-forward",
           NN + "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
           "net = Net()\ny = net(torch.ones(2))\n", "NotImplementedError", 7, 5,
           "Module [Net] is missing the required \"forward\" function"),
    raises("forward-with-too-many-inputs", NN + NET + "y = net(torch.ones(2), torch.ones(2))\n",
           "TypeError", 10, 5, "Net.forward() takes 2 positional arguments but 3 were given"),
    raises("child-module-replaced-by-an-int", NN + NET + "net.fc = 5\n", "TypeError", 10, 1,
           "cannot assign 'int' as child module 'fc' (torch.nn.Module or None expected)"),
    raises("linear-input-size", NN + "model = nn.Linear(2, 1)\ny = model(torch.ones(1, 3))\n",
           "RuntimeError", 4, 5, "mat1 and mat2 shapes cannot be multiplied (1x3 and 2x1)"),
    raises("sequential-sizes",
           NN + "model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(2, 1))\n"
           "y = model(torch.ones(2))\n", "RuntimeError", 4, 5,
           "mat1 and mat2 shapes cannot be multiplied (1x3 and 2x1)"),
    raises("sequential-of-an-int", NN + "m = nn.Sequential(5)\n", "TypeError", 3, 5,
           "int is not a Module subclass"),
    raises("sequential-index", NN + "model = nn.Sequential(nn.Linear(2, 1))\nl = model[3]\n",
           "IndexError", 4, 5, "index 3 is out of range"),
    raises("linear-of-a-float-size", NN + "m = nn.Linear(2.5, 1)\n", "TypeError", 3, 5,
           "empty(): argument 'size' failed to unpack the object at pos 2 with error \"type must "
           "be tuple of ints,but got float\"", xfail="the lab says Linear(): in_features must "
                                                     "be an int, not float"),
    raises("relu-with-arguments", NN + "model = nn.ReLU(5, 6)\n", "TypeError", 3, 9,
           "ReLU.__init__() takes from 1 to 2 positional arguments but 3 were given"),
    raises("parameter-of-a-float", NN + "w = nn.Parameter(5.0)\n", "AttributeError", 3, 5,
           "'float' object has no attribute 'detach'",
           xfail="the lab refuses it with its own words (the lab's nn.Parameter takes a "
                 "tensor)"),
    raises("misspelt-weight", NN + "model = nn.Linear(2, 1)\np = model.weights\n",
           "AttributeError", 4, 5, "'Linear' object has no attribute 'weights'"),
    raises("weight-grad-after-zero-grad",
           NN + "model = nn.Linear(2, 1)\nmodel.zero_grad()\nmodel.weight.grad.zero_()\n",
           "AttributeError", 5, 1, "'NoneType' object has no attribute 'zero_'"),
    raises("cross-entropy-loss-of-a-float-target",
           NN + "loss_fn = nn.CrossEntropyLoss()\n"
           "loss = loss_fn(torch.ones(2, 3), torch.tensor([0.5, 1.0]))\n", "RuntimeError", 4, 8,
           "expected target dtype to be Long or Byte, but got Float"),
    raises("mse-loss-sizes", NN + "loss = nn.MSELoss()(torch.ones(2), torch.ones(3))\n",
           "RuntimeError", 3, 8, "The size of tensor a (2) must match the size of tensor b (3) "
           "at non-singleton dimension 0"),
    raises("backward-hook-not-callable",
           NN + "model = nn.Linear(2, 1)\nh = model.register_full_backward_hook(5)\n"
           "y = model(torch.ones(2)).sum()\ny.backward()\n", "TypeError", 6, 1,
           "'int' object is not callable", kind="backward"),
    raises("training-loop-second-backward",
           NN + NET + "opt = torch.optim.SGD(net.parameters(), lr=0.1)\nfor step in range(3):\n"
           "    loss = net(torch.ones(2)).sum()\n    loss.backward()\n    loss.backward()\n",
           "RuntimeError", 14, 5,
           "Trying to backward through the graph a second time (or directly access saved "
           "tensors after they have already been freed). Saved intermediate values of the "
           "graph are freed when you call .backward() or autograd.grad(). Specify "
           "retain_graph=True if you need to backward through the graph a second time or if "
           "you need to access saved tensors after calling backward.", kind="backward"),
    # -- optimizers -----------------------------------------------------------------------------
    raises("optimizer-of-nothing", T + "opt = torch.optim.SGD([], lr=0.1)\n", "ValueError", 2, 7,
           "optimizer got an empty parameter list"),
    raises("negative-learning-rate", T + W + "opt = torch.optim.SGD([w], lr=-0.1)\n",
           "ValueError", 3, 7, "Invalid learning rate: -0.1"),
    raises("negative-momentum", T + W + "opt = torch.optim.SGD([w], lr=0.1, momentum=-1)\n",
           "ValueError", 3, 7, "Invalid momentum value: -1"),
    raises("nesterov-without-momentum",
           NN + "model = nn.Linear(2, 1)\n"
           "opt = torch.optim.SGD(model.parameters(), lr=0.1, nesterov=True)\n", "ValueError", 4,
           7, "Nesterov momentum requires a momentum and zero dampening"),
    raises("adam-betas", T + W + "opt = torch.optim.Adam([w], betas=(1.5, 0.9))\n", "ValueError",
           3, 7, "Invalid beta parameter at index 0: 1.5"),
    raises("adam-negative-weight-decay",
           NN + "model = nn.Linear(2, 1)\n"
           "opt = torch.optim.Adam(model.parameters(), lr=0.1, weight_decay=-1)\n", "ValueError",
           4, 7, "Invalid weight_decay value: -1"),
    raises("optimizer-of-a-non-leaf", T + W + "y = w * 2\nopt = torch.optim.SGD([y], lr=0.1)\n",
           "ValueError", 4, 7, "can't optimize a non-leaf Tensor"),
    raises("optimizer-of-a-tensor", T + W + "opt = torch.optim.SGD(w, lr=0.1)\n", "TypeError", 3,
           7, "params argument given to the optimizer should be an iterable of Tensors or dicts, "
           "but got torch.FloatTensor"),
    raises("step-with-an-int",
           NN + "model = nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
           "opt.step(5)\n", "TypeError", 5, 1, "'int' object is not callable"),
    raises("optimizer-unknown-method",
           NN + "model = nn.Linear(2, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
           "opt.foo()\n", "AttributeError", 5, 1, "'SGD' object has no attribute 'foo'"),
]
