"""The interpreter: runs a Program on engine tensors, statement by statement.

It is a plain tree-walking interpreter over the program representation, with Python's
scoping (a function's locals are the names its body binds), its truth and comparison
rules as PyTorch's tensors apply them, and the lab's limits checked as it goes. Every
`backward()` and `torch.autograd.grad()` call hands the engine's events to `emit` as the
engine yields them, wrapped in a PassStarted.

# Note [Leaf names]
The trace names each leaf that requires grad after the first variable it was bound to,
looked for after every executed statement, at any depth (CONTRACT §2): after a statement
inside a function, among that function's variables; after one at the top level, among
the program's, where a module's parameters are named `VAR.NAME`. Rather than scanning
every variable after every statement, each frame remembers the names bound since its
last look (`pending`), and looks at all of them only when a tensor started to require
grad in between (`requires_grad_()`, a new module), which can name a leaf already bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np

from app.language import operators
from app.language import program as ir
from app.language.attributes import get_attribute, set_attribute
from app.language.classes import call_object
from app.language.events import (
    CallFailed,
    Emit,
    PassStarted,
    Printed,
    ProgramError,
    ProgramFinished,
    RunEvent,
    Untracked,
    Warned,
)
from app.language.parse import SourceError
from app.language.size import Size
from app.language.torch_api import enter, exit_, grad_mode_manager
from app.language.values import (
    Addresses,
    BoundMethod,
    Builtin,
    ContextManager,
    LambdaFunction,
    Namespace,
    PyType,
    ReturnTypes,
    UserFunction,
    Value,
    py_repr,
    py_str,
    type_name,
)
from app.limits import LimitExceeded, Limits, RunClock
from engine import op_errors
from engine.context import AutogradContext, NodeLimitExceeded, TensorTooLarge
from engine.errors import TorchError
from engine.events import Event, GraphRecorded, NodePopped
from engine.tensor import Tensor

# Note [Imports at the top]
# The modules the interpreter calls into are imported here, once, and not inside the
# functions that use them (they import this module only for its types). An import inside
# a function runs the import system at every call (a sys.modules lookup, then importlib's
# `_handle_fromlist` for a package: 0.4 µs for `from app.language import operators`,
# 0.9 µs for `from app.language.attributes import get_attribute`), and `eval` did it for
# every expression it evaluated. MEASURED on bench/programs.py's four course programs:
# 251,721 such imports per set of traces before, 2,251 after (cycles that remain, in
# branches that rarely run). Compiled build, the best process time of 8 traces, together
# with Note [Summarised passes] in engine/graph_task.py: the 1,000-step scalar loop 89 ms
# before, 77 ms after; the 10,000-step recurrence 649 ms before, 579 ms after; the MLP by
# hand 164 ms before, 160 ms after (this machine's speed drifts by up to 2x between runs,
# so only the best of many runs compares).

# -- frames and control flow -------------------------------------------------------------

class Frame:
    """One scope: the program's top level, or one call of a function."""

    __slots__ = ("locals", "parent", "local_names", "pending", "epoch", "top", "first")

    def __init__(self, locals: dict[str, Value], parent: Frame | None,
                 local_names: frozenset[str] | None, top: bool = False) -> None:
        self.locals = locals
        self.parent = parent              # the frame a function was defined in
        self.local_names = local_names    # None at the top level: every name is global
        self.pending: list[str] = []      # names bound since the last look (Note [Leaf names])
        self.epoch = 0
        self.top = top
        self.first: Value = None          # a method's `self`, for super()


class _Signal:
    __slots__ = ("value",)

    def __init__(self, value: Value = None) -> None:
        self.value = value


BREAK = _Signal()
CONTINUE = _Signal()


