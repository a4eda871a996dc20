import gc, time, sys, orjson
from bench.programs import realistic, limits_for
from app.trace import trace_events, document_json, clear_caches, GC_PAUSE, quiet_floats
from app.document import Pass, Graph, Dependencies, Trace
s = realistic(10000); L = limits_for(s)
def collect(events, frag):
    passes = []
    for kind, piece in events:
        if kind == "pass": passes.append(piece)
        elif kind == "graph": passes[-1].graph = piece
        elif kind == "dependencies": passes[-1].dependencies = piece.dependencies
        elif kind == "step": passes[-1].steps.append(orjson.Fragment(orjson.dumps(piece, option=orjson.OPT_NON_STR_KEYS)) if frag else piece)
        elif kind == "done":
            piece.passes = passes; return piece
def run(frag):
    with quiet_floats(), GC_PAUSE:
        t = collect(trace_events(s, L), frag)
        j = document_json(t)
        del t
    return j
run(False)
for k in range(4):
  for frag in (False, True):
    clear_caches(); gc.collect()
    a = time.perf_counter(); j = run(frag); b = time.perf_counter()
    print(frag, round(b - a, 3), len(j))
