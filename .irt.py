import os, sys
os.environ.setdefault("OMP_NUM_THREADS", "1")
import torch
from bench.engine import torch_source, _run_torch, _in_fresh_thread
from bench.programs import realistic
w = torch_source(realistic(200, seed=1)); _run_torch(torch, w)
text = torch_source(realistic(10000))
def measured():
    return _run_torch(torch, text)
measured()
