"""The lab's presets: programs chosen to teach one thing each.

Their expected values are never typed in here: tests run each preset through the engine
and compare with recorded PyTorch where a recording exists. Every gradient a preset sends
is informative (none is 0, as a saturated tanh's would be), unless its lesson is exactly
that: tests/test_presets.py holds them to it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

BASICS = "Backward, step by step"
NETWORK = "Matrices and losses"
MODELS = "Models and optimizers"


class Preset(BaseModel):
    id: str
    title: str
    goal: str = Field(description="the one thing this preset teaches")
    source: str
    topic: str = Field(BASICS, description="the picker groups presets by topic")


def _p(id_: str, title: str, goal: str, source: str, topic: str = BASICS) -> Preset:
    return Preset(id=id_, title=title, goal=goal, source=source.strip("\n") + "\n",
                  topic=topic)


PRESETS: list[Preset] = [
    _p("worked-example", "Worked example",
       "Follow one gradient from the loss back to w and b: the chain rule, one node at a time.",
       """
x = torch.tensor(2.0)
w = 3.0
b = 1.0
y = w * x + b
loss = y * y
"""),
    _p("neuron", "Neuron",
       "A tanh neuron: the saved output of tanh is all its backward needs.",
       """
x = torch.tensor(0.5)
w = -1.5
b = 0.8
out = torch.tanh(w * x + b)
out.backward()
"""),
    _p("mixed", "Mixed operations",
       "Several ops and functions, a variable used twice, and two leaves ready at once: "
       "watch the ready queue decide.",
       """
a = 0.5
b = 0.8
c = 1.5
h = a * b
g = torch.sin(h) + h.exp() / 4
loss = (g * c).tanh() + a * c
loss.backward()
"""),
    _p("used-twice", "Used twice",
       "A value used twice receives two gradients; the input buffer adds them before the "
       "node runs once.",
       """
a = 1.0
b = a + a
c = b + b
"""),
    _p("number-on-left", "Number on the left",
       "`1 - a` is RsubBackward1 with one edge, and `2 / a` is really reciprocal then "
       "multiply.",
       """
a = 2.0
y = 1 - a
z = 2 / a
loss = y * z
"""),
    _p("vector-broadcast", "Vector with broadcasting",
       "A scalar weight times a vector: backward sums the broadcast gradient back to w's "
       "shape.",
       """
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = 2.0
loss = (x * w - 1).sum()
"""),
    _p("second-backward-error", "Second backward error",
       "After backward the saved tensors are freed: a second backward stops at the first "
       "node that needs them.",
       """
w = 3.0
b = 1.0
x = torch.tensor(2.0)
y = w * x + b
loss = y * y
loss.backward()
loss.backward()
"""),
    _p("second-backward-works", "Second backward that works",
       "Add, Sub and Neg save no tensors, so this graph can run backward twice; the grads "
       "accumulate.",
       """
a = 2.0
b = 5.0
y = a + b - (-a)
y.backward()
y.backward()
"""),
    _p("non-scalar-error", "Non-scalar output error",
       "backward() makes the ones seed only for a single-element output; a vector needs "
       "gradient=.",
       """
v = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = v * 2
y.backward()
"""),
    _p("two-losses", "Two losses, retain_graph=True",
       "Two losses share a graph: retain_graph=True keeps its saved tensors for the second "
       "backward, and the grads add up.",
       """
w = 2.0
x = torch.tensor(3.0)
h = w * x
loss1 = h * h
loss2 = h.sin()
loss1.backward(retain_graph=True)
loss2.backward()
"""),
]


# -- matrices, losses and seeded numbers (issue 14), models and optimizers (issue 17) --------

PRESETS += [
    _p("linear-layer", "A linear layer x @ W + b",
       "The bias is broadcast over the batch, so its gradient is the output's gradient "
       "summed over the batch: b.grad equals (2 * out).sum(dim=0).",
       """
