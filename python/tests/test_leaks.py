"""Object lifetimes: compile/run/free in a loop leaks nothing (resident memory flat)."""
import gc

import numpy as np

import rlx


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4


def cycle(x):
    g = rlx.Graph()
    a = g.input("x", "f32", (4, 16))
    w = g.param("w", "f32", (16, 8))
    g.output("y", rlx.relu(a @ w) + 1.0)
    exe = g.compile(backend="cpu", threads=1)
    exe.set_param("w", np.ones((16, 8), np.float32))
    y = exe.run(x=x)["y"]
    exe.close()
    g.close()
    return y


def test_ten_thousand_compile_run_free_cycles_leak_nothing():
    x = np.ones((4, 16), np.float32)
    for _ in range(500):   # warm up allocator pools and caches
        cycle(x)
    gc.collect()
    before = rss_kib()
    for _ in range(10000):
        y = cycle(x)
    gc.collect()
    after = rss_kib()
    assert float(y[0, 0]) == 17.0
    # a leak of even 1 KiB a cycle would be 10 MB here
    assert after - before < 4096, "resident memory grew by %d KiB over 10,000 cycles" % (after - before)


def test_objects_free_themselves_without_close():
    x = np.ones((4, 16), np.float32)
    for _ in range(300):
        g = rlx.Graph()
        a = g.input("x", "f32", (4, 16))
        g.output("y", a * 2.0)
        g.compile(backend="cpu", threads=1).run(x=x)
    gc.collect()
    before = rss_kib()
    for _ in range(3000):
        g = rlx.Graph()
        a = g.input("x", "f32", (4, 16))
        g.output("y", a * 2.0)
        g.compile(backend="cpu", threads=1).run(x=x)
    gc.collect()
    assert rss_kib() - before < 2048
