"""Program generators for the benchmarks: realistic lab programs of a given size.

`realistic(n)` is what real code looks like to autograd: a few leaves, then `n`
single-operation statements, each on earlier values, with fan-out (most operands come
from a recent window, some from far back; every value is used at least once and many
several times, so nearly the whole graph is reached by backward), mixed
arithmetic and squashing functions so every value and gradient stays finite, and one
loss summing the last few values. `chain(n)` is the deepest graph of `n` operations.
Both are deterministic (seeded), so the lab and PyTorch run exactly the same text.
`COURSES` are programs as courses write them (bench/courses.py): training loops, a
recurrence, an MLP by hand and one of nn modules with Adam.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable

from app.limits import DEFAULT_LIMITS, Limits

LEAVES = 6          # leaves created with the shorthand `a0 = 0.37`
WINDOW = 8          # operands mostly come from the last WINDOW values ...
FAR_BACK = 0.15     # ... and with this probability from anywhere before
LOSS_TERMS = 4      # the loss sums the last LOSS_TERMS values

# (weight, template): one backward node per statement; {a} and {b} are earlier names.
# Squashing functions keep values in (-1, 1); multiplying by small numbers shrinks the
# gradients that fan-out would otherwise add up along the many paths to the leaves.
OPERATIONS: list[tuple[int, str]] = [
    (3, "{a} * {b}"),
    (2, "{a} + {b}"),
    (2, "{a} - {b}"),
    (3, "torch.tanh({a})"),
    (2, "torch.sigmoid({a})"),
    (1, "{a}.sin()"),
    (2, "{a} * {c}"),
    (1, "{a} / {d}"),
]


def leaf_names(count: int = LEAVES) -> list[str]:
    return [f"a{i}" for i in range(count)]


def realistic(n: int, seed: int = 0) -> str:
    """A program of `n` operations (plus LOSS_TERMS - 1 additions for the loss)."""
    rng = random.Random(seed)
    weights = [w for w, _ in OPERATIONS]
    templates = [t for _, t in OPERATIONS]
    names = leaf_names()
    lines = [f"{name} = {rng.uniform(-0.9, 0.9):.3f}" for name in names]

    unused: deque[str] = deque(names)   # every value is used at least once

    def operand() -> str:
        if rng.random() < FAR_BACK:
            return rng.choice(names)
        return rng.choice(names[-WINDOW:])

    for i in range(n):
        template = rng.choices(templates, weights)[0]
        a = unused.popleft() if unused else operand()
        b = operand()
        expr = template.format(a=a, b=b, c=f"{rng.uniform(0.3, 0.7):.2f}",
                               d=f"{rng.uniform(1.5, 3.0):.2f}")
        name = f"v{i}"
        lines.append(f"{name} = {expr}")
        names.append(name)
        unused.append(name)
    lines.append("loss = " + " + ".join(names[-LOSS_TERMS:]))
    lines.append("loss.backward()")
    return "\n".join(lines) + "\n"


def chain(n: int) -> str:
    """`n` dependent multiplications: a graph `n` nodes deep, with one leaf at the bottom."""
    lines = ["x0 = 1.0"]
    lines += [f"x{i + 1} = x{i} * 1.0001" for i in range(n)]
    lines.append(f"x{n}.backward()")
    return "\n".join(lines) + "\n"


def limits_for(source: str) -> Limits:
    """The default limits, lifted just enough for a generated program of this size."""
    lines = source.count("\n") + 1
    return DEFAULT_LIMITS.with_values(
        max_nodes=max(DEFAULT_LIMITS.max_nodes, 2 * lines),
        max_source_bytes=max(DEFAULT_LIMITS.max_source_bytes,
                             2 * len(source.encode("utf-8"))),
        max_lines=max(DEFAULT_LIMITS.max_lines, 2 * lines),
    )


# -- programs as courses write them: the ops come from loops and models ---------------------
# Each takes its number of steps, so that a side warms up on the same program, shorter. The
# sizes are the issues' (11, 14, 17): a scalar SGD loop of 1,000 steps (6,000 pops), a
# 10,000-step recurrence (one pass of 30,001 pops), a two-layer MLP (16-32-4, batch 8) and
# an nn.Sequential one with Adam, 200 steps each.

def scalar_loop(steps: int) -> str:
    return f"""import torch

torch.manual_seed(0)
w = torch.tensor(0.5, requires_grad=True)
b = torch.tensor(0.0, requires_grad=True)
xs = [0.1 * i for i in range(5)]
ys = [2.0 * x + 1.0 for x in xs]
lr = 0.05
for step in range({steps}):
    loss = (w * xs[step % 5] + b - ys[step % 5]) ** 2
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
print(w.item(), b.item())
"""


def recurrence(steps: int) -> str:
    return f"""import torch

a = torch.tensor(0.9, requires_grad=True)
h = torch.tensor(0.1)
for t in range({steps}):
    h = torch.tanh(a * h + 0.01)
h.backward()
print(a.grad)
"""


def mlp(steps: int) -> str:
    return f"""import torch
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(8, 16)
y = torch.randint(0, 4, (8,))
W1 = (torch.randn(16, 32) * 0.25).requires_grad_()
b1 = torch.zeros(32, requires_grad=True)
W2 = (torch.randn(32, 4) * 0.18).requires_grad_()
b2 = torch.zeros(4, requires_grad=True)
params = [W1, b1, W2, b2]
for step in range({steps}):
    h = torch.tanh(x @ W1 + b1)
    loss = F.cross_entropy(h @ W2 + b2, y)
    for p in params:
        p.grad = None
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= 0.1 * p.grad
print(loss.item())
"""


def mlp_adam(steps: int) -> str:
    return f"""import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
loss_fn = nn.CrossEntropyLoss()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
x = torch.randn(8, 16)
y = torch.randint(0, 4, (8,))
for step in range({steps}):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
print(loss.item())
"""


# name -> (the program for a number of steps, the benchmark's number of steps)
COURSES: dict[str, tuple[Callable[[int], str], int]] = {
    "scalar_loop": (scalar_loop, 1_000), "recurrence": (recurrence, 10_000),
    "mlp": (mlp, 200), "mlp_adam": (mlp_adam, 200)}
WARM_UP_STEPS = 3           # a course program's warm-up: the same text, 3 steps


def program(spec: str) -> tuple[str, str]:
    """(the program, its warm-up) for `realistic:N`, `chain:N` or `course:NAME`."""
    kind, _, arg = spec.partition(":")
    if kind == "course":
        make, steps = COURSES[arg]
        return make(steps), make(WARM_UP_STEPS)
    if kind == "chain":
        return chain(int(arg)), realistic(200, seed=1)
    return realistic(int(arg)), realistic(200, seed=1)
