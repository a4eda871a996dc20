"""`make bench`: the lab's speed, printed as ratios against references measured in the
same run (PyTorch on the same program, the trivial /healthz route). Benchmarks print;
tests assert behaviour and never wall-clock time."""
