"""Course benchmark: programs as courses write them, whose ops come from loops and models.

Beside the straight-line engine benchmark (bench/engine.py), the issues' programs
(bench/programs.py `COURSES`): a scalar SGD loop of 1,000 steps, a 10,000-step
recurrence, a two-layer MLP by hand and an nn.Sequential MLP with Adam, 200 steps each.
Each is measured as the engine's verdict is (bench/paired.py): one lab process and one
PyTorch process taking turns, single runs, the median lab/torch over the pairs of
neighbouring runs. The lab's side is its complete trace (`trace_json`, as the CLI and
/api/trace run it, every run cold); PyTorch's runs the same text with a prehook on every
node (bench/sides.py). Both sides warm up on the same program of 3 steps. Both pop orders
are compared by digest (every pass, summarised ones included). The compiled build (as
deployed) gives the verdict; pure Python's figure is beside it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from bench import builds, paired
from bench.engine import AIM, REQUIRED, Ratio
from bench.programs import COURSES

PAIRS = {builds.COMPILED: 12, builds.PURE: 6}     # the verdict's build gets more pairs
QUICK_PAIRS = 4


@dataclass(frozen=True)
class Verdict:
    """One program's figure in the deployed build, and whether it meets the requirement."""

    name: str
    ratio: Ratio | None           # None: not measured (the reason is in the report)
    pairs: int
    same_order: bool
    error: str | None

    def met(self) -> bool:
        return (self.ratio is not None and self.ratio.passes() and self.same_order
                and self.error is None)

    def summary(self) -> str:
        build = builds.LABELS[builds.deployed()]
        if self.ratio is None:
            return f"  course {self.name}: no verdict ({self.error}); below {REQUIRED}? NO"
        notes = "" if self.same_order else "; the two sides popped different orders"
        notes += "" if self.error is None else f"; the lab's trace reports {self.error}"
        aim = "yes" if self.met() and self.ratio.value <= AIM else "no"
        return (f"  course {self.name}: lab/torch = {self.ratio}, {build}, median of "
                f"{self.pairs} pairs of runs; below {REQUIRED}? "
                f"{'yes' if self.met() else 'NO'} (aim {AIM}: {aim}){notes}")


def _mb(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:,.0f} MB"


def _median(values: tuple[float, ...]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _row(name: str, build: str, result: paired.Pairs | str, first: bool) -> str:
    label = f"{name if first else '':<12}  {build:<8}"
    if isinstance(result, str):
        return f"  {label}  failed: {result}"
    lab, torch = result.lab, result.torch
    if lab.get("build") != build:       # never show pure Python's time as the compiled one
        return (f"  {label}  left out: asked for the {build} build but it ran "
                f"{lab.get('build')} (app.trace from {lab.get('from')})")
    q1, q3 = result.quartiles() if len(result.ratios) > 1 else (result.median,) * 2
    line = (f"  {label}  {len(result.ratios):>5}  {_median(result.lab_seconds):>7.3f}  "
            f"{_median(result.torch_seconds):>7.3f}  {result.median:>9.2f}  "
            f"{q1:>5.2f}-{q3:<5.2f}  {_mb(lab['peak']):>8}  {_mb(torch['peak']):>10}  "
            f"{lab['pops']:>7,}  {'yes' if result.same_order() else 'NO'}")
    if lab.get("error"):
        line += f"\n  {'':<22}  (the lab's trace reports {lab['error']})"
    return line


def _measure(name: str, build: str, pairs: int) -> paired.Pairs | str:
    try:
        return paired.measure_program(f"course:{name}", pairs, build)
    except RuntimeError as e:
        return str(e)


def _verdict(name: str, result: paired.Pairs | str) -> Verdict:
    if isinstance(result, str):
        return Verdict(name, None, 0, False, result)
    if result.lab.get("build") != builds.deployed():
        return Verdict(name, None, 0, False, f"the lab ran the {result.lab.get('build')} build")
    return Verdict(name, Ratio(result.median), len(result.ratios), result.same_order(),
                   result.lab.get("error"))


def report_courses(quick: bool = False) -> list[Verdict]:
    """The table (a row per program and build) and each program's verdict."""
    lab_builds = [builds.COMPILED, builds.PURE] if builds.available() else [builds.PURE]
    print("Courses: programs whose ops come from loops and models, lab vs PyTorch")
    print("  lab   = trace_json(source) (the complete trace, as the CLI and /api/trace run")
    print("          it); torch = the same text with a prehook on every node, then backward")
    print("  pairs of neighbouring single runs, the two sides in turns (bench/paired.py);")
    print("  s = the median run; peak = the growth of a process's max RSS over its runs")
    for line in builds.describe_compiled():
        print(line)
    print()
    print(f"  {'program':<12}  {'lab':<8}  {'pairs':>5}  {'lab s':>7}  {'torch s':>7}  "
          f"{'lab/torch':>9}  {'quartiles':<11}  {'lab peak':>8}  {'torch peak':>10}  "
          f"{'pops':>7}  same order")
    verdicts = []
    for name in COURSES:
        for i, build in enumerate(lab_builds):
            result = _measure(name, build, QUICK_PAIRS if quick else PAIRS[build])
            print(_row(name, build, result, i == 0), flush=True)
            if build == builds.deployed():
                verdicts.append(_verdict(name, result))
    print(f"  required: lab/torch below {REQUIRED} for each, {builds.LABELS[builds.deployed()]}; "
          f"aim {AIM}")
    print()
    return verdicts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.courses", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_PAIRS} pairs of runs per program and build")
    for verdict in report_courses(parser.parse_args(argv).quick):
        print(verdict.summary())


if __name__ == "__main__":
    main()
