"""Recipes: a line shape's translation, fitted to the exact columns of one line mask.

`app.language.shapes` has the whitelist translate a shape such as `n0 = n2 * 1.0` once. A recipe
turns that translation into nested closures that build the statement of any line with a
given mask (`v12 = v3 * 0.52`, `v47 = v8 * 0.31`, ...): every span becomes two constant
columns, every name a slice of the line, every number a conversion of one (int() and
float() read the literals `app.language.shapes` lets through exactly as Python does). Anything a
recipe cannot map back onto the line raises `Unsure`, and the full parse takes over.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from app.language.program import (
    Assign,
    Backward,
    BinOp,
    Bool,
    Call,
    ClearGrad,
    Expr,
    ListExpr,
    Num,
    Span,
    Statement,
    TensorCall,
    UnaryOp,
    Var,
)


@dataclass(slots=True)
class Token:
    kind: str        # name, int, float or op
    text: str
    start: int       # 0-based columns in the line
    end: int

    def __init__(self, kind: str, text: str, start: int, end: int) -> None:
        # Spelled out: see app/language/program.py.
        self.kind = kind
        self.text = text
        self.start = start
        self.end = end


@dataclass(slots=True)
class Shape:
    """A shape's translation. Its spans are columns of the shape text (the tokens joined by
    single spaces), found again through the token that starts or ends at each column."""

    statements: tuple[Statement, ...]       # one, or none for `import torch`
    token_at_start: dict[int, int]
    token_at_end: dict[int, int]


Make = Callable[[str, int], Expr]           # (line, line number) -> expression
MakeStatement = Callable[[str, int], Statement]


@dataclass(slots=True)
class Recipe:
    """How to build the statement of a line with one mask, and what to check first."""

    make: MakeStatement | None           # None: nothing to run (blank, comment, import)
    uses: tuple[tuple[int, int], ...]    # names that must be defined on an earlier line
    ints: tuple[tuple[int, int], ...]    # integers to hold to limits.max_number_bits
    long_ints: tuple[tuple[int, int], ...]   # integer literals of 2+ digits (see below)
    target: tuple[int, int] | None       # the name an assignment defines
    keeps_opening: bool                  # a leaf definition: the opening block goes on
    backward: bool


NOTHING = Recipe(None, (), (), (), None, True, False)


class Unsure(Exception):
    """A translation that cannot be mapped back onto the line: leave it to the full parse."""


def recipe_for(shape: Shape, tokens: list[Token], opening: bool) -> Recipe:
    """The shape's statement fitted to these tokens' columns; raises Unsure."""
    if not shape.statements:
        return NOTHING
    statement = shape.statements[0]
    writer = _Writer(shape, tokens)
    make = writer.statement(statement)
    keeps_opening = isinstance(statement, Assign) and (
        statement.leaf_shorthand or (opening and isinstance(statement.value, TensorCall)))
    # A mask writes every digit as 1, so it hides whether an integer of two or more digits
    # starts with 0: `00` is 0 but `01` a SyntaxError, which the full parse words.
    long_ints = tuple((t.start, t.end) for t in tokens if t.kind == "int" and t.end - t.start > 1)
    return Recipe(make, tuple(writer.uses), tuple(writer.ints), long_ints, writer.target,
                  keeps_opening, isinstance(statement, Backward))


class _Writer:
    """Writes one closure per node of a translated statement, collecting on the way the
    names and integers each line must have checked."""

    def __init__(self, shape: Shape, tokens: list[Token]) -> None:
        self.shape = shape
        self.tokens = tokens
        self.uses: list[tuple[int, int]] = []
        self.ints: list[tuple[int, int]] = []
        self.target: tuple[int, int] | None = None

    def statement(self, node: Statement) -> MakeStatement:
        col, end = self._columns(node.span)
        if isinstance(node, Assign):
            s, e = self.target = self._name(node.name)
            value, shorthand = self.expr(node.value), node.leaf_shorthand
            return lambda line, n: Assign(line[s:e], value(line, n), Span(n, col, n, end),
                                          shorthand)
        if isinstance(node, ClearGrad):
            s, e = self._name(node.name)
            self.uses.append((s, e))
            return lambda line, n: ClearGrad(line[s:e], Span(n, col, n, end))
        # A Backward's output is its receiver as written: certain only for a plain name.
        if not isinstance(node.receiver, Var) or node.output != node.receiver.name:
            raise Unsure
        s, e = self._name(node.output)
        receiver = self.expr(node.receiver)
        gradient, retain_graph, create_graph = (self._optional(x) for x in (
            node.gradient, node.retain_graph, node.create_graph))
        return lambda line, n: Backward(receiver(line, n), line[s:e], gradient(line, n),
                                        retain_graph(line, n), create_graph(line, n),
                                        Span(n, col, n, end))

    def expr(self, node: Expr) -> Make:
        col, end = self._columns(node.span)
        if isinstance(node, Var):
            s, e = self._name(node.name)
            self.uses.append((s, e))
            return lambda line, n: Var(line[s:e], Span(n, col, n, end))
        if isinstance(node, Num):
            return self._number(node, col, end)
        if isinstance(node, Bool):
            value = node.value
            return lambda line, n: Bool(value, Span(n, col, n, end))
        if isinstance(node, BinOp):
            op, left, right = node.op, self.expr(node.left), self.expr(node.right)
            return lambda line, n: BinOp(op, left(line, n), right(line, n),
                                         Span(n, col, n, end))
        if isinstance(node, UnaryOp):
            op, operand = node.op, self.expr(node.operand)
            return lambda line, n: UnaryOp(op, operand(line, n), Span(n, col, n, end))
        if isinstance(node, Call):
            function, arg, method = node.function, self.expr(node.arg), node.method
            return lambda line, n: Call(function, arg(line, n), method, Span(n, col, n, end))
        if isinstance(node, ListExpr):
            items = [self.expr(item) for item in node.items]
            return lambda line, n: ListExpr(tuple([item(line, n) for item in items]),
                                            Span(n, col, n, end))
        data, requires_grad = self.expr(node.data), self._optional(node.requires_grad)
        return lambda line, n: TensorCall(data(line, n), requires_grad(line, n),
                                          Span(n, col, n, end))

    def _optional(self, node: Expr | None) -> Callable[[str, int], Expr | None]:
        return (lambda line, n: None) if node is None else self.expr(node)

    def _number(self, node: Num, col: int, end: int) -> Make:
        """A number of the shape is 1 or 1.0, maybe negated (the leaf shorthand `a = -2.0`
        folds the sign in): the line's own literal is the one number token in its span."""
        first, last = self._token_range(node.span)
        inside = [t for t in self.tokens[first:last + 1] if t.kind in ("int", "float")]
        kind = "float" if isinstance(node.value, float) else "int"
        if len(inside) != 1 or inside[0].kind != kind or abs(node.value) != 1:
            raise Unsure
        s, e = inside[0].start, inside[0].end
        convert = float if kind == "float" else int
        if kind == "int":
            self.ints.append((s, e))
        if node.value < 0:
            return lambda line, n: Num(-convert(line[s:e]), Span(n, col, n, end))
        return lambda line, n: Num(convert(line[s:e]), Span(n, col, n, end))

    def _name(self, placeholder: str) -> tuple[int, int]:
        """Where in the line is the name that the shape calls `n<token index>`."""
        if not re.fullmatch(r"n\d+", placeholder):
            raise Unsure
        token = self.tokens[int(placeholder[1:])]
        if token.kind != "name":
            raise Unsure
        return token.start, token.end

    def _token_range(self, span: Span) -> tuple[int, int]:
        first = self.shape.token_at_start.get(span.col - 1)
        last = self.shape.token_at_end.get(span.end_col - 1)
        if span.line != 1 or span.end_line != 1 or first is None or last is None:
            raise Unsure
        return first, last

    def _columns(self, span: Span) -> tuple[int, int]:
        """A span of the shape text as 1-based columns of the line, as `_span` makes them."""
        first, last = self._token_range(span)
        return self.tokens[first].start + 1, self.tokens[last].end + 1
