"""Every preset runs and teaches what it says, with values from PyTorch.

A preset whose program is in the recorded corpus is checked against that recording; the
worked example also against the values the issue states (w.grad 28, b.grad 14); the
others against live PyTorch when torch is installed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.presets import PRESETS, Preset, preset
from app.trace import run_source
from tests.matching import ATOL, RTOL, differences, load_cases

RECORDED = {c["source"].strip(): c for c in load_cases()}
FAILS_ON_PURPOSE = {"second-backward-error": "RuntimeError", "non-scalar-error": "RuntimeError",
                    "in-place-error": "RuntimeError"}


def lab(p: Preset) -> dict[str, Any]:
    return run_source(p.source).model_dump(mode="json")


def test_presets_are_well_formed() -> None:
    assert len(PRESETS) >= 5
    assert len({p.id for p in PRESETS}) == len(PRESETS)
    for p in PRESETS:
        assert p.title.strip() and p.goal.strip() and p.source.endswith("\n")
        assert preset(p.id) is p
    assert preset("no-such-preset") is None


@pytest.mark.parametrize("p", PRESETS, ids=[p.id for p in PRESETS])
def test_every_preset_runs(p: Preset) -> None:
    document = lab(p)
    expected_error = FAILS_ON_PURPOSE.get(p.id)
    if expected_error is None:
        assert document["error"] is None, document["error"]
        assert document["passes"] and all(pass_["steps"] for pass_ in document["passes"])
    else:
        assert document["error"]["type"] == expected_error


def test_worked_example_values_from_the_issue() -> None:
    document = lab(PRESETS[0])
    assert PRESETS[0].id == "worked-example"
    assert document["grads"] == {"w": 28.0, "b": 14.0}


def test_straight_through_values_from_the_course() -> None:
    """The course's clamp example (seeds 003): the numbers its text states."""
    assert lab(preset_of("straight-through"))["grads"] == {"w": 20.0, "b": 10.0}


def preset_of(preset_id: str) -> Preset:
    found = preset(preset_id)
    assert found is not None, preset_id
    return found


RECORDED_PRESETS = [p for p in PRESETS if p.source.strip() in RECORDED]
LIVE_PRESETS = [p for p in PRESETS if p.source.strip() not in RECORDED]


def test_the_recorded_presets_are_found() -> None:
    assert {p.id for p in RECORDED_PRESETS} >= {"worked-example", "neuron"}


@pytest.mark.parametrize("p", RECORDED_PRESETS, ids=[p.id for p in RECORDED_PRESETS])
def test_recorded_presets_match_pytorch(p: Preset) -> None:
    case = RECORDED[p.source.strip()]
    diffs = differences(lab(p), case["expected"])
    assert not diffs, "\n".join([case["id"], *diffs])


@pytest.mark.torch
@pytest.mark.parametrize("p", LIVE_PRESETS, ids=[p.id for p in LIVE_PRESETS])
def test_other_presets_match_live_pytorch(p: Preset) -> None:
    pytest.importorskip("torch", reason="these presets are compared with live PyTorch")
    from tests.torch_recorder import record

    diffs = differences(lab(p), record(p.source))
    assert not diffs, "\n".join([p.id, *diffs])


# -- every gradient informative ------------------------------------------------------------

# Presets whose lesson is a zero gradient (a dead relu, a saturated tanh), with the reason.
ZERO_ON_PURPOSE: dict[str, str] = {
    "two-layer-mlp": "nll_loss's gradient is 0 but at each row's target class",
    "softmax-by-hand": "NLL by hand: multiplying by the one-hot target zeroes the other "
                       "classes' gradients, and the by-hand chain carries those zeros",
    "custom-module": "nll_loss's gradient is 0 but at each row's target class",
}


def numbers(value: Any) -> list[float]:
    if isinstance(value, list):
        return [x for item in value for x in numbers(item)]
    return [] if value is None else [float(value)]


@pytest.mark.parametrize("p", PRESETS, ids=[p.id for p in PRESETS])
def test_no_preset_sends_a_zero_gradient(p: Preset) -> None:
    """A zero on an edge teaches nothing about the nodes behind it (a saturated tanh makes
    a whole branch 0): the engine's own gradients, checked on every edge of every pass."""
    document = lab(p)
    sent = [(step["name"], s["edge"], s["value"])
            for pass_ in document["passes"] for step in pass_["steps"] for s in step["sent"]]
    assert sent or document["error"] is not None, "it sends gradients"
    zeros = [(name, edge) for name, edge, value in sent
             if any(x == 0.0 for x in numbers(value))]
    if p.id in ZERO_ON_PURPOSE:
        assert zeros, f"{p.id} is meant to show a zero gradient"
        # nll_loss's zeros are some of a row's entries: every edge still carries a nonzero
        # number, so no node behind it is left with nothing to teach.
        dead = [(name, edge) for name, edge, value in sent if not any(numbers(value))]
        assert not dead, f"{p.id}: an edge whose whole gradient is 0: {dead}"
    else:
        assert not zeros, f"{p.id}: a zero gradient on {zeros}"


# -- "Copy as PyTorch" runs in PyTorch --------------------------------------------------------

WORKED_EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "worked_example.py"
PROGRAMS = {**{p.id: p.source for p in PRESETS}, "examples/worked_example.py":
            WORKED_EXAMPLE.read_text()}


@pytest.mark.torch
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_as_pytorch_prints_the_labs_grads(name: str) -> None:
    """The script the page copies, run by Python with live torch: it prints every leaf's
    .grad, and those equal the lab's (float32, so to an ulp); a program PyTorch raises on
    raises the same error there."""
    pytest.importorskip("torch", reason="the copied script is run in PyTorch")
    document = run_source(PROGRAMS[name]).model_dump(mode="json")
    script = document["program"]["as_pytorch"]
    assert "import torch" in script
    grads = document["grads"]
    values = ", ".join(f"{n!r}: None if {_leaf(n)}.grad is None else {_leaf(n)}.grad.tolist()"
                       for n in grads)
    check = f"\nimport json as _json\nprint(_json.dumps({{{values}}}))\n"
    ran = subprocess.run([sys.executable, "-c", script + check], capture_output=True,
                         text=True, timeout=120, check=False)
    if document["error"] is not None:
        error = document["error"]
        assert ran.returncode != 0
        assert ran.stderr.strip().splitlines()[-1] == f"{error['type']}: {error['message']}"
        return
    assert ran.returncode == 0, ran.stderr
    *printed, last = ran.stdout.strip().splitlines()
    # A module's parameters (`model.0.weight`) are no variables: the script prints no line
    # for them. A matrix's .grad takes several lines.
    shown = [f"{n}.grad" for n in grads if n.isidentifier()]
    assert [h for h in (line.split(" =", 1)[0] for line in printed) if h in shown] == shown
    torch_grads = json.loads(last)
    for leaf, value in grads.items():
        if value is None:
            assert torch_grads[leaf] is None, leaf
        else:
            # A matrix product may sum in another order than PyTorch's BLAS: the contract's
            # tolerance; a number to an ulp.
            rel, abs_ = (RTOL, ATOL) if isinstance(value, list) else (1e-6, None)
            assert numbers(torch_grads[leaf]) == pytest.approx(numbers(value), rel=rel,
                                                                abs=abs_), leaf


def _leaf(name: str) -> str:
    """A leaf's name as an expression: `model.0.weight` is the parameter `0.weight` of
    the module bound to `model` (CONTRACT §2)."""
    if name.isidentifier():
        return name
    var, rest = name.split(".", 1)
    return f"dict({var}.named_parameters())[{rest!r}]"
