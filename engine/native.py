"""The compiled build's C kernels, each written beside the Python that defines it.

setup.py `C_KERNELS` compiles them with the mypyc build; the pure build has none, and runs
the Python. Each module that has one says in a Note why, what it measured and which test
holds the two to the same bits."""

from __future__ import annotations

import importlib
from typing import Any


def kernels(name: str) -> Any:
    """The C module `name` (as "engine.optim_kernels") where this build has it, else None."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
