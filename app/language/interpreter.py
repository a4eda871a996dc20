"""Run a Program on engine tensors, statement by statement, yielding what happens.

Assignments evaluate expressions with the engine's ops (recording nodes exactly where
PyTorch would); each `backward()` call hands its events through as the engine yields
them, wrapped in `PassStarted`. Python numbers stay Python numbers until they meet a
tensor, as in real PyTorch code.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from app.language.parse import SourceError
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
    Program,
    Span,
    Statement,
    TensorCall,
    UnaryOp,
    Var,
)
from app.limits import Limits
from engine import (
    AutogradContext,
    NodeLimitExceeded,
    Tensor,
    TensorTooLarge,
    TorchError,
    backward,
    functions,
    tensor,
)
from engine import errors as torch_errors
from engine.events import Event, GraphRecorded

Value = Any      # a Tensor, a Python number, a list (torch.tensor data) or True/False/None


@dataclass(slots=True)
class PassStarted:
    """A backward() call reached the engine: a pass of the trace begins."""

    index: int
    output: str
    line: int
    col: int
    retain_graph: bool
    create_graph: bool


@dataclass(slots=True)
class ProgramError:
    """Why the program stopped: PyTorch's exception, or a limit of the lab."""

    kind: str               # "rejected", "forward", "backward" or "limit" (ErrorInfo.kind)
    type: str
    message: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None


@dataclass(slots=True)
class ProgramFinished:
    """The end: every grad-requiring leaf's final `.grad` (None if never written)."""

    grads: dict[str, Any]
    error: ProgramError | None


RunEvent = Event | PassStarted | ProgramFinished

_BINARY: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "**": operator.pow,
}
_FUNCTIONS: Final[dict[str, Callable[[Tensor], Tensor]]] = {
    name: getattr(functions, name)
    for name in ("tanh", "exp", "log", "sin", "cos", "sigmoid", "relu", "sqrt", "abs",
                 "sum", "mean")
}


