"""Engine benchmark: the lab's complete trace against PyTorch running the same program.

What each side runs is in bench/sides.py: the lab's `trace_json` (parse, record, backward,
events, layout, the JSON written), every run cold; PyTorch compiling and running the same
text with a prehook on every node, then `backward()`.

The table: every measurement runs in a fresh child process (`python -m bench.engine
child ...`), so neither side inherits the other's heap or garbage collector state, and
the peak memory (`ru_maxrss` growth over the child's baseline) belongs to that run alone.
Each child warms up on a different small program first and reports its best of k runs.
Each side runs several children, taking turns with the other side, and the best of all
counts.

The verdict at 10,000 ops: the median lab/torch over pairs of neighbouring runs, the two
sides in turns (bench/paired.py). The best-of-all figures compare each side's luckiest
moment, and on this machine, whose speed drifts by up to 2x, those moments differ.

The lab is measured twice: compiled (build/compiled from `make compiled`, the build the
Docker image deploys) and pure Python (the sources as they are); see bench/builds.py.
Each lab child reports which build it really ran.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import math
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import builds, paired, sides
from bench.programs import chain, limits_for, realistic

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1_000, 10_000, 100_000)
# Each side runs ROUNDS children of RUNS runs, the two sides taking turns, and the best run
# of all counts: this machine's speed drifts over seconds, and taking turns lets both sides
# meet the same drift. One run at 100k. The verdict's pairs: bench/paired.py.
RUNS = {1_000: 3, 10_000: 3, 100_000: 1}
ROUNDS = {1_000: 3, 10_000: 4, 100_000: 1}
VERDICT_SIZE = 10_000
DEPTH = 100_000
RUN_BUDGET_S = 20            # a child stops repeating once its runs have taken this long


def timeout_for(n: int) -> float:
    """How long one child may take before it is stopped and reported as timed out."""
    return 60 if n <= 10_000 else 180
REQUIRED, AIM = 1.0, 0.5


@dataclass(frozen=True)
class Ratio:
    """lab time / torch time; `at_least` when the lab was stopped before it finished."""

    value: float
    at_least: bool = False

    def passes(self) -> bool:
        return not self.at_least and self.value < REQUIRED

    def __str__(self) -> str:
        return f">{self.value:.0f}" if self.at_least else f"{self.value:.2f}"


# -- the children: one measurement each ----------------------------------------------------

def _rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # KiB on Linux


def _began_run() -> None:
    """Tell the parent when a run begins, so a timeout still yields a lower bound."""
    print(json.dumps({"began": time.time()}), flush=True)


def child(kind: str, source: str, runs: int) -> dict[str, Any]:
    """Up to `runs` runs of one side (fewer once RUN_BUDGET_S is spent): the best time,
    the peak memory over the baseline after warming up, and what the last run produced."""
    one = sides.side(kind, source)
    baseline = _rss_bytes()
    best, began, runs_done = math.inf, time.perf_counter(), 0
    for _ in range(runs):
        if time.perf_counter() - began > RUN_BUDGET_S:
            break
        _began_run()
        best = min(best, one.run())
        runs_done += 1
    return {"seconds": best, "runs": runs_done, "peak": _rss_bytes() - baseline,
            **one.result()}


def child_main(argv: list[str]) -> None:
    kind, program, n, runs = argv[0], argv[1], int(argv[2]), int(argv[3])
    source = realistic(n) if program == "realistic" else chain(n)
    print(json.dumps(child(kind, source, runs)))


def measure(kind: str, program: str, n: int, runs: int,
            build: str = builds.PURE) -> dict[str, Any]:
    """One fresh child process measuring `kind` (lab or torch) on one generated program,
    the lab as `build` (pure or compiled). A child over its time is stopped; the result
    then says how long its last run had been going (`at_least` seconds) instead of a time."""
    env = builds.child_env(build if kind == "lab" else builds.PURE)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.engine", "child", kind, program, str(n), str(runs)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout_for(n))
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, _ = proc.communicate()
        began = [json.loads(line)["began"] for line in stdout.splitlines() if "began" in line]
        if not began:
            return {"failed": f"stopped after {timeout_for(n)} s, before its first run"}
        at_least = time.time() - began[-1]
        return {"failed": f"stopped: a run had taken {at_least:.0f} s and was still going",
                "at_least": at_least}
    if proc.returncode != 0:
        return {"failed": stderr.strip().splitlines()[-1] if stderr.strip() else "no output"}
    result: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    return result


def best_of(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The children of one side and size as one result: the best time of all their runs,
    the runs counted together, the highest peak; a failed child's result if one failed."""
    failed = [r for r in rounds if "failed" in r]
    if failed:
        return failed[0]
    best = dict(min(rounds, key=lambda r: r["seconds"]))
    best["runs"] = sum(r["runs"] for r in rounds)
    best["peak"] = max(r["peak"] for r in rounds)
    return best


