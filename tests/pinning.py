"""Pinning error messages with programs: a table of cases, each a plain PyTorch program
that the lab must end with PyTorch's error, and the runner that asks live PyTorch.

Used by test_errors.py (engine/errors.py) and test_errors_ops.py (engine/op_errors.py).
"""

from __future__ import annotations

import inspect
import threading
import warnings
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

from app.trace import run_source
from engine.errors import TorchError

Outcome = tuple[str, str] | None        # (type, message), or None: the program runs through

PRELUDE = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


@dataclass(frozen=True)
class Case:
    """A plain PyTorch program that ends with the error `name` pins."""

    name: str
    source: str
    outcome: Outcome
    xfail: str | None = None    # how the lab's outcome differs from PyTorch's


def case(name: str, body: str, expected: TorchError | str | None, type_: str | None = None,
         xfail: str | None = None) -> Case:
    """`body` after PRELUDE; `expected` a builder's TorchError (its type unless `type_`), a
    text of type `type_`, or None where PyTorch raises nothing."""
    if isinstance(expected, TorchError):
        outcome: Outcome = (type_ or expected.type_name, expected.message)
    elif expected is None:
        outcome = None
    else:
        assert type_ is not None, name
        outcome = (type_, expected)
    return Case(name, PRELUDE + body.strip() + "\n", outcome, xfail)


def function(name: str, params: str, forward: str, backward: str) -> str:
    """A custom autograd.Function `name` as a program defines it (`;` between statements)."""
    return (f"class {name}(torch.autograd.Function):\n"
            f"    @staticmethod\n    def forward(ctx, {params}):\n        {forward}\n"
            f"    @staticmethod\n    def backward(ctx, g):\n        {backward}\n")


def lab_outcome(source: str) -> Outcome:
    error = run_source(source).error
    return None if error is None else (error.type, error.message)


def torch_outcome(source: str) -> Outcome:
    """What live PyTorch raises for the program: it runs as plain Python with torch, in a
    fresh thread (a fresh sequence counter, reference §3). This is the reference, not the
    lab; the lab never executes program text (test_bad_input.py)."""
    box: list[Outcome] = []

    def work() -> None:
        try:
            exec(compile(source, "<program>", "exec"), {"__name__": "__program__"})
        except Exception as e:  # the program's own error is what is compared
            box.append((type(e).__name__, str(e)))
        else:
            box.append(None)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thread = threading.Thread(target=work, name="torch-errors")
        thread.start()
        thread.join()
    return box[0]


def params(cases: list[Case], xfail: bool) -> list[Any]:
    """One pytest param per case, ids `NAME-k`; with `xfail`, the cases that say so are
    strict xfails."""
    seen: dict[str, int] = {}
    out = []
    for c in cases:
        seen[c.name] = seen.get(c.name, 0) + 1
        marks = [pytest.mark.xfail(strict=True, reason=c.xfail)] if xfail and c.xfail else []
        out.append(pytest.param(c, id=f"{c.name}-{seen[c.name]}", marks=marks))
    return out


def public_names(module: ModuleType) -> set[str]:
    """The names the module defines for others (not imported, not private)."""
    return {name for name, value in vars(module).items()
            if not name.startswith("_") and not inspect.ismodule(value)
            and getattr(value, "__module__", module.__name__) == module.__name__}


def check_table(module: ModuleType, table: dict[str, str], referenced: set[str],
                cases: list[Case]) -> None:
    """The table names exactly the module's public names, each pinned as it says; a
    builder pinned by programs has at least two of them."""
    public = public_names(module)
    assert not public - set(table), f"pin these new names: {sorted(public - set(table))}"
    assert not set(table) - public, f"these are gone: {sorted(set(table) - public)}"
    count: dict[str, int] = {}
    for c in cases:
        assert table.get(c.name) in ("program", "reference"), c.name
        count[c.name] = count.get(c.name, 0) + 1
    for name, how in table.items():
        assert how in ("helper", "reference", "program"), name
        if how == "reference":
            assert name in referenced, f"{name}: no reference text checks it"
        if how == "program":
            least = 2 if inspect.isfunction(getattr(module, name)) else 1
            assert count.get(name, 0) >= least, f"{name}: {count.get(name, 0)} programs"
