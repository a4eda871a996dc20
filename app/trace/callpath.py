"""The call path: where each backward() or autograd.grad() call is on its way from Python
to `.grad` (reference §13, seed 004), as phase events the trace carries.

`Tensor.backward` → `torch.autograd.backward` → `_make_grads` (the ones seed, or its
error) → `_engine_run_backward` → `Engine::execute` (`compute_dependencies`, the
ready-queue loop, `evaluate_function`, hooks, `release_variables`) → `.grad` ready;
`torch.autograd.grad` takes its own branch with accumulate_grad off and returns what it
captured. Each phase names the step from which it is lit (0 is the dependency count, k
the k-th pop) and the lab's own code that does the same, a page of `/source/`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict

from app.language.events import CallFailed, PassStarted, ProgramFinished, RunEvent
from engine import errors
from engine.events import NodePopped

Phase = TypedDict("Phase", {
    "pass": Annotated[int | None, Field(description="the pass (`Pass.index`); null for a "
                                                    "call that failed before the engine")],
    "call": Literal["backward", "grad"],
    "phase": Annotated[str, Field(description="`Tensor.backward`, `_make_grads`, "
                                              "`evaluate_function`, ...")],
    "step": Annotated[int | None, Field(description="the pass's step from which it is lit "
                                                    "(0: the dependency count); null if "
                                                    "it never was")],
    "steps": Annotated[list[int] | None, Field(description="hooks: the steps where hooks "
                                                           "ran")],
    "status": Literal["ok", "error", "skipped"],
    "detail": Annotated[str, Field(description="one sentence: what happened there")],
    "source": Annotated[str, Field(description="the lab's code that does the same: "
                                               "`/source/engine/backward.py#make_grads`")],
    "line": Annotated[int, Field(description="the program's line of the call")],
})
"""One box of the call path for one call."""


SOURCES = {
    "Tensor.backward": "engine/backward.py#backward",
    "torch.autograd.backward": "engine/backward.py#backward",
    "torch.autograd.grad": "engine/backward.py#grad",
    "_make_grads": "engine/backward.py#make_grads",
    "_engine_run_backward": "engine/backward.py#_root_edges",
    "Engine::execute": "engine/graph_task.py#execute",
    "compute_dependencies": "engine/graph_task.py#compute_dependencies",
    "ready_queue": "engine/ready_queue.py#pop",
    "evaluate_function": "engine/graph_task.py#evaluate_function",
    "hooks": "engine/hooks.py#call_pre_hooks",
    "release_variables": "engine/node.py#release_variables",
    ".grad": "engine/accumulate_grad.py#accumulate",
    "returned": "engine/backward.py#grad",
}


def _failed_at(message: str) -> str:
    """Where PyTorch raises a call's error before its engine runs: `_make_grads` checks
    the gradients, the C++ `run_backward` looks for each root's grad_fn, and the rest are
    the Python function's own argument checks."""
    if message in (errors.NON_SCALAR_OUTPUT,) or message.startswith((
            "grad can be implicitly created only for real scalar outputs",
            "Mismatch in shape:", "gradients can be either Tensors or None")):
        return "_make_grads"
    if message.endswith("of tensors does not require grad and does not have a grad_fn"):
        return "_engine_run_backward"
    return "torch.autograd.grad"


def _phase(pass_: int | None, call: str, phase: str, step: int | None, detail: str,
           line: int, status: str = "ok", steps: list[int] | None = None) -> Phase:
    return {"pass": pass_, "call": call, "phase": phase, "step": step,  # type: ignore[typeddict-item]
            "steps": steps, "status": status, "detail": detail,  # type: ignore[typeddict-item]
            "source": "/source/" + SOURCES[phase], "line": line}


