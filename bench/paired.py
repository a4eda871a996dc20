"""The lab and PyTorch timed run by run, in turns: the ratio this machine's drift cannot tilt.

This machine's speed drifts by up to 2x over seconds. A best-of-all figure compares each
side's luckiest moment, and those need not be the same moment. Here one lab process
and one PyTorch process stay up side by side (idle while the other works, so they never
compete for a core), and the parent asks them for single runs in turn: lab, PyTorch,
PyTorch, lab, ... Each pair of neighbouring runs sees the same machine, so each pair's
lab/torch is a fair ratio; the median over many pairs is the verdict, and the spread
says how steady it is. Alternating which side goes first cancels a steady trend.

Protocol: the parent starts `python -m bench.paired child KIND PROGRAM` (PROGRAM as
`bench.programs.program` reads it: `realistic:10000`, `course:mlp`); the child warms up
and writes `{"ready": ...}`; each `run` line on its stdin gets back `{"seconds": ...}`; at
the end of its input it writes what its last run produced (pops, order, version/build)
and its peak memory (the growth of its max RSS over its runs).
"""

from __future__ import annotations

import json
import resource
import selectors
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from bench import builds, sides
from bench.programs import program

ROOT = Path(__file__).resolve().parent.parent
PAIRS = 24
TIMEOUT_S = 120              # for a child to warm up, or to finish one run


@dataclass(frozen=True)
class Pairs:
    """The ratios of all pairs, and what each side's last run produced."""

    ratios: list[float]
    lab: dict[str, Any]
    torch: dict[str, Any]
    lab_seconds: tuple[float, ...] = ()
    torch_seconds: tuple[float, ...] = ()

    @property
    def median(self) -> float:
        return statistics.median(self.ratios)

    def quartiles(self) -> tuple[float, float]:
        q1, _, q3 = statistics.quantiles(self.ratios, n=4)
        return q1, q3

    def same_order(self) -> bool:
        return bool(self.lab["order"] == self.torch["order"])


class _Child:
    def __init__(self, kind: str, spec: str, build: str) -> None:
        env = builds.child_env(build if kind == "lab" else builds.PURE)
        self.kind = kind
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.paired", "child", kind, spec], cwd=ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._reply()                                   # {"ready": ...} after warming up

    def _reply(self) -> dict[str, Any]:
        """The child's next line. The child writes one line per request and then waits, so
        nothing is ever left in the pipe's buffer behind the line read here, where
        `select` could not see it."""
        out = self.proc.stdout
        assert out is not None
        with selectors.DefaultSelector() as selector:
            selector.register(out, selectors.EVENT_READ)
            if not selector.select(TIMEOUT_S):
                self.proc.kill()
                raise RuntimeError(f"the {self.kind} child gave no answer in {TIMEOUT_S} s")
        line = out.readline()
        if not line:
            raise RuntimeError(f"the {self.kind} child ended early (exit {self.proc.wait()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def run(self) -> float:
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write("run\n")
        stdin.flush()
        return float(self._reply()["seconds"])

    def finish(self) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        result = self._reply()
        self.proc.wait(TIMEOUT_S)
        return result

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def measure(n: int, pairs: int = PAIRS, build: str | None = None) -> Pairs:
    """`pairs` pairs of single runs of realistic(n), lab (as `build`, by default the
    deployed one) and PyTorch in turns."""
    return measure_program(f"realistic:{n}", pairs, build)


def measure_program(spec: str, pairs: int = PAIRS, build: str | None = None) -> Pairs:
    """`pairs` pairs of single runs of one program (`bench.programs.program(spec)`), lab
    (as `build`, by default the deployed one) and PyTorch in turns."""
    lab = torch = None
    try:
        lab = _Child("lab", spec, build or builds.deployed())
        torch = _Child("torch", spec, builds.PURE)
        lab_times, torch_times = [], []
        for k in range(pairs):
            if k % 2 == 0:
                lab_times.append(lab.run())
                torch_times.append(torch.run())
            else:
                torch_times.append(torch.run())
                lab_times.append(lab.run())
        ratios = [a / b for a, b in zip(lab_times, torch_times, strict=True)]
        return Pairs(ratios, lab.finish(), torch.finish(), tuple(lab_times),
                     tuple(torch_times))
    finally:
        for c in (lab, torch):
            if c is not None:
                c.kill()


def _max_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # KiB on Linux


def child_main(kind: str, spec: str, commands: IO[str] = sys.stdin) -> None:
    source, warm_up = program(spec)
    one = sides.side(kind, source, warm_up)
    baseline = _max_rss_bytes()
    print(json.dumps({"ready": kind}), flush=True)
    for command in commands:
        if command.strip() == "run":
            print(json.dumps({"seconds": one.run()}), flush=True)
    print(json.dumps({**one.result(), "peak": _max_rss_bytes() - baseline}), flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child_main(sys.argv[2], sys.argv[3])
    else:
        result = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
        q1, q3 = result.quartiles()
        print(f"lab/torch median {result.median:.2f}, quartiles {q1:.2f}-{q3:.2f}, "
              f"{min(result.ratios):.2f}-{max(result.ratios):.2f} over {len(result.ratios)} "
              f"pairs; same order: {result.same_order()}")
