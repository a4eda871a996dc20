"""What live PyTorch does for the programs of test_second_order.py: every pass (each
`backward()` and `torch.autograd.grad` call) with its pops and its graph (each node's
`next_functions`), the final `.grad` of the named leaves, what `print` wrote and the error.

A small recorder of its own, as ../shared/conformance/record_torch.py records: the calls
are rewritten (ast) into calls that first put a pre-hook on every node reachable from the
outputs, and each pre-hook call is one ready-queue pop. The program runs in a fresh thread,
where PyTorch's sequence counter starts at 0 (reference §3). It executes the test's own
generated programs, never a user's.
"""

from __future__ import annotations

import ast
import threading
import warnings
from collections.abc import Callable
from typing import Any

ACCUMULATE = "torch::autograd::AccumulateGrad"


class _Calls(ast.NodeTransformer):
    """`torch.autograd.grad(out, ...)` -> `__grad__("out", out, ...)`, `y.backward(...)`
    -> `__backward__("y", y, ...)`."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if ast.unparse(func) == "torch.autograd.grad":
            text = ast.Constant(ast.unparse(node.args[0]))
            return ast.Call(ast.Name("__grad__", ast.Load()), [text, *node.args], node.keywords)
        if isinstance(func, ast.Attribute) and func.attr == "backward":
            text = ast.Constant(ast.unparse(func.value))
            return ast.Call(ast.Name("__backward__", ast.Load()), [text, func.value, *node.args],
                            node.keywords)
        return node


class _Recorder:
    def __init__(self, torch: Any, leaves: tuple[str, ...]) -> None:
        self.torch = torch
        self.leaves = leaves
        self.passes: list[dict[str, Any]] = []
        self.active: list[dict[str, Any]] = []
        self.printed: list[str] = []
        self.hooked: dict[int, Any] = {}
        self.names: dict[int, str] = {}
        self.namespace: dict[str, Any] = {"__grad__": self.grad, "__backward__": self.backward,
                                          "print": self.print}

    def print(self, *args: Any) -> None:
        self.printed.append(" ".join(str(a) for a in args))

    def key(self, node: Any) -> str:
        """`Name#seq`, or `AccumulateGrad(leaf)`."""
        if node.name() == ACCUMULATE:
            return f"AccumulateGrad({self.names.get(id(node.variable))})"
        return f"{node.name()}#{node._sequence_nr()}"

    def hook(self, outputs: Any) -> dict[str, list[str | None]]:
        """Pre-hooks on the nodes not hooked yet; the graph reachable from the outputs."""
        for name in self.leaves:
            if name in self.namespace:
                self.names[id(self.namespace[name])] = name
        outs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
        stack = [t.grad_fn for t in outs if t.grad_fn is not None]
        graph: dict[str, list[str | None]] = {}
        while stack:
            node = stack.pop()
            if node is None or self.key(node) in graph:
                continue
            graph[self.key(node)] = [None if f is None else self.key(f)
                                     for f, _ in node.next_functions]
            if id(node) not in self.hooked:
                self.hooked[id(node)] = node
                node.register_prehook(self.prehook(node))
            stack.extend(f for f, _ in node.next_functions)
        return graph

    def prehook(self, node: Any) -> Callable[[Any], None]:
        name, seq = node.name(), node._sequence_nr()
        leaf = self.names.get(id(node.variable)) if name == ACCUMULATE else None
        step = {"name": "AccumulateGrad" if name == ACCUMULATE else name, "seq": seq,
                "leaf": leaf}
        return lambda grad_outputs: self.active[-1]["steps"].append(step) if self.active else None

    def run_pass(self, output: str, kind: str, graph: dict[str, list[str | None]],
                 call: Callable[[], Any]) -> Any:
        entry: dict[str, Any] = {"output": output, "kind": kind, "steps": [], "graph": graph}
        self.passes.append(entry)
        self.active.append(entry)
        try:
            return call()
        finally:
            self.active.pop()
            if not entry["steps"]:
                self.passes.remove(entry)

    def grad(self, text: str, outputs: Any, *args: Any, **kwargs: Any) -> Any:
        return self.run_pass(text, "grad", self.hook(outputs),
                             lambda: self.torch.autograd.grad(outputs, *args, **kwargs))

    def backward(self, text: str, tensor: Any, *args: Any, **kwargs: Any) -> Any:
        return self.run_pass(text, "backward", self.hook(tensor),
                             lambda: tensor.backward(*args, **kwargs))

    def run(self, source: str) -> dict[str, Any]:
        tree = ast.fix_missing_locations(_Calls().visit(ast.parse(source)))
        error = None
        try:
            exec(compile(tree, "<second-order>", "exec"), self.namespace)
        except Exception as e:  # the program's own error is part of the trace
            error = {"type": type(e).__name__, "message": str(e)}
        grads = {}
        for name in self.leaves:
            leaf = self.namespace.get(name)
            if leaf is not None and leaf.requires_grad:
                grads[name] = None if leaf.grad is None else leaf.grad.detach().tolist()
        return {"passes": self.passes, "grads": grads, "error": error,
                "printed": self.printed}


def record(source: str, leaves: tuple[str, ...]) -> dict[str, Any]:
    """PyTorch's trace of one program, run in a fresh thread (a fresh sequence counter)."""
    import torch

    box: list[dict[str, Any]] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            box.append(_Recorder(torch, leaves).run(source))
        except BaseException as e:  # re-raised in the caller's thread
            failure.append(e)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thread = threading.Thread(target=work, name="second-order")
        thread.start()
        thread.join()
    if failure:
        raise failure[0]
    return box[0]
