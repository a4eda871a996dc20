"""The compiled build really is compiled: `make test-compiled` runs the whole suite with
`app` and `engine` from build/compiled (AUTOGRAD_LAB_EXPECT_COMPILED=1), and these tests
check that the hot modules there are mypyc's extension modules, not their .py siblings
(a wrong sys.path order, or the editable install winning, would silently test pure
Python). In a normal run they are skipped."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.environ.get("AUTOGRAD_LAB_EXPECT_COMPILED") != "1",
    reason="AUTOGRAD_LAB_EXPECT_COMPILED is not 1: this run tests the sources as they are "
           "(`make test-compiled` tests the compiled build)")

HOT = ["engine.graph_task", "engine.tensor", "engine.node", "engine.ready_queue",
       "engine.input_buffer", "engine.backward", "engine.printing",
       "engine.functions.arithmetic", "engine.topological", "app.language.parse",
       "app.language.operators", "app.language.program", "app.language.interpreter",
       "app.trace.build", "app.trace.pieces", "app.trace.kept", "app.trace.lenses",
       "app.trace.layout", "app.trace.values"]
PURE = ["app.trace.document", "app.limits", "app.web.api", "app.cli"]


def _file(name: str) -> str:
    module = importlib.import_module(name)
    assert module.__file__ is not None
    return module.__file__


@pytest.mark.parametrize("name", HOT)
def test_hot_module_is_compiled(name: str) -> None:
    assert _file(name).endswith(".so"), f"{name} is not compiled: {_file(name)}"


@pytest.mark.parametrize("name", PURE)
def test_other_modules_stay_python(name: str) -> None:
    assert _file(name).endswith(".py")


def test_packages_from_the_build_and_tests_from_the_sources() -> None:
    tests = Path(_file("tests")).parent
    app = Path(_file("app")).parent
    assert app.parent.name == "compiled" and app.parent.parent.name == "build"
    assert app.parent.parent.parent == tests.parent      # the same checkout's build/
    assert Path(_file("engine")).parent.parent == app.parent


def test_the_c_kernels_are_built_and_used() -> None:
    """softmax_kernel.py's and optim.py's C twins (Note [The kernels in C], Note [Adam in
    C]) are part of the build."""
    from engine import optim
    from engine.functions import softmax_kernel

    assert _file("engine.functions.sleef_kernels").endswith(".so")
    assert _file("engine.optim_kernels").endswith(".so")
    assert softmax_kernel.NATIVE is not None and optim.NATIVE is not None
