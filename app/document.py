"""The trace document: the contract's fields (`passes`, `grads`, `error`) and the lab's
details (each pass's graph and layout, each pop's gradients, counts and queue), with how
values are written in it (float32 widened to JSON numbers, and as PyTorch prints them)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Any, Union

import numpy as np
from pydantic import BaseModel, Field

from engine import TORCH_VERSION
from engine.printing import THRESHOLD, format_scalar, format_suffix, format_values

JSONValue = Union[float, int, str, None, list[Any]]


def encode(values: Any) -> JSONValue:
    """float32 values widened to JSON numbers; nan and infinities as strings."""
    if values is None:
        return None
    if type(values) is np.float32:
        x = float(values)
        return x if math.isfinite(x) else _finite(x)  # type: ignore[no-any-return]
    out: JSONValue = _finite(np.asarray(values).tolist())
    return out


def encode_step(values: Any) -> JSONValue:
    """A gradient inside a step: in full up to PyTorch's print threshold (1000 elements);
    bigger ones only as printed (summarised) text, so that a trace stays proportional to
    its steps and not to steps x elements. Final `grads` are always in full."""
    if type(values) is np.float32:
        x = float(values)
        return x if math.isfinite(x) else _finite(x)  # type: ignore[no-any-return]
    if values is not None and np.size(values) > THRESHOLD:
        return None
    return encode(values)


def _finite(x: Any) -> Any:
    if isinstance(x, list):
        return [_finite(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def printed(values: Any) -> str | None:
    """The values as PyTorch prints them: `tensor(28.)`."""
    if type(values) is np.float32:
        return f"tensor({format_scalar(float(values))})"
    if values is None:
        return None
    return f"tensor({format_values(values)}{format_suffix(values)})"


class ErrorInfo(BaseModel):
    type: str = Field(description="RuntimeError, TypeError, ... or SyntaxError/UnsupportedError")
    message: str = Field(description="PyTorch's message word for word, or the lab's")
    line: int | None = Field(None, description="1-based line of the statement or text")
    col: int | None = Field(None, description="1-based column")
    end_line: int | None = Field(None, description="where the offending text ends, if known")
    end_col: int | None = Field(None, description="1-based column just past its end")


# Note [Trusted construction]
# Graphs and steps are built from the engine's own events, whose types are fixed, so they
# are plain dataclasses, made without validation: a big trace has one Step per pop, and
# validating tens of thousands of pydantic models would cost more than running the engine.
# Pydantic still knows their schema, so /docs describes them and serialisation is native.

@dataclass(slots=True)
class SavedValue:
    name: Annotated[str, Field(description="as in `grad_fn._saved_<name>`")]
    value: Annotated[str, Field(description="printed value")]
    is_tensor: bool
    released: bool


@dataclass(slots=True)
class GraphNode:
    id: int
    name: str
    seq: int
    next: Annotated[list[int | None], Field(description="next_functions, in argument order")]
    variable: Annotated[str | None, Field(
        description="the variable this node's output was bound to")]
    leaf: Annotated[str | None, Field(description="AccumulateGrad: the leaf's name")]
    value: Annotated[str | None, Field(description="AccumulateGrad: the leaf's value, printed")]
    shape: list[int]
    saved: list[SavedValue]
    layer: Annotated[int, Field(description="layout: 0 is the output, leaves at the bottom")]
    x: Annotated[float, Field(description="layout: position within the layer")]


@dataclass(slots=True)
class Graph:
    root: int
    nodes: list[GraphNode]


@dataclass(slots=True)
class Sent:
    edge: Annotated[int, Field(description="index into the node's next_functions")]
    to: int
    value: JSONValue
    text: str | None


@dataclass(slots=True)
class Step:
    """One ready-queue pop. `name`, `seq` and `leaf` are the contract's fields."""

    name: str
    seq: int
    leaf: str | None
    node: int
    grad: Annotated[JSONValue, Field(description="the summed gradient the node received")]
    grad_text: str | None
    sent: list[Sent] = field(default_factory=list)
    dependencies: Annotated[dict[int, int], Field(description="counts that changed")] = field(
        default_factory=dict)
    ready: Annotated[list[int], Field(description="nodes this pop made ready")] = field(
        default_factory=list)
    queue: Annotated[list[int], Field(
        description="the ready queue afterwards, in pop order")] = field(default_factory=list)
    released: Annotated[list[str], Field(
        description="saved tensors freed after the node ran")] = field(default_factory=list)
    grad_before: JSONValue = None
    grad_after: JSONValue = None
    grad_before_text: str | None = None
    grad_after_text: str | None = None
    error: ErrorInfo | None = None


class Pass(BaseModel):
    output: str
    line: int
    retain_graph: bool
    create_graph: bool
    graph: Graph | None = None
    dependencies: dict[int, int] = {}
    steps: list[Step] = []


class Trace(BaseModel):
    """The contract's document (`passes`, `grads`, `error`) with the lab's details."""

    torch_version: str = TORCH_VERSION
    passes: list[Pass] = []
    grads: dict[str, JSONValue] = {}
    error: ErrorInfo | None = None


class Dependencies(BaseModel):
    dependencies: dict[int, int]
