"""A deliberately slow static HTTP server for tests (issue 14): every response (HEAD or GET,
Range honoured) waits DELAY seconds.  usage: slow_http.py ROOT PORTFILE DELAY — listens on a
dynamic 127.0.0.1 port and writes it to PORTFILE once it accepts connections."""
import http.server, os, sys, time, socketserver
root, portfile, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def _serve(self, body):
        p = os.path.join(root, self.path.lstrip("/").split("?")[0])
        time.sleep(delay)
        if not os.path.isfile(p):
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
        data = open(p, "rb").read()
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            a, b = rng[6:].split("-")
            if a == "": a, b = len(data) - int(b), len(data) - 1
            else: a, b = int(a), (int(b) if b else len(data) - 1)
            b = min(b, len(data) - 1)
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (a, b, len(data)))
            data = data[a:b + 1]
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if body: self.wfile.write(data)
    def do_GET(self): self._serve(True)
    def do_HEAD(self): self._serve(False)
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
s = S(("127.0.0.1", 0), H)
open(portfile + ".tmp", "w").write(str(s.server_address[1])); os.rename(portfile + ".tmp", portfile)
s.serve_forever()
