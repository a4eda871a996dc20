"""torch.nn.init and nn.Linear's first parameters, drawn from an `engine.random.Generator`.

Each function transcribes its namesake in torch/nn/init.py on a shape instead of a tensor and
returns the new values; the bounds are computed with Python floats exactly as PyTorch's Python
computes them, so the draws are PyTorch's to the bit (tests/test_init.py).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from engine import random
from engine.errors import TorchError
from engine.random import FLOAT32, Array, Generator, Shape

LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (leaky_relu's slope defaults to 0.01)."""
    if nonlinearity in LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            negative_slope = param
        else:
            raise TorchError("ValueError", f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise TorchError("ValueError", f"Unsupported nonlinearity {nonlinearity}")


def calculate_fan_in_and_fan_out(shape: Shape) -> tuple[int, int]:
    """Dimension 1 is the inputs, 0 the outputs, and the rest a receptive field both share."""
    if len(shape) < 2:
        raise TorchError("ValueError", "Fan in and fan out can not be computed for tensor with "
                         "fewer than 2 dimensions")
    receptive_field_size = math.prod(shape[2:])
    return shape[1] * receptive_field_size, shape[0] * receptive_field_size


def calculate_correct_fan(shape: Shape, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise TorchError("ValueError",
                         f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = calculate_fan_in_and_fan_out(shape)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(gen: Generator, shape: Shape, a: float = 0.0, b: float = 1.0,
             dtype: npt.DTypeLike = FLOAT32) -> Array:
    return random.uniform_(gen, shape, a, b, dtype)


def normal_(gen: Generator, shape: Shape, mean: float = 0.0, std: float = 1.0,
            dtype: npt.DTypeLike = FLOAT32) -> Array:
    return random.normal_(gen, shape, mean, std, dtype)


def constant_(shape: Shape, val: float, dtype: npt.DTypeLike = FLOAT32) -> Array:
    return np.full(shape, val, dtype=dtype)


def ones_(shape: Shape, dtype: npt.DTypeLike = FLOAT32) -> Array:
    return constant_(shape, 1.0, dtype)


def zeros_(shape: Shape, dtype: npt.DTypeLike = FLOAT32) -> Array:
    return constant_(shape, 0.0, dtype)


def xavier_uniform_(gen: Generator, shape: Shape, gain: float = 1.0,
                    dtype: npt.DTypeLike = FLOAT32) -> Array:
    fan_in, fan_out = calculate_fan_in_and_fan_out(shape)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return random.uniform_(gen, shape, -a, a, dtype)


def xavier_normal_(gen: Generator, shape: Shape, gain: float = 1.0,
                   dtype: npt.DTypeLike = FLOAT32) -> Array:
    fan_in, fan_out = calculate_fan_in_and_fan_out(shape)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return random.normal_(gen, shape, 0.0, std, dtype)


def kaiming_uniform_(gen: Generator, shape: Shape, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", dtype: npt.DTypeLike = FLOAT32) -> Array:
    """uniform_(-bound, bound) with bound = gain * sqrt(3 / fan); a zero-element tensor is left
    as it is (PyTorch warns and draws nothing)."""
    if 0 in shape:
        return np.empty(shape, dtype=dtype)
    fan = calculate_correct_fan(shape, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return random.uniform_(gen, shape, -bound, bound, dtype)


def kaiming_normal_(gen: Generator, shape: Shape, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", dtype: npt.DTypeLike = FLOAT32) -> Array:
    if 0 in shape:
        return np.empty(shape, dtype=dtype)
    fan = calculate_correct_fan(shape, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return random.normal_(gen, shape, 0, std, dtype)


def linear_parameters(gen: Generator, in_features: int, out_features: int, bias: bool = True,
                      dtype: npt.DTypeLike = FLOAT32) -> tuple[Array, Array | None]:
    """nn.Linear(in_features, out_features, bias)'s weight and bias as reset_parameters draws
    them (torch/nn/modules/linear.py): the weight first, kaiming_uniform_ with a=sqrt(5), which
    is uniform(-1/sqrt(in), 1/sqrt(in)); then the bias, uniform with the same fan_in."""
    weight_shape = (out_features, in_features)
    weight = kaiming_uniform_(gen, weight_shape, a=math.sqrt(5), dtype=dtype)
    if not bias:
        return weight, None
    fan_in, _ = calculate_fan_in_and_fan_out(weight_shape)
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
    return weight, random.uniform_(gen, (out_features,), -bound, bound, dtype)
