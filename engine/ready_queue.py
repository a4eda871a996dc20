"""ReadyQueue: the engine's priority queue, popping exactly as PyTorch's does.

# Note [Ready queue order]
PyTorch keeps ready tasks in `std::priority_queue<NodeTask, vector, CompareNodeTaskTime>`;
the comparator puts the larger sequence number first, so the node recorded last runs
first and AccumulateGrad (UINT64_MAX) runs before any other ready node. Equal numbers
(only AccumulateGrads tie) come out in the order libstdc++'s binary heap gives, which is
not first-in-first-out, so any other tie rule disagrees with real PyTorch on some
programs.

Python's `heapq` is that same heap, mirrored: `heappush` is `push_heap` (append, then
move up past strictly greater parents), and `heappop` is `pop_heap` (the last element
replaces the top, the hole walks down to a leaf by the smaller child, the right one on
ties, then the element moves back up). So a min-heap of (-sequence_nr, task) in which all
tasks compare equal pops exactly as libstdc++'s max-heap of sequence numbers does.
tests/test_ready_queue.py checks it against the reference's step-by-step simulator.
"""

from __future__ import annotations

from bisect import bisect
from heapq import heappop, heappush
from typing import Any, Generic, TypeVar

from engine.context import UINT64_MAX

T = TypeVar("T")


class _Task(Generic[T]):
    """A queued item. Every task equals every other, so the heap compares keys alone and
    ties stay where the heap puts them (a tuple comparison moves on to the second element
    only when the first ones are equal)."""

    __slots__ = ("item", "label")

    def __init__(self, item: T, label: Any) -> None:
        self.item = item
        self.label = label

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


class ReadyQueue(Generic[T]):
    """A max-heap of (sequence_nr, item) that pops as libstdc++'s does.

    Each task has a label (the lab uses node ids), which is what `in_pop_order` shows.
    Beside the heap it keeps the ordinary nodes' sequence numbers sorted, with their labels
    in a parallel list, so the queue can be shown in pop order at every step without
    popping a copy of all of it.
    """

    __slots__ = ("heap", "_ordinary", "_ordinary_labels")

    def __init__(self) -> None:
        self.heap: list[tuple[int, _Task[T]]] = []   # (-sequence_nr, task): a min-heap
        self._ordinary: list[int] = []              # ascending; all distinct
        self._ordinary_labels: list[Any] = []       # in the same order

    def __len__(self) -> int:
        return len(self.heap)

    def push(self, sequence_nr: int, item: T, label: Any = None) -> None:
        """`std::push_heap`. `label` is what `in_pop_order` shows (the item if None)."""
        label = item if label is None else label
        heappush(self.heap, (-sequence_nr, _Task(item, label)))
        if sequence_nr != UINT64_MAX:
            at = bisect(self._ordinary, sequence_nr)
            self._ordinary.insert(at, sequence_nr)
            self._ordinary_labels.insert(at, label)

    def pop(self) -> tuple[int, T]:
        """`std::pop_heap`: the task that runs next."""
        key, task = heappop(self.heap)
        if key != -UINT64_MAX:
            # The largest key is on top, so an ordinary node on top is the largest of them.
            self._ordinary.pop()
            self._ordinary_labels.pop()
        return -key, task.item

    def in_pop_order(self) -> list[Any]:
        """The waiting labels in the order they will pop (if nothing else is pushed).

        Every AccumulateGrad (UINT64_MAX) pops before every ordinary node, in the order
        the heap gives them, so only those are popped from a copy of the heap; ordinary
        nodes have distinct sequence numbers and follow from largest to smallest.
        """
        ordinary = self._ordinary_labels[::-1]
        waiting = len(self.heap) - len(self._ordinary)
        if not waiting:
            return ordinary
        copy = list(self.heap)
        return [heappop(copy)[1].label for _ in range(waiting)] + ordinary