def opening(index: int, s: PassStarted) -> list[Phase]:
    """The phases a pass has passed through when its engine starts."""
    call, line = s.kind, s.line
    grad = call == "grad"
    seed = (f"no gradient given: the seed is torch.ones_like({s.output})" if s.seeds
            else "the gradient given is checked against the output's shape")
    phases = [] if grad or s.direct else [
        _phase(index, call, "Tensor.backward", 0,
               f"{s.output}.backward() hands over to torch.autograd", line)]
    phases += [
        _phase(index, call, "torch.autograd.grad" if grad else "torch.autograd.backward", 0,
               "the outputs and gradients become tuples; retain_graph defaults to "
               "create_graph", line),
        _phase(index, call, "_make_grads", 0, seed, line),
        _phase(index, call, "_engine_run_backward", 0,
               f"run_backward with accumulate_grad={'False' if grad else 'True'}: each "
               "output's grad_fn becomes a root", line),
        _phase(index, call, "Engine::execute", 0, "validate_outputs on the roots' "
               "gradients, then the graph task", line),
        _phase(index, call, "compute_dependencies", 0, "count, for every node, the edges "
               "that point at it", line),
        _phase(index, call, "ready_queue", 1, "push the root; pop the highest sequence "
               "number among the ready nodes", line),
        _phase(index, call, "evaluate_function", 1, "run the node's formula and hand each "
               "gradient to its next node's input buffer", line),
        _phase(index, call, "release_variables", None if s.retain_graph else 1,
               "retain_graph: saved tensors are kept" if s.retain_graph else
               "each node's saved tensors are freed once it has run", line,
               "skipped" if s.retain_graph else "ok")]
    return phases


def closing(index: int, s: PassStarted, steps: int, hooked: list[int]) -> list[Phase]:
    """The phases known once a pass has run: where hooks fired, and the result."""
    call, line = s.kind, s.line
    phases = [_phase(index, call, "hooks", hooked[0] if hooked else None,
                     f"hooks ran at {len(hooked)} of the {steps} pops" if hooked
                     else "no hook ran", line, "ok" if hooked else "skipped", hooked)]
    if call == "grad":
        phases.append(_phase(index, call, "returned", steps, "accumulate_grad off: no "
                             ".grad is written; the gradients captured at the inputs are "
                             "returned", line))
    else:
        phases.append(_phase(index, call, ".grad", steps, "every AccumulateGrad has run: "
                             "the leaves' .grad are ready", line))
    return phases


def failed(f: CallFailed) -> list[Phase]:
    """A call that raised before its engine ran: the phases up to the one that raised."""
    at = _failed_at(f.message)
    order = (["torch.autograd.grad"] if f.kind == "grad" else ["torch.autograd.backward"]
             if f.direct else ["Tensor.backward", "torch.autograd.backward"])
    order += ["_make_grads", "_engine_run_backward"]
    if at == "torch.autograd.grad":
        at = order[0] if f.kind == "grad" else "torch.autograd.backward"
    phases: list[Phase] = []
    for name in order[:order.index(at) + 1]:
        error = name == at
        phases.append(_phase(None, f.kind, name, 0, f"{f.type}: {f.message}" if error
                             else "passed", f.line, "error" if error else "ok"))
    return phases


class CallPathBuilder:
    """Receives the run's events and keeps every call's phases (`phases`): a pass's
    opening phases come with its first step, its closing ones when it ends."""

    def __init__(self, kept: Callable[[], bool]) -> None:
        self.kept = kept                      # whether the pass that starts is kept in full
        self.started_kept = False
        self.phases: list[Phase] = []
        self.passes = 0
        self.started: PassStarted | None = None
        self.steps = 0
        self.hooked: list[int] = []

    def emit(self, event: RunEvent) -> list[Phase]:
        """Take one event; the phases it completes, for the stream."""
        out: list[Phase] = []
        if isinstance(event, NodePopped) and self.started is not None and event.ran:
            if self.steps == 0 and self.started_kept:
                out = opening(self.passes, self.started)
            self.steps += 1
            if event.hooks:
                self.hooked.append(self.steps)
        elif isinstance(event, (PassStarted, ProgramFinished)):
            out = self.close()
            if isinstance(event, PassStarted):
                self.started = event
                self.started_kept = self.kept()
        elif isinstance(event, CallFailed):
            out = self.close() + failed(event)
        self.phases += out
        return out

    def close(self) -> list[Phase]:
        started, steps = self.started, self.steps
        self.started, self.steps, hooked, self.hooked = None, 0, self.hooked, []
        if started is None or steps == 0:
            return []
        self.passes += 1
        if not self.started_kept:
            return []
        return closing(self.passes - 1, started, steps, hooked)
