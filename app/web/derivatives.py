"""`POST /api/derivative`: one node's local derivative, on demand.

A plot's samples are a few kilobytes per node and element, and a student looks at a few
nodes, so they are not added to every trace: the page asks when a node is selected. The
answer is a pure function of the request (the program runs again with the same seed, so
the same node ids), kept in a small cache; the run goes through the trace queue's threads
and its limit, never on the event loop."""

from __future__ import annotations

import threading
from collections import OrderedDict

from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import BaseModel, Field, field_validator

from app.limits import Limits
from app.ops.ratelimit import limited
from app.trace.derivatives import (
    BINARY,
    JACOBIAN,
    MATRIX,
    UNARY,
    Derivative,
    NoDerivative,
    derivative,
)
from app.web.api import MAX_SEED, Busy, TraceQueue, json_integer
from app.web.settings import Settings

router = APIRouter(prefix="/api", tags=["api"])


class DerivativeRequest(BaseModel):
    source: str = Field(description="the program, as sent to /api/trace")
    seed: int | None = Field(None, ge=0, le=MAX_SEED,
                             description="the trace's `seed`, for a program that drew one")
    pass_index: int = Field(0, alias="pass", ge=0, description="the pass's `index`")
    node: int = Field(ge=0, description="the node's `id` in that pass's graph")
    element: int = Field(0, ge=0, description="a flat index into the gradient (row-major)")

    _seed_is_an_integer = field_validator("seed", mode="before")(json_integer)


class DerivativeCache:
    """Recent answers by request and limits (ENTRIES at most)."""

    ENTRIES = 256

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: OrderedDict[tuple[object, ...], Derivative] = OrderedDict()

    def get(self, key: tuple[object, ...]) -> Derivative | None:
        with self._lock:
            answer = self._answers.get(key)
            if answer is not None:
                self._answers.move_to_end(key)
            return answer

    def put(self, key: tuple[object, ...], answer: Derivative) -> None:
        with self._lock:
            self._answers[key] = answer
            if len(self._answers) > self.ENTRIES:
                self._answers.popitem(last=False)


class DerivativeNodes(BaseModel):
    """The node classes the view explains, by kind."""

    unary: list[str]
    elementwise: list[str]
    matrix: list[str]
    jacobian: list[str] = Field(description="sums of products: addmm, sum, mean, softmax, ...")


@router.get("/derivative/nodes", response_model=DerivativeNodes)
async def derivative_nodes() -> DerivativeNodes:
    """Which nodes `POST /api/derivative` explains: the page lists only these."""
    return DerivativeNodes(unary=sorted(UNARY), elementwise=sorted(BINARY), matrix=sorted(MATRIX),
                           jacobian=sorted(JACOBIAN))


def _compute(body: DerivativeRequest, limits: Limits) -> Derivative | str:
    try:
        return derivative(body.source, body.pass_index, body.node, body.element, body.seed,
                          limits)
    except NoDerivative as e:
        return str(e)


@router.post("/derivative", response_model=Derivative,
             dependencies=[Depends(limited("trace"))],
             responses={404: {"description": "no such node in that pass, or a node the "
                              "view does not explain (AccumulateGrad, views, ...)"},
                        429: {"description": "too many traces from this client"},
                        503: {"description": "the lab is busy tracing: retry after a moment"}})
async def local_derivative(body: DerivativeRequest, request: Request) -> Derivative:
    """The node's function around its input (samples and tangent) and the numbers of its
    backward formula at one element, all from the engine."""
    settings: Settings = request.app.state.settings
    limits = settings.limits()
    key = (body.source, body.seed, body.pass_index, body.node, body.element, limits)
    state = request.app.state
    if not hasattr(state, "derivative_cache"):
        state.derivative_cache = DerivativeCache()
    cache: DerivativeCache = state.derivative_cache
    answer = cache.get(key)
    if answer is None:
        queue: TraceQueue = state.trace_queue
        try:
            with queue.admitted():
                result = await queue.run(_compute, body, limits)
        except Busy:
            raise HTTPException(503, "the lab is busy tracing other programs",
                                headers={"Retry-After": "1"}) from None
        if isinstance(result, str):
            raise HTTPException(404, result)
        cache.put(key, result)
        answer = result
    return answer
