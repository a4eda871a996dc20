"""PyTorch's error messages, word for word.

The lab promises the same errors PyTorch raises, so these texts are API: each one is
pinned by a test against the text recorded from PyTorch 2.13.
"""

from __future__ import annotations

from collections.abc import Sequence


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
ONLY_ONE_ELEMENT_TENSORS = "only one element tensors can be converted to Python scalars"
REQUIRES_GRAD_NON_LEAF = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use var_no_grad = "
    "var.detach()."
)
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
AMBIGUOUS_BOOL = "Boolean value of Tensor with more than one value is ambiguous"
HOOK_NO_GRAD = "cannot register a hook on a tensor that doesn't require gradient"
RETAIN_GRAD_NO_GRAD = "can't retain_grad on Tensor that has requires_grad=False"
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
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


# -- more of PyTorch's messages (each recorded from PyTorch 2.13) -------------------------
ARANGE_BOUNDS = "upper bound and lower bound inconsistent with step sign"
BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
             "are valid indices")
BAD_INDEX_TENSOR = "tensors used as indices must be long, int, byte or bool tensors"
BITWISE_NOT_FLOAT = "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
CLAMP_NO_BOUNDS = "torch.clamp: At least one of 'min' or 'max' must not be None"
EMPTY_GRAD_INPUTS = "`inputs` argument to `grad()` cannot be empty."
INPLACE_OVERLAP = ("unsupported operation: more than one element of the written-to tensor "
                   "refers to a single memory location. Please clone() the tensor before "
                   "performing the operation.")
INPUT_NO_GRAD = "One of the differentiated Tensors does not require grad"
LEAF_VIEW_INPLACE = ("a view of a leaf Variable that requires grad is being used in an in-place "
                     "operation.")
MATERIALIZE_ALLOW_UNUSED = ("Expected allow_unused to be True or not passed when "
                            "materialize_grads=True, but got: allow_unused=False.")
MATMUL_BATCHED = ("the lab multiplies matrices of up to 2 dimensions (batched matmul is not "
                  "supported)")
NEGATIVE_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                 "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
NORM_OF_INTEGERS = ("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                    "Got Long")
POST_ACCUMULATE_NON_LEAF = "post accumulate grad hooks cannot be registered on non-leaf tensors"
POST_ACCUMULATE_NO_GRAD = HOOK_NO_GRAD
POST_ACCUMULATE_RETURNED = "post accumulate grad hooks must return None"
REPEAT_TOO_FEW = ("Number of dimensions of repeat dims can not be smaller than number of "
                  "dimensions of tensor")
SAVE_FOR_BACKWARD_TYPE = "save_for_backward can only save variables, but argument 0 is of type int"
SOFTMAX_NEEDS_DIM = 'softmax() missing 1 required positional arguments: "dim"'
VIEW_STRIDES = ("view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
WHERE_CONDITION = ("where expected condition to be a boolean tensor, but got a tensor with dtype "
                   "Long")
INDEX_0_DIM = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
               "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
NLL_1D_TARGET = "0D or 1D target tensor expected, multi-target not supported"

_LEGACY = {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"}


def legacy_name(dtype: object) -> str:
    """`Float`, `Double`, `Long`, `Bool`: how ATen's messages name a dtype."""
    return _LEGACY.get(getattr(dtype, "name", ""), str(dtype))


def addmm_bias(bias: tuple[int, ...], product: tuple[int, ...]) -> str:
    return (f"The expanded size of the tensor ({product[-1]}) must match the existing size "
            f"({bias[-1] if bias else 1}) at non-singleton dimension 1.  Target sizes: "
            f"[{', '.join(map(str, product))}].  Tensor sizes: [{', '.join(map(str, bias))}]")


def bce_size(target: tuple[int, ...], input: tuple[int, ...]) -> str:
    return (f"Using a target size ({torch_size(target)}) that is different to the input size "
            f"({torch_size(input)}) is deprecated. Please ensure they have the same size.")


def bitwise_on_float(op: str) -> str:
    return f'"bitwise_{op}_cpu" not implemented for \'Float\''


def cannot_cast(result: object, out: object) -> str:
    return (f"result type {legacy_name(result)} can't be cast to the desired output type "
            f"{legacy_name(out)}")


def cat_dims(first: int, index: int, dims: int) -> str:
    return f"Tensors must have same number of dimensions: got {first} and {dims}"


def cat_sizes(dim: int, expected: int, got: int, index: int) -> str:
    return (f"Sizes of tensors must match except in dimension {dim}. Expected size {expected} "
            f"but got size {got} for tensor number {index} in the list.")


def custom_backward_type(node: str, got: str) -> str:
    return f"expected Variable or None (got {got})"


def dot_dims(a: int, b: int) -> str:
    return f"1D tensors expected, but got {a}D and {b}D tensors"


def dot_dtypes(a: object, b: object) -> str:
    return (f"dot : expected both vectors to have same dtype, but found {legacy_name(a)} and "
            f"{legacy_name(b)}")


def dot_sizes(a: tuple[int, ...], b: tuple[int, ...]) -> str:
    return (f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have the "
            f"same number of elements, but got {a[0]} and {b[0]} elements respectively")


def empty_reduction(which: str) -> str:
    return (f"{which}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument.")


def expand_mismatch(size: int, own: int, dim: int, sizes: tuple[int, ...],
                    shape: tuple[int, ...]) -> str:
    return (f"The expanded size of the tensor ({size}) must match the existing size ({own}) "
            f"at non-singleton dimension {dim}.  Target sizes: [{', '.join(map(str, sizes))}]."
            f"  Tensor sizes: [{', '.join(map(str, shape))}]")


def expand_negative(dim: int, size: int) -> str:
    return (f"The expanded size of the tensor ({size}) isn't allowed in a leading, "
            f"non-existing dimension {dim}")


def expand_too_few(sizes: tuple[int, ...], ndim: int) -> str:
    return (f"expand(torch.FloatTensor{{[...]}}, size=[{', '.join(map(str, sizes))}]): the "
            f"number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({ndim})")


def gelu_approximate(value: str) -> str:
    return "approximate argument must be either none or tanh."


def grad_for_non_tensor(node: str, position: int) -> str:
    return (f"function {node} returned a gradient different than None at position {position}, "
            "but the corresponding forward input was not a Variable")


def grad_outputs_count(outputs: int, grads: int) -> str:
    return f"got {outputs} tensors and {grads} gradients"


def hook_count(what: str, expected: int, got: int) -> str:
    return (f"hook '<lambda>' has returned an incorrect number of values (got {got}, but "
            f"expected {expected})")


def hook_returned(kind: str) -> str:
    return f"expected Variable, but hook returned '{kind}'"


HOOK_CHANGED_SIZE = "hook '<lambda>' has changed the size of value"


def index_out_of_bounds(index: int, dim: int, size: int) -> str:
    return f"index {index} is out of bounds for dimension {dim} with size {size}"


def inplace_shape(shape: tuple[int, ...], broadcast: tuple[int, ...]) -> str:
    return (f"output with shape [{', '.join(map(str, shape))}] doesn't match the broadcast "
            f"shape [{', '.join(map(str, broadcast))}]")


def invalid_gradient_shape(node: str, index: int, got: tuple[int, ...],
                           expected: tuple[int, ...]) -> str:
    return (f"Function {node} returned an invalid gradient at index {index} - got "
            f"[{', '.join(map(str, got))}] but expected shape compatible with "
            f"[{', '.join(map(str, expected))}]")


def matmul_0d(a: int, b: int) -> str:
    return f"both arguments to matmul need to be at least 1D, but they are {a}D and {b}D"


def mean_of(dtype: object) -> str:
    return ("mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {legacy_name(dtype)}")


def mixed_dtypes(op: str, tensors: Sequence[object]) -> str:
    names = [getattr(getattr(t, "dtype", None), "name", "") for t in tensors]
    if op == "mm":
        short = {"float32": "float", "float64": "double", "int64": "long", "bool": "bool"}
        return (f"expected m1 and m2 to have the same dtype, but got: {short[names[0]]} != "
                f"{short[names[1]]}")
    legacy = [_LEGACY[n] for n in names]
    return (f"{op} input tensors must have the same dtype, but got {legacy[0]}, {legacy[1]}, "
            f"and {legacy[2]}" if len(legacy) == 3 else f"{op}: mixed dtypes {legacy}")


def mm_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> str:
    return (f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, a))} and "
            f"{'x'.join(map(str, b))})")


