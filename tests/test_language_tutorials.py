"""Rules found by the tutorials corpus (tests/data/corpus/tutorials_extra.jsonl), each
checked on a small program against live PyTorch 2.13 (tests/torch_recorder.py): the
expected trace is what PyTorch does, never a number typed here.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.language.parse import SourceError, parse
from tests.differential import lab
from tests.matching import differences
from tests.torch_recorder import record

# the notes' once_differentiable Square, used twice below
_ONCE_SQUARE = """from torch.autograd.function import once_differentiable
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x * grad_output

"""

RULES = {
    # The docs' custom Functions call their parameter `input` (and so do their callers).
    "input_as_a_name": """import torch
class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        result = input.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result

input = torch.tensor([0.5, -1.0], requires_grad=True)
Exp.apply(input).sum().backward()
print(input.grad)
""",
    # d2l 2.5: `torch.randn(size=(), requires_grad=True)`; the other factories take it too.
    "size_keyword": """import torch
torch.manual_seed(0)
a = torch.randn(size=(), requires_grad=True)
b = torch.rand(size=(2,))
c = torch.zeros(size=(2, 3)) + torch.ones(size=[3]) + torch.empty(size=(1, 3)).zero_()
print(a, b, c, torch.randn(2))
(a * b).sum().backward()
print(a.grad)
""",
    # "Extending PyTorch": extra gradients are dropped when they are all None.
    "trailing_nones": """import torch
class Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, bias=None):
        ctx.save_for_backward(x, w)
        return x.mm(w.t())

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g.mm(w), g.t().mm(x), None

x = torch.tensor([[1.0, 2.0]], requires_grad=True)
w = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
Linear.apply(x, w).sum().backward()
print(x.grad, w.grad)
""",
    # ... but not when one of them is a tensor.
    "extra_gradient": """import torch
class Twice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2, None, g

x = torch.tensor(1.0, requires_grad=True)
Twice.apply(x).backward()
""",
    # The autograd notes' pack/unpack hooks that print: inputs in alphabetical order of
    # their names, then outputs; packing records nothing (no sequence number).
    "saved_tensors_hooks_order": """import torch
A = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
v = torch.tensor([5.0, 6.0], requires_grad=True)
w = torch.ones(2, requires_grad=True) * 2
def pack(t):
    print("pack", t * 2)
    return t
def unpack(t):
    print("unpack", t)
    return t
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    ys = [v * w, v / w, v ** w, torch.dot(v, w), A.mv(v), A.mm(A.t()),
          torch.maximum(v, w), torch.minimum(v, w)]
for y in ys:
    y.sum().backward()
print(v.grad, A.grad)
""",
    # The notes' once_differentiable: backward runs under no_grad.
    "once_differentiable": """import torch
""" + _ONCE_SQUARE + """x = torch.tensor(3.0, requires_grad=True)
g, = torch.autograd.grad(Square.apply(x), x, create_graph=True)
print(g, g.requires_grad, g.grad_fn)
""",
    # ctx.mark_dirty: the same tensor comes back, one version later, rebased on the node.
    "mark_dirty": """import torch
