"""vforge.open / read_vectors / brute_force over http:// (issue 20: "local, S3, HF, HTTP"): a
Range-capable HTTP server in this process serves examples/corpus; what Python reads through it
equals the local files, ids included (bare keys are the path inside the host, which a local read
with id_root= reproduces), and the reads are Range requests, not whole-file downloads."""
import http.server
import os
import re
import shutil
import threading

import numpy as np
import pytest

import vforge

from conftest import SRC


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    log = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return
        size = os.path.getsize(path)
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        start, end = (int(m.group(1)), int(m.group(2) or size - 1)) if m else (0, size - 1)
        end = min(end, size - 1)
        RangeHandler.log.append((self.path, bool(m), end - start + 1))
        self.send_response(206 if m else 200)
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Accept-Ranges", "bytes")
        if m:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.end_headers()
        with open(path, "rb") as f:
            f.seek(start)
            self.wfile.write(f.read(end - start + 1))

    def do_HEAD(self):
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(os.path.getsize(path)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "www"
    shutil.copytree(os.path.join(SRC, "examples", "corpus"), root)
    handler = lambda *a, **kw: RangeHandler(*a, directory=str(root), **kw)  # noqa: E731
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    RangeHandler.log = []
    yield f"http://127.0.0.1:{httpd.server_address[1]}", str(root)
    httpd.shutdown()
    httpd.server_close()


def test_http_corpus_equals_local(server, monkeypatch):
    monkeypatch.setenv("VFORGE_REMOTE_PARALLEL", "2")
    base, root = server
    name = "rank00/batch_00000000.parquet"
    remote = vforge.open(f"{base}/{name}", threads=1).read_all()
    local = vforge.open(os.path.join(root, name), id_root=root, threads=1).read_all()
    assert remote.num_rows == local.num_rows == 3000
    assert remote.column("__id__").to_pylist() == local.column("__id__").to_pylist()
    for col in ("id", "emb", "text", "meta"):
        assert remote.column(col).to_pylist() == local.column(col).to_pylist(), col
    assert RangeHandler.log and all(ranged for _, ranged, _ in RangeHandler.log)
    x = vforge.read_vectors(f"{base}/{name}")
    assert np.array_equal(x, vforge.read_vectors(os.path.join(root, name)))
    h = vforge.brute_force(f"{base}/{name}", x[:5], 3, "dot")
    assert h.ids.tolist() == vforge.brute_force(os.path.join(root, name), x[:5], 3, "dot",
                                                 id_root=root).ids.tolist()
    with pytest.raises(vforge.Error) as e:
        vforge.read_vectors(f"{base}/rank00/missing.parquet")
    assert "missing.parquet" in str(e.value)
