"""The names PyTorch 2.13 has, for the advice given when a program uses one the lab lacks.

`torch.save` exists in PyTorch, so a program that uses it is refused with advice (an
UnsupportedError); `torch.tensr` does not, so it gets PyTorch's own AttributeError.
The lists live in pytorch_names.json, written from real PyTorch by
`python -m tests.test_pytorch_names`, which also checks them against live torch.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

NAMES_FILE = Path(__file__).with_name("pytorch_names.json")


@cache
def names() -> dict[str, frozenset[str]]:
    """Public names by module (`Tensor` for a tensor's attributes)."""
    data = json.loads(NAMES_FILE.read_text(encoding="utf-8"))
    return {module: frozenset(members) for module, members in data.items()}


def exists(module: str, name: str) -> bool:
    return name in names().get(module, frozenset())
