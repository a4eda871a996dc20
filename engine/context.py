"""The per-run state that PyTorch keeps per thread.

PyTorch keeps the sequence-number counter, grad mode, inference mode, the
saved-tensors-hooks stack and the default generator per thread (or per process). The lab
keeps them in one `AutogradContext` per program run, held by every tensor of that run, so
two concurrent requests can never see each other's numbers or modes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, Final

UINT64_MAX: Final = 2**64 - 1
FRESH_SEED_BITS: Final = 53


def fresh_seed() -> int:
    """A seed as a fresh PyTorch process draws one for its default generator, from
    /dev/urandom (readURandomLong, c10/core/GeneratorImpl.cpp), but of 53 bits where
    PyTorch's has 64: a trace carries its seed to the page as a JSON number, which a
    browser reads as a double, and the page sends it back to run the program again (the
    derivative view, a resumed stream). No program can tell a random 53-bit seed from a
    random 64-bit one."""
    return int.from_bytes(os.urandom(8), sys.byteorder) >> (64 - FRESH_SEED_BITS)


class NodeLimitExceeded(Exception):
    """The program recorded more backward nodes than the run allows."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the program records more than {limit} backward nodes")
        self.limit = limit


class TensorTooLarge(Exception):
    """An op would make a tensor with more elements than the run allows."""

    def __init__(self, elements: int, limit: int) -> None:
        super().__init__(f"this makes a tensor of {elements} elements; the lab allows {limit}")


SavedTensorsHooks = tuple[Callable[[Any], Any], Callable[[Any], Any]]    # (pack, unpack)


class AutogradContext:
    """Sequence counter, grad and inference mode, node ids and limits for one run."""

    def __init__(self, max_nodes: int = 1_000_000, max_elements: int = 1_000_000) -> None:
        self.max_nodes = max_nodes
        self.max_elements = max_elements
        self.grad_mode = True
        self.inference_mode = False
        self.next_sequence_nr = 0
        self.next_node_id = 0
        self.nodes_recorded = 0
        # A leaf started to require grad (`requires_grad_()`): the program's names are
        # looked at again, since that leaf may already be bound to one.
        self.requires_grad_changed = False
        self.saved_tensors_hooks: list[SavedTensorsHooks] = []
        self.warnings: list[str] = []          # UserWarnings PyTorch would print
        # Where the program is, for the views: its line, and the module (`model.0`) whose
        # forward is running. Nodes record both; PyTorch keeps neither.
        self.line = 0
        self.scope: str | None = None
        # The node a graph task is applying, and that task's exec_info (autograd.grad's
        # needed nodes): `task_should_compute_output` consults them.
        self.applying: Any = None
        self.exec_info: Any = None
        self.hook_calls: Any = None            # the pop's HookCalls, for those inside apply
        self.scheduler = "ready_queue"         # or "topological" (engine/topological.py)
        # Whether the next pass's events carry the views' snapshots (the graph's nodes,
        # dependency counts, the queue and `.grad` before and after at each pop); a trace
        # summarises passes past its max_full_passes and turns them off (see Note
        # [Summarised passes] in engine/graph_task.py).
        self.snapshots = True
        self._generator: Any = None
        self.replay_seed: int | None = None    # a seed to draw from instead of a fresh one
        self.fresh_seed: int | None = None     # the seed a fresh generator drew
        # The derivative view re-runs a program to see one node as it recorded: the node,
        # and copies of its inputs' values then (app/trace/derivatives.py).
        self.keep_node_id: int | None = None
        self.kept: tuple[Any, list[Any]] | None = None
        # Python numbers wrapped as 0-d tensors, for reuse (engine/functions/_record.py)
        self.wrapped: dict[tuple[type, Any, float, bool], Any] = {}

    def take_sequence_nr(self) -> int:
        """`at::sequence_number::get_and_increment()`: one number per recorded node."""
        nr = self.next_sequence_nr
        self.next_sequence_nr += 1
        return nr

    def take_node_id(self) -> int:
        """A stable id for the views; AccumulateGrad nodes get one too."""
        if self.nodes_recorded >= self.max_nodes:
            raise NodeLimitExceeded(self.max_nodes)
        self.nodes_recorded += 1
        node_id = self.next_node_id
        self.next_node_id += 1
        return node_id

    def check_elements(self, shape: tuple[int, ...]) -> None:
        """Refuse a tensor of more elements than the run allows, before it is made."""
        elements = 1
        for d in shape:
            elements *= max(int(d), 0)
        if elements > self.max_elements:
            raise TensorTooLarge(elements, self.max_elements)

    @property
    def generator(self) -> Any:
        """The run's default generator (`torch.default_generator`), made on first use with
        a seed drawn at random, as a fresh PyTorch process seeds its own."""
        if self._generator is None:
            from engine.random import Generator

            if self.replay_seed is not None:
                self._generator = Generator(self.replay_seed)
            else:
                self._generator = Generator(fresh_seed())
            self.fresh_seed = self._generator.initial_seed()
        return self._generator

    @property
    def has_generator(self) -> bool:
        return self._generator is not None
