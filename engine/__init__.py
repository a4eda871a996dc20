"""A small autograd engine that records and runs backward exactly as PyTorch 2.13 does.

Read it in this order: dtypes, tensor, node, functions/, views, accumulate_grad, ready_queue,
input_buffer, graph_task, backward; then hooks, custom_function, nn and optim. It imports
nothing from the app and reports only through the events in `events`.
"""

from engine.backward import backward as run_backward
from engine.backward import grad as run_grad
from engine.context import UINT64_MAX, AutogradContext, NodeLimitExceeded, TensorTooLarge
from engine.errors import TorchError
from engine.tensor import Tensor, tensor

TORCH_VERSION = "2.13.0"

__all__ = [
    "TORCH_VERSION", "UINT64_MAX", "AutogradContext", "NodeLimitExceeded", "Tensor",
    "TensorTooLarge", "TorchError", "run_backward", "run_grad", "tensor",
]