import torch
x = torch.tensor([[1.0, 2.0, -1.0], [0.5, -1.5, 2.0]])
W = torch.tensor([[0.2, -0.4], [0.7, 0.1], [-0.3, 0.5]], requires_grad=True)
b = torch.tensor([0.1, -0.2], requires_grad=True)
out = x @ W + b
loss = (out ** 2).sum()
loss.backward()
print(b.grad)
print((2 * out).sum(dim=0))
""", NETWORK),
    _p("two-layer-mlp", "Two-layer MLP, cross-entropy",
       "tanh(x @ W1 + b1) @ W2 + b2, then F.cross_entropy: LogSoftmaxBackward0 and "
       "NllLossBackward0 send the loss's gradient down through both layers to every weight.",
       """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(4, 3)
y = torch.tensor([0, 2, 1, 2])
W1 = torch.randn(3, 5, requires_grad=True)
b1 = torch.zeros(5, requires_grad=True)
W2 = torch.randn(5, 3, requires_grad=True)
b2 = torch.zeros(3, requires_grad=True)
h = torch.tanh(x @ W1 + b1)
logits = h @ W2 + b2
loss = F.cross_entropy(logits, y)
loss.backward()
""", NETWORK),
    _p("softmax-by-hand", "Softmax and NLL by hand",
       "The same loss twice: written out (exp, sum, divide, log, pick the target) it records "
       "many nodes, F.cross_entropy records two, and logits.grad is the same.",
       """
import torch
import torch.nn.functional as F
logits = torch.tensor([[2.0, -1.0, 0.5], [0.1, 0.3, -0.2]], requires_grad=True)
y = torch.tensor([0, 2])
one_hot = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
p = logits.exp() / logits.exp().sum(dim=1, keepdim=True)
by_hand = -(p.log() * one_hot).sum(dim=1).mean()
by_hand.backward()
print(logits.grad)
logits.grad = None
loss = F.cross_entropy(logits, y)
loss.backward()
print(logits.grad)
""", NETWORK),
    _p("mse-step", "MSE regression, one step",
       "One step of gradient descent by hand: backward writes w.grad and b.grad, and the "
       "update under no_grad moves w and b against them, so the loss falls.",
       """
import torch
import torch.nn.functional as F
x = torch.tensor([[1.0], [2.0], [3.0], [4.0]])
y = torch.tensor([[2.1], [3.9], [6.2], [7.8]])
w = torch.tensor([[0.5]], requires_grad=True)
b = torch.tensor([0.0], requires_grad=True)
pred = x @ w + b
loss = F.mse_loss(pred, y)
loss.backward()
lr = 0.05
with torch.no_grad():
    w -= lr * w.grad
    b -= lr * b.grad
print(f"loss {loss.item():.4f} before the step, {F.mse_loss(x @ w + b, y).item():.4f} after")
""", NETWORK),
    _p("seeded-weights", "Seeded weights (manual_seed)",
       "After torch.manual_seed(0), torch.randn and torch.rand draw exactly the numbers "
       "PyTorch draws: W is the same here as in Python.",
       """
import torch
torch.manual_seed(0)
W = torch.randn(3, 2, requires_grad=True)
x = torch.rand(4, 3)
print(W)
loss = torch.tanh(x @ W).sum()
loss.backward()
""", NETWORK),
    _p("sequential", "A model with nn.Sequential",
       "Each nn.Linear records one AddmmBackward0 (and a TBackward0 for its weight); its "
       "parameters are leaves named model.0.weight, model.0.bias, ...",
       """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
x = torch.randn(5, 3)
y = torch.randn(5, 1)
loss = nn.MSELoss()(model(x), y)
loss.backward()
""", MODELS),
    _p("custom-module", "A custom nn.Module",
       "forward() is ordinary code: the nodes it records belong to net.fc1, net.fc2 or net "
       "itself (the sigmoid), and the parameters are named after the attributes.",
       """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 4)
        self.fc2 = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc2(torch.sigmoid(self.fc1(x)))


