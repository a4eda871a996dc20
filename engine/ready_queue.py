"""ReadyQueue: the engine's priority queue, popping exactly as PyTorch's does.

# Note [Ready queue order]
PyTorch keeps ready tasks in `std::priority_queue<NodeTask, vector, CompareNodeTaskTime>`;
the comparator puts the larger sequence number first, so the node recorded last runs
first and AccumulateGrad (UINT64_MAX) runs before any other ready node. Equal numbers
(only AccumulateGrads tie) come out in the order libstdc++'s binary heap gives, which is
not first-in-first-out, so any other tie rule disagrees with real PyTorch on some
programs.

So the heap below is libstdc++'s own: `push` and `pop` transcribe `std::push_heap` and
`std::pop_heap` (`__push_heap`, `__adjust_heap` in bits/stl_heap.h) with the comparator
`a.sequence_nr < b.sequence_nr`. tests/test_ready_queue.py checks it against the
reference's step-by-step simulator.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from engine.context import UINT64_MAX

T = TypeVar("T")


class _Task(Generic[T]):
    """A queued item with its sequence number, the heap's key (a native attribute in the
    compiled build: comparing two keys allocates nothing)."""

    __slots__ = ("sequence_nr", "item", "label")

    def __init__(self, sequence_nr: int, item: T, label: Any) -> None:
        self.sequence_nr = sequence_nr
        self.item = item
        self.label = label


class ReadyQueue(Generic[T]):
    """A max-heap of (sequence_nr, item) that pops as libstdc++'s does.

    Each task has a label (the lab uses node ids), which is what `in_pop_order` shows.
    Beside the heap it keeps the ordinary nodes' sequence numbers sorted, with their labels
    in a parallel list, so the queue can be shown in pop order at every step without
    popping a copy of all of it.
    """

    __slots__ = ("heap", "_ordinary", "_ordinary_labels")

    def __init__(self) -> None:
        self.heap: list[_Task[T]] = []               # libstdc++'s layout: the top first
        self._ordinary: list[int] = []              # ascending; all distinct
        self._ordinary_labels: list[Any] = []       # in the same order

    def __len__(self) -> int:
        return len(self.heap)

    def push(self, sequence_nr: int, item: T, label: Any = None) -> None:
        """`std::push_heap`. `label` is what `in_pop_order` shows (the item if None)."""
        label = item if label is None else label
        task = _Task(sequence_nr, item, label)
        self.heap.append(task)
        _push_heap(self.heap, len(self.heap) - 1, task)
        if sequence_nr != UINT64_MAX:
            at = _insertion_point(self._ordinary, sequence_nr)
            self._ordinary.insert(at, sequence_nr)
            self._ordinary_labels.insert(at, label)

    def pop(self) -> tuple[int, T]:
        """`std::pop_heap`: the task that runs next."""
        task = _pop_heap(self.heap)
        if task.sequence_nr != UINT64_MAX:
            # The largest key is on top, so an ordinary node on top is the largest of them.
            self._ordinary.pop()
            self._ordinary_labels.pop()
        return task.sequence_nr, task.item

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
        return [_pop_heap(copy).label for _ in range(waiting)] + ordinary


def _insertion_point(ordered: list[int], key: int) -> int:
    """`bisect.bisect_right`, written out: the compiled build runs it in place, where the
    stdlib's is a call through Python for a list of a few numbers."""
    lo, hi = 0, len(ordered)
    while lo < hi:
        mid = (lo + hi) // 2
        if key < ordered[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _push_heap(heap: list[_Task[T]], hole: int, task: _Task[T]) -> None:
    """`__push_heap` (its top index is always 0 here): move the hole up past every parent
    with a smaller key, fill it."""
    parent = (hole - 1) // 2
    while hole > 0 and heap[parent].sequence_nr < task.sequence_nr:
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = task


def _pop_heap(heap: list[_Task[T]]) -> _Task[T]:
    """`std::pop_heap` and `pop_back`: the top leaves; `__adjust_heap` walks the hole down
    to a leaf by the larger child (the left one only if strictly larger), then the last
    task moves up from there."""
    top = heap[0]
    task = heap.pop()
    n = len(heap)
    if n:
        hole = child = 0
        while child < (n - 1) // 2:
            child = 2 * (child + 1)
            if heap[child].sequence_nr < heap[child - 1].sequence_nr:
                child -= 1
            heap[hole] = heap[child]
            hole = child
        if n % 2 == 0 and child == (n - 2) // 2:
            child = 2 * (child + 1)
            heap[hole] = heap[child - 1]
            hole = child - 1
        _push_heap(heap, hole, task)
    return top