class Runner:
    """The namespace of one run: variables, and the leaves by the name they were made as."""

    def __init__(self, program: Program, limits: Limits) -> None:
        self.program = program
        self.limits = limits
        self.ctx = AutogradContext(max_nodes=limits.max_nodes, max_elements=limits.max_elements)
        self.names: dict[str, Value] = {}
        self.leaves: list[Tensor] = []
        self.passes = 0
        self.in_backward = False      # inside a backward() call: its errors are "backward"

    def run(self) -> Iterator[RunEvent]:
        """Every event of the program, ending with ProgramFinished."""
        error: ProgramError | None = None
        statement: Statement | None = None
        try:
            for statement in self.program.statements:
                yield from self.execute(statement)
            if self.program.implicit_output is not None:
                statement = None
                yield from self.implicit_backward()
        except TorchError as e:
            kind = "backward" if self.in_backward else "forward"
            error = self._error(kind, e.type_name, e.message, statement)
        except (NodeLimitExceeded, TensorTooLarge) as limit:
            error = self._error("limit", "UnsupportedError", f"{limit}: the lab's limit keeps "
                                "every program quick for everyone", statement)
        except SourceError as s:
            error = ProgramError("limit" if s.limit else "rejected", s.type, s.message, s.line,
                                 s.col, s.end_line, s.end_col)
        grads = {leaf.name: (None if leaf.grad is None else leaf.grad.data)
                 for leaf in self.leaves if leaf.name is not None}
        yield ProgramFinished(grads, error)

    def _error(self, kind: str, type_: str, message: str,
               statement: Statement | None) -> ProgramError:
        span = statement.span if statement is not None else self._last_line()
        return ProgramError(kind, type_, message, span.line, span.col, span.end_line, span.end_col)

    def _last_line(self) -> Span:
        last = self.program.statements[-1].span
        return Span(last.end_line, 1, last.end_line, 1)

    # -- statements ------------------------------------------------------------------
    def execute(self, statement: Statement) -> Iterator[RunEvent]:
        if isinstance(statement, Assign):
            self.assign(statement)
        elif isinstance(statement, Backward):
            output = self.evaluate(statement.receiver)
            yield from self.backward(statement, output)
        elif isinstance(statement, ClearGrad):
            value = self.names[statement.name]
            if isinstance(value, Tensor):
                value.grad = None
            else:
                raise torch_errors.no_attribute(value, "grad")

    def assign(self, statement: Assign) -> None:
        if statement.leaf_shorthand:
            # `w = 3.0` in the opening block: torch.tensor(float(3.0), requires_grad=True)
            assert isinstance(statement.value, Num)
            value: Value = tensor(_to_float(statement.value.value), self.ctx, requires_grad=True)
        else:
            value = self.evaluate(statement.value)
        if isinstance(value, Tensor):
            if value.grad_fn is not None and value.grad_fn.bound_to is None:
                value.grad_fn.bound_to = statement.name
            if value.is_leaf and value.requires_grad and value.name is None:
                value.name = statement.name
                self.leaves.append(value)
        self.names[statement.name] = value

    def backward(self, statement: Backward, output: Value) -> Iterator[RunEvent]:
        gradient = None if statement.gradient is None else self.evaluate(statement.gradient)
        retain = None if statement.retain_graph is None else self.evaluate(statement.retain_graph)
        create = False if statement.create_graph is None else self.evaluate(statement.create_graph)
        yield from self._engine(statement.output, statement.span, output, gradient,
                                retain, create)

    def implicit_backward(self) -> Iterator[RunEvent]:
        name = self.program.implicit_output
        assert name is not None
        yield from self._engine(name, self._last_line(), self.names[name], None, None, False)

    def _engine(self, output_name: str, span: Span, output: Value, gradient: Value,
                retain: Value, create: Value) -> Iterator[RunEvent]:
        self.in_backward = True
        for event in backward(output, gradient, retain, create):
            if isinstance(event, GraphRecorded):
                keep = bool(create) if retain is None else bool(retain)
                yield PassStarted(self.passes, output_name, span.line, span.col, keep,
                                  bool(create))
                self.passes += 1
            yield event
        self.in_backward = False

    # -- expressions -----------------------------------------------------------------
    def evaluate(self, expr: Expr) -> Value:
        if isinstance(expr, Num):
            return expr.value
        if isinstance(expr, Var):
            return self.names[expr.name]
        if isinstance(expr, BinOp):
            return self.binary(expr)
        if isinstance(expr, UnaryOp):
            operand = self.evaluate(expr.operand)
            if expr.op == "-":
                return -operand
            return operand if isinstance(operand, Tensor) else +operand   # `+t` is t itself
        if isinstance(expr, Call):
            return self.call(expr)
        if isinstance(expr, TensorCall):
            return self.make_tensor(expr)
        if isinstance(expr, ListExpr):
            return [self.evaluate(item) for item in expr.items]
        if isinstance(expr, Bool):
            return expr.value
        raise AssertionError(f"unknown expression {expr!r}")

    def binary(self, expr: BinOp) -> Value:
        left, right = self.evaluate(expr.left), self.evaluate(expr.right)
        if isinstance(left, Tensor) or isinstance(right, Tensor):
            return _BINARY[expr.op](left, right)
        return self.number_op(expr, left, right)

    def number_op(self, expr: BinOp, left: Any, right: Any) -> Any:
        """Python arithmetic on two numbers, refusing results too large to be useful."""
        bits = self.limits.max_number_bits
        if (expr.op == "**" and isinstance(left, int) and isinstance(right, int)
                and right > 0 and abs(left) > 1 and right * math.log2(abs(left)) > bits):
            raise SourceError("UnsupportedError", f"this power is larger than {bits}-bit "
                              "numbers, the most the lab computes", expr.span.line,
                              expr.span.col, limit=True)
        try:
            result = _BINARY[expr.op](left, right)
        except ArithmeticError as e:       # ZeroDivisionError, OverflowError
            raise torch_errors.TorchError(type(e).__name__, str(e)) from None
        if isinstance(result, complex):
            raise SourceError("UnsupportedError", "this gives a complex number, which the lab "
                              "does not support", expr.span.line, expr.span.col)
        if isinstance(result, int) and result.bit_length() > bits:
            raise SourceError("UnsupportedError", f"this number is larger than {bits} bits, "
                              "the most the lab computes", expr.span.line, expr.span.col,
                              limit=True)
        return result

    def call(self, expr: Call) -> Value:
        arg = self.evaluate(expr.arg)
        if not isinstance(arg, Tensor):
            if expr.method:
                raise torch_errors.no_attribute(arg, expr.function)
            raise torch_errors.not_a_tensor(expr.function, arg)
        return _FUNCTIONS[expr.function](arg)

    def make_tensor(self, expr: TensorCall) -> Tensor:
        data = self.evaluate(expr.data)
        requires_grad: Value = False
        if expr.requires_grad is not None:
            requires_grad = self.evaluate(expr.requires_grad)
            if not isinstance(requires_grad, bool):
                raise torch_errors.TorchError(
                    "TypeError", f"tensor(): argument 'requires_grad' must be bool, not "
                    f"{type(requires_grad).__name__}")
        if not _only_numbers(data):
            raise SourceError("UnsupportedError", "torch.tensor() takes numbers or lists of "
                              "numbers here; to use a tensor, use it directly",
                              expr.span.line, expr.span.col)
        if _count(data) > self.limits.max_elements:
            raise SourceError("UnsupportedError", f"a tensor may have at most "
                              f"{self.limits.max_elements} elements here", expr.span.line,
                              expr.span.col, limit=True)
        return tensor(data, self.ctx, requires_grad=requires_grad)


def _to_float(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError as e:
        raise torch_errors.TorchError("OverflowError", str(e)) from None


def _only_numbers(data: Any) -> bool:
    if isinstance(data, list):
        return all(_only_numbers(x) for x in data)
    return isinstance(data, (int, float)) and not isinstance(data, bool)


def _count(data: Any) -> int:
    return sum(_count(x) for x in data) if isinstance(data, list) else 1
