import gc
from bench.programs import realistic, limits_for
from app.trace import trace_json, clear_caches
s = realistic(10000); L = limits_for(s)
from app.trace import run_source
w = realistic(20, seed=1); run_source(w, limits_for(w))
clear_caches(); gc.collect()
trace_json(s, L)
