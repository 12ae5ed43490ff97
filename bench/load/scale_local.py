"""bench/load/scale_local.sh's harness (see its header): `load run` of one corpus into the discard
store and into the local store (finalize included), alternated round by round — discard, local,
discard, local, ... — for each binary given (--vforge, then any --baseline, alternated within a
round), each command a child process with its own CPU seconds and peak RSS (benchlib.run_child)
and the 1-minute load average beside it.  Per local run: the load and finalize split from its
--json (seconds, finalize_seconds) and the finalize's own stage split from its log line ("built
the ... IVF index ... (read, k-means, assign + encode, write)").  Then the ratio local / discard
(wall, per round and the best of each side) against the target (<= 2x), and recall@10 of the last
local store of each binary at its default nprobe on the held-out queries (`vforge bench` against
the ground truth the shell wrote)."""
import argparse
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import benchlib  # noqa: E402

TARGET = 2.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vforge", required=True)
    ap.add_argument("--baseline", action="append", default=[])
    ap.add_argument("--config", required=True)
    ap.add_argument("--store", required=True, help="the config's vectorstore.path (removed between runs)")
    ap.add_argument("--queries", required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--describe", default="")
    a = ap.parse_args()
    bins = [("this", os.path.realpath(a.vforge))] + \
        [(f"base{i + 1 if len(a.baseline) > 1 else ''}", os.path.realpath(b)) for i, b in enumerate(a.baseline)]
    print(f"bench/load/scale_local — {benchlib.machine(a.vforge)}")
    print(f"{a.describe}; {a.rounds} rounds, each: discard then local per binary; "
          + ", ".join(f"{n} = {p}" for n, p in bins))
    print(f"{'round':>5} {'binary':<6} {'store':<8} {'wall_s':>8} {'load_s':>7} {'final_s':>8} {'cpu_s':>7} "
          f"{'rss_MB':>7} {'loadavg':>8}  finalize split")
    res = {n: {"discard": [], "local": []} for n, _ in bins}
    for rnd in range(1, a.rounds + 1):
        for name, vf in bins:
            for store in ("discard", "local"):
                shutil.rmtree(a.store, ignore_errors=True)
                la0 = benchlib.loadavg()
                argv = [vf, "load", "run", a.config, "--json"] + (["--store", "discard"] if store == "discard" else [])
                r = benchlib.run_child(argv, a.timeout)
                la = f"{la0}-{benchlib.loadavg()}"
                if not r.ok:
                    print(f"{rnd:>5} {name:<6} {store:<8} FAILED {r.why()} (load average {la})")
                    sys.exit(1)
                j = r.json()
                fin = j.get("finalize_seconds", 0.0)
                m = re.search(r"built the \S+ IVF index of .*? in [0-9.]+ s \((.*?)\)\n", r.err)
                nl = re.search(r"nlist (\d+), searches scan (\d+) lists", r.err)
                split = ""
                if m:
                    split = (f"nlist {nl.group(1)}, nprobe {nl.group(2)}: " if nl else "") + m.group(1)
                print(f"{rnd:>5} {name:<6} {store:<8} {r.wall:8.2f} {j.get('seconds', 0) - fin:7.2f} {fin:8.2f} "
                      f"{r.cpu:7.2f} {r.rss / 1e6:7.0f} {la:>8}  {split}")
                res[name][store].append((r.wall, r.cpu, r.rss))
        for name, _ in bins:
            d, l = res[name]["discard"][-1], res[name]["local"][-1]
            print(f"{rnd:>5} {name:<6} local / discard: wall {l[0] / d[0]:.2f}x, CPU {l[1] / d[1]:.2f}x "
                  f"(target wall <= {TARGET:g}x: {'met' if l[0] / d[0] <= TARGET else 'NOT MET'})")
    print()
    for name, vf in bins:
        d = min(res[name]["discard"]), min(res[name]["local"])
        rss = max(x[2] for x in res[name]["discard"]), max(x[2] for x in res[name]["local"])
        print(f"{name}: best wall discard {d[0][0]:.2f} s, local {d[1][0]:.2f} s: local / discard {d[1][0] / d[0][0]:.2f}x "
              f"(target <= {TARGET:g}x: {'met' if d[1][0] / d[0][0] <= TARGET else 'NOT MET'}); "
              f"peak RSS discard {rss[0] / 1e6:.0f} MB, local {rss[1] / 1e6:.0f} MB")
    # recall: the last local store is the last binary's; rebuild each other binary's before its bench
    for i, (name, vf) in enumerate(reversed(bins)):
        if i:
            shutil.rmtree(a.store, ignore_errors=True)
            r = benchlib.run_child([vf, "--quiet", "load", "run", a.config], a.timeout)
            if not r.ok:
                print(f"{name}: load run for the recall check FAILED {r.why()}")
                continue
        la0 = benchlib.loadavg()
        r = benchlib.run_child([vf, "bench", a.config, "--queries", a.queries, "--ground-truth", a.truth,
                                "-k", "10", "--json"], a.timeout)
        if not r.ok:
            print(f"{name}: bench FAILED {r.why()}")
            continue
        j = r.json()
        m = re.search(r"searching '.*?' with its (.*?)\)", r.err)
        print(f"{name}: held-out recall@10 at the default nprobe ({j.get('queries')} queries; "
              f"{m.group(1) + ')' if m else 'no index line'}): {j.get('recall', 0):.4f}; "
              f"qps {j.get('qps', 0):.1f}, p50 {j.get('latency_ms', {}).get('p50', 0):.1f} ms "
              f"(load average {la0}-{benchlib.loadavg()})")
    shutil.rmtree(a.store, ignore_errors=True)


if __name__ == "__main__":
    main()
