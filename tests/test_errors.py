"""PyTorch's error messages, pinned word for word.

The texts below are copied from ../shared/reference/pytorch-autograd.md §1 and §5
(recorded from PyTorch 2.13), not from engine/errors.py. Every message in
engine/errors.py is pinned here; messages the reference does not list are compared with
live PyTorch when torch is installed.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from app.trace import run_source
from engine import errors, op_errors
from engine.errors import TorchError

# -- the reference's texts, verbatim ------------------------------------------------------

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
REF_GRADIENT_FLOAT = "'float' object is not iterable"
REF_INT_REQUIRES_GRAD = "Only Tensors of floating point and complex dtype can require gradients"
REF_TANH_OF_FLOAT = "tanh(): argument 'input' (position 1) must be Tensor, not float"
REF_FLOAT_TANH = "'float' object has no attribute 'tanh'"

# Reference texts of situations the lab's language cannot express (in-place ops, hooks,
# retain_grad, requires_grad_, autograd.grad): the engine need not carry them, but if
# it ever does, they must be these. Kept here so a later addition is checked.
REF_UNREACHABLE = {
    "LEAF_IN_PLACE": "a leaf Variable that requires grad is being used in an in-place "
                     "operation.",
    "HOOK_WITHOUT_GRAD": "cannot register a hook on a tensor that doesn't require gradient",
    "RETAIN_GRAD_WITHOUT_GRAD": "can't retain_grad on Tensor that has requires_grad=False",
    "REQUIRES_GRAD_NON_LEAF": "you can only change requires_grad flags of leaf variables. If "
                              "you want to use a computed variable in a subgraph that doesn't "
                              "require differentiation use var_no_grad = var.detach().",
    "UNUSED_INPUT": "The differentiated Tensor at index 0 appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.",
}


def test_constants_are_the_reference_texts() -> None:
    assert errors.FREED_GRAPH == REF_FREED
    assert errors.NON_SCALAR_OUTPUT == REF_NON_SCALAR
    assert errors.NO_GRAD_FN == REF_NO_GRAD_FN
    assert errors.ONLY_FLOAT_REQUIRES_GRAD == REF_INT_REQUIRES_GRAD


def test_builders_give_the_reference_texts() -> None:
    def pinned(error: TorchError) -> tuple[str, str]:
        assert str(error) == error.message
        return error.type_name, error.message

    assert pinned(errors.shape_mismatch((3,), (2,))) == ("RuntimeError", REF_SHAPE)
    assert pinned(errors.bad_gradient_type(1.0)) == ("TypeError", REF_GRADIENT_LIST)
    assert pinned(op_errors.not_iterable(2.0)) == ("TypeError", REF_GRADIENT_FLOAT)
    assert pinned(op_errors.not_a_tensor("tanh", 2.0)) == ("TypeError", REF_TANH_OF_FLOAT)
    assert pinned(op_errors.no_attribute(2.0, "tanh")) == ("AttributeError", REF_FLOAT_TANH)
    assert errors.torch_size(()) == "torch.Size([])"
    assert errors.torch_size((2, 3)) == "torch.Size([2, 3])"


def test_unreachable_reference_texts_if_present_are_exact() -> None:
    module_texts = {v for v in vars(errors).values() if isinstance(v, str)}
    for text in REF_UNREACHABLE.values():
        near = [t for t in module_texts if t[:30] == text[:30]]
        assert all(t == text for t in near), near


# Names in engine/errors.py and where each is pinned: "reference" above, "torch" below
# (live PyTorch), or "helper" (not a message).
PINNED = {
    "TorchError": "helper", "torch_size": "helper",
    "FREED_GRAPH": "reference", "NON_SCALAR_OUTPUT": "reference", "NO_GRAD_FN": "reference",
    "ONLY_FLOAT_REQUIRES_GRAD": "reference", "shape_mismatch": "reference",
    "bad_gradient_type": "reference", "not_iterable": "reference",
    "not_a_tensor": "reference", "no_attribute": "reference",
    "INTEGER_NEGATIVE_POWER": "torch", "MEAN_OF_INTEGERS": "torch",
    "broadcast_mismatch": "torch", "ragged": "torch",
    "EMPTY_INPUTS": "torch", "NO_GRADIENTS": "torch", "INT64_OVERFLOW": "torch",
    "NUMBER_NOT_LIST": "torch", "NOT_A_SEQUENCE": "torch", "INT_TOO_BIG": "torch",
}


def test_every_message_in_the_module_is_pinned() -> None:
    public = {name for name, value in vars(errors).items()
              if not name.startswith("_") and getattr(value, "__module__", errors.__name__)
              == errors.__name__ and (isinstance(value, str) or inspect.isfunction(value)
                                      or inspect.isclass(value))}
    public.discard("annotations")
    assert public <= set(PINNED), f"pin these new messages: {sorted(public - set(PINNED))}"


# -- the same texts at the end of real programs -------------------------------------------

PROGRAMS: list[tuple[str, str, str, str]] = [
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
    ("gradient-float", "a = 2.0\ny = a * 2\ny.backward(gradient=2.0)\n", "TypeError",
     REF_GRADIENT_FLOAT),
    ("int-requires-grad", "a = torch.tensor(2, requires_grad=True)\n", "RuntimeError",
     REF_INT_REQUIRES_GRAD),
    ("tanh-of-float", "a = 2.0\nb = torch.tanh(2.0)\n", "TypeError", REF_TANH_OF_FLOAT),
    ("float-tanh", "a = 2.0\nb = (2.0).tanh()\n", "AttributeError", REF_FLOAT_TANH),
]


@pytest.mark.parametrize(("source", "type_", "message"), [p[1:] for p in PROGRAMS],
                         ids=[p[0] for p in PROGRAMS])
def test_programs_end_with_the_reference_error(source: str, type_: str, message: str) -> None:
    error = run_source(source).error
    assert error is not None
    assert (error.type, error.message) == (type_, message)


def test_an_int64_gradient_is_accepted() -> None:
    trace = run_source("a = 2.0\ny = a * 3\ny.backward(gradient=torch.tensor(2))\n")
    assert trace.error is None and trace.grads == {"a": 6.0}


def test_freed_error_is_on_the_failing_step_too() -> None:
    trace = run_source(PROGRAMS[0][1])
    step = trace.passes[-1].steps[-1]
    assert step["error"] is not None and step["error"].message == REF_FREED


# -- messages the reference does not list: compared with live PyTorch ---------------------

TORCH_ERRORS = [
    ("negative-int-power", "a = torch.tensor(2)\nb = a ** -1\n"),
    ("mean-of-integers", "a = torch.tensor([1, 2])\nb = a.mean()\n"),
    ("sizes-do-not-broadcast", "a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
     "b = torch.tensor([1.0, 2.0, 3.0])\nc = a * b\n"),
    ("sizes-do-not-broadcast-2d", "a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])\n"
     "b = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)\nc = a + b\n"),
    ("ragged-list", "a = torch.tensor([[1.0, 2.0], [3.0]])\n"),
    ("list-then-number", "a = torch.tensor([[1.0], 2.0])\n"),
    ("empty-gradient-list", "a = torch.tensor([1.0, 2.0], requires_grad=True)\ny = a * 2\n"
     "y.backward(gradient=[])\n"),
    ("requires-grad-not-bool", "a = torch.tensor(2.0, requires_grad=1)\n"),
    ("grad-of-a-number", "a = 2.0\nb = 3\nb.grad = None\n"),
    ("backward-of-a-number", "a = 2.0\ny = 3\ny.backward()\n"),
    ("tanh-of-int-tensor", "a = torch.tensor([1, 2])\nb = a.tanh()\n"),
    ("int-sum-backward", "a = torch.tensor([1, 2])\nb = a.sum()\nb.backward()\n"),
    ("retain-graph-int", "a = 2.0\ny = a * 2\ny.backward(retain_graph=1)\ny.backward()\n"),
    ("two-gradients", "a = 2.0\ny = a * 2\n"
     "y.backward(gradient=[torch.tensor(1.0), torch.tensor(1.0)])\n"),
]


def _live_torch() -> Any:
    return pytest.importorskip("torch", reason="live PyTorch compares the messages that "
                               "the reference does not list")


@pytest.mark.torch
@pytest.mark.parametrize("source", [t[1] for t in TORCH_ERRORS], ids=[t[0] for t in TORCH_ERRORS])
def test_other_messages_match_live_pytorch(source: str) -> None:
    _live_torch()
    from tests.torch_recorder import record

    want = record(source)["error"]
    got = run_source(source).error
    if want is None:
        assert got is None
        return
    assert got is not None
    assert (got.type, got.message) == (want["type"], want["message"])


@pytest.mark.torch
@pytest.mark.parametrize("source", ["a = torch.tensor([1.0, [2.0]])\n",
                                    "a = torch.tensor(9223372036854775808)\n"],
                         ids=["number-then-list", "int64-overflow"])
def test_tensor_data_errors_match_live_pytorch(source: str) -> None:
    test_other_messages_match_live_pytorch(source)


@pytest.mark.torch
def test_constants_outside_the_reference_are_live_pytorch_texts() -> None:
    torch = _live_torch()

    def message(action: Any) -> str:
        with pytest.raises(Exception) as raised:
            action()
        return str(raised.value)

    a = torch.tensor(1.0, requires_grad=True)
    assert message(lambda: torch.tensor(2) ** -1) == op_errors.INTEGER_NEGATIVE_POWER
    assert message(lambda: torch.tensor([1, 2]).mean()) == op_errors.MEAN_OF_INTEGERS
    assert message(lambda: (a * 2).backward(inputs=[])) == errors.EMPTY_INPUTS
    assert message(lambda: (a * 2).backward(gradient=[])) == errors.NO_GRADIENTS
    assert message(lambda: torch.tensor(2**63)) == errors.INT64_OVERFLOW
    assert message(lambda: torch.tensor([1.0, [2.0]])) == op_errors.NUMBER_NOT_LIST
    assert message(lambda: torch.tensor([[1.0], 2.0])) == op_errors.NOT_A_SEQUENCE
    assert message(lambda: a * 10**30) == op_errors.INT_TOO_BIG
    assert message(lambda: torch.tensor([1.0, 2.0]) * torch.tensor([1.0, 2.0, 3.0])) == (
        op_errors.broadcast_mismatch((2,), (3,)).message)
    assert message(lambda: torch.tensor([[1.0, 2.0], [3.0]])) == op_errors.ragged(2, 1, 1).message
