"""`trace_json` (orjson) writes the same document as pydantic's `model_dump_json`.

The CLI and the API write traces with orjson for speed; pydantic's models stay the
schema. Both writers must agree on every field of every trace: presets, the conformance
programs (errors included), generated programs, and every streamed piece.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from app.presets import PRESETS
from app.trace import document_json, run_source, trace_events, trace_json
from tests.matching import load_cases
from tests.program_strategy import programs

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("HYPOTHESIS_PROFILE") == "ci" or os.environ.get("CI"):
    settings.load_profile("ci")

SEED = 20240613
SOURCES = {
    **{f"preset-{p.id}": p.source for p in PRESETS},
    **{f"case-{i}": case["source"] for i, case in enumerate(load_cases())},
    "syntax-error": "w = 3.0\ny = w *\n",
    "nan-and-inf": "a = 0.0\nb = a.log()\nc = b * 0.0\nc.backward()\n",
    "big-tensor": ("a = torch.tensor([" + ", ".join(["0.5"] * 1200) + "], requires_grad=True)\n"
                   "y = (a * a).sum()\n"),
}


def both(source: str) -> tuple[Any, Any]:
    """Both writers, the random numbers drawn from one seed (a program that calls
    torch.manual_seed still records the seed its generator first drew)."""
    fast, failed = trace_json(source, seed=SEED)
    reference = run_source(source, seed=SEED)
    assert failed == (reference.error is not None)
    return json.loads(fast), json.loads(reference.model_dump_json())


@pytest.mark.parametrize("source", SOURCES.values(), ids=SOURCES.keys())
def test_orjson_writes_what_pydantic_writes(source: str) -> None:
    fast, reference = both(source)
    assert fast == reference


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_orjson_writes_what_pydantic_writes_for_generated_programs(source: str) -> None:
    fast, reference = both(source)
    assert fast == reference


@pytest.mark.parametrize("source", [p.source for p in PRESETS[:3]])
def test_streamed_pieces_are_pydantics_json(source: str) -> None:
    from pydantic import BaseModel, TypeAdapter

    from app.trace.document import Graph, Step

    for kind, piece in trace_events(source):
        if isinstance(piece, BaseModel):
            reference = piece.model_dump_json()
        else:
            adapter: TypeAdapter[Any] = TypeAdapter(Graph if kind == "graph" else Step)
            reference = adapter.dump_json(piece).decode()
        assert json.loads(document_json(piece)) == json.loads(reference), kind


def test_steps_leave_out_the_fields_a_pop_does_not_have() -> None:
    """Only an AccumulateGrad step writes .grad, and only the failing step has an error:
    other steps leave those fields out (a seventh of a big trace's bytes were nulls)."""
    source = "x = torch.tensor(2.0, requires_grad=True)\ny = x * x\ny.backward()\ny.backward()\n"
    text, failed = trace_json(source)
    document = json.loads(text)
    first, second = document["passes"]
    mul, accumulate = first["steps"]
    write = ("grad_before", "grad_after", "grad_before_text", "grad_after_text")
    assert mul["name"] == "MulBackward0" and mul["leaf"] is None
    assert not set(write) & mul.keys() and "error" not in mul
    assert accumulate["name"] == "AccumulateGrad" and "error" not in accumulate
    x_grad = document["grads"]["x"]             # the first pass's write; the second failed
    assert [accumulate[k] for k in write] == [None, x_grad, None, accumulate["grad_text"]]
    (raised,) = second["steps"]
    assert failed and raised["error"]["type"] == "RuntimeError"
    assert not set(write) & raised.keys()
