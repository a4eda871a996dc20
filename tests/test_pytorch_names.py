"""The lists of PyTorch's names (app/language/pytorch_names.json) are PyTorch 2.13's."""

from __future__ import annotations

import importlib
import json
import math
import subprocess
import sys

import pytest

from app.language import pytorch_names
from app.trace import run_source
from tests.matching import ROOT

MODULES = ("torch", "torch.nn", "torch.nn.functional", "torch.optim", "torch.autograd",
           "torch.nn.init", "torch.nn.utils")


def live_names() -> dict[str, list[str]]:
    """The lists from the PyTorch installed here (and Python's math)."""
    import torch

    out = {m: sorted(n for n in dir(importlib.import_module(m)) if not n.startswith("_"))
           for m in MODULES}
    out["math"] = sorted(n for n in dir(math) if not n.startswith("_"))
    out["Tensor"] = sorted(n for n in dir(torch.Tensor) if not n.startswith("__"))
    out["Module"] = sorted(n for n in dir(torch.nn.Module) if not n.startswith("_"))
    out["Optimizer"] = sorted(n for n in dir(torch.optim.Optimizer) if not n.startswith("_"))
    return out


@pytest.mark.torch
def test_the_lists_are_live_pytorchs() -> None:
    """In a fresh process: `dir(torch)` grows as other code imports torch's submodules."""
    pytest.importorskip("torch", reason="the lists are compared with live PyTorch")
    code = "import json; from tests.test_pytorch_names import live_names; " \
           "print(json.dumps(live_names()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, timeout=120).stdout
    live = json.loads(out)
    stored = pytorch_names.names()
    assert {m: frozenset(v) for m, v in live.items()} == stored, (
        "rewrite them: python -m tests.test_pytorch_names")


@pytest.mark.parametrize(("source", "kind", "type_"), [
    ("import torch\ntorch.save\n", "rejected", "UnsupportedError"),
    ("import torch\nx = torch.ones(2).cuda()\n", "rejected", "UnsupportedError"),
    ("import torch\nm = torch.nn.Linear(2, 2)\nm.get_submodule('x')\n", "rejected",
     "UnsupportedError"),
    ("import torch\nm = torch.nn.Linear(2, 2)\nm.nothing\n", "forward", "AttributeError"),
    ("import torch\nw = torch.ones(2, requires_grad=True)\n"
     "torch.optim.SGD([w], lr=0.1).register_step_pre_hook\n", "rejected", "UnsupportedError"),
    ("import torch\ntorch.nn.utils.parameters_to_vector\n", "rejected", "UnsupportedError"),
    ("import torch\ntorch.tensr\n", "forward", "AttributeError"),
    ("import torch\nx = torch.ones(2).foo\n", "forward", "AttributeError"),
])
def test_pytorchs_names_get_advice_others_pytorchs_error(source: str, kind: str,
                                                          type_: str) -> None:
    error = run_source(source).error
    assert error is not None and (error.kind, error.type) == (kind, type_)
    if type_ == "UnsupportedError":
        assert "part of PyTorch but not of the lab" in error.message


if __name__ == "__main__":
    pytorch_names.NAMES_FILE.write_text(json.dumps(live_names(), indent=0) + "\n",
                                        encoding="utf-8")