# -- micrograd's recursive topological sort, for contrast -----------------------------------

class _Value:
    """Just enough of micrograd's Value for its topological sort."""

    def __init__(self, prev: tuple[_Value, ...] = ()) -> None:
        self._prev = set(prev)


def micrograd_topo(root: _Value) -> list[_Value]:
    """micrograd/engine.py `Value.backward`'s build_topo, verbatim in spirit: recursive."""
    topo: list[_Value] = []
    visited: set[_Value] = set()

    def build_topo(v: _Value) -> None:
        if v not in visited:
            visited.add(v)
            for child in v._prev:
                build_topo(child)
            topo.append(v)

    build_topo(root)
    return topo


def micrograd_depth(depth: int) -> str:
    node = _Value()
    for _ in range(depth):
        node = _Value((node,))
    try:
        micrograd_topo(node)
    except RecursionError:
        return "RecursionError"
    return "OK"


# -- the report ----------------------------------------------------------------------------

def _mb(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:,.0f} MB"


def _growth(times: dict[int, float], n: int) -> str:
    small = n // 10
    if small not in times or n not in times:
        return ""
    reference = 10 * math.log(n) / math.log(small)
    return f"x{times[n] / times[small]:.1f} (n log n x{reference:.1f})"


def report_engine(sizes: tuple[int, ...], depth: int) -> Ratio | None:
    """The table of figures per size (a row per lab build), the verdict at 10,000 ops,
    then the depth test. Returns the verdict's lab/torch: the deployed build's (compiled,
    when build/compiled exists) median over pairs of runs; None without torch."""
    have_torch = importlib.util.find_spec("torch") is not None
    lab_builds = [builds.COMPILED, builds.PURE] if builds.available() else [builds.PURE]
    print("Engine: the lab's complete trace vs PyTorch running the same program")
    print("  lab   = trace_json(source, limits) (what the CLI and /api/trace run), written")
    print("          to a BytesIO (the UTF-8 JSON the CLI and the API send)")
    print("  torch = compile + exec of the same text, a prehook on every node recording")
    print("          (name, seq) per pop, then backward; `import torch` not timed")
    print("  program: realistic(n) from bench/programs.py; each side runs several fresh")
    print("  processes in turn with the other side's, each warmed up; the best of all k")
    print("  runs counts; peak = the largest growth of max RSS over a process's runs")
    print("  verdict: the median lab/torch over pairs of neighbouring single runs, the two")
    print("  sides in turns (bench/paired.py), which the machine's drift cannot tilt")
    for line in builds.describe_compiled():
        print(line)
    if not have_torch:
        print("  skipped: torch not installed (the PyTorch column and the ratios are left out)")
    print()
    print(f"  {'ops':>7}  {'lab':<8}  {'k':>2}  {'lab s':>8}  {'torch s':>8}  {'lab/torch':>9}  "
          f"{'lab growth':>24}  {'lab peak':>9}  {'torch peak':>10}  {'pops':>7}  same order")
    lab_times: dict[str, dict[int, float]] = {build: {} for build in lab_builds}
    ratios: dict[str, dict[int, Ratio]] = {build: {} for build in lab_builds}
    version = None
    over_budget: set[str] = set()
    for n in sizes:
        if over_budget == set(lab_builds):
            print(f"  {n:>7,}  skipped: the lab already went over the time budget at a "
                  "smaller size")
            continue
        runs = RUNS.get(n, 1)
        measured = [build for build in lab_builds if build not in over_budget]
        torch_rounds: list[dict[str, Any]] = []
        lab_rounds: dict[str, list[dict[str, Any]]] = {build: [] for build in measured}
        for _ in range(ROUNDS.get(n, 1)):          # the sides take turns
            if have_torch:
                torch_rounds.append(measure("torch", "realistic", n, runs))
            for build in measured:
                if not any("failed" in r for r in lab_rounds[build]):
                    lab_rounds[build].append(measure("lab", "realistic", n, runs, build))
        torch = best_of(torch_rounds) if have_torch else None
        version = version or (torch or {}).get("version")
        for i, build in enumerate(lab_builds):
            first = i == 0
            if build in over_budget:
                print(f"  {f'{n:,}' if first else '':>7}  {build:<8}  skipped: over the "
                      "time budget at a smaller size")
                continue
            lab = best_of(lab_rounds[build])
            print(_row(n, build, lab, torch, first, lab_times[build], ratios[build]))
            if "failed" in lab:
                over_budget.add(build)
    if version:
        print(f"  (PyTorch {version}; growth = time(n) / time(n/10), n log n for reference)")
    verdict = _measure_verdict(ratios) if have_torch and VERDICT_SIZE in sizes else None
    print()
    report_depth(depth, lab_builds)
    return verdict


