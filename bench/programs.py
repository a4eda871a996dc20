"""Program generators for the benchmarks: realistic lab programs of a given size.

`realistic(n)` is what real code looks like to autograd: a few leaves, then `n`
single-operation statements, each on earlier values, with fan-out (most operands come
from a recent window, some from far back; every value is used at least once and many
several times, so nearly the whole graph is reached by backward), mixed
arithmetic and squashing functions so every value and gradient stays finite, and one
loss summing the last few values. `chain(n)` is the deepest graph of `n` operations.
Both are deterministic (seeded), so the lab and PyTorch run exactly the same text.
"""

from __future__ import annotations

import random
from collections import deque

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
