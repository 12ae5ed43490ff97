"""bench/scan harness (run by bench/scan/run.sh; see its header for usage).

For each input file, every side in this one run:
  readers   vforge (`vforge --threads N scan F --columns emb --json`), DuckDB (node, SET threads=N,
            sum(list_sum(emb)): bench/scan/duckdb_scan.mjs, as issue 16 measured it), pyarrow
            (read_table(use_threads) -> NumPy (n, d) + sum) and polars (POLARS_MAX_THREADS=N,
            read_parquet -> NumPy (n, d) + sum), each at every thread count of THREADS; whole-process
            wall time, best of RUNS, with the child's own peak RSS and CPU seconds (os.wait4),
            a time limit per run (TIMEOUT; a side that exceeds it is reported, not waited for);
            every reader's row count and checksum are checked against vforge's
  physical  memcpy of the decoded bytes (memcpy_bw.c), and the bare decompressor over the same
            pages (decomp_bare.c: ZSTD_decompressDCtx / snappy_uncompress, page headers walked
            by its own thrift reader, only the decompression timed) at the same thread counts
  targets   (issue 16) vforge 1t >= 5x DuckDB 1t and >= 1.5x pyarrow 1t on (a)-(c); vforge 2t
            >= 1.8x vforge 1t on (a); compressed files within 1.25x of the bare decompressor;
            uncompressed files at >= 50 % of memcpy bandwidth; peak RSS <= 64 MiB + threads x
            (2 x the largest page + one output batch of BATCH_ROWS rows) on every file
Each figure is printed with the 1-minute load average at the time it was taken; the header names
the CPU and the BLAS core.  Ratios are "x faster": the other side's wall / vforge's wall.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import benchlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# label, what it stands for, the targets that apply to it
FILES = {
    "duckdb_default_zstd": ("(a)", "DuckDB defaults, zstd", {"duck", "pyarrow", "scaling", "floor"}),
    "pyarrow_default": ("(b)", "pyarrow defaults", {"duck", "pyarrow", "floor"}),
    "polars_default": ("(b)", "polars defaults", {"duck", "pyarrow", "floor"}),
    "spark_128m_uncompressed": ("(c)", "Spark-like 128 MiB row group, uncompressed", {"duck", "pyarrow", "floor"}),
    "spark_128m_snappy": ("(c)", "Spark-like 128 MiB row group, snappy", {"duck", "pyarrow", "floor"}),
    "fmnist": ("(d)", "Fashion-MNIST as vforge convert writes it", {"floor"}),
    "duckdb_rg10240_uncompressed": ("(old)", "DuckDB, 10240-row groups, uncompressed", {"floor"}),
    "duckdb_rg10240_zstd": ("(old)", "DuckDB, 10240-row groups, zstd", {"floor"}),
}
READERS = ("vforge", "duckdb", "pyarrow", "polars")


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vforge", required=True)
    ap.add_argument("--data", required=True, help="directory of the generated files")
    ap.add_argument("--tools", required=True, help="directory of memcpy_bw and decomp_bare")
    ap.add_argument("--files", required=True, help="JSON lines from gen_files.py")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--readers", default=",".join(READERS))
    ap.add_argument("--batch-rows", type=int, default=1024)
    ap.add_argument("--column", default="emb")
    return ap.parse_args()


def file_info(path, column):
    """rows, row groups, the largest row group's compressed bytes of `column`, codecs, writer"""
    import pyarrow.parquet as pq
    files = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(path) for f in fs if f.endswith(".parquet")) \
        if os.path.isdir(path) else [path]
    rows = rgs = size = values = 0
    largest = 0
    codecs, writers = set(), set()
    for f in files:
        m = pq.ParquetFile(f).metadata
        size += os.path.getsize(f)
        rows += m.num_rows
        rgs += m.num_row_groups
        writers.add((m.created_by or "?").split(" (build")[0])
        for g in range(m.num_row_groups):
            rg = m.row_group(g)
            csum = 0
            for c in range(rg.num_columns):
                cc = rg.column(c)
                if cc.path_in_schema.split(".")[0] == column:
                    csum += cc.total_compressed_size
                    values += cc.num_values
                    codecs.add(cc.compression.lower())
            largest = max(largest, csum)
    return {"files": files, "rows": rows, "row_groups": rgs, "largest_rg": largest, "size": size,
            "dim": values // max(1, rows),
            "codecs": ",".join(sorted(codecs)), "writer": "; ".join(sorted(writers))}