def _measure_verdict(best: dict[str, dict[int, Ratio]]) -> Ratio | None:
    """The verdict at 10,000 ops: the pairs of runs, unless the table already shows that the
    deployed build failed there (None when nothing could be measured)."""
    deployed = builds.deployed()
    in_table = best[deployed].get(VERDICT_SIZE)
    if in_table is None:
        print(f"  {VERDICT_SIZE:,} ops: no verdict: the {deployed} build or PyTorch failed "
              "(see the table)")
        return None
    if in_table.at_least:
        print(f"  {VERDICT_SIZE:,} ops: lab/torch {in_table} {builds.LABELS[deployed]}: it "
              "went over its time: FAIL")
        return in_table
    try:
        return _verdict(paired.measure(VERDICT_SIZE, build=deployed), best)
    except RuntimeError as e:
        print(f"  {VERDICT_SIZE:,} ops: no verdict: the pairs of runs failed: {e}")
        return None


def _verdict(pairs: paired.Pairs, best: dict[str, dict[int, Ratio]]) -> Ratio:
    """The deployed build's median lab/torch over pairs of runs at 10,000 ops, printed
    with its spread and beside both builds' best-of-all figures."""
    deployed = builds.deployed()
    q1, q3 = pairs.quartiles()
    print(f"  {VERDICT_SIZE:,} ops, run by run ({deployed} and PyTorch in turns, "
          f"{len(pairs.ratios)} pairs of neighbouring runs):")
    print(f"          lab/torch median {pairs.median:.2f}, quartiles {q1:.2f}-{q3:.2f}, all "
          f"{min(pairs.ratios):.2f}-{max(pairs.ratios):.2f}; same pop order: "
          f"{'yes' if pairs.same_order() else 'NO'}")
    r = Ratio(pairs.median)
    figures = ", ".join(f"{by_size[VERDICT_SIZE]} {build}"
                        for build, by_size in best.items() if VERDICT_SIZE in by_size)
    outcome = ("FAIL: the two sides popped different orders" if not pairs.same_order()
               else "PASS, at or below the aim" if r.value <= AIM
               else "PASS" if r.passes() else "FAIL")
    print(f"  {VERDICT_SIZE:,} ops: lab/torch = {r} {builds.LABELS[deployed]}, the median of "
          "the pairs")
    print(f"          (best of all: {figures}); required below {REQUIRED}, aim {AIM}: {outcome}")
    return r


