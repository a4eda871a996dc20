"""The program representation: what `source.py` makes of the text and `runner.py` runs.

Only the constructs of the lab's language exist here, each with its position in the
source (1-based line and column), so every runtime error can point at its text.

Every class made per line (all but `Program`) spells out its `__init__`. The dataclass
decorator still writes `__eq__` and `__repr__`, but the `__init__` it would write runs as
interpreted Python even in the compiled build, at five times the cost of a compiled one,
and a program makes several of these per line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(slots=True)
class Span:
    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, line: int, col: int, end_line: int, end_col: int) -> None:
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


@dataclass(slots=True)
class Num:
    value: int | float
    span: Span

    def __init__(self, value: int | float, span: Span) -> None:
        self.value = value
        self.span = span


@dataclass(slots=True)
class Bool:
    """True, False or None: only as a keyword value (`retain_graph=True`)."""

    value: bool | None
    span: Span

    def __init__(self, value: bool | None, span: Span) -> None:
        self.value = value
        self.span = span


@dataclass(slots=True)
class Var:
    name: str
    span: Span

    def __init__(self, name: str, span: Span) -> None:
        self.name = name
        self.span = span


@dataclass(slots=True)
class BinOp:
    op: str                          # one of + - * / **
    left: Expr
    right: Expr
    span: Span

    def __init__(self, op: str, left: Expr, right: Expr, span: Span) -> None:
        self.op = op
        self.left = left
        self.right = right
        self.span = span


@dataclass(slots=True)
class UnaryOp:
    op: str                          # - or +
    operand: Expr
    span: Span

    def __init__(self, op: str, operand: Expr, span: Span) -> None:
        self.op = op
        self.operand = operand
        self.span = span


@dataclass(slots=True)
class Call:
    """`torch.tanh(x)` or `x.tanh()`: both spellings record the same node."""

    function: str
    arg: Expr
    method: bool                     # written `x.tanh()` rather than `torch.tanh(x)`
    span: Span

    def __init__(self, function: str, arg: Expr, method: bool, span: Span) -> None:
        self.function = function
        self.arg = arg
        self.method = method
        self.span = span


@dataclass(slots=True)
class ListExpr:
    items: tuple[Expr, ...]
    span: Span

    def __init__(self, items: tuple[Expr, ...], span: Span) -> None:
        self.items = items
        self.span = span


@dataclass(slots=True)
class TensorCall:
    """`torch.tensor(data, requires_grad=...)`."""

    data: Expr
    requires_grad: Expr | None
    span: Span

    def __init__(self, data: Expr, requires_grad: Expr | None, span: Span) -> None:
        self.data = data
        self.requires_grad = requires_grad
        self.span = span


Expr = Union[Num, Bool, Var, BinOp, UnaryOp, Call, ListExpr, TensorCall]


@dataclass(slots=True)
class Assign:
    name: str
    value: Expr
    span: Span
    leaf_shorthand: bool = False     # `w = 3.0` in the opening block: a leaf that requires grad

    def __init__(self, name: str, value: Expr, span: Span,
                 leaf_shorthand: bool = False) -> None:
        self.name = name
        self.value = value
        self.span = span
        self.leaf_shorthand = leaf_shorthand


@dataclass(slots=True)
class Backward:
    receiver: Expr
    output: str                      # the receiver as written (`loss`)
    gradient: Expr | None
    retain_graph: Expr | None
    create_graph: Expr | None
    span: Span

    def __init__(self, receiver: Expr, output: str, gradient: Expr | None,
                 retain_graph: Expr | None, create_graph: Expr | None, span: Span) -> None:
        self.receiver = receiver
        self.output = output
        self.gradient = gradient
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.span = span


@dataclass(slots=True)
class ClearGrad:
    """`name.grad = None`, what `optimizer.zero_grad()` does to each parameter."""

    name: str
    span: Span

    def __init__(self, name: str, span: Span) -> None:
        self.name = name
        self.span = span


Statement = Union[Assign, Backward, ClearGrad]


@dataclass(frozen=True)
class Program:
    statements: tuple[Statement, ...]
    implicit_output: str | None = None   # no backward() in the text: the last assigned name
    lines: list[str] = field(default_factory=list)
    imports_torch: bool = False          # plain PyTorch (CONTRACT §1), not the shorthand
