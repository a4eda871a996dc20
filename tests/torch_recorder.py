"""What real PyTorch does for a lab program: the conformance recorder, runnable in-process.

Adapted from ../shared/conformance/record_torch.py (the recorder that produced
tests/data/conformance_cases.jsonl), with the same rewrite and the same Recorder. The
difference is how a fresh sequence counter is obtained: PyTorch's counter is
thread-local and starts at 0 in every new thread (reference §3), so instead of a fresh
process per program, `record()` runs each program in a fresh `threading.Thread`, about a
hundred times faster. `test_differential.py` checks that this gives exactly the recorded
traces of the conformance corpus.

This file executes program text with real PyTorch (it is the reference, not the lab);
the lab itself never does (see test_bad_input.py).
"""

from __future__ import annotations

import ast
import math
import threading
import warnings
from typing import Any

RECORDER = "__record_backward__"
ACCUMULATE = "torch::autograd::AccumulateGrad"


def _number_literal(node: ast.expr) -> int | float | None:
    """The value of NUMBER, -NUMBER or +NUMBER, else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _number_literal(node.operand)
        if inner is None:
            return None
        return -inner if isinstance(node.op, ast.USub) else inner
    if (isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool)):
        return node.value
    return None


def _leaf_statement(name: str, value: float, like: ast.stmt) -> ast.stmt:
    """`name = torch.tensor(float(value), requires_grad=True)` at `like`'s position.

    (record_torch.py writes repr(float(value)), which for `a = 1e400` is the undefined
    name `inf`; float('inf') is what the shorthand means.)
    """
    number = float(value)
    text = f"float({str(number)!r})" if not math.isfinite(number) else repr(number)
    stmt = ast.parse(f"{name} = torch.tensor({text}, requires_grad=True)").body[0]
    return ast.copy_location(stmt, like)


def _is_tensor_call(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "tensor" and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "torch")


def _backward_target(stmt: ast.stmt) -> ast.Call | None:
    if (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)
            and stmt.value.func.attr == "backward"):
        return stmt.value
    return None


def rewrite(source: str) -> tuple[list[ast.Module], bool, str | None]:
    """Parse a lab program: (one-statement modules, has_backward, last assigned name)."""
    tree = ast.parse(source)
    statements: list[ast.stmt] = []
    has_backward = False
    last_assigned = None
    leading = True   # still in the opening block of leaf definitions
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            statements.append(stmt)
            continue
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            last_assigned = stmt.targets[0].id
            value = _number_literal(stmt.value)
            if leading and value is not None:
                statements.append(_leaf_statement(stmt.targets[0].id, value, stmt))
                continue
            if leading and _is_tensor_call(stmt.value):
                statements.append(stmt)
                continue
        leading = False
        call = _backward_target(stmt)
        if call is not None:
            has_backward = True
            assert isinstance(call.func, ast.Attribute)
            receiver = call.func.value
            new_call = ast.Call(
                func=ast.Name(RECORDER, ast.Load()),
                args=[ast.Constant(ast.unparse(receiver)), receiver, *call.args],
                keywords=call.keywords,
            )
            stmt = ast.copy_location(ast.Expr(new_call), call)
            ast.fix_missing_locations(stmt)
        statements.append(stmt)
    modules = [ast.fix_missing_locations(ast.Module(body=[s], type_ignores=[]))
               for s in statements]
    return modules, has_backward, last_assigned


def _encode(value: Any) -> Any:
    if isinstance(value, list):
        return [_encode(v) for v in value]
    x = float(value)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


class Recorder:
    """Runs one program under torch and collects its trace."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.namespace: dict[str, Any] = {"torch": torch, RECORDER: self.record_backward}
        self.passes: list[dict[str, Any]] = []
        self.current_steps: list[dict[str, Any]] | None = None
        self.hooked: dict[int, Any] = {}       # id(node) -> node, kept alive
        self.leaves: dict[int, tuple[str, Any]] = {}
        self.min_seq: int | None = None

    def note_assignment(self, name: str) -> None:
        value = self.namespace.get(name)
        if not isinstance(value, self.torch.Tensor):
            return
        if value.is_leaf and value.requires_grad and id(value) not in self.leaves:
            self.leaves[id(value)] = (name, value)
        self.note_graph(value)

    def leaf_name(self, node: Any) -> str | None:
        entry = self.leaves.get(id(node.variable))
        return entry[0] if entry and entry[1] is node.variable else None

    def note_graph(self, tensor: Any) -> None:
        """Track the smallest sequence number among nodes reachable from tensor."""
        if tensor.grad_fn is None:
            return
        stack, seen = [tensor.grad_fn], set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if node.name() != ACCUMULATE:
                seq = node._sequence_nr()
                self.min_seq = seq if self.min_seq is None else min(self.min_seq, seq)
            stack.extend(next_node for next_node, _ in node.next_functions)

    def grad_accumulator(self, leaf: Any) -> Any:
        """The leaf's AccumulateGrad, got through a throwaway view made in a helper thread
        (so it uses up no sequence number of the program's thread)."""
        box: list[Any] = []

        def get() -> None:
            with self.torch.enable_grad():
                box.append(leaf.view_as(leaf).grad_fn.next_functions[0][0])

        thread = threading.Thread(target=get)
        thread.start()
        thread.join()
        return box[0]

    def hook_graph(self, root: Any) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            if node is None or id(node) in self.hooked:
                continue
            self.hooked[id(node)] = node
            node.register_prehook(self.make_prehook(node))
            stack.extend(next_node for next_node, _ in node.next_functions)

    def make_prehook(self, node: Any) -> Any:
        name = node.name()
        is_accumulate = name == ACCUMULATE
        if is_accumulate:
            name = "AccumulateGrad"
        seq = node._sequence_nr()

        def prehook(grad_outputs: Any) -> None:
            leaf = self.leaf_name(node) if is_accumulate else None
            assert self.current_steps is not None
            self.current_steps.append({"name": name, "seq": seq, "leaf": leaf})

        return prehook

    def record_backward(self, output_name: str, tensor: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(tensor, self.torch.Tensor):
            if tensor.grad_fn is not None:
                self.hook_graph(tensor.grad_fn)
            elif tensor.requires_grad:
                self.hook_graph(self.grad_accumulator(tensor))
        self.current_steps = []
        try:
            return tensor.backward(*args, **kwargs)
        finally:
            if self.current_steps:
                self.passes.append({"output": output_name, "steps": self.current_steps})
            self.current_steps = None

    def run(self, source: str) -> dict[str, Any]:
        statements, has_backward, last_assigned = rewrite(source)
        error = None
        try:
            for module in statements:
                exec(compile(module, "<lab>", "exec"), self.namespace)
                stmt = module.body[0]
                # `x.grad = None` (README) is an assignment too; the original recorder
                # assumed a name target here.
                if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                    self.note_assignment(stmt.targets[0].id)
            if not has_backward and last_assigned is not None:
                self.record_backward(last_assigned, self.namespace[last_assigned])
        except Exception as e:  # the program's own error is part of the trace
            error = {"type": type(e).__name__, "message": str(e)}
        grads = {name: None if leaf.grad is None else _encode(leaf.grad.detach().tolist())
                 for name, leaf in self.leaves.values()}
        if self.min_seq not in (None, 0):
            raise RuntimeError(f"sequence numbers started at {self.min_seq}, not 0")
        return {"passes": self.passes, "grads": grads, "error": error}


def record(source: str, float64: bool = False) -> dict[str, Any]:
    """PyTorch's trace of one program, run in a fresh thread (fresh sequence counter).

    With float64, the same program with torch's default dtype set to float64: a yardstick
    for how far float32 rounding alone moves this program's gradients.
    """
    import torch

    box: list[dict[str, Any]] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            box.append(Recorder(torch).run(source))
        except BaseException as e:  # re-raised in the caller's thread
            failure.append(e)

    default = torch.get_default_dtype()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.set_default_dtype(torch.float64 if float64 else torch.float32)
        try:
            thread = threading.Thread(target=work, name="torch-recorder")
            thread.start()
            thread.join()
        finally:
            torch.set_default_dtype(default)
    if failure:
        raise failure[0]
    return box[0]