def _row(n: int, build: str, lab: dict[str, Any], torch: dict[str, Any] | None, first: bool,
         lab_times: dict[int, float], ratios: dict[int, Ratio]) -> str:
    """One lab build's figures at one size; the torch cells in the size's first row only."""
    cells: dict[str, str] = dict.fromkeys(
        ("k", "lab", "torch", "ratio", "growth", "lab_peak", "torch_peak", "pops", "same"), "")
    notes = []
    torch_s = torch["seconds"] if torch is not None and "seconds" in torch else None
    if first and torch is not None and torch_s is None:
        cells["torch"] = "failed"
        notes.append(f"torch: {torch['failed']}")
    elif first and torch is not None:
        cells["torch"] = f"{torch['seconds']:.3f}"
        cells["torch_peak"] = _mb(torch["peak"])
    if "failed" in lab:
        notes.append(f"lab: {lab['failed']}")
        if "at_least" in lab:
            cells["lab"] = f">{lab['at_least']:.0f}"
            if torch_s:
                ratios[n] = Ratio(lab["at_least"] / torch_s, at_least=True)
                cells["ratio"] = str(ratios[n])
    elif lab["build"] != build:     # never show pure Python's time as the compiled build's
        notes.append(f"lab: asked for the {build} build but it ran {lab['build']} "
                     f"(app.trace from {lab['from']}): left out")
        build = f"{lab['build']}?!"
    else:
        lab_times[n] = lab["seconds"]
        cells.update(k=str(lab["runs"]), lab=f"{lab['seconds']:.3f}",
                     growth=_growth(lab_times, n), lab_peak=_mb(lab["peak"]),
                     pops=f"{lab['pops']:,}")
        if lab["error"]:
            notes.append(f"the lab's trace reports {lab['error']}")
        if torch is not None and torch_s:
            ratios[n] = Ratio(lab["seconds"] / torch_s)
            cells["ratio"] = str(ratios[n])
            cells["same"] = "yes" if torch["order"] == lab["order"] else "NO"
    c = cells
    ops = f"{n:>7,}" if first else ""
    line = (f"  {ops:>7}  {build:<8}  {c['k']:>2}  {c['lab']:>8}  {c['torch']:>8}  "
            f"{c['ratio']:>9}  {c['growth']:>24}  {c['lab_peak']:>9}  {c['torch_peak']:>10}  "
            f"{c['pops']:>7}  {c['same']}")
    return "\n".join([line, *(f"           ({note})" for note in notes)])


def report_depth(depth: int, lab_builds: list[str]) -> None:
    print(f"Depth: a chain of {depth:,} dependent ops (x1 = x0 * 1.0001 ...) through the lab")
    for build in lab_builds:
        result = measure("lab", "chain", depth, 1, build)
        if "failed" in result:
            print(f"  {build}: FAILED: {result['failed']}")
        elif result["error"]:
            print(f"  {build}: FAILED: the trace reports {result['error']}")
        else:
            print(f"  {result['build']}: OK: {result['pops']:,} pops in "
                  f"{result['seconds']:.2f} s, peak {_mb(result['peak'])}, no recursion over "
                  "the graph")
    limit = sys.getrecursionlimit()
    for d in (500, 10_000):
        print(f"  micrograd's recursive topological sort, depth {d:,}: {micrograd_depth(d)} "
              f"(recursion limit {limit:,})")
    print()


def profile(n: int = 10_000, top: int = 20) -> None:
    """cProfile of one lab trace of realistic(n): where the time goes."""
    import cProfile
    import pstats

    from app.trace import trace_json

    source = realistic(n)
    limits = limits_for(source)
    trace_json(realistic(200, seed=1))
    profiler = cProfile.Profile()
    profiler.enable()
    io.BytesIO().write(trace_json(source, limits)[0])
    profiler.disable()
    print(f"Profile: the lab's trace of realistic({n:,}), top {top} by own time "
          "(pure Python: cProfile does not see into compiled code)")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.engine", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="sizes 1k and 10k, depth 10k")
    parser.add_argument("--profile", nargs="?", type=int, const=10_000, metavar="OPS",
                        help="also print a cProfile of the lab (default 10,000 ops)")
    args = parser.parse_args(argv)
    sizes = SIZES[:2] if args.quick else SIZES
    report_engine(sizes, 10_000 if args.quick else DEPTH)
    if args.profile:
        profile(args.profile)


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        child_main(sys.argv[2:])
    else:
        main(sys.argv[1:])
