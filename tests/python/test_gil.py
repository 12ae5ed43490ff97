"""The GIL is released around long calls (issue 20): while brute_force and Index.search run in
one thread, another Python thread keeps running.  With the GIL held the
main thread would not get a single bytecode in until the call returned."""
import threading
import time

import numpy as np

import vforge


def runs_beside(fn):
    """(main-thread iterations while fn ran in a thread, fn's seconds)"""
    done = threading.Event()
    box = {}

    def work():
        t0 = time.perf_counter()
        try:
            box["r"] = fn()
        finally:
            box["s"] = time.perf_counter() - t0
            done.set()

    t = threading.Thread(target=work)
    t.start()
    time.sleep(0.05)  # the worker is inside the call
    n = 0
    while not done.is_set():
        n += 1
        time.sleep(0.001)
    t.join()
    return n, box["s"]


def test_long_calls_release_the_gil():
    # one long library call each (a loop of short calls would let the other thread in between
    # calls even with the GIL held inside them); held, the main thread would count 0 or 1
    rng = np.random.default_rng(5)
    x = rng.standard_normal((200000, 64)).astype(np.float32)
    q = rng.standard_normal((300, 64)).astype(np.float32)
    n, secs = runs_beside(lambda: vforge.brute_force(x, q, 10, "euclid", threads=1))
    assert n >= 5, (n, secs)
    ix = vforge.Index.build(x[:50000], type="flat", nlist=16, metric="euclid")
    qq = np.tile(q, (4, 1))
    n, secs = runs_beside(lambda: ix.search(qq, 10, nprobe=16, threads=1))
    assert n >= 5, (n, secs)
