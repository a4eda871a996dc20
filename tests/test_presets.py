"""Every preset runs and teaches what it says, with values from PyTorch.

A preset whose program is in the recorded corpus is checked against that recording; the
worked example also against the values the issue states (w.grad 28, b.grad 14); the
others against live PyTorch when torch is installed.
"""

from __future__ import annotations

from typing import Any

import pytest

from app.presets import PRESETS, Preset, preset
from app.trace import run_source
from tests.matching import differences, load_cases

RECORDED = {c["source"].strip(): c for c in load_cases()}
FAILS_ON_PURPOSE = {"second-backward-error": "RuntimeError", "non-scalar-error": "RuntimeError"}


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
