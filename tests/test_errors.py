"""PyTorch's error messages, pinned word for word: engine/errors.py here, engine/op_errors.py
in test_errors_ops.py (both through tests/pinning.py).

Every public name of the module is in PINNED, saying how it is pinned:
- "reference": its text is copied below from ../shared/reference/pytorch-autograd.md
  (recorded from PyTorch 2.13), not from the module;
- "program": short programs end with it (CASES): the lab's trace ends with that type and
  message (built for the program's values), and live PyTorch 2.13 raises the same for the
  same program;
- "helper": not a message.
A case's expected outcome is PyTorch's (the torch tests hold it to live PyTorch); where the
lab's differs, the case is a strict xfail saying how, so it turns green once fixed.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from app.trace import run_source
from engine import dtypes, errors
from engine.errors import TorchError
from tests.pinning import (
    PRELUDE,
    Case,
    case,
    check_table,
    function,
    lab_outcome,
    params,
    torch_outcome,
)

# -- the reference's texts, verbatim (§1, §5, §9) -------------------------------------------

REF_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")
REF_NON_SCALAR = "grad can be implicitly created only for scalar outputs"
REF_NO_GRAD_FN = "element 0 of tensors does not require grad and does not have a grad_fn"
REF_SHAPE = ("Mismatch in shape: grad_output[0] has a shape of torch.Size([3]) and output[0] "
             "has a shape of torch.Size([2]).")
REF_GRADIENT_LIST = "gradients can be either Tensors or None, but got float"
REF_INT_REQUIRES_GRAD = "Only Tensors of floating point and complex dtype can require gradients"
REF_MODIFIED_MUL = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [torch.FloatTensor []], which is output 0 of Mul, is at version 1; expected "
    "version 0 instead. Hint: enable anomaly detection to find the operation that failed to "
    "compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
REF_LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
REF_HOOK_NO_GRAD = "cannot register a hook on a tensor that doesn't require gradient"
REF_RETAIN_GRAD = "can't retain_grad on Tensor that has requires_grad=False"
REF_REQUIRES_GRAD_NON_LEAF = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = "
    "var.detach().")
REF_UNUSED = ("The differentiated Tensor at index 0 appears to not have been used in the "
              "graph. Set allow_unused=True if this is the desired behavior.")
REF_WRONG_COUNT = ("function BadBackward returned an incorrect number of gradients (expected 1, "
                   "got 2)")

REF_CONSTANTS = {
    "FREED_GRAPH": REF_FREED, "NON_SCALAR_OUTPUT": REF_NON_SCALAR, "NO_GRAD_FN": REF_NO_GRAD_FN,
    "ONLY_FLOAT_REQUIRES_GRAD": REF_INT_REQUIRES_GRAD, "LEAF_INPLACE": REF_LEAF_INPLACE,
    "HOOK_NO_GRAD": REF_HOOK_NO_GRAD, "RETAIN_GRAD_NO_GRAD": REF_RETAIN_GRAD,
    "REQUIRES_GRAD_NON_LEAF": REF_REQUIRES_GRAD_NON_LEAF,
}
SCALAR_FLOAT = SimpleNamespace(shape=(), dtype=dtypes.float32)   # what a message describes
REF_BUILT: dict[str, tuple[TorchError | str, str]] = {
    "shape_mismatch": (errors.shape_mismatch((3,), (2,)), REF_SHAPE),
    "bad_gradient_type": (errors.bad_gradient_type(1.0), REF_GRADIENT_LIST),
    "modified_by_inplace": (errors.modified_by_inplace((SCALAR_FLOAT, "Mul", 0), 1, 0),
                            REF_MODIFIED_MUL),
    "unused_input": (errors.unused_input(0), REF_UNUSED),
    "wrong_number_of_gradients": (errors.wrong_number_of_gradients("BadBackward", 1, 2),
                                  REF_WRONG_COUNT),
}


def test_constants_are_the_reference_texts() -> None:
    for name, text in REF_CONSTANTS.items():
        assert getattr(errors, name) == text, name


def test_builders_give_the_reference_texts() -> None:
    for name, (built, text) in REF_BUILT.items():
        if isinstance(built, TorchError):
            assert str(built) == built.message, name
            built = built.message
        assert built == text, name
    assert errors.shape_mismatch((3,), (2,)).type_name == "RuntimeError"
    assert errors.bad_gradient_type(1.0).type_name == "TypeError"


def test_helpers() -> None:
    assert errors.torch_size(()) == "torch.Size([])"
    assert errors.torch_size((2, 3)) == "torch.Size([2, 3])"
    assert REF_MODIFIED_MUL.endswith(errors.HINT)


# -- the reference's programs (lab shorthand), as §2 and §5 list them ------------------------

REF_PROGRAMS: list[tuple[str, str, str, str]] = [
    ("second-backward", "w = 3.0\nx = torch.tensor(2.0)\nloss = (w * x) ** 2\n"
     "loss.backward()\nloss.backward()\n", "RuntimeError", REF_FREED),
    ("non-scalar", "v = torch.tensor([1.0, 2.0], requires_grad=True)\ny = v * 2\ny.backward()\n",
     "RuntimeError", REF_NON_SCALAR),
    ("no-grad-fn", "x = torch.tensor(2.0)\ny = x * 3\n", "RuntimeError", REF_NO_GRAD_FN),
    ("no-grad-fn-non-scalar", "x = torch.tensor([2.0, 1.0])\ny = x * 3\ny.backward()\n",
     "RuntimeError", REF_NO_GRAD_FN),
    ("shape-mismatch", "v = torch.tensor([1.0, 2.0], requires_grad=True)\ny = v * 2\n"
     "y.backward(gradient=torch.tensor([1.0, 1.0, 1.0]))\n", "RuntimeError", REF_SHAPE),
    ("shape-0d-vs-1", "a = 2.0\ny = a * 2\ny.backward(gradient=torch.tensor([1.0]))\n",
     "RuntimeError", "Mismatch in shape: grad_output[0] has a shape of torch.Size([1]) and "
     "output[0] has a shape of torch.Size([])."),
    ("gradient-list", "v = torch.tensor([1.0, 2.0], requires_grad=True)\ny = v * 2\n"
     "y.backward(gradient=[1.0, 1.0])\n", "TypeError", REF_GRADIENT_LIST),
    ("int-requires-grad", "a = torch.tensor(2, requires_grad=True)\n", "RuntimeError",
     REF_INT_REQUIRES_GRAD),
    ("modified-saved-input", "a = 2.0\ny = a * 3\nz = y * y\ny.mul_(2)\nz.backward()\n",
     "RuntimeError", REF_MODIFIED_MUL),
    ("leaf-in-place", "a = 2.0\na.mul_(2)\n", "RuntimeError", REF_LEAF_INPLACE),
    ("hook-without-grad", "t = torch.tensor(1.0)\nt.register_hook(lambda g: g)\n",
     "RuntimeError", REF_HOOK_NO_GRAD),
    ("retain-grad-without-grad", "t = torch.tensor(1.0)\nt.retain_grad()\n", "RuntimeError",
     REF_RETAIN_GRAD),
    ("requires-grad-non-leaf", "a = 2.0\ny = a * 2\ny.requires_grad_(False)\n",
     "RuntimeError", REF_REQUIRES_GRAD_NON_LEAF),
    ("unused-input", "a = 2.0\nd = 3.0\ny = a * 2\ng = torch.autograd.grad(y, d)\n",
     "RuntimeError", REF_UNUSED),
]


@pytest.mark.parametrize(("source", "type_", "message"), [p[1:] for p in REF_PROGRAMS],
                         ids=[p[0] for p in REF_PROGRAMS])
def test_programs_end_with_the_reference_error(source: str, type_: str, message: str) -> None:
    assert lab_outcome(source) == (type_, message)


def test_an_int64_gradient_is_accepted() -> None:
    trace = run_source("a = 2.0\ny = a * 3\ny.backward(gradient=torch.tensor(2))\n")
    assert trace.error is None and trace.grads == {"a": 6.0}


def test_freed_error_is_on_the_failing_step_too() -> None:
    trace = run_source(REF_PROGRAMS[0][1])
    step = trace.passes[-1].steps[-1]
    assert step["error"] is not None and step["error"].message == REF_FREED


# -- the table ------------------------------------------------------------------------------

PINNED = {
    "TorchError": "helper", "torch_size": "helper",
    "HINT": "helper",                   # the end of modified_by_inplace's message
    **dict.fromkeys(REF_CONSTANTS, "reference"), **dict.fromkeys(REF_BUILT, "reference"),
    "EMPTY_INPUTS": "program", "NO_GRADIENTS": "program", "INT64_OVERFLOW": "program",
    "INFERENCE_SAVED": "program", "INFERENCE_INPLACE": "program",
    "DETACH_VIEW_INPLACE": "program", "item_of_many": "program",
    "INFERENCE_REQUIRES_GRAD": "program", "LEAF_MARKED_DIRTY": "program",
    "REQUIRES_GRAD_NON_LEAF_TRUE": "program",
    "ONCE_DIFFERENTIABLE": "program",
    "EMPTY_GRAD_INPUTS": "program", "INPUT_NO_GRAD": "program", "LEAF_VIEW_INPLACE": "program",
    "MATERIALIZE_ALLOW_UNUSED": "program", "POST_ACCUMULATE_NON_LEAF": "program",
    "POST_ACCUMULATE_NO_GRAD": "program", "POST_ACCUMULATE_RETURNED": "program",
    "SAVE_FOR_BACKWARD_TYPE": "program", "custom_backward_type": "program",
    "grad_for_non_tensor": "program", "grad_outputs_count": "program", "hook_count": "program",
    "hook_returned": "program", "hook_changed_size": "program",
    "hook_changed_type": "program", "input_not_a_tensor": "program",
    "invalid_gradient_shape": "program", "no_grad_fn": "program",
    "real_scalar_outputs": "program", "tensors_and_gradients": "program",
}

# -- programs ending with each message ------------------------------------------------------

A = "a = torch.tensor(2.0, requires_grad=True); "
V = "a = torch.tensor([1.0, 2.0], requires_grad=True); "
NUM = function("Num", "x", "return x * 2", "return {}")
SCALE = function("Scale", "{}", "return x * k", "return g, g")
WIDE = function("Wide", "x", "return x * 2", "return torch.ones({})")
SAVE = function("Save", "x", "ctx.save_for_backward({}); return x * 2", "return g")
BAD = function("Bad", "{}", "return x * 2", "return {}")
COMPLEX64 = dtypes.DType("complex64", np.dtype(np.complex64), False, "ComplexFloatTensor", 3)

CASES = [
    case("EMPTY_INPUTS", V + "(a * 2).sum().backward(inputs=[])", errors.EMPTY_INPUTS,
         "RuntimeError"),
    case("EMPTY_INPUTS", V + "torch.autograd.backward([(a * 2).sum()], inputs=())",
         errors.EMPTY_INPUTS, "RuntimeError"),
    case("NO_GRADIENTS", V + "y = a * 2; y.backward(gradient=[])", errors.NO_GRADIENTS,
         "RuntimeError"),
    case("INT64_OVERFLOW", "a = torch.tensor(9223372036854775808)", errors.INT64_OVERFLOW,
         "ValueError"),
    case("INT64_OVERFLOW", "torch.manual_seed(2 ** 64)", errors.INT64_OVERFLOW, "ValueError"),
    case("INFERENCE_SAVED", "with torch.inference_mode():\n    t = torch.ones(2)\n"
         + V + "y = a * t", errors.INFERENCE_SAVED, "RuntimeError"),
    case("DETACH_VIEW_INPLACE", "v = torch.ones(4)[:2]\nv.detach_()", errors.DETACH_VIEW_INPLACE,
         "RuntimeError"),
    case("DETACH_VIEW_INPLACE", V + "v = (a * 2).view(2, 1)\nv.detach_()",
         errors.DETACH_VIEW_INPLACE, "RuntimeError"),
    case("INFERENCE_INPLACE", "with torch.inference_mode():\n    t = torch.ones(2)\nt.add_(1)",
         errors.INFERENCE_INPLACE, "RuntimeError"),
    case("INFERENCE_REQUIRES_GRAD", "with torch.inference_mode():\n    t = torch.ones(2)\n"
         "t.requires_grad_()", errors.INFERENCE_REQUIRES_GRAD, "RuntimeError"),
    case("REQUIRES_GRAD_NON_LEAF_TRUE", A + "y = a * 2; y.requires_grad = True",
         errors.REQUIRES_GRAD_NON_LEAF_TRUE, "RuntimeError"),
    case("REQUIRES_GRAD_NON_LEAF_TRUE", V + "y = a[0]; y.requires_grad_(); y.requires_grad = True",
         errors.REQUIRES_GRAD_NON_LEAF_TRUE, "RuntimeError"),
    case("LEAF_MARKED_DIRTY", function("Dirty", "x", "x.add_(1); ctx.mark_dirty(x); return x",
                                       "return g") + V + "Dirty.apply(a)",
         errors.LEAF_MARKED_DIRTY, "RuntimeError"),
    case("ONCE_DIFFERENTIABLE", "from torch.autograd.function import once_differentiable\n"
         + function("Sq", "x", "ctx.save_for_backward(x); return x * x",
                    "x, = ctx.saved_tensors; return 2 * x * g").replace(
             "    def backward", "    @once_differentiable\n    def backward")
         + A + "g, = torch.autograd.grad(Sq.apply(a) * a, a, create_graph=True); g.backward()",
         errors.ONCE_DIFFERENTIABLE, "RuntimeError"),
    case("item_of_many", "a = torch.tensor([1.0, 2.0]); a.item()", errors.item_of_many(2),
         "RuntimeError"),
    case("item_of_many", "a = torch.ones(3, 2); a.item()", errors.item_of_many(6),
         "RuntimeError"),
    case("EMPTY_GRAD_INPUTS", V + "torch.autograd.grad((a * 2).sum(), [])",
         errors.EMPTY_GRAD_INPUTS, "RuntimeError"),
    case("INPUT_NO_GRAD", V + "b = torch.ones(2); torch.autograd.grad((a * b).sum(), b)",
         errors.INPUT_NO_GRAD, "RuntimeError"),
    case("LEAF_VIEW_INPLACE", V + "v = a[0]; v.mul_(2)", errors.LEAF_VIEW_INPLACE,
         "RuntimeError"),
    case("MATERIALIZE_ALLOW_UNUSED", V + "torch.autograd.grad((a * 2).sum(), a, "
         "allow_unused=False, materialize_grads=True)", errors.MATERIALIZE_ALLOW_UNUSED,
         "ValueError"),
    case("POST_ACCUMULATE_NON_LEAF", V + "y = a * 2; y.register_post_accumulate_grad_hook("
         "lambda p: None)", errors.POST_ACCUMULATE_NON_LEAF, "RuntimeError"),
    case("POST_ACCUMULATE_NO_GRAD", "t = torch.ones(2); t.register_post_accumulate_grad_hook("
         "lambda p: None)", errors.POST_ACCUMULATE_NO_GRAD, "RuntimeError"),
    case("hook_returned", A + "a.register_post_accumulate_grad_hook(lambda p: 5); "
         "(a * 2).backward()", errors.hook_returned("int"), "TypeError"),
    case("POST_ACCUMULATE_RETURNED", A + "a.register_post_accumulate_grad_hook(lambda p: p * 2); "
         "(a * 2).backward()", errors.POST_ACCUMULATE_RETURNED, "RuntimeError"),
    case("SAVE_FOR_BACKWARD_TYPE", SAVE.format(3) + A + "Save.apply(a).backward()",
         errors.SAVE_FOR_BACKWARD_TYPE, "TypeError"),
    case("custom_backward_type", NUM.format("2.0") + A + "Num.apply(a).backward()",
         errors.custom_backward_type("NumBackward", "float"), "RuntimeError"),
    case("custom_backward_type", NUM.format("3") + A + "Num.apply(a).backward()",
         errors.custom_backward_type("NumBackward", "int"), "RuntimeError"),
    case("grad_for_non_tensor", SCALE.format("x, k") + A + "Scale.apply(a, 2.0).backward()",
         errors.grad_for_non_tensor("ScaleBackward", 2), "RuntimeError"),
    case("grad_for_non_tensor", SCALE.format("k, x") + A + "Scale.apply(2.0, a).backward()",
         errors.grad_for_non_tensor("ScaleBackward", 1), "RuntimeError"),
    case("grad_outputs_count", A + "y = a * 2; torch.autograd.grad([y, a * 3], a, "
         "grad_outputs=[torch.tensor(1.0)])", errors.grad_outputs_count(2, 1), "RuntimeError"),
    case("grad_outputs_count", A + "y = a * 2; torch.autograd.grad([y, y * 2, y * 3], a, "
         "grad_outputs=[torch.tensor(1.0), torch.tensor(1.0)])",
         errors.grad_outputs_count(3, 2), "RuntimeError"),
    case("hook_count", A + "y = a * 2; y.grad_fn.register_prehook(lambda go: (go[0], go[0])); "
         "y.backward()", errors.hook_count("<lambda>", 1, 2), "RuntimeError"),
    case("hook_count", A + "y = a * a; y.grad_fn.register_hook(lambda gi, go: (gi[0],)); "
         "y.backward()", errors.hook_count("<lambda>", 2, 1), "RuntimeError"),
    case("hook_returned", A + "y = a * 2; y.grad_fn.register_prehook(lambda go: (3.0,)); "
         "y.backward()", errors.hook_returned("float"), "TypeError"),
    case("hook_returned", A + "y = a * a; y.grad_fn.register_hook(lambda gi, go: (gi[0], 2)); "
         "y.backward()", errors.hook_returned("int"), "TypeError"),
    case("hook_returned", A + "y = a * 2; y.register_hook(lambda g: 3.0); y.backward()",
         errors.hook_returned("float"), "TypeError"),
    case("hook_changed_size", V + "y = a * 2; y.register_hook(lambda g: torch.ones(3)); "
         "y.sum().backward()", errors.hook_changed_size("<lambda>"), "RuntimeError"),
    case("hook_changed_size", V + "a.register_hook(lambda g: torch.ones(1)); "
         "(a * 2).sum().backward()", errors.hook_changed_size("<lambda>"), "RuntimeError"),
    case("hook_changed_size", "def clip(g):\n    return torch.ones(3)\n" + V
         + "y = a * 2; y.grad_fn.register_prehook(lambda go: (torch.ones(3),)); "
         "a.register_hook(clip); y.sum().backward()", errors.hook_changed_size("<lambda>"),
         "RuntimeError"),
    case("hook_changed_type", V + "y = a * 2; y.register_hook(lambda g: g.double()); "
         "y.sum().backward()", errors.hook_changed_type("<lambda>", dtypes.float32,
                                                        dtypes.float64), "RuntimeError"),
    case("hook_changed_type", "def f(g):\n    return g.double()\n" + V
         + "a.register_hook(f); (a * 2).sum().backward()",
         errors.hook_changed_type("f", dtypes.float32, dtypes.float64), "RuntimeError"),
    case("input_not_a_tensor", A + "y = a * 2; torch.autograd.grad(y, [a, 2.0])",
         errors.input_not_a_tensor(2.0), "RuntimeError"),
    case("input_not_a_tensor", A + "y = a * 2; y.backward(inputs=[3])",
         errors.input_not_a_tensor(3), "RuntimeError"),
    case("invalid_gradient_shape", WIDE.format(3) + V + "Wide.apply(a).sum().backward()",
         errors.invalid_gradient_shape("WideBackward", 0, (3,), (2,)), "RuntimeError"),
    case("invalid_gradient_shape", WIDE.format("2, 3") + "a = torch.ones(2, 2, "
         "requires_grad=True); Wide.apply(a).sum().backward()",
         errors.invalid_gradient_shape("WideBackward", 0, (2, 3), (2, 2)), "RuntimeError"),
    case("no_grad_fn", A + "torch.autograd.backward([a * 2, torch.tensor(1.0)])",
         errors.no_grad_fn(1), "RuntimeError"),
    case("no_grad_fn", A + "torch.autograd.grad([a * 2, torch.tensor(1.0)], a)",
         errors.no_grad_fn(1), "RuntimeError"),
    case("no_grad_fn", A + "torch.autograd.backward([torch.tensor(1.0), a * 2])",
         errors.no_grad_fn(0), "RuntimeError"),
    case("real_scalar_outputs", "a = torch.tensor(1 + 2j, requires_grad=True); "
         "(a * 2).backward()", errors.real_scalar_outputs(COMPLEX64), "RuntimeError",
         xfail="the lab has no complex numbers (UnsupportedError: bytes and complex numbers "
         "are not supported); no real dtype reaches this message"),
    case("real_scalar_outputs", "a = torch.tensor([1j], requires_grad=True); "
         "(a * 2).sum().backward()", errors.real_scalar_outputs(COMPLEX64), "RuntimeError",
         xfail="the lab has no complex numbers"),
    case("tensors_and_gradients", A + "torch.autograd.backward([a * 2, a * 3], "
         "[torch.tensor(1.0)])", errors.tensors_and_gradients(2, 1), "RuntimeError"),
    case("tensors_and_gradients", A + "y = a * 2; torch.autograd.backward([y, y * 2, y * 3], "
         "[torch.tensor(1.0), torch.tensor(1.0)])", errors.tensors_and_gradients(3, 2),
         "RuntimeError"),
    # the reference's messages, in programs of their own
    case("FREED_GRAPH", A + "y = a * a; y.backward(); y.backward()", errors.FREED_GRAPH,
         "RuntimeError"),
    case("modified_by_inplace", A + "y = a * 3; z = y * y; y += 1; z.backward()",
         errors.modified_by_inplace((SCALAR_FLOAT, "Add", 0), 1, 0), "RuntimeError"),
    case("modified_by_inplace", "a = torch.ones(2, 3, requires_grad=True); y = a.exp(); "
         "y += 1; y += 1; y.sum().backward()", errors.modified_by_inplace(
             (SimpleNamespace(shape=(2, 3), dtype=dtypes.float32), "Exp", 0), 2, 0),
         "RuntimeError"),
    case("shape_mismatch", A + "y = a * 2; z = a * 3; torch.autograd.backward([y, z], "
         "[torch.tensor(1.0), torch.ones(1)])", "Mismatch in shape: grad_output[0] has a "
         "shape of torch.Size([1]) and output[1] has a shape of torch.Size([]).",
         "RuntimeError", xfail="PyTorch finds both indices with list.index, which compares "
         "tensors with == (ones(1) == tensor(1.) is true: grad_output[0]); the lab writes "
         "the position, grad_output[1]"),
    case("bad_gradient_type", V + "y = a * 2; y.backward(gradient=[2])",
         errors.bad_gradient_type(2), "TypeError"),
    case("unused_input", A + "b = torch.tensor(2.0, requires_grad=True); "
         "torch.autograd.grad(a * 2, [a, b])", errors.unused_input(1), "RuntimeError"),
    case("wrong_number_of_gradients", BAD.format("x", "g, g") + A + "Bad.apply(a).backward()",
         errors.wrong_number_of_gradients("BadBackward", 1, 2), "RuntimeError"),
    case("wrong_number_of_gradients", BAD.format("x, y", "g") + A
         + "Bad.apply(a, a).backward()",
         errors.wrong_number_of_gradients("BadBackward", 2, 1), "RuntimeError"),
]

def test_every_public_name_is_pinned() -> None:
    check_table(errors, PINNED, set(REF_CONSTANTS) | set(REF_BUILT), CASES)


@pytest.mark.parametrize("row", params(CASES, xfail=True))
def test_the_lab_ends_with_pytorchs_error(row: Case) -> None:
    assert lab_outcome(row.source) == row.outcome


@pytest.mark.torch
@pytest.mark.parametrize("row", params(CASES, xfail=False))
def test_pytorch_ends_with_that_error(row: Case, torch: Any) -> None:
    assert torch_outcome(row.source) == row.outcome


# -- outcomes no message names: the lab and PyTorch agree ------------------------------------

AGREE = [
    ("requires-grad-not-bool", "a = torch.tensor(2.0, requires_grad=1)"),
    ("tanh-of-int-tensor", "a = torch.tensor([1, 2]); b = a.tanh()"),
    ("retain-graph-int", A + "y = a * 2; y.backward(retain_graph=1); y.backward()"),
    ("extra-gradients-ignored", A + "y = a * 2; "
     "y.backward(gradient=[torch.tensor(1.0), torch.tensor(1.0)])"),
    ("int64-gradient", A + "y = a * 3; y.backward(gradient=torch.tensor(2))"),
]


@pytest.mark.torch
@pytest.mark.parametrize("body", [b for _, b in AGREE], ids=[i for i, _ in AGREE])
def test_other_outcomes_match_live_pytorch(body: str, torch: Any) -> None:
    source = PRELUDE + body + "\n"
    assert lab_outcome(source) == torch_outcome(source)
