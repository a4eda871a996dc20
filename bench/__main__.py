"""`python -m bench [engine|courses|api|page|rooms|load|all]`: run the benchmarks, print a
report."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import platform
import time

from bench import api, builds, courses, engine, load, rooms


def page() -> None:
    """The page benchmark lives in bench/page.py (written separately); run it if present."""
    if importlib.util.find_spec("bench.page") is None:
        print("Page: not available (bench/page.py does not exist yet)")
        print()
        return
    importlib.import_module("bench.page").main()
    print()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("which", nargs="?", default="all",
                        choices=("engine", "courses", "api", "page", "rooms", "load", "all"))
    parser.add_argument("--quick", action="store_true",
                        help="engine: sizes 1k and 10k and depth 10k only; courses: "
                             f"{courses.QUICK_PAIRS} pairs of runs each; load: "
                             f"{load.QUICK_CLIENTS} clients for {load.QUICK_SECONDS:.0f} s")
    parser.add_argument("--profile", nargs="?", type=int, const=10_000, metavar="OPS",
                        help="engine: also print a cProfile of the lab (default 10,000 ops)")
    args = parser.parse_args()
    print(f"Autograd Lab benchmarks: Python {platform.python_version()}, "
          f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')}")
    print()
    started = time.perf_counter()
    engine_ratio = api_ratio = None
    if args.which in ("engine", "all"):
        engine_ratio = engine.report_engine(engine.SIZES[:2] if args.quick else engine.SIZES,
                                            10_000 if args.quick else engine.DEPTH)
        if args.profile:
            engine.profile(args.profile)
    course_verdicts = None
    if args.which in ("courses", "all"):
        course_verdicts = courses.report_courses(args.quick)
    if args.which in ("api", "all"):
        api_ratio = api.main()
    rooms_met = None
    if args.which in ("rooms", "all"):
        rooms_met = rooms.main()
    load_met = None
    if args.which in ("load", "all"):
        load_met = load.main(*((load.QUICK_CLIENTS, load.QUICK_SECONDS) if args.quick else ()))
    if args.which in ("page", "all"):
        page()
    print(f"Summary ({time.perf_counter() - started:.0f} s)")
    if args.which in ("engine", "all") and engine_ratio is None:
        print("  engine, 10,000 ops: no verdict (see above)")
    if engine_ratio is not None:
        ok = "yes" if engine_ratio.passes() else "NO"
        print(f"  engine, 10,000 ops: lab/torch = {engine_ratio}, "
              f"{builds.LABELS[builds.deployed()]}, median of pairs of runs; below "
              f"{engine.REQUIRED}? {ok}")
    for verdict in course_verdicts or []:
        print(verdict.summary())
    if rooms_met is not None:
        print(f"  rooms: 500 followers, p99 PUT→receipt under {rooms.TARGET_P99_MS:.0f} ms with "
              f"none missing? {'yes' if rooms_met else 'NO'}")
    if load_met is not None:
        print(f"  load: no 5xx or failure, nothing left open, memory back near its baseline? "
              f"{'yes' if load_met else 'NO'}")
    if api_ratio is not None:
        ok = "yes" if api_ratio >= api.REQUIRED else "NO"
        print(f"  api: /api/trace rps / /healthz rps = {api_ratio:.2f}; at least "
              f"{api.REQUIRED}? {ok}")


if __name__ == "__main__":
    main()
