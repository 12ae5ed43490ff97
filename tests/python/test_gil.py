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


def test_array_inputs_are_read_in_place():
    """brute_force / Index.build / search from float32 C-contiguous arrays read them where they
    are (the buffer protocol, no NumPy copy: tracemalloc sees every NumPy allocation); the kernel's
    own scratch (norms, cosine's normalised block of 16384 rows) is all it adds, as for the CLI."""
    import tracemalloc

    rng = np.random.default_rng(8)
    x = rng.standard_normal((60000, 64)).astype(np.float32)  # 15 MB
    q = rng.standard_normal((50, 64)).astype(np.float32)
    ix = vforge.Index.build(x[:20000], type="flat", nlist=8)
    for call in (lambda: vforge.brute_force(x, q, 10, "euclid", threads=1),
                 lambda: vforge.brute_force(x, q, 10, "cosine", threads=2),
                 lambda: vforge.Index.build(x[:20000], type="flat", nlist=8).close(),
                 lambda: ix.search(q, 10, 4)):
        tracemalloc.start()
        try:
            call()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < x.nbytes // 8, peak  # a copy of the corpus (or its 20000-row slice) would show
    # a float64 or strided array is converted once (that copy is the input's, not the kernel's)
    tracemalloc.start()
    vforge.brute_force(x[:, ::2], q[:, ::2], 5, "dot")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak >= x.nbytes // 2
