"""What real PyTorch does for a lab program: the conformance recorder, runnable in-process.

Adapted from ../shared/conformance/record_torch.py (the recorder of the public corpora:
passes with their `kind`, `printed`, module parameters named `VAR.NAME`, leaves that
start to require grad later, the error of a failing program), with its rewriting in
tests/torch_rewrite.py and the same Recorder. The difference is how a fresh sequence
counter is obtained: PyTorch's counter is thread-local and starts at 0 in every new
thread (reference §3), so instead of a fresh process per program, `record()` runs each
program in a fresh `threading.Thread`, about a hundred times faster.
`test_differential.py` checks that this gives exactly the recorded traces of the corpora.

This file executes program text with real PyTorch (it is the reference, not the lab);
the lab itself never does (see test_bad_input.py).
"""

from __future__ import annotations

import builtins
import io
import math
import threading
import warnings
from collections.abc import Callable
from typing import Any

from tests.torch_rewrite import GRAD_RECORDER, RECORDER, SCANNER, rewrite

ACCUMULATE = "torch::autograd::AccumulateGrad"


def _encode(value: Any) -> Any:
    if isinstance(value, list):
        return [_encode(v) for v in value]
    x = float(value)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def encode_grad(tensor: Any) -> Any:
    return None if tensor is None else _encode(tensor.detach().tolist())


class Recorder:
    """Runs one program under torch and collects its trace."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.real_grad = torch.autograd.grad
        self.namespace: dict[str, Any] = {
            "torch": torch, RECORDER: self.record_backward, GRAD_RECORDER: self.record_grad,
            SCANNER: self.scan, "print": self.print}
        self.passes: list[dict[str, Any]] = []
        self.active: list[dict[str, Any]] = []     # passes under way, innermost last
        self.printed: list[str] = []
        self.hooked: dict[int, Any] = {}           # id(node) -> node, kept alive
        self.tensors: dict[int, Any] = {}          # id(tensor) -> tensor scanned, kept alive
        self.leaves: dict[int, tuple[str, Any]] = {}   # id(leaf) -> (its name, leaf)
        self.min_seq: int | None = None
        self.disturbed: str | None = None          # how the recorder changed the program
        self._seqnr: Callable[[], int] | None = getattr(
            torch._C._autograd, "_get_sequence_nr", None)

    def print(self, *args: Any, sep: str | None = " ", end: str | None = "\n",
              file: Any = None, flush: bool = False) -> None:
        """builtins.print into a string: one entry of `printed` per call."""
        buffer = io.StringIO()
        try:
            builtins.print(*args, sep=sep, end=end, file=buffer)
        finally:
            self.printed.append(buffer.getvalue().removesuffix("\n"))

    # -- names -----------------------------------------------------------------------------
    def scan(self, scope: dict[str, Any]) -> None:
        """After a statement: name new leaves that require grad and hook new nodes."""
        before = self._seqnr() if self._seqnr else None
        for name, value in list(scope.items()):
            if name.startswith("__"):
                continue
            if isinstance(value, self.torch.Tensor):
                self.note_tensor(name, value)
            elif isinstance(value, self.torch.nn.Module) and scope is self.namespace:
                # CONTRACT §2: a module's parameters are leaves named VAR.NAME, VAR a
                # variable of the program's top level (not `self` inside __init__)
                for pname, param in value.named_parameters():
                    self.note_tensor(f"{name}.{pname}", param)
            elif isinstance(value, (tuple, list)):
                for item in value:
                    if isinstance(item, self.torch.Tensor):
                        self.note_tensor(None, item)
        if self._seqnr and self._seqnr() != before and self.disturbed is None:
            self.disturbed = "a scan used up a sequence number"

    def note_tensor(self, name: str | None, tensor: Any) -> None:
        self.tensors.setdefault(id(tensor), tensor)
        if not tensor.requires_grad:
            return
        if tensor._is_view() and tensor._base.requires_grad:
            return      # its grad_fn may be rebuilt on reading, making a node
        node = tensor.grad_fn
        if node is None:
            if name is not None and id(tensor) not in self.leaves:
                self.leaves[id(tensor)] = (name, tensor)
        else:
            self.hook_graph(node)

    def leaf_name(self, node: Any) -> str | None:
        entry = self.leaves.get(id(node.variable))
        return entry[0] if entry and entry[1] is node.variable else None

    # -- graph -----------------------------------------------------------------------------
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
            if node.name() != ACCUMULATE:
                seq = node._sequence_nr()
                self.min_seq = seq if self.min_seq is None else min(self.min_seq, seq)
            node.register_prehook(self.make_prehook(node))
            stack.extend(next_node for next_node, _ in node.next_functions)

    def hook_output(self, tensor: Any) -> None:
        if not isinstance(tensor, self.torch.Tensor):
            return
        if tensor.grad_fn is not None:
            self.hook_graph(tensor.grad_fn)
        elif tensor.requires_grad:
            self.hook_graph(self.grad_accumulator(tensor))

    def make_prehook(self, node: Any) -> Callable[[Any], None]:
        name = node.name()
        is_accumulate = name == ACCUMULATE
        if is_accumulate:
            name = "AccumulateGrad"
        seq = node._sequence_nr()

        def prehook(grad_outputs: Any) -> None:
            if self.active:
                leaf = self.leaf_name(node) if is_accumulate else None
                self.active[-1]["steps"].append({"name": name, "seq": seq, "leaf": leaf})

        return prehook

    # -- passes ----------------------------------------------------------------------------
    def _run_pass(self, output: str, kind: str, call: Callable[[], Any]) -> Any:
        entry: dict[str, Any] = {"output": output, "kind": kind, "steps": []}
        self.passes.append(entry)
        self.active.append(entry)
        try:
            return call()
        finally:
            self.active.pop()
            if not entry["steps"]:
                self.passes = [p for p in self.passes if p is not entry]

    def record_backward(self, output_name: str, tensor: Any, *args: Any, **kwargs: Any) -> Any:
        self.hook_output(tensor)
        return self._run_pass(output_name, "backward",
                              lambda: tensor.backward(*args, **kwargs))

    def record_grad(self, output_text: str, *args: Any, **kwargs: Any) -> Any:
        outputs = args[0] if args else kwargs.get("outputs")
        for tensor in outputs if isinstance(outputs, (tuple, list)) else [outputs]:
            self.hook_output(tensor)
        return self._run_pass(output_text, "grad", lambda: self.real_grad(*args, **kwargs))

    # -- program ---------------------------------------------------------------------------
    def run(self, source: str) -> dict[str, Any]:
        program = rewrite(source)
        if self._seqnr and self._seqnr() != 0:
            raise RuntimeError(f"the sequence counter is at {self._seqnr()}, not 0")
        error = None
        try:
            for module in program.modules:
                exec(compile(module, "<lab>", "exec"), self.namespace)
                self.scan(self.namespace)
            if program.implicit_backward and program.last_assigned in self.namespace:
                name = str(program.last_assigned)
                self.record_backward(name, self.namespace[name])
        except Exception as e:  # the program's own error is part of the trace
            error = {"type": type(e).__name__, "message": str(e)}
        if self.disturbed:
            raise RuntimeError(f"torch_recorder: {self.disturbed}")
        if self._seqnr is None and self.min_seq not in (None, 0):
            raise RuntimeError(f"sequence numbers started at {self.min_seq}, not 0")
        grads = {name: encode_grad(leaf.grad) for name, leaf in self.leaves.values()}
        trace: dict[str, Any] = {"passes": self.passes, "grads": grads, "error": error}
        if program.mentions_print:
            trace["printed"] = self.printed
        return trace


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
