"""`torch.Size`, in a module of its own: a subclass of tuple, which mypyc cannot compile,
so the compiled build leaves this module pure Python (setup.py)."""

from __future__ import annotations


class Size(tuple):  # type: ignore[type-arg]
    """`torch.Size`: a tuple of ints that prints as `torch.Size([2, 3])`."""

    __slots__ = ()

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n
