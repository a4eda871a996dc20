"""The two sides of the engine benchmark, each able to run one program once, timed.

The lab's side is everything a user waits for: `trace_json`, what the CLI and /api/trace
run (parse, forward recording, backward, events, layout, the Trace document written as
JSON), every run cold (`clear_caches`: no remembered line shapes or layouts).
PyTorch's side is the same program text with the leaf shorthand rewritten to
`torch.tensor(v, requires_grad=True)`, compiled and run, with a prehook on every node
recording (name, sequence number) per pop, then `backward()`: the least work that
yields the same pop order. `import torch` is not timed. Both sides warm up on a
different small program first.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import hashlib
import io
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from bench import builds
from bench.programs import limits_for, realistic


class Side(Protocol):
    def run(self) -> float:
        """Run the program once; its time in seconds."""

    def result(self) -> dict[str, Any]:
        """What the last run produced: pops, their order's digest, the version or build."""


def side(kind: str, source: str, warm_up: str | None = None) -> Side:
    """One side of a benchmark, warmed up on `warm_up` (by default a small realistic
    program): lazy imports done and first calls made before anything is timed."""
    warm_up = realistic(200, seed=1) if warm_up is None else warm_up
    return LabSide(source, warm_up) if kind == "lab" else TorchSide(source, warm_up)


def digest(pops: Iterable[tuple[str, int]]) -> str:
    """The pop order, hashed, to check that both sides popped the same nodes in turn."""
    h = hashlib.sha256()
    for name, seq in pops:
        name = "AccumulateGrad" if name == "torch::autograd::AccumulateGrad" else name
        h.update(f"{name}:{seq}\n".encode())
    return h.hexdigest()[:12]


# -- the lab --------------------------------------------------------------------------------

class LabSide:
    def __init__(self, source: str, warm_up: str) -> None:
        from app.trace import clear_caches, trace_json

        self._clear_caches, self._trace_json = clear_caches, trace_json
        self._source, self._limits = source, limits_for(source)
        self._text = b""
        trace_json(warm_up, limits_for(warm_up))       # lazy imports, first calls
        gc.collect()

    def run(self) -> float:
        self._text = b""
        self._clear_caches()          # every run starts cold: no line shapes, no layouts
        gc.collect()
        start = time.perf_counter()
        text, _ = self._trace_json(self._source, self._limits)
        io.BytesIO().write(text)
        seconds = time.perf_counter() - start
        self._text = text
        return seconds

    def result(self) -> dict[str, Any]:
        trace = json.loads(self._text)
        steps = [(s["name"], s["seq"]) for p in trace["passes"] for s in p["steps"]]
        error = trace["error"] and f"{trace['error']['type']}: {trace['error']['message']}"
        return {"pops": len(steps), "order": digest(steps), "error": error,
                **builds.running()}


# -- PyTorch: the program text, rewritten -----------------------------------------------------

class TorchSide:
    def __init__(self, source: str, warm_up: str) -> None:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        import torch

        self._torch = torch
        self._text = torch_source(source)
        self._pops: list[tuple[str, int]] = []
        warm_up_text = torch_source(warm_up)
        _in_fresh_thread(lambda: _run_torch(torch, warm_up_text))
        gc.collect()

    def run(self) -> float:
        self._pops = []
        gc.collect()
        seconds, self._pops = _in_fresh_thread(lambda: _run_torch(self._torch, self._text))
        return float(seconds)

    def result(self) -> dict[str, Any]:
        return {"pops": len(self._pops), "order": digest(self._pops),
                "version": self._torch.__version__}


def _number(node: ast.expr) -> float | None:
    """The value of NUMBER, -NUMBER or +NUMBER, else None."""
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def torch_source(source: str) -> str:
    """The lab program as plain PyTorch: the opening `name = NUMBER` lines become leaves
    requiring grad, and every `X.backward(...)` statement, in a loop or not, becomes
    `__backward__(X, ...)`, which hooks every node before calling the real `backward`
    (as conformance/record_torch.py does)."""
    body: list[ast.stmt] = []
    leading = True
    for stmt in ast.parse(source).body:
        if (leading and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and (value := _number(stmt.value)) is not None):
            name = stmt.targets[0].id
            leaf = ast.parse(f"{name} = torch.tensor({value!r}, requires_grad=True)").body[0]
            body.append(ast.copy_location(leaf, stmt))
            continue
        leading = False
        body.append(_HookedBackward().visit(stmt))
    return ast.unparse(ast.fix_missing_locations(ast.Module(body=body, type_ignores=[])))


class _HookedBackward(ast.NodeTransformer):
    """`X.backward(...)` as a statement → `__backward__(X, ...)`, at any depth."""

    def visit_Expr(self, stmt: ast.Expr) -> ast.Expr:
        call = stmt.value
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "backward"):
            hooked = ast.Call(ast.Name("__backward__", ast.Load()),
                              [call.func.value, *call.args], call.keywords)
            return ast.copy_location(ast.Expr(hooked), stmt)
        return stmt


def _run_torch(torch: Any, text: str) -> tuple[float, list[tuple[str, int]]]:
    """compile + exec + hooking + backward of one program, timed; the pops recorded."""
    pops: list[tuple[str, int]] = []
    hooked: dict[int, Any] = {}      # id -> node, kept alive so ids stay unique

    def backward(tensor: Any, *args: Any, **kwargs: Any) -> None:
        stack = [tensor.grad_fn]
        while stack:                 # iterative: the graph may be 100,000 deep
            node = stack.pop()
            if node is None or id(node) in hooked:
                continue
            hooked[id(node)] = node
            name, seq = node.name(), node._sequence_nr()

            def prehook(grads: Any, name: str = name, seq: int = seq) -> None:
                pops.append((name, seq))

            node.register_prehook(prehook)
            stack.extend(next_node for next_node, _ in node.next_functions)
        tensor.backward(*args, **kwargs)

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):    # what it prints, as the lab keeps it
        exec(compile(text, "<lab>", "exec"), {"torch": torch, "__backward__": backward})
    return time.perf_counter() - start, pops


def _in_fresh_thread(fn: Callable[[], Any]) -> Any:
    """Sequence numbers are per thread: a fresh thread numbers its first node 0."""
    box: list[Any] = []
    thread = threading.Thread(target=lambda: box.append(fn()))
    thread.start()
    thread.join()
    if not box:
        raise RuntimeError("the PyTorch run failed (see the traceback above)")
    return box[0]
