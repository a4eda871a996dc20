"""The program representation: what `source.py` makes of the text and `runner.py` runs.

Only the constructs of the lab's language exist here, each with its position in the
source (1-based line and column), so every runtime error can point at its text.
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


@dataclass(slots=True)
class Num:
    value: int | float
    span: Span


@dataclass(slots=True)
class Bool:
    """True, False or None: only as a keyword value (`retain_graph=True`)."""

    value: bool | None
    span: Span


@dataclass(slots=True)
class Var:
    name: str
    span: Span


@dataclass(slots=True)
class BinOp:
    op: str                          # one of + - * / **
    left: Expr
    right: Expr
    span: Span


@dataclass(slots=True)
class UnaryOp:
    op: str                          # - or +
    operand: Expr
    span: Span


@dataclass(slots=True)
class Call:
    """`torch.tanh(x)` or `x.tanh()`: both spellings record the same node."""

    function: str
    arg: Expr
    method: bool                     # written `x.tanh()` rather than `torch.tanh(x)`
    span: Span


@dataclass(slots=True)
class ListExpr:
    items: tuple[Expr, ...]
    span: Span


@dataclass(slots=True)
class TensorCall:
    """`torch.tensor(data, requires_grad=...)`."""

    data: Expr
    requires_grad: Expr | None
    span: Span


Expr = Union[Num, Bool, Var, BinOp, UnaryOp, Call, ListExpr, TensorCall]


@dataclass(slots=True)
class Assign:
    name: str
    value: Expr
    span: Span
    leaf_shorthand: bool = False     # `w = 3.0` in the opening block: a leaf that requires grad


@dataclass(slots=True)
class Backward:
    receiver: Expr
    output: str                      # the receiver as written (`loss`)
    gradient: Expr | None
    retain_graph: Expr | None
    create_graph: Expr | None
    span: Span


@dataclass(slots=True)
class ClearGrad:
    """`name.grad = None`, what `optimizer.zero_grad()` does to each parameter."""

    name: str
    span: Span


Statement = Union[Assign, Backward, ClearGrad]


@dataclass(frozen=True)
class Program:
    statements: tuple[Statement, ...]
    implicit_output: str | None = None   # no backward() in the text: the last assigned name
    lines: list[str] = field(default_factory=list)