torch.manual_seed(0)
net = Net()
x = torch.tensor([[0.5, -1.0], [1.5, 0.2]])
target = torch.tensor([2, 0])
loss = nn.CrossEntropyLoss()(net(x), target)
loss.backward()
""", MODELS),
    _p("sgd-momentum", "SGD with momentum, 3 steps",
       "opt.step() consumes the gradients backward wrote: the momentum buffer starts as the "
       "first gradient, then b = 0.9 * b + g, and w = w - lr * b.",
       """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
x = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.5, -1.0]])
y = torch.tensor([[1.0], [0.0], [2.0]])
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(3):
    opt.zero_grad()
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}")
""", MODELS),
    _p("adam", "Adam, three steps",
       "Adam keeps two running averages per parameter (exp_avg of g, exp_avg_sq of g * g), "
       "corrects their bias towards 0, and moves each weight by about lr whatever g's size.",
       """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
x = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.5, -1.0]])
y = torch.tensor([[1.0], [0.0], [2.0]])
opt = torch.optim.Adam(model.parameters(), lr=0.1)
for step in range(3):
    opt.zero_grad()
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}")
""", MODELS),
    _p("forgot-opt-zero-grad", "Forgetting opt.zero_grad()",
       "Without opt.zero_grad() each backward adds to the .grad of the last: the second "
       "and third steps move the weights by the sum of every gradient so far.",
       """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Linear(2, 1)
x = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.5, -1.0]])
y = torch.tensor([[1.0], [0.0], [2.0]])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    opt.step()
    print(f"step {step}: weight.grad {model.weight.grad}")
""", MODELS),
]


# -- the course's autograd (issue 11): grad modes, in place, loops, hooks, grad, Function ----

GRAD_OFF = "Turning gradients off"
LOOPS = "Loops and training"
HOOKS = "Hooks and custom Functions"
VALUES = "Gradients as values"

PRESETS += [
    _p("freeze-parameter", "Freeze a parameter",
       "b.requires_grad_(False) makes b a constant: the graph gets no AccumulateGrad for "
       "it, so backward never writes b.grad.",
       """
import torch

w = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
x = torch.tensor(2.0)
b.requires_grad_(False)
y = w * x + b
loss = y * y
loss.backward()
print(w.grad, b.grad)
""", GRAD_OFF),
    _p("no-grad-eval", "Evaluate under no_grad",
       "Inside torch.no_grad() nothing is recorded: prediction has no grad_fn, so "
       "evaluating builds no graph and backward never reaches it.",
       """
import torch

w = torch.tensor(2.0, requires_grad=True)
x = torch.tensor(3.0)
target = torch.tensor(5.0)
loss = (w * x - target) ** 2
loss.backward()
with torch.no_grad():
    prediction = w * torch.tensor(4.0)
print(prediction.requires_grad, prediction.grad_fn)
print(w.grad)
""", GRAD_OFF),
    _p("detach", "Stop-gradient with detach",
       "c = y.detach() has y's value and no history: z = c * x + y sends gradients "
       "through y and x, and none through c.",
       """
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x * x
c = y.detach()
z = c * x + y
z.backward()
print(c.requires_grad, x.grad)
""", GRAD_OFF),
    _p("in-place-error", "In-place change breaks backward",
       "z = y ** 2 saves y; y += 1 then changes y in place, so the version PowBackward0 "
       "saved is stale and it raises when it pops.",
       """
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x * 3
z = y ** 2
y += 1
z.backward()
""", GRAD_OFF),
    _p("training-loop", "A training loop",
       "Three SGD steps: each iteration records a new graph, opt.zero_grad() clears .grad, "
       "backward writes it afresh and opt.step() moves w and b. Pick a pass to see it.",
       """
import torch