def mv_shapes(mat: tuple[int, ...], vec: tuple[int, ...]) -> str:
    return (f"size mismatch, got input ({mat[0] if mat else 0}), mat "
            f"({'x'.join(map(str, mat))}), vec ({'x'.join(map(str, vec))})")


def no_grad_fn(index: int) -> str:
    return f"element {index} of tensors does not require grad and does not have a grad_fn"


def not_a_tensor_argument(function: str, argument: str, position: int, value: object) -> TorchError:
    return TorchError("TypeError", f"{function}(): argument '{argument}' (position {position}) "
                      f"must be Tensor, not {type(value).__name__}")


def not_a_tensor_in(function: str, value: object) -> TorchError:
    return TorchError("TypeError", f"{function}(): argument 'inputs' must be tuple of Tensors, "
                      f"not {type(value).__name__}")


def permute_length(ndim: int, dims: int) -> str:
    return ("permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {ndim} is not "
            f"equal to len(dims) = {dims}")


def randint_range(low: int, high: int) -> str:
    return f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"


def real_scalar_outputs(dtype: object) -> str:
    return f"grad can be implicitly created only for real scalar outputs but got {dtype!r}"


def second_order_unsupported(node: str) -> str:
    return (f"the lab records {node} so that sequence numbers match PyTorch, but does not run "
            "backward through it (a derivative of this order is not supported)")


def stack_sizes(first: tuple[int, ...], other: tuple[int, ...], index: int) -> str:
    return (f"stack expects each tensor to be equal size, but got [{', '.join(map(str, first))}]"
            f" at entry 0 and [{', '.join(map(str, other))}] at entry {index}")


def t_of(ndim: int) -> str:
    return f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D"


def target_size(target: tuple[int, ...], input: tuple[int, ...]) -> str:
    return (f"Target size ({torch_size(target)}) must be the same as input size "
            f"({torch_size(input)})")


def tensors_and_gradients(tensors: int, grads: int) -> str:
    return f"got {tensors} tensors and {grads} gradients"


def too_many_indices(ndim: int, used: int) -> str:
    return f"too many indices for tensor of dimension {ndim}"


def unused_input(index: int) -> str:
    return (f"The differentiated Tensor at index {index} appears to not have been used in the "
            "graph. Set allow_unused=True if this is the desired behavior.")


def wrong_number_of_gradients(node: str, expected: int, got: int) -> str:
    return (f"function {node} returned an incorrect number of gradients (expected {expected}, "
            f"got {got})")
