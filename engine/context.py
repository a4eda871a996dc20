"""The per-run state that PyTorch keeps per thread.

PyTorch keeps the sequence-number counter and grad mode thread-local. The lab keeps them
in one `AutogradContext` per program run, held by every tensor of that run, so two
concurrent requests can never see each other's numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

UINT64_MAX: Final = 2**64 - 1


class NodeLimitExceeded(Exception):
    """The program recorded more backward nodes than the run allows."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the program records more than {limit} backward nodes")
        self.limit = limit


@dataclass
class AutogradContext:
    """Sequence counter, grad mode and node ids for one program run."""

    max_nodes: int = 1_000_000
    max_elements: int = 1_000_000
    grad_mode: bool = True
    next_sequence_nr: int = 0
    next_node_id: int = 0

    def take_sequence_nr(self) -> int:
        """`at::sequence_number::get_and_increment()`: one number per recorded node."""
        if self.next_sequence_nr >= self.max_nodes:
            raise NodeLimitExceeded(self.max_nodes)
        nr = self.next_sequence_nr
        self.next_sequence_nr += 1
        return nr

    def take_node_id(self) -> int:
        """A stable id for the views; AccumulateGrad nodes get one too."""
        node_id = self.next_node_id
        self.next_node_id += 1
        return node_id
