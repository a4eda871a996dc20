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
from typing import Generic, TypeVar

from engine.context import UINT64_MAX

T = TypeVar("T")


class ReadyQueue(Generic[T]):
    """A max-heap of (sequence_nr, item) with libstdc++'s sift-up and sift-down.

    Beside the heap it keeps the ordinary nodes' sequence numbers sorted, so that the
    queue can be shown in pop order at every step without popping a copy: see
    `in_pop_order`.
    """

    __slots__ = ("heap", "_ordinary", "_by_seq")

    def __init__(self) -> None:
        self.heap: list[tuple[int, T]] = []
        self._ordinary: list[int] = []          # ascending; all distinct
        self._by_seq: dict[int, T] = {}

    def __len__(self) -> int:
        return len(self.heap)

    def push(self, sequence_nr: int, item: T) -> None:
        """`std::push_heap`: append, then move up past strictly smaller parents."""
        self.heap.append((sequence_nr, item))
        _sift_up(self.heap, len(self.heap) - 1, (sequence_nr, item))
        if sequence_nr != UINT64_MAX:
            bisect.insort(self._ordinary, sequence_nr)
            self._by_seq[sequence_nr] = item

    def pop(self) -> tuple[int, T]:
        """Take the task that runs next."""
        top = self._pop_heap()
        if top[0] != UINT64_MAX:
            # The largest key is on top, so an ordinary node on top is the largest of them.
            self._ordinary.pop()
            del self._by_seq[top[0]]
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

    def in_pop_order(self) -> list[T]:
        """The waiting items in the order they will pop (if nothing else is pushed).

        Every AccumulateGrad (UINT64_MAX) pops before every ordinary node, in the order
        the heap gives them, so only those are popped from a copy of the heap; ordinary
        nodes have distinct sequence numbers and follow from largest to smallest.
        """
        by_seq = self._by_seq
        ordinary = [by_seq[seq] for seq in reversed(self._ordinary)]
        waiting = len(self.heap) - len(self._ordinary)
        if not waiting:
            return ordinary
        copy: ReadyQueue[T] = ReadyQueue()
        copy.heap = list(self.heap)
        return [copy._pop_heap()[1] for _ in range(waiting)] + ordinary


def _sift_up(heap: list[tuple[int, T]], hole: int, value: tuple[int, T]) -> None:
    parent = (hole - 1) // 2
    while hole > 0 and heap[parent][0] < value[0]:
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = value
