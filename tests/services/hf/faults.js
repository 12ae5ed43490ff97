// node faults.js HF_ROOT LOGFILE : a fault-injecting HuggingFace stand-in for tests/io/test_hf.sh,
// started by the test itself (ephemeral port printed on stdout as "PORT <n>").  It serves the
// repos published by publish.sh (HF_ROOT/repos, HF_ROOT/api) under a mode prefix, so a test picks
// the behaviour with HF_ENDPOINT=http://127.0.0.1:<port>/m/<mode>:
//   ok           resolve with Range (206), tree API paginated (PAGE entries per page, Link: rel="next")
//   ignorerange  resolve answers 200 with the whole file to a Range request
//   reset1       the first request of each URL has its connection destroyed (no answer)
//   r429         the first request in this mode gets 429 + Retry-After: 1
//   s503         every request gets 503
//   short1       the first ranged answer of each URL stops halfway (connection closed)
//   token        401 unless "Authorization: Bearer $FAULT_TOKEN"
//   redir        resolve answers 302 to http://localhost:<port>/cdn/... (another host name)
//   badnext      the tree API's next link points to another origin
// Every request is logged as one JSON line {mode, method, path, range, auth} (auth: whether an
// Authorization header came, never its value).
const http = require('http'), fs = require('fs'), path = require('path');
const [root, logFile] = process.argv.slice(2);
const PAGE = 2;
const seen = new Map();
function first(key) { const n = seen.get(key) || 0; seen.set(key, n + 1); return n === 0; }
function log(o) { fs.appendFileSync(logFile, JSON.stringify(o) + '\n'); }

function serveFile(req, res, file, ignoreRange, shortOnce, key) {
  let st;
  try { st = fs.statSync(file); } catch (e) { res.writeHead(404); return res.end('not found'); }
  if (!st.isFile()) { res.writeHead(404); return res.end('not found'); }
  const size = st.size, m = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range || '');
  if (!m || ignoreRange) {
    res.writeHead(200, { 'Content-Length': size, 'Accept-Ranges': 'bytes', ETag: '"e1"' });
    if (req.method === 'HEAD') return res.end();
    return fs.createReadStream(file).pipe(res);
  }
  let a, b;
  if (m[1] === '') { a = Math.max(0, size - Number(m[2])); b = size - 1; }
  else { a = Number(m[1]); b = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1); }
  if (a >= size || b < a) { res.writeHead(416, { 'Content-Range': `bytes */${size}` }); return res.end(); }
  res.writeHead(206, { 'Content-Length': b - a + 1, 'Content-Range': `bytes ${a}-${b}/${size}`, ETag: '"e1"' });
  if (req.method === 'HEAD') return res.end();
  const buf = Buffer.alloc(b - a + 1), fd = fs.openSync(file, 'r');
  fs.readSync(fd, buf, 0, buf.length, a); fs.closeSync(fd);
  if (shortOnce && first('short:' + key) && buf.length > 1) {
    res.write(buf.subarray(0, buf.length >> 1));
    return setTimeout(() => req.socket.destroy(), 20);
  }
  res.end(buf);
}

const server = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  let p = decodeURIComponent(u.pathname), mode = 'ok';
  const mm = /^\/m\/([a-z0-9]+)(\/.*)$/.exec(p);
  if (mm) { mode = mm[1]; p = mm[2]; }
  log({ mode, method: req.method, path: req.url, range: req.headers.range || null, auth: !!req.headers.authorization });
  const key = req.method + ' ' + req.url;
  if (mode === 'reset1' && first(key)) return req.socket.destroy();
  if (mode === 'r429' && first('r429')) { res.writeHead(429, { 'Retry-After': '1' }); return res.end('slow down'); }
  if (mode === 's503') { res.writeHead(503); return res.end('unavailable'); }
  if (mode === 'token' && req.headers.authorization !== 'Bearer ' + process.env.FAULT_TOKEN) {
    res.writeHead(401); return res.end('bad token');
  }
  let m;
  if ((m = /^\/cdn\/([^/]+)\/([^/]+)\/(.+)$/.exec(p)))
    return serveFile(req, res, path.join(root, 'repos', m[1], m[2], m[3]), false, false, key);
  if ((m = /^\/datasets\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(p))) {
    if (mode === 'redir') {
      res.writeHead(302, { Location: `http://localhost:${server.address().port}/cdn/${m[1]}/${m[2]}/${m[4]}?X-Amz-Signature=fake` });
      return res.end();
    }
    return serveFile(req, res, path.join(root, 'repos', m[1], m[2], m[4]), mode === 'ignorerange', mode === 'short1', key);
  }
  if ((m = /^\/api\/datasets\/([^/]+)\/([^/]+)\/tree\/([^/]+)(\/.*)?$/.exec(p))) {
    const sub = (m[4] || '').replace(/^\//, '');
    let all;
    try { all = JSON.parse(fs.readFileSync(path.join(root, 'api', m[1], m[2], 'tree/main', sub, '_list.recursive-true.json'))); }
    catch (e) { res.writeHead(404); return res.end('{"error":"not found"}'); }
    const cursor = Number(u.searchParams.get('cursor') || 0), page = all.slice(cursor, cursor + PAGE);
    const h = { 'Content-Type': 'application/json' };
    if (cursor + PAGE < all.length) {
      const next = new URL(req.url, `http://127.0.0.1:${server.address().port}`);
      next.searchParams.set('cursor', String(cursor + PAGE));
      if (mode === 'badnext') next.host = 'evil.example:' + server.address().port;
      h.Link = `<${next.href}>; rel="next"`;
    }
    res.writeHead(200, h);
    return res.end(JSON.stringify(page));
  }
  res.writeHead(404); res.end('no route');
});
server.listen(0, '127.0.0.1', () => { console.log('PORT ' + server.address().port); });