w = torch.tensor(1.0, requires_grad=True)
b = torch.tensor(0.5, requires_grad=True)
x = torch.tensor(2.0)
target = torch.tensor(7.0)
opt = torch.optim.SGD([w, b], lr=0.05)
for step in range(3):
    opt.zero_grad()
    loss = (w * x + b - target) ** 2
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}, w.grad {w.grad.item():.2f}")
""", LOOPS),
    _p("forgetting-zero-grad", "Forgetting zero_grad",
       "The same loop without opt.zero_grad(): each backward adds to the last one's .grad, "
       "so the steps grow and by the fourth the loss rises again.",
       """
import torch

w = torch.tensor(1.0, requires_grad=True)
b = torch.tensor(0.5, requires_grad=True)
x = torch.tensor(2.0)
target = torch.tensor(7.0)
opt = torch.optim.SGD([w, b], lr=0.05)
for step in range(4):
    loss = (w * x + b - target) ** 2
    loss.backward()
    opt.step()
    print(f"step {step}: loss {loss.item():.4f}, w.grad {w.grad.item():.2f}")
""", LOOPS),
    _p("dynamic-graph", "A dynamic graph",
       "The graph is recorded as the code runs: each pass has the nodes of the branch its "
       "if took, and w.grad adds up over both.",
       """
import torch

w = torch.tensor(0.5, requires_grad=True)
for x in [torch.tensor(2.0), torch.tensor(-3.0)]:
    h = w * x
    if h > 0:
        y = h.exp()
    else:
        y = h * h
    y.backward()
    print(f"{y.grad_fn.name()}: w.grad is now {w.grad.item():.4f}")
""", LOOPS),
    _p("clip-hook", "Clip a gradient with a hook",
       "Two hooks on y fire when its grad_fn pops, in the order registered: one prints the "
       "gradient, the other returns it clamped, which replaces it.",
       """
import torch

w = torch.tensor(2.0, requires_grad=True)
x = torch.tensor(5.0)
y = w * x
y.register_hook(lambda g: print("gradient reaching y:", g))
h = y.register_hook(lambda g: g.clamp(-1.0, 1.0))
loss = y ** 2
loss.backward()
print(w.grad)
""", HOOKS),
    _p("retain-grad", "retain_grad on a non-leaf",
       "y is no leaf, so backward keeps no y.grad unless y.retain_grad() asks: then it is "
       "stored when y's grad_fn pops. Reading loss.grad only warns.",
       """
import torch

w = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(2.0)
y = w * x
y.retain_grad()
loss = y * y + y
loss.backward()
print(y.grad, w.grad)
print(loss.grad)
""", HOOKS),
    _p("straight-through", "Straight-through estimator",
       "A custom autograd.Function: forward clamps, backward passes the gradient through "
       "unchanged, as if the clamp were not there.",
       """
import torch


class StraightThroughClamp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, low, high):
        return t.clamp(low, high)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None, None   # identity for t; low and high get no gradient


x = torch.tensor(2.0)
w = torch.tensor(3.0, requires_grad=True)
b = torch.tensor(1.0, requires_grad=True)
y = w * x + b
c = StraightThroughClamp.apply(y, 0.0, 5.0)
print(c.grad_fn.name())
(c * c).backward()
print(w.grad, b.grad)
""", HOOKS),
    _p("grad-vs-backward", "autograd.grad vs backward",
       "torch.autograd.grad returns the gradient and writes no .grad (AccumulateGrad does "
       "not run); backward() writes x.grad instead.",
       """
import torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
(g,) = torch.autograd.grad(y, x, retain_graph=True)
print(g, x.grad)
y.backward()
print(x.grad)
""", VALUES),
    _p("second-derivative", "Second derivative, create_graph",
       "create_graph=True records the backward pass itself: dy has a grad_fn, and "
       "dy.backward() runs through the nodes that pass recorded.",
       """
import torch

x = torch.tensor(3.0, requires_grad=True)
y = x ** 3
(dy,) = torch.autograd.grad(y, x, create_graph=True)
print(dy)
dy.backward()
print(x.grad)
""", VALUES),
]


def preset(preset_id: str) -> Preset | None:
    return next((p for p in PRESETS if p.id == preset_id), None)
