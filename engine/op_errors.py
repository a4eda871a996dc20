"""The messages PyTorch's operators raise for bad arguments, word for word.

Shapes that do not fit, dtypes an op refuses, indices out of range: each text was
recorded from PyTorch 2.13 and is pinned by a test. The autograd engine's own messages
(freed graphs, hooks, gradients) live in `engine.errors`.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

from engine.errors import TorchError, torch_size

INTEGER_NEGATIVE_POWER = "Integers to negative integer powers are not allowed."
MEAN_OF_INTEGERS = (
    "mean(): could not infer output dtype. Input dtype must be either a floating point or "
    "complex dtype. Got: Long"
)
NUMBER_NOT_LIST = "must be real number, not list"         # torch.tensor([1.0, [2.0]])
NOT_A_SEQUENCE = "not a sequence"                         # torch.tensor([[1.0], 2.0])
INT_TOO_BIG = "int too big to convert"                    # a * 10**30, OverflowError
ONLY_ONE_ELEMENT_TENSORS = "only one element tensors can be converted to Python scalars"
AMBIGUOUS_BOOL = "Boolean value of Tensor with more than one value is ambiguous"


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


def ragged(length: int, dim: int, got: int) -> TorchError:
    return TorchError("ValueError",
                      f"expected sequence of length {length} at dim {dim} (got {got})")


ARANGE_BOUNDS = "upper bound and lower bound inconsistent with step sign"
BAD_INDEX = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
             "are valid indices")
BAD_INDEX_TENSOR = "tensors used as indices must be long, int, byte or bool tensors"
BITWISE_NOT_FLOAT = "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
CLAMP_NO_BOUNDS = "torch.clamp: At least one of 'min' or 'max' must not be None"
INPLACE_OVERLAP = ("unsupported operation: more than one element of the written-to tensor "
                   "refers to a single memory location. Please clone() the tensor before "
                   "performing the operation.")
NEGATIVE_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                 "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
SUB_TWO_BOOLS = ("Subtraction, the `-` operator, with two bool tensors is not supported. "
                 "Use the `^` or `logical_xor()` operator instead.")
SUB_BOOL = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
NORM_OF_INTEGERS = ("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                    "Got Long")
REPEAT_TOO_FEW = ("Number of dimensions of repeat dims can not be smaller than number of "
                  "dimensions of tensor")
SOFTMAX_NEEDS_DIM = 'softmax() missing 1 required positional arguments: "dim"'
VIEW_STRIDES = ("view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
INDEX_0_DIM = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
               "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
NLL_1D_TARGET = "0D or 1D target tensor expected, multi-target not supported"
_LEGACY = MappingProxyType(
    {"float32": "Float", "float64": "Double", "int64": "Long", "bool": "Bool"})


def legacy_name(dtype: object) -> str:
    """`Float`, `Double`, `Long`, `Bool`: how ATen's messages name a dtype."""
    return _LEGACY.get(getattr(dtype, "name", ""), str(dtype))


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


def expand_too_few(sizes: tuple[int, ...], shape: tuple[int, ...], dtype: object) -> str:
    return (f"expand(torch.{legacy_name(dtype)}Tensor{{[{', '.join(map(str, shape))}]}}, "
            f"size=[{', '.join(map(str, sizes))}]): the number of sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(shape)})")


def gelu_approximate(value: str) -> str:
    return "approximate argument must be either none or tanh."


def index_out_of_bounds(index: int, dim: int, size: int) -> str:
    return f"index {index} is out of bounds for dimension {dim} with size {size}"


def inplace_shape(shape: tuple[int, ...], broadcast: tuple[int, ...]) -> str:
    return (f"output with shape [{', '.join(map(str, shape))}] doesn't match the broadcast "
            f"shape [{', '.join(map(str, broadcast))}]")


def matmul_0d(a: int, b: int) -> str:
    return f"both arguments to matmul need to be at least 1D, but they are {a}D and {b}D"


