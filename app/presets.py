"""The lab's presets: programs chosen to teach one thing each.

Their expected values are never typed in here: tests run each preset through the engine
and compare with recorded PyTorch where a recording exists. Every gradient a preset sends
is informative (none is 0, as a saturated tanh's would be), unless its lesson is exactly
that: tests/test_presets.py holds them to it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Preset(BaseModel):
    id: str
    title: str
    goal: str = Field(description="the one thing this preset teaches")
    source: str


def _p(id_: str, title: str, goal: str, source: str) -> Preset:
    return Preset(id=id_, title=title, goal=goal, source=source.strip("\n") + "\n")


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


def preset(preset_id: str) -> Preset | None:
    return next((p for p in PRESETS if p.id == preset_id), None)
