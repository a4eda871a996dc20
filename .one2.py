import gc, time, sys
from bench.programs import realistic, limits_for
from app.trace import trace_json, clear_caches
s = realistic(10000); L = limits_for(s)
w = realistic(20, seed=1); trace_json(w, limits_for(w))
for i in range(int(sys.argv[1]) if len(sys.argv)>1 else 5):
    clear_caches()
    t=time.perf_counter(); trace_json(s, L); print(time.perf_counter()-t)
