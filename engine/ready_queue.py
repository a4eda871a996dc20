"""ReadyQueue: the engine's priority queue, popping exactly as PyTorch's does.

# Note [Ready queue order]
PyTorch keeps ready tasks in `std::priority_queue<NodeTask, vector, CompareNodeTaskTime>`;
the comparator puts the larger sequence number first, so the node recorded last runs
first and AccumulateGrad (UINT64_MAX) runs before any other ready node. Equal numbers
(only AccumulateGrads tie) come out in the order libstdc++'s binary heap gives, which is
not first-in-first-out. So this is libstdc++'s `push_heap`/`pop_heap`, step for step:
any other tie rule disagrees with real PyTorch on some programs.
"""

from __future__ import annotations

import bisect
from typing import Any, Generic, TypeVar

from engine.context import UINT64_MAX

T = TypeVar("T")


class ReadyQueue(Generic[T]):
    """A max-heap of (sequence_nr, item) with libstdc++'s sift-up and sift-down.

    Each task has a label (the lab uses node ids), which is what `in_pop_order` shows.
    Beside the heap it keeps the ordinary nodes' sequence numbers sorted, with their labels
    in a parallel list, so the queue can be shown in pop order at every step without
    popping a copy.
    """

    __slots__ = ("heap", "_labels", "_ordinary", "_ordinary_labels")

    def __init__(self) -> None:
        self.heap: list[tuple[int, T]] = []
        self._labels: dict[int, Any] = {}           # id(item) -> label
        self._ordinary: list[int] = []              # ascending; all distinct
        self._ordinary_labels: list[Any] = []       # in the same order

    def __len__(self) -> int:
        return len(self.heap)

    def push(self, sequence_nr: int, item: T, label: Any = None) -> None:
        """`std::push_heap`: append, then move up past strictly smaller parents.

        `label` is what `in_pop_order` shows for this task (the item itself if None)."""
        label = item if label is None else label
        self.heap.append((sequence_nr, item))
        _sift_up(self.heap, len(self.heap) - 1, (sequence_nr, item))
        self._labels[id(item)] = label
        if sequence_nr != UINT64_MAX:
            at = bisect.bisect(self._ordinary, sequence_nr)
            self._ordinary.insert(at, sequence_nr)
            self._ordinary_labels.insert(at, label)

    def pop(self) -> tuple[int, T]:
        """Take the task that runs next."""
        top = self._pop_heap()
        del self._labels[id(top[1])]
        if top[0] != UINT64_MAX:
            # The largest key is on top, so an ordinary node on top is the largest of them.
            self._ordinary.pop()
            self._ordinary_labels.pop()
        return top

    def _pop_heap(self) -> tuple[int, T]:
        """`std::pop_heap`: the top out; the hole goes down by the larger child (the right
        one on ties), then the last element is sifted up from there."""
        heap = self.heap
        top = heap[0]
        n = len(heap) - 1
        if n > 0:
            last = heap[n]
            heap[n] = top
            hole = child = 0
            while child < (n - 1) // 2:
                child = 2 * (child + 1)
                if heap[child][0] < heap[child - 1][0]:
                    child -= 1
                heap[hole] = heap[child]
                hole = child
            if n % 2 == 0 and child == (n - 2) // 2:
                child = 2 * (child + 1)
                heap[hole] = heap[child - 1]
                hole = child - 1
            _sift_up(heap, hole, last)
        heap.pop()
        return top

    def in_pop_order(self) -> list[Any]:
        """The waiting items in the order they will pop (if nothing else is pushed).

        Every AccumulateGrad (UINT64_MAX) pops before every ordinary node, in the order
        the heap gives them, so only those are popped from a copy of the heap; ordinary
        nodes have distinct sequence numbers and follow from largest to smallest.
        """
        ordinary = self._ordinary_labels[::-1]
        waiting = len(self.heap) - len(self._ordinary)
        if not waiting:
            return ordinary
        copy: ReadyQueue[T] = ReadyQueue()
        copy.heap = list(self.heap)
        labels = self._labels
        return [labels[id(copy._pop_heap()[1])] for _ in range(waiting)] + ordinary


def _sift_up(heap: list[tuple[int, T]], hole: int, value: tuple[int, T]) -> None:
    parent = (hole - 1) // 2
    while hole > 0 and heap[parent][0] < value[0]:
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = value
