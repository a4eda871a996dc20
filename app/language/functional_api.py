"""`torch.nn.functional` (imported as `F`): activations and losses of a small network."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from app.language.tensor_api import softmax_input, tensor_arg
from app.language.torch_api import Impl, function
from app.language.values import Namespace, Value
from engine import functions
from engine.errors import TorchError
from engine.functions import binary_cross_entropy, classification, dims, loss
from engine.tensor import Tensor

if TYPE_CHECKING:
    from app.language.interpreter import Interpreter

Kwargs = dict[str, Value]
MEMBERS: dict[str, Value] = {}


def _f(name: str, spec: str) -> Callable[[Impl], Impl]:
    return function(name, spec, MEMBERS, "torch.nn.functional")


def _reduction(a: Kwargs) -> str:
    """The `reduction=` argument, with the deprecated `size_average`/`reduce` honoured."""
    if a.get("size_average") is not None or a.get("reduce") is not None:
        reduce, size_average = a.get("reduce"), a.get("size_average")
        if reduce is False:
            return "none"
        return "mean" if size_average in (None, True) else "sum"
    return str(a["reduction"])


@_f("relu", "input, inplace=False")
def _relu(interp: Interpreter, a: Kwargs) -> Tensor:
    x = tensor_arg(a["input"], "input", "relu")
    if a["inplace"]:                          # torch.relu_(input)
        from engine.functions import inplace

        return inplace.inplace(x, functions.relu)
    return functions.relu(x)


@_f("sigmoid", "input")
def _sigmoid(interp: Interpreter, a: Kwargs) -> Tensor:
    return functions.sigmoid(tensor_arg(a["input"], "input", "sigmoid"))


@_f("tanh", "input")
def _tanh(interp: Interpreter, a: Kwargs) -> Tensor:
    return functions.tanh(tensor_arg(a["input"], "input", "tanh"))


@_f("gelu", "input, approximate='none'")
def _gelu(interp: Interpreter, a: Kwargs) -> Tensor:
    return functions.gelu(tensor_arg(a["input"], "input", "gelu"), a["approximate"])


@_f("silu", "input, inplace=False")
def _silu(interp: Interpreter, a: Kwargs) -> Tensor:
    x = tensor_arg(a["input"], "input", "silu")
    return functions.silu_(x) if a["inplace"] else functions.silu(x)


@_f("leaky_relu", "input, negative_slope=0.01, inplace=False")
def _leaky_relu(interp: Interpreter, a: Kwargs) -> Tensor:
    x = tensor_arg(a["input"], "input", "leaky_relu")
    if a["inplace"]:
        return functions.leaky_relu_(x, a["negative_slope"])
    return functions.leaky_relu(x, a["negative_slope"])


@_f("leaky_relu_", "input, negative_slope=0.01")
def _leaky_relu_in_place(interp: Interpreter, a: Kwargs) -> Tensor:
    return functions.leaky_relu_(tensor_arg(a["input"], "input", "leaky_relu_"),
                                 a["negative_slope"])


@_f("one_hot", "tensor, num_classes=-1")
def _one_hot(interp: Interpreter, a: Kwargs) -> Tensor:
    n = a["num_classes"]
    if isinstance(n, bool) or not isinstance(n, int):
        raise TorchError("TypeError", "one_hot(): argument 'num_classes' (position 2) must be "
                         f"int, not {type(n).__name__}")
    return classification.one_hot(tensor_arg(a["tensor"], "tensor", "one_hot"), n)


@_f("softplus", "input, beta=1.0, threshold=20.0")
def _softplus(interp: Interpreter, a: Kwargs) -> Tensor:
    return functions.softplus(tensor_arg(a["input"], "input", "softplus"), a["beta"],
                              a["threshold"])


@_f("elu", "input, alpha=1.0, inplace=False")
def _elu(interp: Interpreter, a: Kwargs) -> Tensor:
    x = tensor_arg(a["input"], "input", "elu")
    return functions.elu_(x, a["alpha"]) if a["inplace"] else functions.elu(x, a["alpha"])


@_f("elu_", "input, alpha=1.0")
def _elu_in_place(interp: Interpreter, a: Kwargs) -> Tensor:
    return functions.elu_(tensor_arg(a["input"], "input", "elu_"), a["alpha"])


def _implicit_dim(t: Tensor) -> int:
    """PyTorch's `_get_softmax_dim` for a call without `dim` (with a warning)."""
    return 0 if t.ndim in (0, 1, 3) else 1


@_f("softmax", "input, dim=None, _stacklevel=3, dtype=None")
def _softmax(interp: Interpreter, a: Kwargs) -> Tensor:
    t = tensor_arg(a["input"], "input", "softmax")
    dim = a["dim"] if a["dim"] is not None else _implicit_dim(t)
    return functions.softmax(softmax_input(t, a["dtype"]), dim)


@_f("log_softmax", "input, dim=None, _stacklevel=3, dtype=None")
def _log_softmax(interp: Interpreter, a: Kwargs) -> Tensor:
    t = tensor_arg(a["input"], "input", "log_softmax")
    dim = a["dim"] if a["dim"] is not None else _implicit_dim(t)
    return functions.log_softmax(softmax_input(t, a["dtype"]), dim)


_LOSS = "input, target, size_average=None, reduce=None, reduction='mean'"


@_f("mse_loss", _LOSS + ", weight=None")
def _mse_loss(interp: Interpreter, a: Kwargs) -> Tensor:
    x = tensor_arg(a["input"], "input", "mse_loss")
    y = tensor_arg(a["target"], "target", "mse_loss")
    if x.shape != y.shape:
        interp.ctx.warnings.append(
            f"Using a target size ({_size(y)}) that is different to the input size "
            f"({_size(x)}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.")
    return mse_loss(x, y, _reduction(a))


