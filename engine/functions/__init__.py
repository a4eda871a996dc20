"""The ops the lab records, one backward node class per op, named as PyTorch names it."""

from engine.functions._record import TensorTooLarge
from engine.functions.arithmetic import (
    add,
    div,
    mul,
    neg,
    reciprocal,
    rsub,
    sub,
)
from engine.functions.pointwise import abs, cos, exp, log, relu, sigmoid, sin, sqrt, tanh
from engine.functions.power import pow, pow_scalar_base
from engine.functions.reduction import mean, sum

__all__ = [
    "TensorTooLarge", "abs", "add", "cos", "div", "exp", "log", "mean", "mul", "neg", "pow",
    "pow_scalar_base", "reciprocal", "relu", "rsub", "sigmoid", "sin", "sqrt", "sub", "sum",
    "tanh",
]