def bare(tools, files, column, threads, timeout):
    """decomp_bare over every file of the input; seconds summed per thread count"""
    agg = None
    for f in files:
        r = benchlib.run_child([os.path.join(tools, "decomp_bare"), f, "--column", column, "--threads",
                                ",".join(map(str, threads)), "--repeat", "5"], timeout)
        if not r.ok:
            return None, r.why()
        d = r.json()
        if agg is None:
            agg = dict(d, seconds={k: 0.0 for k in d["seconds"]}, files=0)
            agg["max_page_uncompressed"] = agg["max_page_compressed"] = 0
            for k in ("pages", "header_bytes", "stored_bytes", "page_bytes", "decompress_in_bytes", "decompress_out_bytes",
                      "row_groups", "dict_pages", "data_pages"):
                agg[k] = 0
        agg["files"] += 1
        for k in ("pages", "header_bytes", "stored_bytes", "page_bytes", "decompress_in_bytes", "decompress_out_bytes",
                      "row_groups", "dict_pages", "data_pages"):
            agg[k] += d[k]
        for k in ("max_page_uncompressed", "max_page_compressed"):
            agg[k] = max(agg[k], d[k])
        for k, v in d["seconds"].items():
            agg["seconds"][k] += v
        if d["codec"] != agg["codec"]:
            agg["codec"] = "mixed"
    agg["load"] = benchlib.loadavg()
    return agg, None


def reader_argv(reader, vf, path, threads, column):
    if reader == "vforge":
        return [vf, "--threads", str(threads), "scan", path, "--columns", column, "--json"], None
    if reader == "duckdb":
        return ["node", os.path.join(HERE, "duckdb_scan.mjs"), path, "--column", column, "--threads", str(threads)], None
    env = dict(os.environ, POLARS_MAX_THREADS=str(threads)) if reader == "polars" else None
    return [sys.executable, os.path.join(HERE, "py_read.py"), reader, path, "--threads", str(threads),
            "--column", column], env


def duckdb_path(path):
    """DuckDB reads a directory as a glob"""
    return os.path.join(path, "**", "*.parquet") if os.path.isdir(path) else path


def fmt_s(x):
    return "—" if x is None else f"{x:.3f}"


def fmt_x(a, b):
    """a / b as 'N.NNx' (how many times faster b is than a)"""
    return "—" if a is None or b is None or b <= 0 else f"{a / b:.2f}x"


def verdict(ok):
    return "met" if ok else "NOT MET"


