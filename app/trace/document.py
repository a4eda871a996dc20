"""The trace document: the contract's fields (`passes`, `grads`, `error`) and the lab's
details (each pass's graph and layout, each pop's gradients, counts and queue). How values
are written in it is `app.trace.values`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal, NotRequired

from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from app.trace.callpath import Phase
from app.trace.profile import ProfileEvent
from app.trace.values import JSONValue
from engine import TORCH_VERSION

ErrorKind = Literal["rejected", "forward", "backward", "limit", "internal"]
Scheduler = Literal["ready_queue", "topological"]


class ErrorInfo(BaseModel):
    """Why a program stopped. `kind` says where, so that no reader need match messages:
    `rejected` (the lab refused the text before running it), `forward` (PyTorch raised
    outside any backward call), `backward` (PyTorch raised in a backward() or
    autograd.grad() call, before or inside the engine), `limit` (one of the lab's
    limits), `internal` (a bug of the lab's)."""

    kind: ErrorKind = Field("forward", description="where the program stopped")
    type: str = Field(description="RuntimeError, TypeError, ... or SyntaxError/UnsupportedError")
    message: str = Field(description="PyTorch's message word for word, or the lab's")
    line: int | None = Field(None, description="1-based line of the statement or text")
    col: int | None = Field(None, description="1-based column")
    end_line: int | None = Field(None, description="where the offending text ends, if known")
    end_col: int | None = Field(None, description="1-based column just past its end")


# Note [Trusted construction]
# Graphs and steps are built from the engine's own events, whose types are fixed, so they
# are made without validation: a big trace has one Step per pop, and validating tens of
# thousands of pydantic models would cost more than running the engine. The many small
# pieces (a step, a node, a gradient sent, a saved value) are typed dicts, the cheapest
# records Python makes; pydantic still knows their schema, so /docs describes them and
# serialisation is native.

class SavedValue(TypedDict):
    name: Annotated[str, Field(description="as in `grad_fn._saved_<name>`")]
    value: Annotated[str, Field(description="printed value")]
    is_tensor: bool
    released: bool
    saved_version: Annotated[int, Field(description="the tensor's version when it was saved")]
    version: Annotated[int, Field(description="its version when the pass began: a "
                                              "different one means an in-place change, "
                                              "and PyTorch's error when the node runs")]


class GraphNode(TypedDict):
    id: int
    name: str
    seq: int
    next: Annotated[list[int | None], Field(description="next_functions, in argument order")]
    variable: Annotated[str | None, Field(
        description="the variable this node's output was bound to")]
    leaf: Annotated[str | None, Field(description="AccumulateGrad: the leaf's name")]
    value: Annotated[str | None, Field(description="AccumulateGrad: the leaf's value, printed")]
    data: Annotated[JSONValue, Field(description="AccumulateGrad: the leaf's values, as "
                                                 "`grads` writes them (null for others)")]
    shape: list[int]
    saved: list[SavedValue]
    line: Annotated[int, Field(description="the program's line that recorded the node")]
    module: Annotated[str | None, Field(description="the module (`model.0`) whose forward "
                                                    "recorded it")]
    code: Annotated[list[int] | None, Field(description="a custom Function's backward(): "
                                                        "its first and last line")]
    layer: Annotated[int, Field(description="layout: 0 is the output, leaves at the bottom")]
    x: Annotated[float, Field(description="layout: position within the layer")]
    band: Annotated[str | None, Field(description="layout: the innermost band (`Band.id`) "
                                                  "it is drawn in")]


class Band(TypedDict):
    """Layout: a network's layer drawn as a band of rows, a module (`model.0`) or, outside
    any module, a product with its parameters (`W1, b1`); see app/trace/bands.py."""

    id: str
    kind: Literal["module", "layer"]
    parent: Annotated[str | None, Field(description="the band it is drawn in")]
    depth: int
    top: Annotated[int, Field(description="its first layer")]
    bottom: Annotated[int, Field(description="its last layer")]
    left: Annotated[float, Field(description="x of its leftmost node")]
    right: Annotated[float, Field(description="x of its rightmost node")]
    params: Annotated[list[str], Field(description="the leaves (parameters) in it")]


@dataclass(slots=True)
class Graph:
    root: int
    nodes: list[GraphNode]
    bands: list[Band] = field(default_factory=list)


class Sent(TypedDict):
    edge: Annotated[int, Field(description="index into the node's next_functions")]
    to: int
    value: JSONValue
    text: str | None


class Step(TypedDict):
    """One ready-queue pop. `name`, `seq` and `leaf` are the contract's fields, and a
    summarized pass's steps have only those; a kept pass's steps have the others too. The
    `grad_before`/`grad_after` fields (and their texts) are only on AccumulateGrad's steps,
    the ones that write `.grad`, and `error` only on a step that raised: on the others they
    would be nulls, a seventh of a big trace's bytes."""

    name: str
    seq: int
    leaf: str | None
    node: NotRequired[int]
    grad: NotRequired[Annotated[JSONValue, Field(description="the summed gradient the node "
                                                             "received")]]
    grad_text: NotRequired[str | None]
    sent: NotRequired[list[Sent]]
    dependencies: NotRequired[Annotated[dict[str, int], Field(description="counts that "
                                                                      "changed, by node id")]]
    ready: NotRequired[Annotated[list[int], Field(description="nodes this pop made ready")]]
    queue: NotRequired[Annotated[list[int], Field(description="the ready queue afterwards, in "
                                                              "pop order")]]
    released: NotRequired[Annotated[list[str], Field(description="saved tensors freed after "
                                                                 "the node ran")]]
    grad_before: NotRequired[JSONValue]
    grad_after: NotRequired[JSONValue]
    grad_before_text: NotRequired[str | None]
    grad_after_text: NotRequired[str | None]
    error: NotRequired[ErrorInfo | None]
    hooks: NotRequired[list[HookInfo]]


class HookInfo(TypedDict):
    """One hook that ran within a pop, in the order it ran (only on steps that had any)."""

    kind: Annotated[str, Field(description="tensor, retain_grad, pre, post, post_accumulate")]
    label: Annotated[str, Field(description="the variable or node it was registered on")]
    before: Annotated[str | None, Field(description="what it received, printed")]
    after: Annotated[str | None, Field(description="what it returned, printed, or null")]
    replaced: Annotated[bool, Field(description="whether its result replaced the gradient")]


class Returned(TypedDict):
    """One gradient `torch.autograd.grad` returned."""

    input: Annotated[str | None, Field(description="the input's variable name, if it has one")]
    value: Annotated[JSONValue, Field(description="as `grads` writes values; null for None")]
    text: Annotated[str | None, Field(description="printed as PyTorch prints it")]


class Phases(BaseModel):
    """The stream's piece for a pass's phases (its opening ones, then its closing ones)."""

    phases: list[Phase]


class Pass(BaseModel):
    output: str
    kind: Literal["backward", "grad"] = "backward"
    index: int = Field(0, description="the pass's place among the program's passes")
    line: int
    iteration: list[int] = Field([], description="the enclosing loops' iteration numbers "
                                                 "(1-based), outermost first")
    retain_graph: bool
    create_graph: bool
    summarized: bool = Field(False, description="outside the window of passes the trace "
                             "keeps step by step (from `passes_from`, within max_full_passes and "
                             "max_full_values): the steps keep only name, seq and leaf, and no "
                             "graph")
    graph: Graph | None = None
    dependencies: dict[str, int] = {}           # by node id, as JSON writes object keys
    steps: list[Step] = Field([], description="every pop, in order (a summarized pass's "
                              "with the contract's fields only: name, seq and leaf)")
    steps_kept: int = Field(0, description="how many of the steps, from the first, are kept "
                            "in full (max_full_steps of a kept pass, 0 for a summarized one); "
                            "the others keep only name, seq and leaf")
    returned: list[Returned] | None = Field(None, description="a grad pass: what "
                                            "autograd.grad returned, one per input")


class ConsoleLine(BaseModel):
    """What the program wrote, in order: a print's text or a warning PyTorch shows."""

    kind: Literal["print", "warning"]
    text: str
    line: int = Field(description="the line of the print (or of the statement that warned)")
    passes: int = Field(0, description="how many passes had begun when it was written")
    step: int | None = Field(None, description="written during a pass (by a hook): how "
                             "many of that pass's steps had been shown")


class ParamStep(TypedDict):
    """One parameter's update in one optimizer step."""

    name: Annotated[str | None, Field(description="the leaf's name (`model.0.weight`)")]
    before: JSONValue
    grad: Annotated[JSONValue, Field(description="the `.grad` the step consumed")]
    after: JSONValue
    state: Annotated[dict[str, JSONValue], Field(
        description="after the step: SGD's momentum_buffer; Adam's step, exp_avg, "
                    "exp_avg_sq (max_exp_avg_sq), bias_correction1 and bias_correction2")]


class OptimizerStep(BaseModel):
    """`optimizer.step()`: the update rule's inputs and results, per parameter."""

    index: int = Field(description="the step's place among the program's optimizer steps")
    kind: Literal["SGD", "Adam"]
    line: int
    iteration: list[int] = Field([], description="the enclosing loops' iteration numbers")
    after_pass: int | None = Field(description="the pass whose gradients it consumed: the "
                                   "last one before it, if any")
    hyper: dict[str, JSONValue] = Field(description="lr, momentum, betas, ... of its group")
    params: list[ParamStep] = Field(description="every parameter it updated (one with a "
                                    ".grad); empty when the pass before it is summarized")
    summarized: bool = False


class Outside(BaseModel):
    """A variable bound to a tensor that is not in the graph, and why."""

    name: str
    reason: Literal["no_grad", "detach", "data", "inference_mode", "requires_grad=False"] = \
        Field(description="no_grad: made under no_grad (or set_grad_enabled(False)) from "
                          "tensors that require grad; detach / data: `.detach()` or `.data` "
                          "of one; inference_mode: an inference tensor; requires_grad=False: "
                          "a constant")
    line: int = Field(description="the statement that bound it")


class Shorthand(BaseModel):
    """Where the lab's leaf shorthand acts: `w = 3.0` on this line means `expanded`."""

    name: str
    line: int
    col: int
    end_line: int
    end_col: int = Field(description="1-based column just past the statement's end")
    expanded: str = Field(description="`torch.tensor(3.0, requires_grad=True)`")


class ProgramInfo(BaseModel):
    """What kind of program ran (CONTRACT §1) and the program as plain PyTorch."""

    kind: Literal["plain", "shorthand"] = Field(
        description="plain: imports torch and runs as written; shorthand: the lab's "
                    "conveniences apply")
    shorthand: list[Shorthand] = []
    implicit_output: str | None = Field(
        None, description="the variable the lab called backward() on, when the program "
                          "calls none itself")
    as_pytorch: str = Field(description="a runnable script: imports, the shorthand "
                                        "expanded, the implicit backward() written out, "
                                        "and a print of every leaf's .grad")


class Trace(BaseModel):
    """The contract's document (`passes`, `grads`, `error`) with the lab's details."""

    torch_version: str = TORCH_VERSION
    passes: list[Pass] = []
    grads: dict[str, JSONValue] = {}
    error: ErrorInfo | None = None
    printed: list[str] = Field([], description="what each print() wrote, without the final "
                                               "newline")
    console: list[ConsoleLine] = []
    optimizer_steps: list[OptimizerStep] = []
    outside: list[Outside] = Field([], description="variables bound to tensors outside the "
                                   "graph, once per name and reason, in program order")
    seed: int | None = Field(None, description="the seed a program without manual_seed drew "
                                               "its random numbers from (send it back to "
                                               "replay them)")
    program: ProgramInfo | None = Field(None, description="null for a rejected program")
    profile: list[ProfileEvent] = Field([], description="the profiler's events, forward "
                                        "then backward, per pass (app/trace/profile.py)")
    callpath: list[Phase] = Field([], description="each call's way from backward() or "
                                  "autograd.grad() to .grad (app/trace/callpath.py)")
    scheduler: Scheduler = Field("ready_queue", description="the engine that ordered each "
                                 "pass's steps: PyTorch's ready queue, or the topological "
                                 "order of seed 000 (engine/topological.py)")


class Results(BaseModel):
    """The stream's piece for what a grad pass returned (after its steps)."""

    returned: list[Returned]


class Dependencies(BaseModel):
    dependencies: dict[str, int]
