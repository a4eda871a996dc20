"""The lab's limits: how much one program may ask of the server.

Every limit is checked before or while the program runs, and each violation is a clear
`UnsupportedError` with a line and column, never a hang or a crash. The web server reads
them from settings (`LAB_MAX_...`); `autograd-lab trace --limit NAME=VALUE` changes them
for the command line.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Limits:
    max_source_bytes: int = 64_000      # program text, UTF-8
    max_lines: int = 2_000
    max_depth: int = 60                 # operators/calls nested inside one another
    max_nodes: int = 5_000              # backward nodes the program may record
    max_elements: int = 10_000          # elements in one tensor
    max_number_bits: int = 256          # size of a Python integer the program computes

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def with_values(self, **values: int) -> Limits:
        return replace(self, **values)


DEFAULT_LIMITS = Limits()
