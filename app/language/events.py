"""What a run reports, as the interpreter emits it: the engine's events (engine/events.py)
wrapped by these, one stream per program. app/trace/pieces.py turns them into the
document's pieces."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.events import Event


@dataclass(slots=True)
class PassStarted:
    """A backward() or autograd.grad() call reached the engine: a pass may begin (it is
    one when a node runs)."""

    index: int
    kind: str                         # "backward" or "grad"
    output: str
    line: int
    col: int
    retain_graph: bool
    create_graph: bool
    iteration: list[int]              # the enclosing loops' iteration numbers, outermost first
    seeds: int = 0                    # ones seeds `_make_grads` made (no gradient given)
    direct: bool = False              # torch.autograd.backward(...), not Tensor.backward()

    def __init__(self, index: int, kind: str, output: str, line: int, col: int,
                 retain_graph: bool, create_graph: bool, iteration: list[int],
                 seeds: int = 0, direct: bool = False) -> None:
        # (spelled out: one per pass, see engine/events.py's doc on written __init__s)
        self.index = index
        self.kind = kind
        self.output = output
        self.line = line
        self.col = col
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.iteration = iteration
        self.seeds = seeds
        self.direct = direct


@dataclass(slots=True)
class CallFailed:
    """A backward() or autograd.grad() call raised before the engine ran a pass (a
    non-scalar output without `gradient=`, an output without grad_fn ...)."""

    kind: str                         # "backward" or "grad"
    output: str
    line: int
    type: str
    message: str
    direct: bool = False


@dataclass(slots=True)
class Printed:
    text: str
    line: int
    during_pass: bool = False         # by a hook, while the engine runs a pass


@dataclass(slots=True)
class Warned:
    text: str
    line: int
    during_pass: bool = False


@dataclass(slots=True)
class GradReturned:
    """What an autograd.grad call returned, one gradient (or None) per input."""

    inputs: list[str | None]          # each input's variable name, where it has one
    values: list[Any]


@dataclass(slots=True)
class ParamUpdate:
    """One parameter in one `optimizer.step()`: its values before and after, the gradient
    the step consumed, and the optimizer's state for it afterwards."""

    name: str | None
    before: Any
    grad: Any
    after: Any
    state: dict[str, Any]             # momentum_buffer; step, exp_avg, exp_avg_sq, ...


@dataclass(slots=True)
class OptimizerStepped:
    """`optimizer.step()`: which optimizer, its hyperparameters, and each update."""

    kind: str                         # "SGD" or "Adam"
    line: int
    iteration: list[int]
    hyper: dict[str, Any]             # the first group's lr, momentum, betas, ...
    params: list[ParamUpdate]


@dataclass(slots=True)
class Untracked:
    """A variable was bound to a tensor outside the graph, and why: "no_grad", "detach",
    "data", "inference_mode" or "requires_grad=False"."""

    name: str
    reason: str
    line: int


@dataclass(slots=True)
class ProgramError:
    """Why the program stopped: PyTorch's or Python's exception, or a limit of the lab."""

    kind: str               # "rejected", "forward", "backward" or "limit" (ErrorInfo.kind)
    type: str
    message: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None


@dataclass(slots=True)
class ProgramFinished:
    """The end: every named leaf's final `.grad` (None if never written)."""

    grads: dict[str, Any]
    error: ProgramError | None
    printed: list[str] = field(default_factory=list)


RunEvent = (Event | PassStarted | CallFailed | Printed | Warned | Untracked | GradReturned
            | OptimizerStepped | ProgramFinished)
Emit = Callable[[RunEvent], None]
