"""bench/load harness (run by bench/load/run.sh; see its header).

Rows, every side in one run, each command a child process with its own CPU seconds and peak RSS
(bench/common/rusage_exec) and a wall-clock limit (a side that exceeds it is killed and reported
as timed out; the run goes on):
  discard         `load load CONFIG --store discard`: the pipeline itself (read, decode, slice,
                  ids, payload, upsert calls); points per CPU-second is the issue-16 target
                  (>= 200k 768-d points per CPU-second)
  local load      `load prepare` (not timed), then `load load CONFIG --no-manage-indexing`
  local finalize  `load finalize CONFIG` of that store (compaction, the IVF index build, verify),
                  timed on its own (FINALIZE_TIMEOUT, optional --memory-budget)
points/s is the load's own figure (its --json); points per CPU-second = points / (user + sys
seconds of the load process).  Best of RUNS by points/s; a finalize that times out is not retried.
"""
import argparse
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import benchlib  # noqa: E402

TARGET_PER_CPU_S = 200_000


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vforge", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--load-timeout", type=float, default=600)
    ap.add_argument("--finalize-timeout", type=float, default=600)
    ap.add_argument("--memory-budget", default="")
    ap.add_argument("--stores", default="discard,local")
    ap.add_argument("--describe", default="")
    ap.add_argument("--baseline", default="",
                    help="another vforge binary: its discard loads interleaved with this one's, "
                         "and the ratio of points per CPU-second printed")
    return ap.parse_args()


def main():
    a = parse()
    vf = [a.vforge, "--quiet"]
    store = os.path.join(a.out, "store")
    state = os.path.join(a.out, "state")
    print(f"bench/load — {benchlib.machine(a.vforge)}")
    print(f"{a.describe}; best of {a.runs}; time limit per run: load {a.load_timeout:.0f} s, finalize "
          f"{a.finalize_timeout:.0f} s{'; finalize --memory-budget ' + a.memory_budget if a.memory_budget else ''}")
    hdr = (f"{'row':<15} {'points':>8} {'wall_s':>8} {'points/s':>10} {'cpu_s':>7} {'points/cpu_s':>12} "
           f"{'peak_rss_MB':>11} {'load':>6}")
    print(hdr)
    results = {}

    def clean():
        shutil.rmtree(store, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)

    def show(row, r, load, target=False):
        if r is None:
            return
        if not r.ok:
            print(f"{row:<15} {'FAILED' if not r.timed_out else 'TIMEOUT':>8}  {r.why()}  (load {load})")
            results[row] = r.why()
            return
        j = r.json()
        pts = j.get("points", 0)
        pps = j.get("points_per_s", 0.0)
        per_cpu = pts / r.cpu if r.cpu > 0 else 0.0
        extra = ""
        if target:
            extra = f"  target >= {TARGET_PER_CPU_S // 1000}k points per CPU-second: " + \
                    ("met" if per_cpu >= TARGET_PER_CPU_S else "NOT MET")
        print(f"{row:<15} {pts:>8} {r.wall:8.2f} {pps:10.0f} {r.cpu:7.2f} {per_cpu:12.0f} {r.rss / 1e6:11.0f} {load:>6}{extra}")
        results[row] = (pts, r.wall, pps, r.cpu, per_cpu, r.rss)

    def per_cpu(r):
        return r.json().get("points", 0) / r.cpu if r.cpu > 0 else 0.0

    stores = [s for s in a.stores.split(",") if s]
    if "discard" in stores:
        # with --baseline: the two binaries alternate run by run (same corpus, same sitting), each
        # keeps its best points per CPU-second, and the ratio is printed
        sides = [("discard", vf)] + ([("discard (base)", [a.baseline, "--quiet"])] if a.baseline else [])
        best = {row: None for row, _ in sides}
        failed = False
        for _ in range(a.runs):
            for row, cmd in sides:
                clean()
                r = benchlib.run_child(cmd + ["load", "load", a.config, "--no-manage-indexing", "--json", "--store",
                                              "discard", "--state-dir", state], a.load_timeout)
                b = best[row]
                if not r.ok:
                    best[row], failed = r, True
                    break
                key = per_cpu if a.baseline else (lambda x: x.json().get("points_per_s", 0))
                if b is None or key(r) > key(b):
                    best[row] = r
            if failed:
                break
        for row, _ in sides:
            show(row, best[row], benchlib.loadavg(), target=row == "discard")
        if a.baseline and not failed:
            print(f"discard points per CPU-second, this / base: "
                  f"{per_cpu(best['discard']) / per_cpu(best['discard (base)']):.2f}x "
                  f"(best of {a.runs} each, runs interleaved)")
    if "local" in stores:
        best = fin_best = None
        fin_load = None
        for _ in range(a.runs):
            clean()
            p = benchlib.run_child(vf + ["load", "prepare", a.config], a.load_timeout)
            if not p.ok:
                best = p
                break
            r = benchlib.run_child(vf + ["load", "load", a.config, "--no-manage-indexing", "--json"], a.load_timeout)
            if not r.ok:
                best = r
                break
            if best is None or r.json().get("points_per_s", 0) > best.json().get("points_per_s", 0):
                best = r
            fin = [a.vforge, "--quiet"] + (["--memory-budget", a.memory_budget] if a.memory_budget else []) + \
                ["load", "finalize", a.config, "--json"]
            f = benchlib.run_child(fin, a.finalize_timeout)
            if not f.ok:
                fin_best, fin_load = f, benchlib.loadavg()
                break  # a finalize that timed out or failed is reported, not retried
            if fin_best is None or f.wall < fin_best.wall:
                fin_best, fin_load = f, benchlib.loadavg()
        show("local load", best, benchlib.loadavg())
        if fin_best is not None:
            if not fin_best.ok:
                show("local finalize", fin_best, fin_load)
            else:
                print(f"{'local finalize':<15} {'':>8} {fin_best.wall:8.2f} {'':>10} {fin_best.cpu:7.2f} {'':>12} "
                      f"{fin_best.rss / 1e6:11.0f} {fin_load:>6}")
                results["local finalize"] = (fin_best.wall, fin_best.cpu, fin_best.rss)
    clean()
    print("\nsummary (markdown):\n")
    print("| store | points/s | points per CPU-second | peak RSS | finalize (wall / CPU / peak RSS) |")
    print("|---|---:|---:|---:|---|")
    for row in ("discard", "local load"):
        if row not in results:
            continue
        r = results[row]
        if isinstance(r, str):
            print(f"| {row.split()[0]} | {r} | | | |")
            continue
        fin = "—"
        if row == "local load":
            fr = results.get("local finalize")
            fin = "—" if fr is None else fr if isinstance(fr, str) else f"{fr[0]:.2f} s / {fr[1]:.2f} s / {fr[2] / 1e6:.0f} MB"
        print(f"| {row.split()[0]} | {r[2]:,.0f} | {r[4]:,.0f} | {r[5] / 1e6:.0f} MB | {fin} |")
    print(f"\n(points/s: the load's own wall time; points/cpu_s: points / CPU seconds of the load process; "
          f"load average at the end {benchlib.loadavg()})")


if __name__ == "__main__":
    main()
