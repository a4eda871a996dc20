"""The program representation: what `parse` makes of the text and the interpreter runs.

Only the constructs of the lab's language exist here (CONTRACT §1–§1d), each with its
position in the source (1-based line and column, and where it ends), so every error can
point at its text. Anything the parser did not translate into one of these classes was
rejected before the program ran.

The classes are slotted dataclasses. The ones a program has many of spell out their
`__init__`, as engine/events.py's records do: the one the dataclass decorator writes stays
interpreted Python in the compiled build, and a 10,000-line program makes 131,000 of them
(MEASURED: see Note [One walk over the tree] in parse.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union


@dataclass(slots=True)
class Span:
    """Where a construct is in the text. Never changed once made, but not `frozen` (a
    frozen dataclass's instances are made through Python even in the compiled build)."""

    line: int
    col: int
    end_line: int
    end_col: int

    def __init__(self, line: int, col: int, end_line: int, end_col: int) -> None:
        self.line = line
        self.col = col
        self.end_line = end_line
        self.end_col = end_col


# -- expressions ----------------------------------------------------------------------

@dataclass(slots=True)
class Const:
    """A literal: a number, True/False/None, a string, or `...`."""

    value: Any                        # (Any, not object: mypyc resolves the name)
    span: Span

    def __init__(self, value: Any, span: Span) -> None:
        self.value = value
        self.span = span


@dataclass(slots=True)
class Name:
    id: str
    span: Span

    def __init__(self, id: str, span: Span) -> None:
        self.id = id
        self.span = span


@dataclass(slots=True)
class Attribute:
    value: Expr
    attr: str
    span: Span

    def __init__(self, value: Expr, attr: str, span: Span) -> None:
        self.value = value
        self.attr = attr
        self.span = span


@dataclass(slots=True)
class Subscript:
    value: Expr
    index: Expr
    span: Span


@dataclass(slots=True)
class SliceExpr:
    lower: Expr | None
    upper: Expr | None
    step: Expr | None
    span: Span


@dataclass(slots=True)
class Starred:
    """`*args` in a call or a tuple."""

    value: Expr
    span: Span


@dataclass(slots=True)
class Keyword:
    name: str | None                  # None for `**kwargs`
    value: Expr


@dataclass(slots=True)
class Call:
    func: Expr
    args: list[Expr]
    keywords: list[Keyword]
    span: Span
    text: str = ""                    # `ast.unparse` of the receiver (backward) or first arg

    def __init__(self, func: Expr, args: list[Expr], keywords: list[Keyword], span: Span,
                 text: str = "") -> None:
        self.func = func
        self.args = args
        self.keywords = keywords
        self.span = span
        self.text = text


@dataclass(slots=True)
class BinOp:
    op: str                           # + - * / // % ** @ & | ^
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
    op: str                           # - + not ~
    operand: Expr
    span: Span


@dataclass(slots=True)
class BoolOp:
    op: str                           # and / or
    values: list[Expr]
    span: Span


@dataclass(slots=True)
class Compare:
    left: Expr
    ops: list[str]                    # < <= > >= == != is is-not in not-in
    comparators: list[Expr]
    span: Span


@dataclass(slots=True)
class IfExp:
    test: Expr
    body: Expr
    orelse: Expr
    span: Span


@dataclass(slots=True)
class TupleExpr:
    items: list[Expr]
    span: Span


@dataclass(slots=True)
class ListExpr:
    items: list[Expr]
    span: Span


@dataclass(slots=True)
class DictExpr:
    keys: list[Expr]
    values: list[Expr]
    span: Span


@dataclass(slots=True)
class Comprehension:
    target: Target
    iter: Expr
    ifs: list[Expr]


@dataclass(slots=True)
class ListComp:
    """`[e for x in xs if c]`, and the generator expressions that sum/min/max take."""

    element: Expr
    generators: list[Comprehension]
    span: Span
    kind: str = "list"                # list, generator, dict (element is a TupleExpr pair)


@dataclass(slots=True)
class FormattedValue:
    value: Expr
    conversion: str                   # "", "r", "s"
    format_spec: FString | None


@dataclass(slots=True)
class FString:
    parts: list[str | FormattedValue]
    span: Span


@dataclass(slots=True)
class Lambda:
    params: list[Param]
    body: Expr
    span: Span


Expr = Union[Const, Name, Attribute, Subscript, SliceExpr, Starred, Call, BinOp, UnaryOp,
             BoolOp, Compare, IfExp, TupleExpr, ListExpr, DictExpr, ListComp, FString, Lambda]


# -- assignment targets -----------------------------------------------------------------

@dataclass(slots=True)
class TupleTarget:
    items: list[Target]
    span: Span
    starred: int = -1                 # index of a `*rest` item, -1 if none


Target = Union[Name, Attribute, Subscript, TupleTarget, Starred]


# -- statements ------------------------------------------------------------------------

@dataclass(slots=True)
class Assign:
    targets: list[Target]
    value: Expr
    span: Span
    shorthand: bool = False           # `w = 3.0` in a shorthand program's opening block

    def __init__(self, targets: list[Target], value: Expr, span: Span,
                 shorthand: bool = False) -> None:
        self.targets = targets
        self.value = value
        self.span = span
        self.shorthand = shorthand


@dataclass(slots=True)
class AugAssign:
    target: Target
    op: str
    value: Expr
    span: Span


@dataclass(slots=True)
class ExprStmt:
    value: Expr
    span: Span


@dataclass(slots=True)
class If:
    test: Expr
    body: list[Stmt]
    orelse: list[Stmt]
    span: Span


@dataclass(slots=True)
class For:
    target: Target
    iter: Expr
    body: list[Stmt]
    orelse: list[Stmt]
    span: Span


@dataclass(slots=True)
class While:
    test: Expr
    body: list[Stmt]
    orelse: list[Stmt]
    span: Span


@dataclass(slots=True)
class Break:
    span: Span


@dataclass(slots=True)
class Continue:
    span: Span


@dataclass(slots=True)
class Pass:
    span: Span


@dataclass(slots=True)
class WithItem:
    context: Expr
    target: Target | None


@dataclass(slots=True)
class With:
    items: list[WithItem]
    body: list[Stmt]
    span: Span


@dataclass(slots=True)
class Param:
    name: str
    default: Expr | None = None
    kind: str = "positional"          # positional, varargs (*args), kwonly, varkw (**kw)


@dataclass(slots=True)
class FunctionDef:
    name: str
    params: list[Param]
    body: list[Stmt]
    decorators: list[Expr]
    locals: frozenset[str]            # every name the body binds (Python's local scope)
    span: Span


@dataclass(slots=True)
class ClassDef:
    """`class Name(torch.autograd.Function)` or `class Name(nn.Module)`."""

    name: str
    kind: str                         # "function" or "module"
    methods: list[FunctionDef]
    attributes: list[Assign]
    span: Span


@dataclass(slots=True)
class Return:
    value: Expr | None
    span: Span


@dataclass(slots=True)
class Assert:
    test: Expr
    message: Expr | None
    span: Span


@dataclass(slots=True)
class Delete:
    targets: list[Target]
    span: Span


@dataclass(slots=True)
class Import:
    """`import torch.nn as nn`, `from torch import nn`: each (name bound, module path,
    attribute or None)."""

    bindings: list[tuple[str, str, str | None]]
    span: Span


Stmt = Union[Assign, AugAssign, ExprStmt, If, For, While, Break, Continue, Pass, With,
             FunctionDef, ClassDef, Return, Assert, Delete, Import]


@dataclass(frozen=True, slots=True)
class ShorthandLeaf:
    """`name = NUMBER` in a shorthand program's opening block, and what it means."""

    name: str
    span: Span
    expanded: str                     # `torch.tensor(3.0, requires_grad=True)`


@dataclass(slots=True)
class Program:
    body: list[Stmt]
    kind: str                         # "plain" (imports torch) or "shorthand"
    shorthand: list[ShorthandLeaf] = field(default_factory=list)
    implicit_output: str | None = None   # shorthand without backward: the last assigned name
    mentions_print: bool = False
    lines: list[str] = field(default_factory=list)
