"""A small autograd engine that records and runs backward exactly as PyTorch 2.13 does.

Read it in this order: tensor, node, functions/, accumulate_grad, ready_queue,
input_buffer, graph_task, backward. It imports nothing from the app and reports only
through the events in `events`.
"""

from engine.backward import backward
from engine.context import UINT64_MAX, AutogradContext, NodeLimitExceeded
from engine.errors import TorchError
from engine.functions import TensorTooLarge
from engine.tensor import Tensor, tensor

TORCH_VERSION = "2.13.0"

__all__ = [
    "TORCH_VERSION", "UINT64_MAX", "AutogradContext", "NodeLimitExceeded", "Tensor",
    "TensorTooLarge", "TorchError", "backward", "tensor",
]
