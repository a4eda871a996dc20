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
EMPTY_INPUTS = "`inputs` argument to `backward()` cannot be empty."
NO_GRADIENTS = "got 1 tensors and 0 gradients"           # backward(gradient=[])
INT64_OVERFLOW = "Overflow when unpacking long long"      # torch.tensor(2**63), ValueError
REQUIRES_GRAD_NON_LEAF = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = "
    "var.detach()."
)
# `y.requires_grad = True` on a non-leaf (requires_grad_leaf_error(true)): no advice
REQUIRES_GRAD_NON_LEAF_TRUE = "you can only change requires_grad flags of leaf variables."
INFERENCE_REQUIRES_GRAD = ("Setting requires_grad=True on inference tensor outside "
                           "InferenceMode is not allowed.")
INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)
INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)
DETACH_VIEW_INPLACE = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution."
)
HOOK_NO_GRAD = "cannot register a hook on a tensor that doesn't require gradient"
RETAIN_GRAD_NO_GRAD = "can't retain_grad on Tensor that has requires_grad=False"
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
ONCE_DIFFERENTIABLE = ("trying to differentiate twice a function that was marked with "
                       "@once_differentiable")
# A custom Function's forward returned a leaf it changed and marked dirty (_wrap_outputs).
LEAF_MARKED_DIRTY = "a leaf Variable that requires grad has been used in an in-place operation."
HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its "
        "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")


def item_of_many(n: int) -> str:
    return f"a Tensor with {n} elements cannot be converted to Scalar"


def modified_by_inplace(source: tuple[object, str | None, int], version: int,
                        expected: int) -> TorchError:
    """SavedVariable::unpack's error for a saved tensor changed in place since it was saved.
    `source` is (tensor, the name of the node the message names or None, output_nr)."""
    tensor, node, output_nr = source
    dims = ", ".join(str(d) for d in getattr(tensor, "shape", ()))
    legacy = getattr(getattr(tensor, "dtype", None), "legacy", "FloatTensor")
    which = f", which is output {output_nr} of {node}," if node is not None else ""
    return TorchError(
        "RuntimeError",
        f"one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [torch.{legacy} [{dims}]]{which} is at version {version}; "
        f"expected version {expected} instead. {HINT}")


def shape_mismatch(grad_shape: tuple[int, ...], output_shape: tuple[int, ...],
                   index: int = 0) -> TorchError:
    return TorchError(
        "RuntimeError",
        f"Mismatch in shape: grad_output[{index}] has a shape of {torch_size(grad_shape)} and "
        f"output[{index}] has a shape of {torch_size(output_shape)}.",
    )


def bad_gradient_type(value: object) -> TorchError:
    return TorchError(
        "TypeError",
        f"gradients can be either Tensors or None, but got {type(value).__name__}",
    )


def torch_size(shape: tuple[int, ...]) -> str:
    return f"torch.Size([{', '.join(str(d) for d in shape)}])"


EMPTY_GRAD_INPUTS = "`inputs` argument to `grad()` cannot be empty."
INPUT_NO_GRAD = "One of the differentiated Tensors does not require grad"
LEAF_VIEW_INPLACE = ("a view of a leaf Variable that requires grad is being used in an in-place "
                     "operation.")
MATERIALIZE_ALLOW_UNUSED = ("Expected allow_unused to be True or not passed when "
                            "materialize_grads=True, but got: allow_unused=False.")
POST_ACCUMULATE_NON_LEAF = "post accumulate grad hooks cannot be registered on non-leaf tensors"
POST_ACCUMULATE_NO_GRAD = HOOK_NO_GRAD
POST_ACCUMULATE_RETURNED = "Tensor post accumulate grad hooks should return None."
SAVE_FOR_BACKWARD_TYPE = "save_for_backward can only save variables, but argument 0 is of type int"


def custom_backward_type(node: str, got: str) -> str:
    return f"expected Variable or None (got {got})"


def grad_for_non_tensor(node: str, position: int) -> str:
    return (f"function {node} returned a gradient different than None at position {position}, "
            "but the corresponding forward input was not a Variable")


def grad_outputs_count(outputs: int, grads: int) -> str:
    return f"got {outputs} tensors and {grads} gradients"


def hook_count(name: str, expected: int, got: int) -> str:
    return (f"hook '{name}' has returned an incorrect number of values (got {got}, but "
            f"expected {expected})")


def hook_returned(kind: str) -> str:
    return f"expected Variable, but hook returned '{kind}'"


def hook_changed_size(name: str) -> str:
    return f"hook '{name}' has changed the size of value"


def hook_changed_type(name: str, was: object, got: object) -> str:
    """`was torch.FloatTensor got torch.DoubleTensor`."""
    from engine.op_errors import legacy_name

    return (f"hook '{name}' has changed the type of value (was torch.{legacy_name(was)}Tensor "
            f"got torch.{legacy_name(got)}Tensor)")


def invalid_gradient_shape(node: str, index: int, got: tuple[int, ...],
                           expected: tuple[int, ...]) -> str:
    return (f"Function {node} returned an invalid gradient at index {index} - got "
            f"[{', '.join(map(str, got))}] but expected shape compatible with "
            f"[{', '.join(map(str, expected))}]")


def no_grad_fn(index: int) -> str:
    return f"element {index} of tensors does not require grad and does not have a grad_fn"


def real_scalar_outputs(dtype: object) -> str:
    return f"grad can be implicitly created only for real scalar outputs but got {dtype!r}"


def tensors_and_gradients(tensors: int, grads: int) -> str:
    return f"got {tensors} tensors and {grads} gradients"


def unused_input(index: int) -> str:
    return (f"The differentiated Tensor at index {index} appears to not have been used in the "
            "graph. Set allow_unused=True if this is the desired behavior.")


def wrong_number_of_gradients(node: str, expected: int, got: int) -> str:
    return (f"function {node} returned an incorrect number of gradients (expected {expected}, "
            f"got {got})")


def input_not_a_tensor(value: object) -> TorchError:
    """`autograd.grad(y, [a, 2.0])`, `backward(inputs=[3])`."""
    return TorchError("RuntimeError", "all inputs have to be Tensors or GradientEdges, but got "
                      f"{type(value).__name__}")
