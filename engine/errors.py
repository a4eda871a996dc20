"""PyTorch's error messages, word for word.

The lab promises the same errors PyTorch raises, so these texts are API: each one is
pinned by a test against the text recorded from PyTorch 2.13.
"""

from __future__ import annotations


class TorchError(Exception):
    """An exception PyTorch would raise, carrying PyTorch's type name and message."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name
        self.message = message


FREED_GRAPH = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)
NON_SCALAR_OUTPUT = "grad can be implicitly created only for scalar outputs"
NO_GRAD_FN = "element 0 of tensors does not require grad and does not have a grad_fn"
ONLY_FLOAT_REQUIRES_GRAD = "Only Tensors of floating point and complex dtype can require gradients"
INTEGER_NEGATIVE_POWER = "Integers to negative integer powers are not allowed."
MEAN_OF_INTEGERS = (
    "mean(): could not infer output dtype. Input dtype must be either a floating point or "
    "complex dtype. Got: Long"
)
EMPTY_INPUTS = "`inputs` argument to `backward()` cannot be empty."
NO_GRADIENTS = "got 1 tensors and 0 gradients"           # backward(gradient=[])
INT64_OVERFLOW = "Overflow when unpacking long long"      # torch.tensor(2**63), ValueError
NUMBER_NOT_LIST = "must be real number, not list"         # torch.tensor([1.0, [2.0]])
NOT_A_SEQUENCE = "not a sequence"                         # torch.tensor([[1.0], 2.0])
INT_TOO_BIG = "int too big to convert"                    # a * 10**30, OverflowError


def shape_mismatch(grad_shape: tuple[int, ...], output_shape: tuple[int, ...]) -> TorchError:
    return TorchError(
        "RuntimeError",
        f"Mismatch in shape: grad_output[0] has a shape of {torch_size(grad_shape)} and "
        f"output[0] has a shape of {torch_size(output_shape)}.",
    )


def broadcast_mismatch(a: tuple[int, ...], b: tuple[int, ...]) -> TorchError:
    """The error of an elementwise op on shapes that do not broadcast."""
    for k in range(1, max(len(a), len(b)) + 1):
        da = a[-k] if k <= len(a) else 1
        db = b[-k] if k <= len(b) else 1
        if da != db and da != 1 and db != 1:
            dim = max(len(a), len(b)) - k
            return TorchError(
                "RuntimeError",
                f"The size of tensor a ({da}) must match the size of tensor b ({db}) "
                f"at non-singleton dimension {dim}",
            )
    raise ValueError("shapes broadcast")


def not_a_tensor(function: str, value: object) -> TorchError:
    return TorchError(
        "TypeError",
        f"{function}(): argument 'input' (position 1) must be Tensor, not {type(value).__name__}",
    )


def no_attribute(value: object, attribute: str) -> TorchError:
    return TorchError(
        "AttributeError", f"'{type(value).__name__}' object has no attribute '{attribute}'"
    )


def not_iterable(value: object) -> TorchError:
    return TorchError("TypeError", f"'{type(value).__name__}' object is not iterable")


def bad_gradient_type(value: object) -> TorchError:
    return TorchError(
        "TypeError",
        f"gradients can be either Tensors or None, but got {type(value).__name__}",
    )


def ragged(length: int, dim: int, got: int) -> TorchError:
    return TorchError("ValueError",
                      f"expected sequence of length {length} at dim {dim} (got {got})")


def torch_size(shape: tuple[int, ...]) -> str:
    return f"torch.Size([{', '.join(str(d) for d in shape)}])"
