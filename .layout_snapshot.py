import json, sys
from bench.programs import realistic, limits_for
from app.presets import PRESETS
from app.trace import run_source
from tests.test_layout import EXTRA
out = []
sources = [p.source for p in PRESETS] + list(EXTRA.values()) + [realistic(n, seed=s) for n in (5, 10, 20, 30, 40, 60, 80) for s in range(3)]
for src in sources:
    t = run_source(src, limits_for(src))
    out.append([[(n["id"], n["layer"], n["x"]) for n in p.graph.nodes] for p in t.passes if p.graph])
json.dump(out, open(sys.argv[1], "w"))
