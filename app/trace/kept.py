"""Which passes a trace keeps step by step; the others it summarises.

# Note [Passes kept in full]
A pass kept in full carries its graph, every gradient each step received and sent (as
values and as PyTorch prints them), the saved tensors and the optimizer's update after it;
a summarised pass keeps only what the contract asks of a step (name, seq, leaf). Keeping
passes costs the document's size, the server's time and the page's memory in proportion to
the values they show, so the trace keeps passes from `passes_from` on (0 by default), one
after another, while fewer than `max_full_passes` are kept and the values shown so far stay
under `max_full_values`; the first pass of that window is always kept, however big. Every
other pass is summarised, and the page asks for it again (the same program and seed, with
`passes_from` at that pass) when a student wants to step through it.

A value is one element of a tensor the pass shows: a gradient received or sent, a `.grad`
before and after AccumulateGrad, a leaf's value or a saved tensor in the graph, and the
optimizer's update after the pass. bench/programs.py's scalar SGD loop shows 19 values a
pass and keeps its first 60 passes; its two-layer MLP (16-32-4, a batch of 8) shows 5,274
a pass and keeps 4, the same with Adam 9,370 and keeps 3. MEASURED on that MLP trained for
200 steps (compiled build, callgrind, before this rule): 1,828 million instructions with
60 passes in full, two thirds of them printing values, against 653 million with none, and
an 11 MB document (190 kB a pass) for the page to take in.

# Note [Steps kept in full]
A kept pass keeps its first `max_full_steps` steps in full and only the pops of the rest
(`Pass.steps_kept` says where that is), with what AccumulateGrad wrote into `.grad`. One
pass can be very long: bench/programs.py's 10,000-step recurrence pops 30,001 nodes in its
one backward. Kept whole, its document was 20 MB (10 MB of steps), which Chromium took in
so slowly that the streaming run, waiting for it, went past its time limit at step 20,374
(that wait no longer counts: app/limits.py `RunClock`); a student does not step through more than
a few thousand pops of one pass, and the pass's graph, its last `.grad` and the order of
all its pops stay in the document. MEASURED (compiled, best of 5): that trace takes 0.63 s
and 20 MB whole, 0.54 s and 13 MB with 5,000 steps in full (the graph of 30,001 nodes is
most of what is left); the page draws the nodes near its view (Note [Vast graphs] in
static/js/views/graph.js).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from app.limits import Limits


class KeptPasses:
    """The window of passes one trace keeps in full, decided pass by pass as they start."""

    __slots__ = ("first", "max_passes", "max_steps", "max_values", "passes", "values")

    def __init__(self, limits: Limits, passes_from: int = 0) -> None:
        self.first = passes_from
        self.max_passes = limits.max_full_passes
        self.max_values = limits.max_full_values
        self.max_steps = limits.max_full_steps
        self.passes = 0         # passes kept so far
        self.values = 0         # the values they showed

    def keeps(self, index: int) -> bool:
        """Whether the pass with this index (as `Pass.index` counts them) is kept in full:
        it starts in the window, and the window is still open."""
        return (index >= self.first and self.passes < self.max_passes
                and self.values < self.max_values)

    def opened(self) -> None:
        """A kept pass had its first step."""
        self.passes += 1

    def show(self, values: int) -> None:
        """A kept pass shows this many more values (`size` counts them)."""
        self.values += values


def size(value: Any) -> int:
    """How many values an array (or a number, or None) is."""
    if value is None:
        return 0
    return value.size if type(value) is np.ndarray else int(np.size(value))
