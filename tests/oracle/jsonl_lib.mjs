// jsonl_lib.mjs — helpers shared by the oracle dumpers and compare_jsonl.mjs.
//
// Why a hand-written JSON parser: `vforge cat` prints int64/uint64 exactly and floats with 9 or 17
// significant digits.  JSON.parse turns every number into a double (losing ids above 2^53) and
// forgets how it was spelled.  parseJson() keeps each number as a JNum holding its source text, so
// the comparison can decide per column type: exact integers (BigInt), float32 equality after
// Math.fround, double equality, exact decimals.  Objects are kept as ordered [key, value] pairs so
// key order and duplicate map keys are visible.

export class JNum {
  constructor(text) { this.text = text; }
  isInteger() { return /^-?\d+$/.test(this.text); }
  toNumber() { return Number(this.text); }
}
export class JObj {
  constructor(entries) { this.entries = entries; } // [[key, value], ...] in source order
}

/*! parseJson(s) : one JSON text -> null | boolean | string | JNum | JObj | Array.  Throws a
 *  SyntaxError naming the offset on malformed input (so a broken `cat` line is reported, not
 *  silently compared). */
export function parseJson(s) {
  let i = 0;
  const n = s.length;
  const fail = (what) => { throw new SyntaxError(`${what} at offset ${i}: ${JSON.stringify(s.slice(Math.max(0, i - 20), i + 20))}`); };
  const ws = () => { while (i < n) { const c = s.charCodeAt(i); if (c === 32 || c === 9 || c === 10 || c === 13) i++; else break; } };
  const numRe = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  function str() {
    i++; // opening quote
    let out = '', start = i;
    for (;;) {
      if (i >= n) fail('unterminated string');
      const c = s.charCodeAt(i);
      if (c === 34) { out += s.slice(start, i); i++; return out; }
      if (c < 0x20) fail('raw control character in string');
      if (c === 92) {
        out += s.slice(start, i);
        const e = s[i + 1];
        i += 2;
        switch (e) {
          case '"': out += '"'; break; case '\\': out += '\\'; break; case '/': out += '/'; break;
          case 'b': out += '\b'; break; case 'f': out += '\f'; break; case 'n': out += '\n'; break;
          case 'r': out += '\r'; break; case 't': out += '\t'; break;
          case 'u': {
            const h = s.slice(i, i + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(h)) fail('bad \\u escape');
            out += String.fromCharCode(parseInt(h, 16)); i += 4; break;
          }
          default: fail('bad escape');
        }
        start = i;
      } else i++;
    }
  }
  function value() {
    ws();
    if (i >= n) fail('unexpected end');
    const c = s[i];
    if (c === '{') {
      i++; const entries = []; ws();
      if (s[i] === '}') { i++; return new JObj(entries); }
      for (;;) {
        ws(); if (s[i] !== '"') fail('expected key');
        const k = str(); ws();
        if (s[i] !== ':') fail('expected :'); i++;
        entries.push([k, value()]); ws();
        if (s[i] === ',') { i++; continue; }
        if (s[i] === '}') { i++; return new JObj(entries); }
        fail('expected , or }');
      }
    }
    if (c === '[') {
      i++; const arr = []; ws();
      if (s[i] === ']') { i++; return arr; }
      for (;;) {
        arr.push(value()); ws();
        if (s[i] === ',') { i++; continue; }
        if (s[i] === ']') { i++; return arr; }
        fail('expected , or ]');
      }
    }
    if (c === '"') return str();
    if (s.startsWith('true', i)) { i += 4; return true; }
    if (s.startsWith('false', i)) { i += 5; return false; }
    if (s.startsWith('null', i)) { i += 4; return null; }
    numRe.lastIndex = i;
    const m = numRe.exec(s);
    if (!m) fail('unexpected character');
    i += m[0].length;
    return new JNum(m[0]);
  }
  const v = value(); ws();
  if (i !== n) fail('trailing characters');
  return v;
}

/*! show(v) : a parsed value back as compact JSON text, for messages. */
export function show(v, max = 160) {
  const w = (x) => {
    if (x === null) return 'null';
    if (x instanceof JNum) return x.text;
    if (typeof x === 'string') return JSON.stringify(x);
    if (typeof x === 'boolean') return String(x);
    if (Array.isArray(x)) return '[' + x.map(w).join(',') + ']';
    if (x instanceof JObj) return '{' + x.entries.map(([k, y]) => JSON.stringify(k) + ':' + w(y)).join(',') + '}';
    return String(x);
  };
  const t = w(v);
  return t.length > max ? t.slice(0, max) + '…' : t;
}

