// Fault-injecting HTTP reverse proxy for the reliability tests (node built-ins only).
//
//   node proxy.mjs --target http://127.0.0.1:PORT [--port 0] [--port-file FILE] [--stats FILE]
//                  [--rate 0.1] [--seed 1] [--modes drop,lost,delay,reset,truncate,truncate-lie,429,500,503]
//                  [--delay-ms 400] [--retry-after 1] [--only REGEX] [--methods GET,POST,...]
//                  [--fail-first N] [--log FILE]
//
// Forwards every request to --target (method, path, query, headers and body unchanged: the Host
// header is kept, so SigV4 signatures made for the proxy's address still verify at a server that
// checks them against the Host it receives) and answers with the target's response, except that a
// fraction --rate of the eligible requests (path matching --only, method in --methods; the first
// --fail-first eligible requests always) get one fault, drawn with a seeded PRNG (mulberry32) from
// --modes:
//   drop          close the connection without forwarding (the request never reaches the target)
//   lost          forward (the target applies it), then close without answering (a lost response)
//   delay         forward after --delay-ms (a slow server; not an error unless the client times out)
//   reset         forward, send the status, headers and part of the body, then reset the socket
//   truncate      forward, send the true Content-Length but only part of the body, then close
//   truncate-lie  forward, send part of the body with a Content-Length that matches the part (the
//                 response looks complete; only the client's own length/format checks catch it)
//   429           answer 429 with Retry-After: --retry-after, without forwarding
//   500, 503      answer 500 / 503 (503 with Retry-After), without forwarding
// Counters (requests, forwarded, faults by mode, by method, by status) are served at
// GET /__faultproxy/stats and written to --stats after every request and at exit.
// POST /__faultproxy/config {"rate": r, "modes": [...], "fail_first": n} changes the settings.
// Binds 127.0.0.1 only, writes the chosen port to --port-file, stops on SIGTERM/SIGINT.
import http from 'node:http';
import fs from 'node:fs';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
};
const ALL = ['drop', 'lost', 'delay', 'reset', 'truncate', 'truncate-lie', '429', '500', '503'];
const target = new URL(opt('target', ''));
if (!target.host) {
  console.error('usage: proxy.mjs --target http://HOST:PORT [--rate R] [--modes ...]');
  process.exit(2);
}
const cfg = {
  rate: Number(opt('rate', '0.1')),
  modes: opt('modes', ALL.join(',')).split(',').filter(Boolean),
  delayMs: Number(opt('delay-ms', '400')),
  retryAfter: opt('retry-after', '1'),
  only: new RegExp(opt('only', '.*')),
  methods: opt('methods', '') ? opt('methods', '').toUpperCase().split(',') : null,
  failFirst: Number(opt('fail-first', '0')),
};
for (const m of cfg.modes) if (!ALL.includes(m)) { console.error(`unknown mode ${m} (modes: ${ALL})`); process.exit(2); }
const statsFile = opt('stats', '');
const logFile = opt('log', '');
let seed = Number(opt('seed', '1')) >>> 0;
function rnd() { // mulberry32
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const stats = { requests: 0, eligible: 0, forwarded: 0, faults_total: 0, faults: {}, by_method: {}, by_status: {},
  upstream_errors: 0, target: target.origin, rate: cfg.rate, modes: cfg.modes };
for (const m of ALL) stats.faults[m] = 0;
function saveStats() {
  if (!statsFile) return;
  fs.writeFileSync(`${statsFile}.tmp`, JSON.stringify(stats));
  fs.renameSync(`${statsFile}.tmp`, statsFile);
}
function log(line) { if (logFile) fs.appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`); }
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

function readBody(req) {
  return new Promise((resolve, reject) => {
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}
function forward(req, body) {
  return new Promise((resolve, reject) => {
    const headers = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k)) headers[k] = v;
    if (body.length || 'content-length' in req.headers) headers['content-length'] = String(body.length);
    const u = http.request({ host: target.hostname, port: target.port || 80, method: req.method, path: req.url,
      headers, agent }, (ures) => {
      const parts = [];
      ures.on('data', (c) => parts.push(c));
      ures.on('end', () => resolve({ status: ures.statusCode, headers: ures.headers, body: Buffer.concat(parts) }));
      ures.on('error', reject);
    });
    u.on('error', reject);
    u.end(body);
  });
}
function respHeaders(h, len) {
  const out = {};
  for (const [k, v] of Object.entries(h)) if (!HOP.has(k) && k !== 'content-length') out[k] = v;
  out['content-length'] = String(len);
  return out;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const server = http.createServer(async (req, res) => {
  if (req.url.startsWith('/__faultproxy/')) {
    const b = await readBody(req);
    if (req.method === 'POST' && req.url === '/__faultproxy/config') {
      const c = JSON.parse(b.toString() || '{}');
      if (c.rate !== undefined) stats.rate = cfg.rate = Number(c.rate);
      if (c.modes) stats.modes = cfg.modes = c.modes;
      if (c.fail_first !== undefined) cfg.failFirst = Number(c.fail_first);
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(stats));
    return;
  }
  stats.requests++;
  stats.by_method[req.method] = (stats.by_method[req.method] || 0) + 1;
  let body;
  try { body = await readBody(req); } catch { return; }
  const eligible = cfg.only.test(req.url) && (!cfg.methods || cfg.methods.includes(req.method));
  let mode = null;
  if (eligible) {
    stats.eligible++;
    const r = rnd(), pick = rnd();
    if (cfg.failFirst > 0 || r < cfg.rate) {
      if (cfg.failFirst > 0) cfg.failFirst--;
      mode = cfg.modes[Math.min(cfg.modes.length - 1, Math.floor(pick * cfg.modes.length))] || null;
    }
  }
  if (mode) {
    stats.faults[mode]++;
    stats.faults_total++;
    log(`${mode} ${req.method} ${req.url}`);
  }
  const done = (status) => {
    if (status) stats.by_status[status] = (stats.by_status[status] || 0) + 1;
    saveStats();
  };
  if (mode === 'drop') { req.socket.destroy(); done(0); return; }
  if (mode === '429' || mode === '500' || mode === '503') {
    const h = { 'content-type': 'application/json' };
    if (mode !== '500') h['retry-after'] = cfg.retryAfter;
    const msg = JSON.stringify({ status: { error: `fault proxy: injected ${mode}` }, time: 0 });
    res.writeHead(Number(mode), respHeaders(h, Buffer.byteLength(msg)));
    res.end(msg);
    done(mode);
    return;
  }
  if (mode === 'delay') await sleep(cfg.delayMs);
  let up;
  try {
    up = await forward(req, body);
    stats.forwarded++;
  } catch (e) {
    stats.upstream_errors++;
    log(`upstream error ${req.method} ${req.url}: ${e.message}`);
    res.writeHead(502, respHeaders({ 'content-type': 'text/plain' }, 0));
    res.end();
    done(502);
    return;
  }
  const n = up.body.length;
  const cut = n > 1 ? 1 + Math.floor(rnd() * (n - 1)) : 0; /* 1..n-1 bytes kept */
  if (mode === 'lost' || ((mode === 'reset' || mode === 'truncate' || mode === 'truncate-lie') &&
      (n < 2 || req.method === 'HEAD'))) {
    req.socket.destroy();
    done(0);
    return;
  }
  if (mode === 'reset') {
    res.writeHead(up.status, respHeaders(up.headers, n));
    res.write(up.body.subarray(0, cut), () => res.socket && res.socket.resetAndDestroy ? res.socket.resetAndDestroy() : res.socket?.destroy());
    done(up.status);
    return;
  }
  if (mode === 'truncate') {
    res.writeHead(up.status, respHeaders(up.headers, n));
    res.write(up.body.subarray(0, cut), () => res.socket?.end());
    done(up.status);
    return;
  }
  if (mode === 'truncate-lie') {
    res.writeHead(up.status, respHeaders(up.headers, cut));
    res.end(up.body.subarray(0, cut));
    done(up.status);
    return;
  }
  if (req.method === 'HEAD') { /* no body: the target's Content-Length stays */
    const h = respHeaders(up.headers, 0);
    h['content-length'] = up.headers['content-length'] || '0';
    res.writeHead(up.status, h);
    res.end();
  } else {
    res.writeHead(up.status, respHeaders(up.headers, n));
    res.end(up.body);
  }
  done(up.status);
});
server.keepAliveTimeout = 5000;
server.listen(Number(opt('port', '0')), '127.0.0.1', () => {
  const port = server.address().port;
  const pf = opt('port-file', '');
  if (pf) { fs.writeFileSync(`${pf}.tmp`, String(port)); fs.renameSync(`${pf}.tmp`, pf); }
  saveStats();
  console.log(`faultproxy: 127.0.0.1:${port} -> ${target.origin}, rate ${cfg.rate}, modes ${cfg.modes.join(',')}`);
});
const stop = () => { saveStats(); server.close(); agent.destroy(); process.exit(0); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
