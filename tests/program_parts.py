"""Small pieces the program strategies share: numbers, tensor literals, indented code.

The strategies of tests/program_strategy.py (§1), tests/strategy_rules.py (§1b),
tests/strategy_network.py (§1c) and tests/strategy_modules.py (§1d) write programs as
text, line by line, with `Code`; every value comes from a short list of numbers with
few digits, so float32 results stay comparable and printed tensors rarely sit on a
rounding edge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from hypothesis import strategies as st

T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[Any]], Any]
Shape = tuple[int, ...]

VALUES = (-2.5, -1.5, -1.2, -0.8, -0.5, -0.3, 0.2, 0.4, 0.6, 0.75, 1.0, 1.25, 1.5, 2.0)
SMALL = (0.1, 0.2, 0.25, 0.5, 0.75, 1.5, 2.0, -0.5, -1.5, 3)
RATES = (0.01, 0.05, 0.1, 0.2)


def pick(draw: Draw, options: Sequence[T]) -> T:
    return draw(st.sampled_from(options))  # type: ignore[no-any-return]


def chance(draw: Draw, one_in: int) -> bool:
    """True about once in `one_in` draws. (Not `integers(1, n) == 1`: hypothesis draws a
    range's least value, what it shrinks towards, far more often than 1 in n.)"""
    return bool(draw(st.sampled_from(range(one_in))) == one_in // 2)


def data(draw: Draw, shape: Shape, pool: Sequence[float] = VALUES) -> Any:
    """Nested lists of `shape` drawn from `pool`."""
    if not shape:
        return pick(draw, pool)
    return [data(draw, shape[1:], pool) for _ in range(shape[0])]


def tensor(draw: Draw, shape: Shape, grad: bool | None = None, dtype: str | None = None,
           pool: Sequence[float] = VALUES) -> str:
    """`torch.tensor(...)` text of `shape`, with requires_grad and dtype as asked."""
    text = f"torch.tensor({data(draw, shape, pool)!r}"
    if dtype is not None:
        text += f", dtype={dtype}"
    if grad is not None:
        text += f", requires_grad={grad}"
    return text + ")"


def shape_text(shape: Shape) -> str:
    return ", ".join(map(str, shape))


class Code:
    """Program text built line by line; `block` indents the lines written inside it."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def add(self, *lines: str) -> None:
        self.lines.extend("    " * self.depth + line for line in lines)

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        self.add(header + ":")
        self.depth += 1
        before = len(self.lines)
        try:
            yield
        finally:
            if len(self.lines) == before:
                self.add("pass")
            self.depth -= 1

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


FUNCTIONS = ("tanh", "sin", "cos", "sigmoid", "exp", "relu")
OPERATORS = ("+", "-", "*")


def pointwise(draw: Draw, names: Sequence[str], depth: int = 2) -> str:
    """An elementwise expression over same-shaped tensors `names` (any float dtype): no
    division and no log, so values stay finite and comparable."""
    if depth <= 0 or chance(draw, 3):
        return pick(draw, names)
    kind = pick(draw, ["binary", "binary", "number", "function", "method"])
    inner = pointwise(draw, names, depth - 1)
    if kind == "binary":
        return f"({inner} {pick(draw, OPERATORS)} {pointwise(draw, names, depth - 1)})"
    if kind == "number":
        k = pick(draw, SMALL)
        op = pick(draw, OPERATORS)
        return f"({k} {op} {inner})" if draw(st.booleans()) else f"({inner} {op} {k})"
    if kind == "function":
        return f"torch.{pick(draw, FUNCTIONS)}({inner})"
    return f"{inner}.{pick(draw, FUNCTIONS)}()"