def mse_loss(x: Tensor, y: Tensor, reduction: str) -> Tensor:
    """F.mse_loss broadcasts its operands first (torch.broadcast_tensors: an
    ExpandBackward0 for an operand of another shape), then takes the loss."""
    x, y = dims.broadcast_pair(x, y)
    return loss.mse_loss(x, y, reduction)


def _size(t: Tensor) -> str:
    return "torch.Size([" + ", ".join(str(d) for d in t.shape) + "])"


@_f("l1_loss", _LOSS)
def _l1_loss(interp: Interpreter, a: Kwargs) -> Tensor:
    return loss.l1_loss(tensor_arg(a["input"], "input", "l1_loss"),
                        tensor_arg(a["target"], "target", "l1_loss"), _reduction(a))


@_f("smooth_l1_loss", _LOSS + ", beta=1.0")
def _smooth_l1_loss(interp: Interpreter, a: Kwargs) -> Tensor:
    return loss.smooth_l1_loss(tensor_arg(a["input"], "input", "smooth_l1_loss"),
                               tensor_arg(a["target"], "target", "smooth_l1_loss"),
                               _reduction(a), a["beta"])


@_f("huber_loss", "input, target, reduction='mean', delta=1.0, weight=None")
def _huber_loss(interp: Interpreter, a: Kwargs) -> Tensor:
    return loss.huber_loss(tensor_arg(a["input"], "input", "huber_loss"),
                           tensor_arg(a["target"], "target", "huber_loss"), a["reduction"],
                           a["delta"])


_CLASS_LOSS = ("input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, "
               "reduction='mean'")


@_f("cross_entropy", _CLASS_LOSS + ", label_smoothing=0.0")
def _cross_entropy(interp: Interpreter, a: Kwargs) -> Tensor:
    return classification.cross_entropy(tensor_arg(a["input"], "input", "cross_entropy"),
                              tensor_arg(a["target"], "target", "cross_entropy"), a["weight"],
                              a["ignore_index"], _reduction(a), float(a["label_smoothing"]))


@_f("nll_loss", _CLASS_LOSS)
def _nll_loss(interp: Interpreter, a: Kwargs) -> Tensor:
    return classification.nll_loss(tensor_arg(a["input"], "input", "nll_loss"),
                         tensor_arg(a["target"], "target", "nll_loss"), a["weight"],
                         a["ignore_index"], _reduction(a))


@_f("binary_cross_entropy_with_logits", "input, target, weight=None, size_average=None, "
    "reduce=None, reduction='mean', pos_weight=None")
def _bce_logits(interp: Interpreter, a: Kwargs) -> Tensor:
    return binary_cross_entropy.binary_cross_entropy_with_logits(
        tensor_arg(a["input"], "input", "binary_cross_entropy_with_logits"),
        tensor_arg(a["target"], "target", "binary_cross_entropy_with_logits"), a["weight"],
        _reduction(a), a["pos_weight"])


@_f("binary_cross_entropy", "input, target, weight=None, size_average=None, reduce=None, "
    "reduction='mean'")
def _bce(interp: Interpreter, a: Kwargs) -> Tensor:
    return binary_cross_entropy.binary_cross_entropy(
        tensor_arg(a["input"], "input", "binary_cross_entropy"),
        tensor_arg(a["target"], "target", "binary_cross_entropy"), a["weight"], _reduction(a))


@_f("linear", "input, weight, bias=None")
def _linear(interp: Interpreter, a: Kwargs) -> Tensor:
    return linear(tensor_arg(a["input"], "input", "linear"),
                  tensor_arg(a["weight"], "weight", "linear"), a["bias"])


def linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """`F.linear` as `at::linear` does it: addmm for a matrix with a bias; any other
    contiguous input with a bias viewed as rows, addmm, viewed back (`_flatten_nd_linear`);
    else a matmul, plus the bias."""
    if x.ndim == 2 and bias is not None:
        return functions.addmm(bias, x, functions.t(weight))
    if bias is not None and x.ndim >= 1 and x.data.flags.c_contiguous:
        rows = 1
        for d in x.shape[:-1]:
            rows *= d
        flat = functions.view(x, (rows, x.shape[-1]))
        out = functions.addmm(bias, flat, functions.t(weight))
        return functions.view(out, x.shape[:-1] + out.shape[1:])
    out = functions.matmul(x, functions.t(weight))
    return functions.add(out, bias) if bias is not None else out


@_f("dropout", "input, p=0.5, training=True, inplace=False")
def _dropout(interp: Interpreter, a: Kwargs) -> Tensor:
    return dropout(tensor_arg(a["input"], "input", "dropout"), float(a["p"]),
                   bool(a["training"]))


def dropout(x: Tensor, p: float, training: bool) -> Tensor:
    """`F.dropout`: each value kept with probability 1 - p and scaled by 1 / (1 - p), from
    a Bernoulli mask drawn from the generator, as PyTorch's `_dropout_impl` does."""
    if not 0 <= p <= 1:
        raise TorchError("ValueError", f"dropout probability has to be between 0 and 1, but "
                         f"got {p}")
    if not training or p == 0:
        return x
    from engine import random
    from engine.functions.inplace import random_fill

    noise = Tensor(x.data.copy(), x.ctx)
    if p == 1:
        noise.data[...] = 0
    else:
        random_fill(noise, random.bernoulli_(x.ctx.generator, x.shape, 1 - p, x.data.dtype))
        noise.data[...] = noise.data / x.data.dtype.type(1 - p)
    return functions.mul(x, noise)


F = Namespace("torch.nn.functional", MEMBERS)
