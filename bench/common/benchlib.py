"""Shared pieces of the bench/ harnesses (standard library only, so both the system python3 and the
pinned .venv python can import it):

- run_child(): one child process timed from the outside: whole-process wall time, its own CPU
  seconds and peak RSS (through rusage_exec.c: the rusage of exactly that program and the
  descendants it waited for, not the running maximum RUSAGE_CHILDREN reports nor the harness's
  own resident set a forked child starts with), a wall-clock limit after which the child's
  process group is killed and the result says so (a side that hangs is reported, never waited for).
- machine(): what a figure was measured on, printed beside it: the CPU model, the OpenBLAS core
  the vforge binary loads (from `vforge version --json` when it reports one, else asked of the
  very libopenblas the binary links, in a separate process), the load average.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time


class Result:
    """one child run: rc (None when killed for the time limit), wall, cpu (user + sys), rss (bytes)"""

    def __init__(self, argv, rc, wall, cpu, rss, out, err, timed_out, limit):
        self.argv, self.rc, self.wall, self.cpu, self.rss = argv, rc, wall, cpu, rss
        self.out, self.err, self.timed_out, self.limit = out, err, timed_out, limit

    @property
    def ok(self):
        return self.rc == 0 and not self.timed_out

    def json(self):
        """the last non-empty stdout line as JSON (vforge --json, the reader scripts), or {}"""
        for line in reversed(self.out.splitlines()):
            if line.strip():
                try:
                    return json.loads(line)
                except ValueError:
                    return {}
        return {}

    def why(self):
        if self.timed_out:
            return f"timed out after {self.limit:g} s"
        tail = " ".join(self.err.strip().splitlines()[-3:])[:300]
        return f"exit {self.rc}: {tail}"


_HERE = os.path.dirname(os.path.abspath(__file__))
_LAUNCHER = None


def launcher():
    """$VF_BENCH_OUT/tools/rusage_exec (default bench/out/tools/), compiled from
    bench/common/rusage_exec.c when missing or older than it"""
    global _LAUNCHER
    if _LAUNCHER:
        return _LAUNCHER
    src = os.path.join(_HERE, "rusage_exec.c")
    tools = os.path.join(os.environ.get("VF_BENCH_OUT") or os.path.join(_HERE, "..", "out"), "tools")
    exe = os.path.join(tools, "rusage_exec")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        os.makedirs(tools, exist_ok=True)
        tmp = f"{exe}.tmp{os.getpid()}"
        p = subprocess.run(["cc", "-O2", "-o", tmp, src], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"bench: cannot compile {src}: {p.stderr.strip()}")
        os.replace(tmp, exe)
    _LAUNCHER = os.path.realpath(exe)
    return _LAUNCHER


def run_child(argv, timeout, env=None, cwd=None, stdin=None):
    """Run argv to completion or for at most `timeout` seconds (then SIGKILL to its process group).
    Wall time is taken here; CPU and peak RSS are the program's own, reported by rusage_exec
    (see rusage_exec.c for why not os.wait4 from this process).  stdout/stderr go to temporary
    files (no pipe can fill up and stall the child)."""
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe, \
            tempfile.NamedTemporaryFile(suffix=".rusage") as fr:
        t0 = time.perf_counter()
        p = subprocess.Popen([launcher(), fr.name, "--"] + list(argv), stdout=fo, stderr=fe,
                             stdin=stdin if stdin is not None else subprocess.DEVNULL,
                             env=env, cwd=cwd, start_new_session=True)
        killed = threading.Event()

        def kill():
            killed.set()
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            p.wait()
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        fo.seek(0)
        fe.seek(0)
        out = fo.read().decode(errors="replace")
        err = fe.read().decode(errors="replace")
        try:
            ru = json.loads(open(fr.name).read() or "{}")
        except ValueError:
            ru = {}
    timed_out = killed.is_set()
    rc = None if timed_out else ru.get("rc", p.returncode)
    return Result(argv, rc, wall, ru.get("utime", 0.0) + ru.get("stime", 0.0),
                  ru.get("maxrss_kb", 0) * 1024, out, err, timed_out, timeout)


def best_of(n, argv, timeout, env=None, check=None):
    """best (lowest wall) of n successful runs; a failed or timed-out run ends the series and is
    returned instead (its figures are not figures).  `check(result)` may raise/return an error text."""
    best = None
    for _ in range(n):
        r = run_child(argv, timeout, env=env)
        if not r.ok:
            return r
        if check:
            msg = check(r)
            if msg:
                r.rc, r.err = 1, msg
                return r
        if best is None or r.wall < best.wall:
            best = r
    return best


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"


def cpu_flags():
    """the SIMD levels a figure depends on (avx2, avx512f) as the kernel reports them"""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    return ",".join(x for x in ("avx2", "avx512f", "avx512bw", "avx512vl") if x in have) or "no avx2"
    except OSError:
        pass
    return "?"


def loadavg():
    """the 1-minute load average now, as text beside a figure"""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "?"


_PROBE = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
out = []
for name in ("openblas_get_corename", "openblas_get_config"):
    f = getattr(lib, name, None)
    if f:
        f.restype = ctypes.c_char_p
        out.append(f().decode().strip())
print(" / ".join(out) if out else "no openblas_get_corename in " + sys.argv[1])
"""


def blas_core(vforge):
    """the BLAS core the vforge binary runs: `vforge version --json` when it reports one
    (`blas` or `blas_core`), else openblas_get_corename() of the libopenblas `ldd` resolves for it"""
    try:
        p = subprocess.run([vforge, "version", "--json"], capture_output=True, text=True, timeout=30)
        d = json.loads(p.stdout) if p.returncode == 0 else {}
        for k in ("blas_core", "blas"):
            if isinstance(d, dict) and d.get(k):
                return str(d[k]) if not isinstance(d[k], dict) else json.dumps(d[k], sort_keys=True)
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    try:
        p = subprocess.run(["ldd", vforge], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "? (ldd failed)"
    for line in p.stdout.splitlines():
        if "blas" in line and "=>" in line:
            lib = line.split("=>", 1)[1].split("(")[0].strip()
            real = os.path.realpath(lib)
            try:
                q = subprocess.run([sys.executable, "-c", _PROBE, lib], capture_output=True, text=True, timeout=30,
                                   env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
                core = q.stdout.strip() or q.stderr.strip()[:200]
            except (OSError, subprocess.SubprocessError) as e:
                core = f"? ({e})"
            return f"{core} ({real})"
    return "none linked"


def machine(vforge=None):
    """one line naming the machine for a results header"""
    s = f"cpu: {cpu_model()} ({os.cpu_count()} cpus, {cpu_flags()})"
    if vforge:
        s += f"; blas: {blas_core(vforge)}"
    return s + f"; load average {loadavg()}"


def mib(x):
    return x / 1048576.0