class Interpreter:
    """The state of one program run."""

    def __init__(self, program: ir.Program, limits: Limits, emit: Emit,
                 clock: RunClock | None = None) -> None:
        from app.language import builtins, torch_api

        self.program = program
        self.limits = limits
        self.emit = emit
        self.ctx = AutogradContext(max_nodes=limits.max_nodes, max_elements=limits.max_elements)
        self.globals: dict[str, Value] = {}
        self.builtins: dict[str, Value] = dict(builtins.BUILTINS)
        if program.kind == "shorthand":
            self.builtins["torch"] = torch_api.TORCH   # predefined in the shorthand
        self.top = Frame(self.globals, None, None, top=True)
        self.leaves: list[Tensor] = []
        self.printed: list[str] = []
        self.addresses = Addresses()
        self.statements = 0
        self.iterations = 0
        self.pops = 0                   # ready-queue pops, for the time limit's checks
        self.depth = 0
        self.passes = 0
        self.in_backward = 0
        self.backward_failed = False      # the error came out of a backward or grad call
        self.in_hook = 0
        self.clock = clock or RunClock()
        self.spans: list[ir.Span] = []
        self.error_span: ir.Span | None = None   # where the error that stops the run is
        self.untracked: set[tuple[str, str]] = set()
        self.call_line = 0                       # the line of the call being made
        self.loops: list[int] = []
        self.frames: list[Frame] = []     # the calls under way, innermost last
        self.epoch = 0                    # bumped when a tensor starts to require grad
        # Whether whoever takes the events keeps the next pass step by step (a trace
        # summarises passes past its max_full_passes): if not, the engine leaves out the
        # views' snapshots (`AutogradContext.snapshots`).
        self.keeps_next_pass: Callable[[], bool] | None = None
        # ... and the next optimizer step's values (before, grad, after, state): if not, the
        # optimizer does not copy them.
        self.keeps_next_update: Callable[[], bool] | None = None

    # -- the run ---------------------------------------------------------------------
    def run(self) -> None:
        """Run the program, emitting its events, ending with ProgramFinished."""
        error: ProgramError | None = None
        try:
            self.exec_block(self.program.body, self.top)
            if self.program.implicit_output is not None:
                self.implicit_backward(self.program.implicit_output)
        except TorchError as e:
            # An UnsupportedError is the lab's own refusal of something PyTorch would run.
            kind = ("rejected" if e.type_name == "UnsupportedError" else
                    "backward" if self.backward_failed else "forward")
            error = self._error(kind, e.type_name, e.message)
        except (NodeLimitExceeded, TensorTooLarge, LimitExceeded) as limit:
            error = self._error("limit", "UnsupportedError", f"{limit}: the lab's limit keeps "
                                "every program quick for everyone")
        except SourceError as s:
            error = ProgramError("limit" if s.limit else "rejected", s.type, s.message, s.line,
                                 s.col, s.end_line, s.end_col)
        except RecursionError:
            error = self._error("limit", "UnsupportedError", "the program nests calls too "
                                "deeply for the lab")
        self._warnings()
        grads = {leaf.name: (None if leaf.grad is None else leaf.grad.data)
                 for leaf in self.leaves if leaf.name is not None}
        self.emit(ProgramFinished(grads, error, self.printed))

    def _error(self, kind: str, type_: str, message: str) -> ProgramError:
        span = self.error_span or (self.spans[-1] if self.spans else self._last_line())
        return ProgramError(kind, type_, message, span.line, span.col, span.end_line,
                            span.end_col)

    def _last_line(self) -> ir.Span:
        n = max(len(self.program.lines), 1)
        return ir.Span(n, 1, n, 1)

    def implicit_backward(self, name: str) -> None:
        """Shorthand without backward(): `name.backward()` on the last assigned name."""
        if name not in self.globals:
            return
        self.spans.append(self._last_line())
        value = self.globals[name]
        if not isinstance(value, Tensor):
            raise op_errors.no_attribute(value, "backward")
        from engine.backward import backward

        self.run_pass("backward", name, backward(value), False, False, seeds=1)

    # -- limits ----------------------------------------------------------------------
    def tick(self) -> None:
        self.statements += 1
        if self.statements > self.limits.max_statements:
            raise LimitExceeded(f"the program executed more than {self.limits.max_statements} "
                                "statements")
        if self.statements % 256 == 0 and \
                self.clock.elapsed() > self.limits.max_seconds:
            raise LimitExceeded(f"the program ran for more than {self.limits.max_seconds:g} "
                                "seconds")

    def iteration(self) -> None:
        self.iterations += 1
        if self.iterations > self.limits.max_iterations:
            raise LimitExceeded(f"the program's loops ran more than "
                                f"{self.limits.max_iterations} iterations in all")
        if self.iterations % 256 == 0 and \
                self.clock.elapsed() > self.limits.max_seconds:
            raise LimitExceeded(f"the program ran for more than {self.limits.max_seconds:g} "
                                "seconds")

    # -- statements ------------------------------------------------------------------
    def exec_block(self, body: list[ir.Stmt], frame: Frame) -> _Signal | None:
        for stmt in body:
            signal = self.exec_stmt(stmt, frame)
            if signal is not None:
                return signal
        return None

    def exec_stmt(self, stmt: ir.Stmt, frame: Frame) -> _Signal | None:
        self.tick()
        self.ctx.line = stmt.span.line
        self.spans.append(stmt.span)
        try:
            signal = self._statement(stmt, frame)
        except (TorchError, LimitExceeded, NodeLimitExceeded, TensorTooLarge):
            if self.error_span is None:
                self.error_span = stmt.span
            raise
        finally:
            self.spans.pop()
        if signal is None and not isinstance(stmt, (ir.Return, ir.Break, ir.Continue)):
            self.scan(frame)          # not after a block left by return, break or continue
            if self.ctx.warnings:
                self._warnings(stmt.span.line)
        return signal

    def _warnings(self, line: int = 0) -> None:
        for text in self.ctx.warnings:
            self.emit(Warned(text, line, self.in_backward > 0))
        self.ctx.warnings.clear()

    def _statement(self, stmt: ir.Stmt, frame: Frame) -> _Signal | None:
        if isinstance(stmt, ir.Assign):
            if stmt.shorthand:
                from engine.tensor import tensor

                value: Value = tensor(self.eval(stmt.value, frame), self.ctx,
                                      requires_grad=True)
            else:
                value = self.eval(stmt.value, frame)
            for target in stmt.targets:
                self.assign(target, value, frame)
            return None
        if isinstance(stmt, ir.ExprStmt):
            self.eval(stmt.value, frame)
            return None
        if isinstance(stmt, ir.AugAssign):
            self.aug_assign(stmt, frame)
            return None
        if isinstance(stmt, ir.If):
            branch = stmt.body if self.truth(self.eval(stmt.test, frame)) else stmt.orelse
            return self.exec_block(branch, frame)
        if isinstance(stmt, ir.For):
            return self.exec_for(stmt, frame)
        if isinstance(stmt, ir.While):
            return self.exec_while(stmt, frame)
        if isinstance(stmt, ir.Return):
            return _Signal(None if stmt.value is None else self.eval(stmt.value, frame))
        if isinstance(stmt, ir.Break):
            return BREAK
        if isinstance(stmt, ir.Continue):
            return CONTINUE
        if isinstance(stmt, ir.Pass):
            return None
        if isinstance(stmt, ir.With):
            return self.exec_with(stmt, stmt.items, frame)
        if isinstance(stmt, ir.FunctionDef):
            self.bind(frame, stmt.name, self.make_function(stmt, frame))
            return None
        if isinstance(stmt, ir.ClassDef):
            from app.language.classes import make_class

            self.bind(frame, stmt.name, make_class(self, stmt, frame))
            return None
        if isinstance(stmt, ir.Assert):
            if not self.truth(self.eval(stmt.test, frame)):
                message = "" if stmt.message is None else py_str(
                    self.eval(stmt.message, frame), self.addresses)
                raise TorchError("AssertionError", message)
            return None
        if isinstance(stmt, ir.Import):
            from app.language.torch_api import import_name

            for name, module, attribute in stmt.bindings:
                self.bind(frame, name, import_name(module, attribute))
            return None
        if isinstance(stmt, ir.Delete):
            for target in stmt.targets:
                self.delete(target, frame)
            return None
        raise AssertionError(f"unknown statement {stmt!r}")

    def exec_for(self, stmt: ir.For, frame: Frame) -> _Signal | None:
        self.loops.append(0)
        try:
            for item in self.iterate(self.eval(stmt.iter, frame)):
                self.iteration()
                self.loops[-1] += 1
                self.assign(stmt.target, item, frame)
                self.ctx.line = stmt.span.line       # the loop variable is the for's
                self.look_at_loop_variables(frame)
                signal = self.exec_block(stmt.body, frame)
                if signal is BREAK:
                    return None
                if signal is not None and signal is not CONTINUE:
                    return signal
        finally:
            self.loops.pop()
        return self.exec_block(stmt.orelse, frame)

    def exec_while(self, stmt: ir.While, frame: Frame) -> _Signal | None:
        self.loops.append(0)
        try:
            while self.truth(self.eval(stmt.test, frame)):
                self.iteration()
                self.loops[-1] += 1
                signal = self.exec_block(stmt.body, frame)
                if signal is BREAK:
                    return None
                if signal is not None and signal is not CONTINUE:
                    return signal
        finally:
            self.loops.pop()
        return self.exec_block(stmt.orelse, frame)

    def exec_with(self, stmt: ir.With, items: list[ir.WithItem], frame: Frame) -> _Signal | None:
        if not items:
            return self.exec_block(stmt.body, frame)
        item = items[0]
        manager = self.eval(item.context, frame)
        if not isinstance(manager, ContextManager):
            # `with torch.no_grad:` without the call: PyTorch's grad modes are classes
            kind = "type" if isinstance(manager, Builtin) and manager.name.rsplit(".", 1)[-1] in (
                "no_grad", "enable_grad", "inference_mode", "set_grad_enabled") \
                else type_name(manager)
            raise TorchError("TypeError", f"'{kind}' object does not support the "
                             "context manager protocol")
        entered = enter(self, manager)
        try:
            if item.target is not None:
                self.assign(item.target, entered, frame)
            return self.exec_with(stmt, items[1:], frame)
        finally:
            exit_(self, manager)

    # -- names and assignment --------------------------------------------------------
    def bind(self, frame: Frame, name: str, value: Value) -> None:
        frame.locals[name] = value
        frame.pending.append(name)

    def lookup(self, name: str, frame: Frame, span: ir.Span) -> Value:
        scope: Frame | None = frame
        while scope is not None:
            if scope.local_names is None or name in scope.local_names:
                if name in scope.locals:
                    return scope.locals[name]
                if scope.local_names is not None and scope is frame:
                    raise TorchError("UnboundLocalError", f"cannot access local variable "
                                     f"'{name}' where it is not associated with a value")
            scope = scope.parent
        if name in self.globals:
            return self.globals[name]
        if name in self.builtins:
            return self.builtins[name]
        raise TorchError("NameError", f"name '{name}' is not defined")

    def assign(self, target: ir.Target, value: Value, frame: Frame) -> None:
        if isinstance(target, ir.Name):
            self.bind(frame, target.id, value)
        elif isinstance(target, ir.TupleTarget):
            self.unpack(target, value, frame)
        elif isinstance(target, ir.Attribute):
            set_attribute(self, self.eval(target.value, frame), target.attr, value)
        elif isinstance(target, ir.Subscript):
            self.set_item(self.eval(target.value, frame), self.index(target.index, frame), value)
        else:
            raise AssertionError(f"unknown target {target!r}")

    def unpack(self, target: ir.TupleTarget, value: Value, frame: Frame) -> None:
        items = list(self.iterate(value))
        n = len(target.items)
        if target.starred >= 0:
            before, after = target.starred, n - target.starred - 1
            if len(items) < before + after:
                raise TorchError("ValueError", f"not enough values to unpack (expected at "
                                 f"least {before + after}, got {len(items)})")
            rest = items[before:len(items) - after]
            items = [*items[:before], rest, *items[len(items) - after:]]
        elif len(items) != n:
            if len(items) > n:
                raise TorchError("ValueError", f"too many values to unpack (expected {n})")
            raise TorchError("ValueError", f"not enough values to unpack (expected {n}, got "
                             f"{len(items)})")
        for t, v in zip(target.items, items):  # noqa: B905 (lengths checked; Note [Plain zip])
            self.assign(t, v, frame)

    def aug_assign(self, stmt: ir.AugAssign, frame: Frame) -> None:
        target = stmt.target
        if isinstance(target, ir.Name):
            current = self.lookup(target.id, frame, target.span)
            self.bind(frame, target.id, operators.inplace_binary(self, stmt.op, current,
                                                       self.eval(stmt.value, frame)))
        elif isinstance(target, ir.Attribute):
            obj = self.eval(target.value, frame)
            current = get_attribute(self, obj, target.attr)
            result = operators.inplace_binary(self, stmt.op, current, self.eval(stmt.value, frame))
            set_attribute(self, obj, target.attr, result)
        elif isinstance(target, ir.Subscript):
            obj = self.eval(target.value, frame)
            index = self.index(target.index, frame)
            current = self.get_item(obj, index)
            result = operators.inplace_binary(self, stmt.op, current, self.eval(stmt.value, frame))
            self.set_item(obj, index, result)
        else:
            raise TorchError("SyntaxError", "illegal expression for augmented assignment")

    def delete(self, target: ir.Target, frame: Frame) -> None:
        if isinstance(target, ir.Name):
            if target.id not in frame.locals:
                raise TorchError("NameError", f"name '{target.id}' is not defined")
            del frame.locals[target.id]
        elif isinstance(target, ir.Subscript):
            obj = self.eval(target.value, frame)
            if not isinstance(obj, (list, dict)):
                raise TorchError("TypeError", f"'{type_name(obj)}' object doesn't support item "
                                 "deletion")
            try:
                del obj[self.index(target.index, frame)]
            except (IndexError, KeyError, TypeError) as e:
                raise TorchError(type(e).__name__, str(e)) from None
        elif isinstance(target, ir.TupleTarget):
            for t in target.items:
                self.delete(t, frame)
        else:
            raise TorchError("UnsupportedError", "the lab deletes names and items only")

    # -- Note [Leaf names] -------------------------------------------------------------
    def scan(self, frame: Frame) -> None:
        if self.epoch != frame.epoch:
            frame.epoch = self.epoch
            names: list[str] = list(frame.locals)
        elif frame.pending:
            pending = frame.pending
            names = pending if len(pending) == 1 else [n for n in frame.locals if n in pending]
        else:
            return
        frame.pending = []
        for name in names:
            value = frame.locals.get(name)
            if isinstance(value, Tensor):
                self.name_leaf(value, name)
                node = value.stored_grad_fn       # (reading grad_fn may record a node)
                if node is not None and node.bound_to is None:
                    node.bound_to = name            # the graph labels the node with it
                if not value.requires_grad and frame.top:
                    self.note_untracked(value, name)
            elif frame.top and getattr(value, "lab_type_name", None) is not None:
                from app.language.classes import name_parameters

                name_parameters(self, value, name)
            elif isinstance(value, (list, tuple)) and frame.top:
                continue

    def name_leaf(self, t: Tensor, name: str) -> None:
        if t.name is None and t.requires_grad and t.stored_grad_fn is None and not (
                t.base is not None and t.base.requires_grad):
            t.name = name
            self.leaves.append(t)

    def look_at_loop_variables(self, frame: Frame) -> None:
        """At the for line: the labels and the tensors outside the graph, but no leaf
        names, which come only once a statement has completed (as the recorder's)."""
        for name in frame.pending:
            value = frame.locals.get(name)
            if isinstance(value, Tensor):
                node = value.stored_grad_fn
                if node is not None and node.bound_to is None:
                    node.bound_to = name
                if not value.requires_grad and frame.top:
                    self.note_untracked(value, name)

    def note_untracked(self, t: Tensor, name: str) -> None:
        """Tell the views, once per name and reason, that `name` is outside the graph."""
        reason = t.untracked or ("inference_mode" if t.is_inference else "requires_grad=False")
        if (name, reason) not in self.untracked:
            self.untracked.add((name, reason))
            self.emit(Untracked(name, reason, self.ctx.line))

    def requires_grad_changed(self) -> None:
        """A tensor started to require grad: every frame looks at all its names next."""
        self.epoch += 1

    # -- passes ----------------------------------------------------------------------
    def run_pass(self, kind: str, output: str, events: Iterator[Event], retain: bool,
                 create: bool, seeds: int = 0, direct: bool = False) -> None:
        """Run one backward or autograd.grad call, handing its events on (`seeds`: how
        many outputs got `_make_grads`'s ones seed, for the profiler's timeline)."""
        span = self.spans[-1] if self.spans else self._last_line()
        self.in_backward += 1
        started = refused = False
        self.ctx.snapshots = self.keeps_next_pass is None or self.keeps_next_pass()
        try:
            for event in events:
                if isinstance(event, GraphRecorded):
                    if self.in_hook:    # refused once it would run: PyTorch's own errors
                        refused = True  # before the engine starts come first
                        break
                    self.emit(PassStarted(self.passes, kind, output, span.line, span.col,
                                          retain, create, list(self.loops), seeds,
                                          direct))
                    self.passes += 1
                    started = True
                self.emit(event)
                if isinstance(event, NodePopped) and event.error is None:
                    self.tick_pop()
        except TorchError as e:
            self.backward_failed = True
            if not started:
                self.emit(CallFailed(kind, output, span.line, e.type_name, e.message,
                                     direct))
            raise
        finally:
            self.in_backward -= 1
        if refused:
            raise TorchError("UnsupportedError", "a hook that calls backward() or "
                             "autograd.grad() is not supported in the lab: compute the "
                             "gradient after the backward pass")
        self._warnings(span.line)

    def tick_pop(self) -> None:
        self.pops += 1           # (a pop can be a big product: the clock is read often)
        if self.pops % 16 == 0 and self.clock.elapsed() > self.limits.max_seconds:
            raise LimitExceeded(f"the program ran for more than {self.limits.max_seconds:g} "
                                "seconds")

    # -- expressions -----------------------------------------------------------------
    def eval(self, expr: ir.Expr, frame: Frame) -> Value:
        try:
            if isinstance(expr, ir.Name):
                return self.lookup(expr.id, frame, expr.span)
            if isinstance(expr, ir.Const):
                return expr.value
            if isinstance(expr, ir.BinOp):
                return operators.binary(self, expr.op, self.eval(expr.left, frame),
                                        self.eval(expr.right, frame))
            if isinstance(expr, ir.Call):
                return self.eval_call(expr, frame)
            if isinstance(expr, ir.Attribute):
                return get_attribute(self, self.eval(expr.value, frame), expr.attr)
            if isinstance(expr, ir.Subscript):
                return self.get_item(self.eval(expr.value, frame), self.index(expr.index, frame))
            if isinstance(expr, ir.UnaryOp):
                return operators.unary(self, expr.op, self.eval(expr.operand, frame))
            if isinstance(expr, ir.Compare):
                return self.eval_compare(expr, frame)
            if isinstance(expr, ir.BoolOp):       # the last operand is not tested
                for value in expr.values[:-1]:
                    result = self.eval(value, frame)
                    if self.truth(result) == (expr.op == "or"):
                        return result
                return self.eval(expr.values[-1], frame)
            if isinstance(expr, ir.IfExp):
                chosen = expr.body if self.truth(self.eval(expr.test, frame)) else expr.orelse
                return self.eval(chosen, frame)
            if isinstance(expr, ir.TupleExpr):
                return tuple(self.elements(expr.items, frame))
            if isinstance(expr, ir.ListExpr):
                return self.elements(expr.items, frame)
            if isinstance(expr, ir.DictExpr):
                return {self.hashable(self.eval(k, frame)): self.eval(v, frame)
                        for k, v in zip(expr.keys, expr.values)}  # noqa: B905 (Note [Plain zip])
            if isinstance(expr, ir.ListComp):
                return self.eval_comprehension(expr, frame)
            if isinstance(expr, ir.FString):
                return self.eval_fstring(expr, frame)
            if isinstance(expr, ir.Lambda):
                return LambdaFunction(expr, frame, self.eval_defaults(expr.params, frame))
            if isinstance(expr, ir.SliceExpr):
                return self.eval_slice(expr, frame)
            raise AssertionError(f"unknown expression {expr!r}")
        except (TorchError, LimitExceeded, NodeLimitExceeded, TensorTooLarge):
            # The innermost expression that raised is where the error is: the page
            # underlines it, as Python's traceback points its carets at it.
            if self.error_span is None:
                self.error_span = expr.span
            raise

    def elements(self, items: list[ir.Expr], frame: Frame) -> list[Value]:
        out: list[Value] = []
        for item in items:
            if isinstance(item, ir.Starred):
                out.extend(self.iterate(self.eval(item.value, frame)))
            else:
                out.append(self.eval(item, frame))
        self.check_length(len(out))
        return out

    def hashable(self, key: Value) -> Value:
        if isinstance(key, (list, dict)):
            raise TorchError("TypeError", f"unhashable type: '{type_name(key)}'")
        return key

    def check_length(self, n: int) -> None:
        if n > self.limits.max_elements:
            raise LimitExceeded(f"a list of {n} items is longer than the lab allows "
                                f"({self.limits.max_elements})")

    def eval_slice(self, expr: ir.SliceExpr, frame: Frame) -> slice:
        return slice(self.slice_part(expr.lower, frame), self.slice_part(expr.upper, frame),
                     self.slice_part(expr.step, frame))

    def slice_part(self, e: ir.Expr | None, frame: Frame) -> Value:
        """A method, not a closure: compiled, a closure and its environment are a cycle."""
        if e is None:
            return None
        v = self.eval(e, frame)
        if isinstance(v, Tensor):
            v = self.index_number(v)
        if v is not None and (isinstance(v, float) or not isinstance(v, int)):
            raise TorchError("TypeError", "slice indices must be integers or None or have "
                             "an __index__ method")
        return v

    def index_number(self, t: Tensor) -> Value:
        if t.numel() == 1 and not t.is_floating_point and t.ndim == 0:
            return int(t.item())
        return t

    def index(self, expr: ir.Expr, frame: Frame) -> Value:
        if isinstance(expr, ir.TupleExpr):
            return tuple(self.eval(e, frame) for e in expr.items)
        return self.eval(expr, frame)

    def eval_compare(self, expr: ir.Compare, frame: Frame) -> Value:
        left = self.eval(expr.left, frame)
        result: Value = True
        for op, right_expr in zip(expr.ops, expr.comparators):  # noqa: B905 (Note [Plain zip])
            right = self.eval(right_expr, frame)
            result = operators.compare(self, op, left, right)
            if len(expr.ops) > 1 and not self.truth(result):
                return result
            left = right
        return result

    def eval_comprehension(self, expr: ir.ListComp, frame: Frame) -> Value:
        """A list, dict or generator expression. A generator is lazy as Python's: its first
        iterable is evaluated now, each element when it is asked for, so that
        `sum(p.sum() for p in ps)` records Sum, Add, Sum, Add... as PyTorch does."""
        scope = Frame({}, frame, frozenset(_target_names(expr.generators)))
        first = self.iterate(self.eval(expr.generators[0].iter, frame))
        items = self._comprehend(expr, expr.generators, 0, scope, first)
        if expr.kind == "generator":
            return items
        out: list[Value] = []
        for value in items:
            out.append(value)
            self.check_length(len(out))
        if expr.kind == "dict":
            return {self.hashable(k): v for k, v in out}
        return out

    def _comprehend(self, expr: ir.ListComp, gens: list[ir.Comprehension], i: int,
                    scope: Frame, source: Iterator[Value] | None = None) -> Iterator[Value]:
        if i == len(gens):
            yield self.eval(expr.element, scope)
            return
        gen = gens[i]
        if source is None:
            source = self.iterate(self.eval(gen.iter, scope))
        for item in source:
            self.iteration()
            self.assign(gen.target, item, scope)
            if all(self.truth(self.eval(c, scope)) for c in gen.ifs):
                yield from self._comprehend(expr, gens, i + 1, scope)

    def eval_fstring(self, expr: ir.FString, frame: Frame) -> str:
        parts: list[str] = []
        for part in expr.parts:
            if isinstance(part, str):
                parts.append(part)
                continue
            value = self.eval(part.value, frame)
            if part.conversion == "r":
                value = py_repr(value, self.addresses)
            elif part.conversion in ("s", "a"):
                value = py_str(value, self.addresses)
            spec = "" if part.format_spec is None else self.eval_fstring(part.format_spec, frame)
            parts.append(operators.format_value(self, value, spec))
        return "".join(parts)

    # -- calls -----------------------------------------------------------------------
    def eval_call(self, expr: ir.Call, frame: Frame) -> Value:
        func = self.eval(expr.func, frame)
        args: list[Value] = []
        for a in expr.args:
            if isinstance(a, ir.Starred):
                args.extend(self.starred(func, self.eval(a.value, frame)))
            else:
                args.append(self.eval(a, frame))
        kwargs: dict[str, Value] = {}
        for k in expr.keywords:
            value = self.eval(k.value, frame)
            if k.name is None:
                if not isinstance(value, dict):
                    raise TorchError("TypeError", "argument after ** must be a mapping")
                kwargs.update(value)
            else:
                kwargs[k.name] = value
        if expr.text and ((isinstance(func, BoundMethod) and func.method.name == "Tensor.backward")
                          or (isinstance(func, Builtin) and func.name in ("autograd.grad",
                                                                         "autograd.backward"))):
            kwargs["__text__"] = expr.text
        self.call_line = expr.span.line       # a print inside a lambda is on its own line
        return self.call(func, args, kwargs)

    def refuse_lambdas(self, args: list[Value], kwargs: dict[str, Value]) -> None:
        """A lambda is for PyTorch to call (a hook, a pack function): not for the
        program's own functions, nor for print."""
        from app.language import messages

        for value in [*args, *kwargs.values()]:
            if isinstance(value, LambdaFunction):
                span = value.definition.span
                raise SourceError("UnsupportedError", messages.LAMBDA_MESSAGE, span.line,
                                  span.col, span.end_line, span.end_col)

    def starred(self, func: Value, value: Value) -> list[Value]:
        """`f(*value)`: Python's message names the function when value is no iterable."""
        try:
            return list(self.iterate(value))
        except TorchError as e:
            if e.type_name != "TypeError" or "is not iterable" not in e.message:
                raise
            name = (func.qualname if isinstance(func, UserFunction)    # module builtins
                    else getattr(func, "name", type_name(func)))
            raise TorchError("TypeError", f"{name}() argument after * must be an iterable, "
                             f"not {type_name(value)}") from None

    def call(self, func: Value, args: list[Value], kwargs: dict[str, Value]) -> Value:
        if isinstance(func, Builtin):
            if func.name == "print":
                self.refuse_lambdas(args, kwargs)
            return func.impl(self, args, kwargs)
        if isinstance(func, BoundMethod):
            return func.method.impl(self, [func.receiver, *args], kwargs)
        if isinstance(func, (UserFunction, LambdaFunction)):
            self.refuse_lambdas(args, kwargs)
            return self.call_function(func, args, kwargs)
        if isinstance(func, PyType):
            if func.make is None:
                raise TorchError("TypeError", f"cannot create '{func.name}' instances")
            return func.make(self, args, kwargs)
        return call_object(self, func, args, kwargs)

    def make_function(self, definition: ir.FunctionDef, frame: Frame) -> UserFunction:
        mode = None
        static = once = False
        for decorator in definition.decorators:
            value = self.eval(decorator, frame)
            if isinstance(value, ContextManager):
                mode = "inference_mode" if value.kind == "inference_mode" else (
                    "enable_grad" if value.enabled else "no_grad")
                if value.kind == "set_grad_enabled" and value.previous:
                    self.ctx.grad_mode = value.previous.pop()   # as its __call__ does
            elif isinstance(value, Builtin) and value.name == "staticmethod":
                static = True
            elif isinstance(value, Builtin) and value.name == "once_differentiable":
                mode, once = "no_grad", True     # its wrapper runs backward under no_grad
        function = UserFunction(definition, None if frame.top else frame, mode, static,
                                self.eval_defaults(definition.params, frame))
        function.once_differentiable = once
        return function

    def eval_defaults(self, params: list[ir.Param], frame: Frame) -> dict[str, Value]:
        """A def's or a lambda's default values, evaluated once when it is made, as
        Python does (a later change of the names they read does not change them)."""
        return {p.name: self.eval(p.default, frame) for p in params if p.default is not None}

    def call_function(self, func: UserFunction | LambdaFunction, args: list[Value],
                      kwargs: dict[str, Value]) -> Value:
        self.depth += 1
        if self.depth > self.limits.max_call_depth:
            self.depth -= 1
            raise LimitExceeded(f"calls nested more than {self.limits.max_call_depth} deep "
                                "(a function that calls itself without end?)")
        try:
            if isinstance(func, LambdaFunction):
                definition = func.definition
                names = frozenset(p.name for p in definition.params)
                frame = Frame({}, func.closure if not func.closure.top else None, names)
                self.bind_params("<lambda>", definition.params, func.defaults, args, kwargs,
                                 frame)
                return self.eval(definition.body, frame)
            fn = func.definition
            frame = Frame({}, func.closure, fn.locals)
            self.bind_params(func.qualname, fn.params, func.defaults, args, kwargs, frame)
            frame.first = args[0] if args else None
            self.frames.append(frame)
            try:
                if func.grad_mode is None:
                    signal = self.exec_block(fn.body, frame)
                else:
                    manager = grad_mode_manager(func.grad_mode)
                    enter(self, manager)
                    try:
                        signal = self.exec_block(fn.body, frame)
                    finally:
                        exit_(self, manager)
            finally:
                self.frames.pop()
            return signal.value if signal is not None else None
        finally:
            self.depth -= 1

    def bind_params(self, name: str, params: list[ir.Param], defaults: dict[str, Value],
                    args: list[Value], kwargs: dict[str, Value], frame: Frame) -> None:
        positional = [p for p in params if p.kind == "positional"]
        varargs = next((p for p in params if p.kind == "varargs"), None)
        varkw = next((p for p in params if p.kind == "varkw"), None)
        if len(args) > len(positional) and varargs is None:
            low = sum(p.default is None for p in positional)     # parameters without default
            takes = (f"{low} positional argument{'s' if low != 1 else ''}" if low == len(
                positional) else f"from {low} to {len(positional)} positional arguments")
            raise TorchError("TypeError", f"{name}() takes {takes} but {len(args)} "
                             f"{'was' if len(args) == 1 else 'were'} given")
        for p, a in zip(positional, args):  # noqa: B905 (Note [Plain zip])
            self.bind(frame, p.name, a)
        if varargs is not None:
            self.bind(frame, varargs.name, tuple(args[len(positional):]))
        extra: dict[str, Value] = {}
        known = {p.name for p in params if p.kind in ("positional", "kwonly")}
        for key, value in kwargs.items():
            if key == "__text__":
                continue
            if key in known:
                if key in frame.locals:
                    raise TorchError("TypeError", f"{name}() got multiple values for "
                                     f"argument '{key}'")
                self.bind(frame, key, value)
            elif varkw is not None:
                extra[key] = value
            else:
                raise TorchError("TypeError", f"{name}() got an unexpected keyword argument "
                                 f"'{key}'")
        if varkw is not None:
            self.bind(frame, varkw.name, extra)
        missing = []
        for p in params:
            if p.kind in ("positional", "kwonly") and p.name not in frame.locals:
                if p.name not in defaults:
                    missing.append(p.name)
                else:
                    self.bind(frame, p.name, defaults[p.name])
        if missing:
            names = " and ".join(f"'{m}'" for m in missing)
            raise TorchError("TypeError", f"{name}() missing {len(missing)} required positional "
                             f"argument{'s' if len(missing) != 1 else ''}: {names}")

    def call_hook(self, func: Value, args: list[Value]) -> Value:
        """Call a hook the engine runs: a backward() inside it is refused."""
        self.in_hook += 1
        try:
            return self.call(func, args, {})
        finally:
            self.in_hook -= 1

    # -- Python's rules on values ------------------------------------------------------
    def truth(self, value: Value) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, Tensor):
            n = value.numel()
            if n == 0:
                raise TorchError("RuntimeError",
                                 "Boolean value of Tensor with no values is ambiguous")
            if n > 1:
                raise TorchError("RuntimeError", op_errors.AMBIGUOUS_BOOL)
            return bool(value.data.reshape(()).item())
        if value is None:
            return False
        if isinstance(value, (int, float, str, list, tuple, dict, range)):
            return bool(value)
        if isinstance(value, ReturnTypes):
            return True
        length = getattr(value, "lab_len", None)     # a dict view, a Sequential: by __len__
        return bool(length()) if callable(length) else True

    def iterate(self, value: Value) -> Iterator[Value]:
        if isinstance(value, (list, tuple, range, str)):
            return iter(value)
        if isinstance(value, dict):
            return iter(list(value))
        if isinstance(value, Tensor):
            if value.ndim == 0:
                raise TorchError("TypeError", "iteration over a 0-d tensor")
            from app.language.torch_api import unbind

            return iter(unbind(value, 0))
        if isinstance(value, ReturnTypes):
            return iter(value.items())
        if isinstance(value, Iterator):
            return value
        items = getattr(value, "lab_iter", None)
        if callable(items):
            return iter(items())
        raise TorchError("TypeError", f"'{type_name(value)}' object is not iterable")

    def get_item(self, obj: Value, index: Value) -> Value:
        return operators.get_item(self, obj, index)

    def set_item(self, obj: Value, index: Value, value: Value) -> None:
        operators.set_item(self, obj, index, value)

    def print(self, args: list[Value], sep: str = " ", end: str = "\n") -> None:
        text = sep.join(py_str(a, self.addresses) for a in args) + end
        if text.endswith("\n"):
            text = text[:-1]
        self.printed.append(text)
        self.emit(Printed(text, self.call_line or (self.spans[-1].line if self.spans else 0),
                          self.in_backward > 0))


def _target_names(generators: list[ir.Comprehension]) -> set[str]:
    names: set[str] = set()
    stack: list[ir.Target] = [g.target for g in generators]
    while stack:
        t = stack.pop()
        if isinstance(t, ir.Name):
            names.add(t.id)
        elif isinstance(t, ir.TupleTarget):
            stack.extend(t.items)
    return names


def run_program(program: ir.Program, limits: Limits, emit: Emit) -> None:
    """Run one program, its numpy warnings silenced (inf and nan are values in PyTorch)."""
    with np.errstate(all="ignore"):
        Interpreter(program, limits, emit).run()


__all__ = ["Interpreter", "Namespace", "PassStarted", "ProgramError", "ProgramFinished",
           "Printed", "RunEvent", "Size", "Warned", "math", "run_program"]
