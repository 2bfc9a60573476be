#!/usr/bin/env python3
"""python_overhead.py — what the Python layer adds to a run call.

The same tiny graph (y = a + b over two f32 [16] inputs, the output read
back) is run from C (build/run_overhead), from Python (Exec.run with numpy
arrays, returning a new array) and as PyTorch eager's torch.add on the same
tensors; one thread each. Prints one table of medians (7 batches) and the
Python layer's overhead per call: Python minus C. The target is <= 5 us.

    make bench-python        (or: python_overhead.py [C binary] [calls])
"""
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import rlx  # noqa: E402


def median_us(fn, calls):
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return sorted(times)[3]


def main():
    c_bin = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(HERE), "build", "run_overhead")
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    c_us = float(subprocess.run([c_bin, str(calls)], capture_output=True, text=True, check=True).stdout)
    g = rlx.Graph()
    g.output("y", g.input("a", "f32", (16,)) + g.input("b", "f32", (16,)))
    exe = g.compile(backend="cpu", threads=1)
    a = np.arange(16, dtype=np.float32)
    b = np.ones(16, np.float32)
    feed = {"a": a, "b": b}
    assert exe.run(feed)["y"][3] == 4.0
    py_us = median_us(lambda: exe.run(feed), calls)
    py_kw_us = median_us(lambda: exe.run(a=a, b=b), calls)
    rows = [("rlx from C (rlx_exec_run + read_output)", c_us), ("rlx from Python: exe.run(feed)", py_us),
            ("rlx from Python: exe.run(a=..., b=...)", py_kw_us)]
    try:
        import torch
        torch.set_num_threads(1)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        rows.append(("PyTorch %s eager: torch.add(a, b)" % torch.__version__, median_us(lambda: torch.add(ta, tb), calls)))
        rows.append(("PyTorch eager: torch.add(...).numpy()", median_us(lambda: torch.add(ta, tb).numpy(), calls)))
    except ImportError:
        pass
    print("| y = a + b, f32 [16], 1 thread | us per call | vs C |")
    print("|---|---:|---:|")
    for name, us in rows:
        print("| %s | %.2f | %.2fx |" % (name, us, us / c_us))
    print("| Python layer overhead (exe.run(feed) - C) | %.2f | target <= 5 us: %s |"
          % (py_us - c_us, "met" if py_us - c_us <= 5 else "NOT met"))


if __name__ == "__main__":
    main()