def main():
    a = parse()
    threads = [int(t) for t in a.threads.split(",")]
    readers = [r for r in a.readers.split(",") if r]
    if "vforge" not in readers:  # the reference every other reader is checked against
        readers.insert(0, "vforge")
    for r in readers:
        if r not in READERS:
            sys.exit(f"scan_bench: unknown reader {r} (readers: {','.join(READERS)})")
    entries = [json.loads(line) for line in open(a.files) if line.strip()]
    vf = a.vforge
    vver = subprocess.run([vf, "version"], capture_output=True, text=True).stdout.strip()
    import duckdb
    import polars
    import pyarrow
    print(f"bench/scan — {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print(benchlib.machine(vf))
    print(f"{vver}; pyarrow {pyarrow.__version__}, polars {polars.__version__}, duckdb (PyPI, writer) "
          f"{duckdb.__version__}, DuckDB reader: node @duckdb/node-api; best of {a.runs} whole-process runs, "
          f"time limit {a.timeout:.0f} s per run")
    summary = []
    for e in entries:
        kind, path = e["kind"], e["path"]
        label, what, targets = FILES[kind]
        info = file_info(path, a.column)
        # the page cache holds the file for every side (a first, untimed read)
        warm = benchlib.run_child([vf, "--threads", str(max(threads)), "scan", path, "--columns", a.column, "--json"], a.timeout)
        if not warm.ok:
            print(f"\n{label} {kind}: vforge scan failed: {warm.why()}")
            summary.append((label, kind, None))
            continue
        ref = warm.json()
        nbytes = ref["bytes"]
        dim = info["dim"]
        pg, pg_err = bare(a.tools, info["files"], a.column, threads, a.timeout)
        mc = benchlib.run_child([os.path.join(a.tools, "memcpy_bw"), str(nbytes)], a.timeout)
        mc_s = mc.json().get("seconds") if mc.ok else None
        mc_s = mc_s if mc_s and mc_s > 0 else None
        mc_load = benchlib.loadavg()
        print(f"\n{label} {kind}: {what}")
        print(f"  {info['rows']} rows x {dim}, {len(info['files'])} file(s), {info['row_groups']} row group(s) "
              f"(largest {benchlib.mib(info['largest_rg']):.1f} MiB of {a.column}), {info['codecs']}, "
              f"{info['size'] / 1e6:.1f} MB on disk, written by {info['writer']}; {nbytes / 1e6:.1f} MB decoded")
        if pg:
            print(f"  pages of {a.column}: {pg['pages']} ({pg['dict_pages']} dictionary), largest "
                  f"{benchlib.mib(pg['max_page_uncompressed']):.2f} MiB decompressed / "
                  f"{benchlib.mib(pg['max_page_compressed']):.2f} MiB stored")
        else:
            print(f"  pages: decomp_bare failed: {pg_err}")
        # the readers
        res = {}
        for t in threads:
            for rd in readers:
                argv, env = reader_argv(rd, vf, duckdb_path(path) if rd == "duckdb" else path, t, a.column)

                def check(r, rd=rd):
                    d = r.json()
                    if d.get("rows") != ref["rows"]:
                        return f"{rd} read {d.get('rows')} rows, vforge {ref['rows']}"
                    cs, vs = d.get("checksum"), ref["checksum"]
                    if cs is None or abs(cs - vs) > 1e-6 * max(1.0, abs(vs)):
                        return f"{rd} checksum {cs} != vforge's {vs}"
                    return None

                r = benchlib.best_of(a.runs, argv, a.timeout, env=env, check=check)
                res[(rd, t)] = (r, benchlib.loadavg())
        duck1 = res.get(("duckdb", 1), (None,))[0]
        pa1 = res.get(("pyarrow", 1), (None,))[0]
        duck1_s = duck1.wall if duck1 and duck1.ok else None
        pa1_s = pa1.wall if pa1 and pa1.ok else None
        print(f"  {'reader':<8} {'thr':>3} {'wall_s':>8} {'inproc_s':>8} {'cpu_s':>7} {'peak_rss_MiB':>12} "
              f"{'x DuckDB 1t':>11} {'x pyarrow 1t':>12} {'MB/s':>8} {'load':>6}")
        for t in threads:
            for rd in readers:
                r, load = res[(rd, t)]
                if not r.ok:
                    print(f"  {rd:<8} {t:>3} {'FAILED':>8}  {r.why()}  (load {load})")
                    continue
                inproc = r.json().get("seconds")
                print(f"  {rd:<8} {t:>3} {r.wall:8.3f} {fmt_s(inproc):>8} {r.cpu:7.2f} {benchlib.mib(r.rss):12.1f} "
                      f"{fmt_x(duck1_s, r.wall):>11} {fmt_x(pa1_s, r.wall):>12} {nbytes / 1e6 / r.wall:8.1f} {load:>6}")
        # the physical references
        if mc_s is not None:
            print(f"  memcpy of the {nbytes / 1e6:.1f} MB decoded: {mc_s:.4f} s ({nbytes / 1e6 / mc_s:.0f} MB/s)  (load {mc_load})")
        if pg:
            floor = "memcpy of each page" if pg["codec"] == "uncompressed" else f"bare {pg['codec']} decompression"
            print(f"  {floor} over the same {pg['pages']} pages: " +
                  ", ".join(f"{k}t {v:.4f} s" for k, v in pg["seconds"].items()) + f"  (load {pg['load']})")
        # targets
        print("  targets (vforge whole-process wall):")
        vf_ok = {t: res[("vforge", t)][0] for t in threads if res[("vforge", t)][0].ok}
        row = {"vf": {t: r.wall for t, r in vf_ok.items()}, "rss": {t: r.rss for t, r in vf_ok.items()},
               "duck1": duck1_s, "pa1": pa1_s,
               "polars1": (res[("polars", 1)][0].wall if ("polars", 1) in res and res[("polars", 1)][0].ok else None)}
        v1 = row["vf"].get(1)
        def inproc_ratio(other):
            """the same ratio on in-process times (start-up and imports excluded), for reference"""
            o, v = other.json().get("seconds"), vf_ok[1].json().get("seconds")
            return f"  (in-process {o / v:.2f}x)" if o and v else ""

        if "duck" in targets and v1 and duck1_s:
            print(f"    1t >= 5x DuckDB 1t:           {duck1_s / v1:6.2f}x  {verdict(duck1_s / v1 >= 5)}{inproc_ratio(duck1)}")
        if "pyarrow" in targets and v1 and pa1_s:
            print(f"    1t >= 1.5x pyarrow 1t:        {pa1_s / v1:6.2f}x  {verdict(pa1_s / v1 >= 1.5)}{inproc_ratio(pa1)}")
        for t in threads:
            if t > 1 and v1 and t in row["vf"]:
                sc = v1 / row["vf"][t]
                tag = verdict(sc >= 1.8) if "scaling" in targets and t == 2 else "(no target on this file)"
                print(f"    {t}t >= 1.8x own 1t:           {sc:6.2f}x  {tag}")
        comp = pg and pg["codec"] != "uncompressed"
        for t in threads:
            if t not in row["vf"]:
                continue
            if comp and pg["seconds"].get(str(t), 0) > 0:
                fl = pg["seconds"][str(t)]
                x = row["vf"][t] / fl
                xin = vf_ok[t].json().get("seconds")
                xin = f"; in-process {xin / fl:.2f}x" if xin else ""
                print(f"    {t}t within 1.25x of bare {pg['codec']} {t}t: {x:6.2f}x  {verdict(x <= 1.25)}  "
                      f"({row['vf'][t]:.3f} s vs {fl:.3f} s{xin})")
                row.setdefault("floor", {})[t] = x
                row["floor_kind"] = "bare"
            elif mc_s is not None and pg and pg["codec"] == "uncompressed":
                frac = mc_s / row["vf"][t]
                xin = vf_ok[t].json().get("seconds")
                xin = f"; in-process {100 * mc_s / xin:.1f} %" if xin else ""
                print(f"    {t}t >= 50 % of memcpy bandwidth: {100 * frac:5.1f} %  {verdict(frac >= 0.5)}  "
                      f"({nbytes / 1e6 / row['vf'][t]:.0f} MB/s vs {nbytes / 1e6 / mc_s:.0f} MB/s{xin})")
                row.setdefault("floor", {})[t] = frac
                row["floor_kind"] = "memcpy"
        if pg:
            batch = min(a.batch_rows, info["rows"]) * dim * 4
            ws = 2 * pg["max_page_uncompressed"] + batch
            for t in threads:
                if t in row["rss"]:
                    lim = (64 << 20) + t * ws
                    print(f"    {t}t peak RSS <= 64 MiB + {t} x (2 x {benchlib.mib(pg['max_page_uncompressed']):.1f} MiB page "
                          f"+ {benchlib.mib(batch):.1f} MiB batch) = {benchlib.mib(lim):.0f} MiB: "
                          f"{benchlib.mib(row['rss'][t]):.0f} MiB  {verdict(row['rss'][t] <= lim)}")
                    row.setdefault("rss_lim", {})[t] = lim
        summary.append((label, kind, row))
    # one table to paste into bench/RESULTS.md
    print("\nsummary (markdown; whole-process wall, best of runs; machine as in the header):\n")
    t2 = max(threads)
    print(f"| file | vforge 1t | vforge {t2}t | DuckDB 1t | pyarrow 1t | polars 1t | × DuckDB (1t) | × pyarrow (1t) "
          f"| {t2}t / 1t | vs floor (1t) | peak RSS 1t / {t2}t | RSS target 1t |")
    print("|---|" + "---|" * 11)
    for label, kind, row in summary:
        if row is None:
            print(f"| {label} {kind} | failed |" + " |" * 10)
            continue
        v1, vn = row["vf"].get(1), row["vf"].get(t2)
        fl = row.get("floor", {}).get(1)
        fl_s = "—" if fl is None else (f"{100 * fl:.0f} % of memcpy" if row.get("floor_kind") == "memcpy"
                                       else f"{fl:.2f}× bare")
        rss = " / ".join(f"{benchlib.mib(row['rss'][t]):.0f}" for t in (1, t2) if t in row["rss"])
        lim = row.get("rss_lim", {}).get(1)
        def sec(x):
            return "—" if x is None else f"{x:.3f} s"

        print(f"| {label} {kind} | {sec(v1)} | {sec(vn)} | {sec(row['duck1'])} | {sec(row['pa1'])} "
              f"| {sec(row['polars1'])} | {fmt_x(row['duck1'], v1)} | {fmt_x(row['pa1'], v1)} "
              f"| {fmt_x(v1, vn)} | {fl_s} | {rss} MiB | {'—' if lim is None else f'{benchlib.mib(lim):.0f} MiB'} |")
    print(f"\n(load average at the end: {benchlib.loadavg()}; figures from a loaded or different machine are not comparable)")


if __name__ == "__main__":
    main()
