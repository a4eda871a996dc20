"""The ops the lab records, one backward node class per op, named as PyTorch names it.

One module per family, each op's forward beside its backward formula: arithmetic (+ - * /),
power (**), pointwise (tanh, exp, ...), fused (the fused backward kernels), compare
(comparisons, where, maximum, clamp), reduction (sum, mean, max, ...), shape (views,
cat, stack), indexing (x[...]), linalg (@, mm, mv, dot), activation (softmax, gelu, ...),
loss (mse, cross_entropy, ...), conversion (dtypes), factories (zeros, randn, ...) and
inplace (x.add_(...), x[...] = v, the version counter).
"""

from engine.functions.activation import elu, gelu, leaky_relu, log_softmax, silu, softmax, softplus
from engine.functions.activation_inplace import elu_, leaky_relu_, silu_
from engine.functions.arithmetic import (
    add,
    add_scalar,
    div,
    div_scalar,
    mul,
    mul_scalar,
    neg,
    reciprocal,
    rsub,
    sub,
    sub_scalar,
)
from engine.functions.clamp import clamp, clamp_max, clamp_min
from engine.functions.compare import compare, logical, maximum, minimum, where
from engine.functions.conversion import to_dtype
from engine.functions.dims import expand, squeeze, unsqueeze
from engine.functions.extrema import amax, amin, argmax, argmin, max, min
from engine.functions.indexing import select
from engine.functions.joins import cat, repeat, stack
from engine.functions.linalg import addmm, dot, matmul, mm, mv, outer
from engine.functions.pointwise import (
    abs,
    ceil,
    cos,
    erf,
    exp,
    expm1,
    floor,
    log,
    log1p,
    relu,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    tan,
    tanh,
)
from engine.functions.power import pow, pow_scalar, pow_scalar_base
from engine.functions.reduction import mean, sum, sum_to
from engine.functions.shape import (
    clone,
    contiguous,
    flatten,
    flip,
    numpy_t,
    permute,
    reshape,
    t,
    transpose,
    view,
)
from engine.functions.slicing import getitem
from engine.functions.spread import var
from engine.functions.statistics import cumulative_sum, logsumexp, norm, prod

__all__ = [
    "abs", "add", "add_scalar", "addmm", "amax", "amin", "argmax", "argmin", "cat", "ceil",
    "clamp", "clamp_max", "clamp_min", "clone", "compare", "contiguous", "cos", "cumulative_sum",
    "div", "div_scalar", "dot", "elu", "elu_", "erf", "exp", "expand", "expm1", "flatten", "flip",
    "floor", "gelu", "getitem", "leaky_relu", "leaky_relu_", "log", "log1p", "log_softmax",
    "logical", "logsumexp", "matmul", "max", "maximum", "mean", "min", "minimum", "mm", "mul",
    "mul_scalar", "mv", "neg", "norm", "numpy_t", "outer", "permute", "pow", "pow_scalar",
    "pow_scalar_base", "prod", "reciprocal", "relu", "repeat", "reshape", "round", "rsqrt", "rsub",
    "select", "sigmoid", "sign", "silu", "silu_", "sin", "softmax", "softplus", "sqrt", "squeeze",
    "stack", "sub", "sub_scalar", "sum", "sum_to", "t", "tan", "tanh", "to_dtype", "transpose",
    "unsqueeze", "var", "view", "where",
]
