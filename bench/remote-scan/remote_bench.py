"""bench/remote-scan harness (run by run.sh, which publishes the corpus and starts the proxies; see
its header).  For each source: vforge scan (whole process, best of RUNS) and one curl process
downloading the same files to /dev/null (best of RUNS), the ratio curl_s / vforge_s against the
80 % target (issue 16 item 5), bytes and requests, with the load average beside each figure."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import benchlib  # noqa: E402

TARGET = 0.80


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vforge", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--hf-repo", required=True)
    ap.add_argument("--hf-proxy", required=True)
    ap.add_argument("--s3-bucket")
    ap.add_argument("--s3-proxy")
    ap.add_argument("--s3-curlrc")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--delay-ms", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=300)
    return ap.parse_args()


def main():
    a = parse()
    files = sorted(os.path.relpath(os.path.join(dp, f), a.corpus)
                   for dp, _, fs in os.walk(a.corpus) for f in fs if f.endswith(".parquet"))
    if not files:
        sys.exit(f"remote_bench: no parquet files in {a.corpus}")
    size = sum(os.path.getsize(os.path.join(a.corpus, f)) for f in files)
    base = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "VFORGE_CA_BUNDLE", "AWS_PROFILE")}
    hf_ep, hf_tls, hf_ca = os.environ["VF_HF_ENDPOINT"], os.environ.get("VF_HF_ENDPOINT_TLS"), os.environ.get("VF_HF_CA")
    hf_uri = f"hf://datasets/{a.hf_repo}"

    def hf_urls(ep):
        return [f"{ep}/datasets/{a.hf_repo}/resolve/main/{f}" for f in files]

    s3_ep = os.environ.get("VF_S3_ENDPOINT")
    s3_env = {"AWS_ACCESS_KEY_ID": os.environ.get("VF_S3_ACCESS_KEY", ""),
              "AWS_SECRET_ACCESS_KEY": os.environ.get("VF_S3_SECRET_KEY", ""),
              "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}
    s3_curl = ["-K", a.s3_curlrc or "/dev/null", "--aws-sigv4", "aws:amz:us-east-1:s3",
               "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD"]

    # label, vforge URI, vforge env, curl URLs, extra curl args
    sources = [("local disk", a.corpus, {}, None, [])]
    sources.append(("hf http", hf_uri, {"HF_ENDPOINT": hf_ep}, hf_urls(hf_ep), []))
    sources.append(("hf http, parallel 1", hf_uri, {"HF_ENDPOINT": hf_ep, "VFORGE_REMOTE_PARALLEL": "1"}, hf_urls(hf_ep), []))
    sources.append(("hf http, parallel 8", hf_uri, {"HF_ENDPOINT": hf_ep, "VFORGE_REMOTE_PARALLEL": "8"}, hf_urls(hf_ep), []))
    if hf_tls and hf_ca:
        sources.append(("hf https", hf_uri, {"HF_ENDPOINT": hf_tls, "VFORGE_CA_BUNDLE": hf_ca}, hf_urls(hf_tls),
                        ["--cacert", hf_ca]))
    if s3_ep and a.s3_bucket:
        sources.append(("s3 (radosgw)", f"s3://{a.s3_bucket}", dict(s3_env, AWS_ENDPOINT_URL=s3_ep),
                        [f"{s3_ep}/{a.s3_bucket}/{f}" for f in files], s3_curl))
    d = a.delay_ms
    sources.append((f"hf http +{d} ms/request", hf_uri, {"HF_ENDPOINT": a.hf_proxy}, hf_urls(a.hf_proxy), []))
    if s3_ep and a.s3_bucket and a.s3_proxy:
        sources.append((f"s3 +{d} ms/request", f"s3://{a.s3_bucket}", dict(s3_env, AWS_ENDPOINT_URL=a.s3_proxy),
                        [f"{a.s3_proxy}/{a.s3_bucket}/{f}" for f in files], s3_curl))

    print(f"bench/remote-scan — {benchlib.machine(a.vforge)}")
    print(f"corpus: {len(files)} file(s), {size / 1e6:.1f} MB; vforge --threads {a.threads} scan --json (all columns); "
          f"curl{' --parallel --parallel-max ' + str(a.threads) if len(files) > 1 else ''} -o /dev/null of the same files; "
          f"best of {a.runs} whole-process runs, {a.timeout:.0f} s limit per run; loopback")
    print(f"{'source':<26} {'vforge_s':>8} {'curl_s':>8} {'curl/vf':>8} {'target':>8} {'vf_MB/s':>8} {'curl_MB/s':>9} "
          f"{'vf_MB_recv':>10} {'curl_MB':>8} {'requests':>8} {'req/file':>8} {'vf_rss_MiB':>10} {'load':>6}")
    curl_cache = {}
    rows = []
    for label, uri, env, urls, cargs in sources:
        venv = dict(base, **env)
        vr = benchlib.best_of(a.runs, [a.vforge, "--threads", str(a.threads), "scan", "--json", uri], a.timeout, env=venv)
        vload = benchlib.loadavg()
        if not vr.ok:
            print(f"{label:<26} vforge FAILED: {vr.why()}  (load {vload})")
            rows.append((label, None))
            continue
        vj = vr.json()
        cr = None
        if urls:
            key = (tuple(urls), tuple(cargs))
            if key not in curl_cache:
                argv = ["curl", "-sS", "--fail", "-w", "%{size_download}\\n"] + cargs
                if len(urls) > 1:
                    argv += ["--parallel", "--parallel-max", str(a.threads)]
                for u in urls:
                    argv += ["-o", "/dev/null", u]
                curl_cache[key] = benchlib.best_of(a.runs, argv, a.timeout, env=base)
            cr = curl_cache[key]
        if cr is not None and not cr.ok:
            print(f"{label:<26} {vr.wall:8.3f} curl FAILED: {cr.why()}  (load {vload})")
            rows.append((label, None))
            continue
        recv = vj.get("remote_bytes", 0)
        nreq = vj.get("remote_requests", 0)
        vmbs = size / 1e6 / vr.wall
        if cr is not None:
            cbytes = sum(int(x) for x in cr.out.split() if x.isdigit())
            ratio = cr.wall / vr.wall
            verdict = "met" if ratio >= TARGET else "NOT MET"
            print(f"{label:<26} {vr.wall:8.3f} {cr.wall:8.3f} {100 * ratio:7.0f}% {verdict:>8} {vmbs:8.1f} "
                  f"{size / 1e6 / cr.wall:9.1f} {recv / 1e6:10.1f} {cbytes / 1e6:8.1f} {nreq:8d} "
                  f"{nreq / len(files):8.1f} {benchlib.mib(vr.rss):10.1f} {vload:>6}")
            rows.append((label, (vr.wall, cr.wall, ratio, nreq)))
        else:
            print(f"{label:<26} {vr.wall:8.3f} {'—':>8} {'—':>8} {'—':>8} {vmbs:8.1f} {'—':>9} {'—':>10} {'—':>8} "
                  f"{nreq:8d} {'—':>8} {benchlib.mib(vr.rss):10.1f} {vload:>6}")
            rows.append((label, (vr.wall, None, None, nreq)))
    print("\nsummary (markdown):\n")
    print("| source | vforge scan | curl download | curl / vforge (target ≥ 80 %) | requests per file |")
    print("|---|---:|---:|---:|---:|")
    for label, r in rows:
        if r is None:
            print(f"| {label} | failed | | | |")
        elif r[1] is None:
            print(f"| {label} | {r[0]:.3f} s | — | — | — |")
        else:
            print(f"| {label} | {r[0]:.3f} s | {r[1]:.3f} s | {100 * r[2]:.0f} % {'met' if r[2] >= TARGET else '**not met**'} "
                  f"| {r[3] / len(files):.1f} |")
    print(f"\n(curl/vf = curl's wall / vforge's wall for the same files: vforge's share of curl's speed; "
          f"load average at the end {benchlib.loadavg()})")


if __name__ == "__main__":
    main()