class AddOne(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a * 2
c = AddOne.apply(b)
print(c is b, b._version, b.grad_fn.name(), b.grad_fn.next_functions)
t = torch.tensor([1.0, 2.0])
d = AddOne.apply(t)
print(d is t, t._version, d.requires_grad)
(c * c).sum().backward()
print(a.grad)
AddOne.apply(a)
""",
    # "Double Backward with Custom Functions": gradgradcheck differentiates the first
    # derivatives, whose grad_outputs are leaves a custom backward receives (and names).
    "gradgradcheck": """import torch
class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 3 * x ** 2

class FlatCube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x.detach() ** 2

x = torch.tensor([1.5, -0.5], requires_grad=True, dtype=torch.double)
print(torch.autograd.gradcheck(Cube.apply, x), torch.autograd.gradgradcheck(Cube.apply, x))
print(torch.autograd.gradcheck(FlatCube.apply, x))
print(torch.autograd.gradgradcheck(FlatCube.apply, x, raise_exception=False))
print(torch.autograd.gradgradcheck(torch.tanh, (x,)))
torch.manual_seed(0)
torch.autograd.gradgradcheck(torch.sin, (x,))
print(torch.rand(2))      # its grad_outputs were drawn from the default generator
""",
    # gradcheck's message shows the Jacobians as tensors and names the output and input.
    "gradcheck_message_input": """import torch
class Bad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * y, (g * y).sum()

x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
y = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
torch.autograd.gradcheck(Bad.apply, (x, y))
""",
    "gradcheck_message_output": """import torch
class Two(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2, x * x

    @staticmethod
    def backward(ctx, g1, g2):
        x, = ctx.saved_tensors
        return g1 * 2 + g2 * x

x = torch.tensor([0.5, 2.0], dtype=torch.float64, requires_grad=True)
torch.autograd.gradcheck(Two.apply, (x,))
""",
    "gradcheck_float32": """import torch
x = torch.tensor([0.3, 0.7], requires_grad=True)
torch.autograd.gradcheck(torch.sin, (x,))
""",
    # `@torch.set_grad_enabled(False)` sets the mode when made, and its __call__ puts the
    # mode back: only the function runs without grad.
    "set_grad_enabled_decorator": """import torch
@torch.set_grad_enabled(False)
def frozen(x):
    return x * 2

w = torch.tensor(1.5, requires_grad=True)
print(torch.is_grad_enabled(), frozen(w).requires_grad)
(w * 2).backward()
print(w.grad)
""",
    "inference_tensor_requires_grad": """import torch
with torch.inference_mode():
    y = torch.ones(2)
    y.requires_grad_()
    print(y.requires_grad)
y.requires_grad_(False)
x = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.inference_mode():
    z = x * 2
z.requires_grad = True
""",
    # autograd.grad of a non-leaf input and of a leaf behind it: the input's node runs.
    "grad_of_nonleaf_and_its_ancestor": """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
h = x * 2
k = h.exp()
out = (h ** 2).sum() + k.sum()
gh, gx = torch.autograd.grad(out, [h, x], retain_graph=True)
gk, gx2 = torch.autograd.grad(out, [k, x])
print(gh, gx, gk, gx2, x.grad)
""",
    # Leaves are named after a statement completes: not at a call's parameters, a loop's
    # variable, nor after a block that a return left.
    "leaf_names_after_statements": """import torch
def f(x):
    if x.item() > 0:
        return x * 2
    elif x.item() == 0:
        return x * 0
    return -x

vals = [torch.tensor(v, requires_grad=True) for v in (1.5, 0.0, -2.0)]
outs = [f(v) for v in vals]
for v, o in zip(vals, outs):
    o.backward()
    print(v.grad)
for w in [torch.tensor(3.0, requires_grad=True)]:
    if w.item() > 1:
        (w * w).backward()
        break
""",
    # ... and under create_graph, given gradients that require grad, its results hang off
    # an Error node (DelayedError takes a sequence number) that raises when reached.
    "once_differentiable_twice": """import torch
""" + _ONCE_SQUARE + """x = torch.tensor(3.0, requires_grad=True)
y = Square.apply(x) * x
g, = torch.autograd.grad(y, x, create_graph=True)
print(g, g.grad_fn.next_functions[1][0].name(), (x * 2).grad_fn._sequence_nr())
g.backward()
""",
    # prod's backward is recorded under create_graph (a Hessian through it, as the docs'
    # hessian examples take), grad * (result / input) as PyTorch's prod_backward.
    "prod_double_backward": """import torch
from torch.autograd.functional import hessian
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
print(hessian(lambda t: (t ** 2).prod(), x))
y = x.prod()
g, = torch.autograd.grad(y, x, create_graph=True)
print(g)
g.sum().backward()
print(x.grad)
s = torch.tensor(2.0, requires_grad=True)
gs, = torch.autograd.grad(s.prod(), s, create_graph=True)
print(gs, gs.requires_grad)
""",
    # A generator expression is lazy: sum() records each element's nodes, then its add.
    "lazy_generator_expression": """import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
parts = [x[0], x[1:], x * 2]
total = sum(p.sum() for p in parts)
squares = list(v ** 2 for v in parts if v.dim() > 0)
g = (t.exp() for t in parts)
print(g)
(total + sum(s.sum() for s in squares)).backward()
print(x.grad)
""",
    # Inside a hook grad mode is off, so a backward there of a new expression fails as in
    # PyTorch before the lab would refuse a pass inside a hook.
    "backward_in_a_hook_without_graph": """import torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x.exp()
y.register_hook(lambda g: torch.autograd.grad((x ** 2).sum(), x))
y.sum().backward()
""",
}


@pytest.mark.torch
@pytest.mark.parametrize("name", list(RULES))
def test_rule_matches_pytorch(name: str, torch: Any) -> None:
    source = RULES[name]
    diffs = differences(lab(source), record(source))
    assert not diffs, "\n".join([source, *diffs])


def test_a_builtin_the_program_does_not_bind_stays_refused() -> None:
    with pytest.raises(SourceError) as caught:
        parse("import torch\nx = input()\n")
    assert (caught.value.line, caught.value.col) == (2, 5)
    assert "`input` is not available" in str(caught.value)
    parse("import torch\ndef f(input):\n    return input * 2\n")