def mean_of(dtype: object) -> str:
    return ("mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {legacy_name(dtype)}")


def mixed_dtypes(op: str, tensors: Sequence[object]) -> str:
    """mm: `m1 and m2` with C++'s type names; addmm: the first of `self and mat2`,
    `mat1 and mat2` that differ (the order ATen checks them in); addmv: all three."""
    names = [getattr(getattr(t, "dtype", None), "name", "") for t in tensors]
    if op == "mm":
        short = {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}
        return (f"expected m1 and m2 to have the same dtype, but got: {short[names[0]]} != "
                f"{short[names[1]]}")
    legacy = [_LEGACY[n] for n in names]
    if op == "addmm":
        first = "self" if legacy[0] != legacy[2] else "mat1"
        shown = legacy[0] if first == "self" else legacy[1]
        return f"{first} and mat2 must have the same dtype, but got {shown} and {legacy[2]}"
    return (f"{op} input tensors must have the same dtype, but got {legacy[0]}, {legacy[1]}, "
            f"and {legacy[2]}")


def mm_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> str:
    return (f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, a))} and "
            f"{'x'.join(map(str, b))})")


def mv_shapes(mat: tuple[int, ...], vec: tuple[int, ...]) -> str:
    if len(mat) != 2 or len(vec) != 1:
        return f"vector + matrix @ vector expected, got 1, {len(mat)}, {len(vec)}"
    return (f"size mismatch, got input ({mat[0] if mat else 0}), mat "
            f"({'x'.join(map(str, mat))}), vec ({'x'.join(map(str, vec))})")


def not_a_tensor_argument(function: str, argument: str, position: int, value: object) -> TorchError:
    return TorchError("TypeError", f"{function}(): argument '{argument}' (position {position}) "
                      f"must be Tensor, not {type(value).__name__}")


def permute_length(ndim: int, dims: int) -> str:
    return ("permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {ndim} is not "
            f"equal to len(dims) = {dims}")


def randint_range(low: int, high: int) -> str:
    return f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"


def stack_sizes(first: tuple[int, ...], other: tuple[int, ...], index: int) -> str:
    return (f"stack expects each tensor to be equal size, but got [{', '.join(map(str, first))}]"
            f" at entry 0 and [{', '.join(map(str, other))}] at entry {index}")


def t_of(ndim: int) -> str:
    return f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D"


def target_size(target: tuple[int, ...], input: tuple[int, ...]) -> str:
    return (f"Target size ({torch_size(target)}) must be the same as input size "
            f"({torch_size(input)})")


def too_many_indices(ndim: int, used: int) -> str:
    return f"too many indices for tensor of dimension {ndim}"


def fill_dims(ndim: int) -> str:
    return (f"fill_ only supports 0-dimension value tensor but got tensor with {ndim} "
            "dimensions.")


def index_put_dtypes(dst: str, src: str) -> str:
    """`dst`, `src`: ScalarType names, "Float", "Long"."""
    return (f"Index put requires the source and destination dtypes match, got {dst} for the "
            f"destination and {src} for the source.")


def index_put_shape(value: tuple[int, ...], result: tuple[int, ...]) -> str:
    return (f"shape mismatch: value tensor of shape {list(value)} cannot be broadcast to "
            f"indexing result of shape {list(result)}")


SLICE_0_DIM = "slice() cannot be applied to a 0-dim tensor."


def where_condition(dtype: object) -> str:
    return ("where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{legacy_name(dtype)}")

# leaky_relu_ and elu_ save their result, from which a negative slope cannot be undone
INPLACE_LEAKY_RELU_SLOPE = (
    "In-place leakyReLu backward calculation is triggered with a negative slope which is "
    "not supported. This is caused by calling in-place forward function with a negative "
    "slope, please call out-of-place version instead. File an issue at "
    "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
    "backward calculation with negative slope")
INPLACE_ELU_SLOPE = (
    "In-place elu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead.")