/*! fmtG(x, p) : C printf("%.{p}g") for a finite double (what vforge prints), e.g. fmtG(0.1f, 9)
 *  = "0.100000001", fmtG(3.4028234663852886e38, 9) = "3.40282347e+38". */
export function fmtG(x, p) {
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const e = x.toExponential(p - 1);
  const k = e.indexOf('e');
  const exp = parseInt(e.slice(k + 1), 10);
  const strip = (m) => (m.includes('.') ? m.replace(/0+$/, '').replace(/\.$/, '') : m);
  if (exp < -4 || exp >= p) {
    const ae = Math.abs(exp);
    return strip(e.slice(0, k)) + 'e' + (exp < 0 ? '-' : '+') + (ae < 10 ? '0' : '') + ae;
  }
  return strip(x.toFixed(Math.max(0, p - 1 - exp)));
}

/*! fmtFloat(x, p) : a float as vforge's JSON token: NaN/±inf as strings, else %.{p}g. */
export function fmtFloat(x, p) {
  if (Number.isNaN(x)) return '"NaN"';
  if (x === Infinity) return '"Infinity"';
  if (x === -Infinity) return '"-Infinity"';
  return fmtG(x, p);
}

const pad = (v, w) => String(v).padStart(w, '0');
/*! civilFromDays(z) : days since 1970-01-01 -> "YYYY-MM-DD" (proleptic Gregorian; H. Hinnant's
 *  days_from_civil inverse). */
export function civilFromDays(z) {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${y < 0 ? '-' + pad(-y, 4) : pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;
}

/*! fmtTimestamp(ticks, perSecond) : ticks (BigInt) since the epoch at `perSecond` ticks per second
 *  -> "YYYY-MM-DD HH:MM:SS[.fff…]" (fraction with 6 digits, 9 for nanoseconds; omitted when 0). */
export function fmtTimestamp(ticks, perSecond) {
  const perDay = 86400n * perSecond;
  let days = ticks / perDay, rem = ticks % perDay;
  if (rem < 0n) { rem += perDay; days -= 1n; }
  const secs = rem / perSecond, frac = rem % perSecond;
  return civilFromDays(Number(days)) + ' ' + fmtClock(secs, frac, perSecond);
}
export function fmtClock(secs, frac, perSecond) {
  const s = Number(secs);
  let out = `${pad(Math.floor(s / 3600), 2)}:${pad(Math.floor(s / 60) % 60, 2)}:${pad(s % 60, 2)}`;
  if (frac !== 0n) {
    const digits = perSecond > 1000000n ? 9 : 6;
    const scaled = perSecond > 1000000n ? frac * (1000000000n / perSecond) : frac * (1000000n / perSecond);
    out += '.' + pad(scaled, digits);
  }
  return out;
}

/*! fmtDecimal(v, scale) : an unscaled BigInt -> exact decimal text ("-12.340"). */
export function fmtDecimal(v, scale) {
  const neg = v < 0n;
  let t = (neg ? -v : v).toString();
  if (scale > 0) {
    t = t.padStart(scale + 1, '0');
    t = t.slice(0, t.length - scale) + '.' + t.slice(t.length - scale);
  }
  return (neg ? '-' : '') + t;
}

/*! normDecimal(text) : a JSON number's text as a canonical exact decimal (no exponent, no
 *  leading/trailing zeros), or null when it is not finite text. */
export function normDecimal(text) {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return null;
  let digits = m[2] + (m[3] || '');
  let point = m[2].length + (m[4] ? parseInt(m[4], 10) : 0); // position of the decimal point in `digits`
  const lead = digits.match(/^0*/)[0].length;
  digits = digits.slice(lead); point -= lead;
  digits = digits.replace(/0+$/, '');
  if (digits === '') return '0';
  let out;
  if (point <= 0) out = '0.' + '0'.repeat(-point) + digits;
  else if (point >= digits.length) out = digits + '0'.repeat(point - digits.length);
  else out = digits.slice(0, point) + '.' + digits.slice(point);
  return (m[1] ? '-' : '') + out;
}

/*! bytesToString(u8) : binary rendered the way `vforge cat --binary-as-string` does: UTF-8 with
 *  each maximal ill-formed subpart replaced by U+FFFD (the WHATWG decoder does exactly that). */
const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
export function bytesToString(u8) { return utf8.decode(u8); }

/*! bytesToBase64(u8) : binary rendered the way `vforge cat` does by default: RFC 4648 base64. */
export function bytesToBase64(u8) { return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('base64'); }
