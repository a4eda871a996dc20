"""The ATen operations PyTorch's profiler shows for a node, as recorded from PyTorch 2.13.

The lab computes with numpy, so which `aten::` ops a formula runs is not something it
can see; this table says it, in the profiler's words, for the nodes it was recorded for
(app/trace/profile.py turns it into the timeline; tests/test_profile.py checks it against
live torch). `FORWARD` is the op that creates the node, written as the profiler names
it. `BACKWARD` gives the ops inside the node's event, by which inputs need a gradient
(`"10"`: the first does, the second does not); a pattern not listed was not recorded.
`PASS_THROUGH` lists the inputs whose gradient is the incoming one itself (the same
tensor, as `grad` in derivatives.yaml), and `EXPANDED` the nodes whose gradient is an
expanded view: both decide, as reference counts do in PyTorch, whether AccumulateGrad
copies or takes a gradient and whether an input buffer adds in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

FORWARD: Final[Mapping[str, str]] = MappingProxyType({
    "AddBackward0": "aten::add", "SubBackward0": "aten::sub", "MulBackward0": "aten::mul",
    "DivBackward0": "aten::div", "NegBackward0": "aten::neg", "RsubBackward1": "aten::rsub",
    "PowBackward0": "aten::pow", "PowBackward1": "aten::pow", "TanhBackward0": "aten::tanh",
    "ExpBackward0": "aten::exp", "LogBackward0": "aten::log", "SinBackward0": "aten::sin",
    "CosBackward0": "aten::cos", "SigmoidBackward0": "aten::sigmoid",
    "ReluBackward0": "aten::relu", "SqrtBackward0": "aten::sqrt", "AbsBackward0": "aten::abs",
    "SumBackward0": "aten::sum", "MeanBackward0": "aten::mean",
    "SelectBackward0": "aten::select",
})

_MUL: Final = ("aten::mul",)
_POW_SELF: Final = ("aten::sub", "aten::pow", "aten::mul", "aten::mul", "aten::scalar_tensor",
                    "aten::eq", "aten::where")
_POW_EXPONENT: Final = ("aten::ge", "aten::eq", "aten::logical_and", "aten::result_type",
                        "aten::to", "aten::log", "aten::mul", "aten::scalar_tensor",
                        "aten::where", "aten::mul")
BACKWARD: Final[Mapping[str, Mapping[str, tuple[str, ...]]]] = MappingProxyType({
    "AddBackward0": {"11": (), "10": (), "01": ()},
    "SubBackward0": {"11": ("aten::neg",), "10": ()},
    "MulBackward0": {"11": _MUL * 2, "10": _MUL, "01": _MUL},
    "DivBackward0": {"11": ("aten::div", "aten::div", "aten::neg", "aten::mul", "aten::div"),
                     "10": ("aten::div",),
                     "01": ("aten::div", "aten::div", "aten::neg", "aten::mul")},
    "NegBackward0": {"1": ("aten::neg",)},
    "RsubBackward1": {"1": ("aten::neg",)},
    "PowBackward0": {"1": ("aten::pow", "aten::mul", "aten::mul")},
    "PowBackward1": {"10": _POW_SELF, "01": _POW_EXPONENT,
                     "11": _POW_EXPONENT + _POW_SELF},      # exponent first (derivatives.yaml)
    "TanhBackward0": {"1": ("aten::tanh_backward",)},
    "ExpBackward0": {"1": _MUL},
    "LogBackward0": {"1": ("aten::div",)},
    "SinBackward0": {"1": ("aten::cos", "aten::mul")},
    "CosBackward0": {"1": ("aten::sin", "aten::neg", "aten::mul")},
    "SigmoidBackward0": {"1": ("aten::sigmoid_backward",)},
    "ReluBackward0": {"1": ("aten::threshold_backward",)},
    "SqrtBackward0": {"1": ("aten::mul", "aten::div")},
    "AbsBackward0": {"1": ("aten::sgn", "aten::mul")},
    "SumBackward0": {"1": ("aten::expand",)},
    "MeanBackward0": {"1": ("aten::expand", "aten::div")},
    "SelectBackward0": {"1": ("aten::select_backward",)},
    "MvBackward0": {"11": ("aten::ger", "aten::t", "aten::mv")},
    "DotBackward0": {"11": _MUL * 2},
    "ReciprocalBackward0": {"1": ("aten::mul", "aten::neg", "aten::mul")},
    "PowBackward2": {"1": _MUL * 2},
    "CloneBackward0": {"1": ()},
    "TBackward0": {"1": ("aten::t",)},
    "ViewBackward0": {"1": ("aten::reshape",)},
    "UnsqueezeBackward0": {"1": ("aten::squeeze",)},
    "SqueezeBackward4": {"1": ("aten::unsqueeze",)},
    "SliceBackward0": {"1": ("aten::slice_backward",)},
    "AddmmBackward0": {"101": ("aten::t", "aten::mm", "aten::t")},    # F.linear's W.t()
    "MseLossBackward0": {"10": ("aten::mse_loss_backward",)},
    "NllLossBackward0": {"1": ("aten::nll_loss_backward",)},
    "LogSoftmaxBackward0": {"1": ("aten::_log_softmax_backward_data",)},
    "SoftmaxBackward0": {"1": ("aten::_softmax_backward_data",)},
})
# MmBackward0 is left out: which ops it runs depends on its inputs' strides (a transposed
# operand is multiplied the other way round), which the lab does not keep.

PASS_THROUGH: Final[Mapping[str, tuple[int, ...]]] = MappingProxyType(
    {"AddBackward0": (0, 1), "SubBackward0": (0,), "CloneBackward0": (0,),
     "AddmmBackward0": (0,)})
EXPANDED: Final[frozenset[str]] = frozenset({"SumBackward0"})
# Views of the incoming gradient: an expanded one stays expanded.
VIEWS: Final[frozenset[str]] = frozenset({"TBackward0", "ViewBackward0",
                                          "UnsqueezeBackward0", "SqueezeBackward4"})
# The inputs whose gradient `validate_outputs` may sum back to a broadcast input's shape.
BROADCAST: Final[Mapping[str, tuple[int, ...]]] = MappingProxyType({
    "AddBackward0": (0, 1), "SubBackward0": (0, 1), "MulBackward0": (0, 1),
    "DivBackward0": (0, 1), "PowBackward1": (0, 1), "AddmmBackward0": (0,)})

# AccumulateGrad (accumulate_grad.h): the first write takes a gradient no one else holds
# (`detach`) and copies one still held elsewhere; a later write adds in place.
ACCUMULATE_TAKE: Final = ("aten::detach",)
ACCUMULATE_COPY: Final = ("aten::new_empty_strided", "aten::copy_")
ACCUMULATE_ADD: Final = ("aten::add_",)
SEED: Final = "aten::ones_like"
