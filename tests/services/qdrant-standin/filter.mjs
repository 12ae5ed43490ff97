// Qdrant payload filters for the stand-in: Filter objects of the Query, count and scroll APIs.
//
// Written from Qdrant's documentation (qdrant.tech/documentation/concepts/filtering/ and the
// payload page), independently of vforge's C evaluator (src/corpus/filter*.c), so that the
// end-to-end tests compare two readings of the same documentation:
//   - must: every condition; should: at least one (an empty list: none); must_not: none;
//     min_should: at least min_count of its conditions; a condition may itself be a filter.
//   - key paths: `a.b` descends into objects, `a[]` into every array element, `a[3]` into one,
//     `"quoted.name"` is one key.  A path that does not lead anywhere gives no value.
//   - "If several values are stored, at least one of them should match": a field condition holds
//     when one value at the key does, and for an array value when one of its elements does.
//   - match value (keyword, integer, bool), any (IN), except (NOT IN: an array holds when one
//     element is outside the list; values of another type than the list's hold too, null never);
//     text / phrase without a full-text index: substring; text_any: one of the words; prefix.
//   - range over numbers; datetime range over RFC 3339 strings (UTC when no offset), also the
//     "YYYY-MM-DD[ HH:MM[:SS]]" forms the documentation lists.
//   - values_count: the number of values (an array's length, 1 for a single value, 0 for null).
//   - is_empty: the key is missing, null or []; is_null: the value is null (not [null]).  The
//     field forms {key, is_empty: bool} / {key, is_null: bool} check the same per value.
//   - has_id: the point's id is listed; nested {key, filter}: one element of the array of objects
//     at key satisfies the whole filter.
// Not modelled (answered 501 by the caller): has_vector, geo_polygon, slice.

export class FilterError extends Error {
  constructor(msg, unmodelled = false) { super(msg); this.unmodelled = unmodelled; }
}

function parsePath(key) {
  const items = [];
  let i = 0;
  const word = () => {
    if (key[i] === '"') {
      const j = key.indexOf('"', i + 1);
      if (j < 0) throw new FilterError(`bad key ${key}`);
      const w = key.slice(i + 1, j);
      i = j + 1;
      return w;
    }
    const m = /^[^.[\]"]+/.exec(key.slice(i));
    if (!m) throw new FilterError(`bad key ${key}`);
    i += m[0].length;
    return m[0];
  };
  items.push({ key: word() });
  while (i < key.length) {
    if (key[i] === '.') { i++; items.push({ key: word() }); continue; }
    if (key.startsWith('[]', i)) { i += 2; items.push({ all: true }); continue; }
    const m = /^\[(\d+)\]/.exec(key.slice(i));
    if (!m) throw new FilterError(`bad key ${key}`);
    items.push({ index: Number(m[1]) });
    i += m[0].length;
  }
  return items;
}

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isNum = (v) => typeof v === 'number' || typeof v === 'bigint';
const isInt = (v) => typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v));

function valuesAt(root, items) {
  let cur = [root];
  for (const it of items) {
    const next = [];
    for (const v of cur) {
      if (it.key !== undefined) { if (isObj(v) && Object.prototype.hasOwnProperty.call(v, it.key)) next.push(v[it.key]); }
      else if (Array.isArray(v)) { if (it.all) next.push(...v); else if (it.index < v.length) next.push(v[it.index]); }
    }
    cur = next;
  }
  return cur;
}

// datetimes to milliseconds since the epoch (UTC unless an offset is given)
function parseDatetime(s) {
  if (typeof s !== 'string') return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?(?:\s?([Zz]|[+-]\d{2}(?::?\d{2})?))?$/.exec(s);
  if (!m) return null;
  const [y, mo, d, h = '0', mi = '0', se = '0', frac = '', tz] = m.slice(1);
  if (tz && m[4] === undefined) return null;
  const date = new Date(Date.UTC(+y, +mo - 1, +d, +h, +mi, +se));
  if (date.getUTCMonth() !== +mo - 1 || date.getUTCDate() !== +d || +h > 23 || +mi > 59 || +se > 60) return null;
  let ms = date.getTime() + Number(('0.' + (frac || '0')).slice(0, 8)) * 1000;
  if (tz && tz !== 'Z' && tz !== 'z') {
    const t = /^([+-])(\d{2}):?(\d{2})?$/.exec(tz);
    ms -= (t[1] === '-' ? -1 : 1) * (+t[2] * 60 + +(t[3] || 0)) * 60000;
  }
  return ms;
}

function inRange(r, x) {
  return (r.lt == null || x < r.lt) && (r.gt == null || x > r.gt) && (r.lte == null || x <= r.lte) && (r.gte == null || x >= r.gte);
}

function haversine(lon1, lat1, lon2, lat2) {
  const rad = Math.PI / 180, R = 6371008.8;
  const a = Math.sin((lat2 - lat1) * rad / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin((lon2 - lon1) * rad / 2) ** 2;
  return 2 * R * Math.asin(Math.sqrt(a));
}

// one stored value (not an array) against a field condition's match / range / geo parts
function valueHolds(c, v) {
  const m = c.match;
  if (m) {
    if ('value' in m) {
      if (typeof m.value === 'string' ? v === m.value : typeof m.value === 'boolean' ? v === m.value
          : isInt(v) && BigInt(v) === BigInt(m.value)) return true;
    } else if ('any' in m) {
      if (m.any.some((x) => (typeof x === 'string' ? v === x : isInt(v) && BigInt(v) === BigInt(x)))) return true;
    } else if ('except' in m) {
      const strs = m.except.length === 0 || typeof m.except[0] === 'string';
      if (v === null) { /* null is never outside the list */ }
      else if (strs && typeof v === 'string') { if (!m.except.includes(v)) return true; }
      else if (!strs && isNum(v)) { if (!isInt(v) || !m.except.some((x) => BigInt(x) === BigInt(v))) return true; }
      else return true;
    } else if ('text' in m || 'phrase' in m) {
      if (typeof v === 'string' && v.includes(m.text ?? m.phrase)) return true;
    } else if ('text_any' in m) {
      if (typeof v === 'string' && m.text_any.split(/\s+/).filter(Boolean).some((w) => v.includes(w))) return true;
    } else if ('prefix' in m) {
      if (typeof v === 'string' && v.startsWith(m.prefix)) return true;
    }
  }
  if (c.range) {
    const bounds = ['lt', 'gt', 'lte', 'gte'].map((b) => c.range[b]).filter((x) => x !== undefined && x !== null);
    if (bounds.some((b) => typeof b === 'string')) {
      const t = parseDatetime(v);
      const r = Object.fromEntries(['lt', 'gt', 'lte', 'gte'].map((b) => [b, c.range[b] == null ? null : parseDatetime(c.range[b])]));
      if (t !== null && inRange(r, t)) return true;
    } else if (isNum(v) && inRange(c.range, Number(v))) {
      return true;
    }
  }
  const geo = isObj(v) && isNum(v.lon) && isNum(v.lat) ? v : null;
  if (geo && c.geo_radius && haversine(c.geo_radius.center.lon, c.geo_radius.center.lat, geo.lon, geo.lat) < c.geo_radius.radius) return true;
  if (geo && c.geo_bounding_box) {
    const { top_left: tl, bottom_right: br } = c.geo_bounding_box;
    const lonOk = tl.lon > br.lon ? geo.lon > tl.lon || geo.lon < br.lon : tl.lon < geo.lon && geo.lon < br.lon;
    if (lonOk && br.lat < geo.lat && geo.lat < tl.lat) return true;
  }
  return false;
}

const countOf = (v) => (v === null ? 0 : Array.isArray(v) ? v.length : 1);
const emptyValue = (v) => v === null || (Array.isArray(v) && v.length === 0);

function fieldHolds(c, payload) {
  const vals = valuesAt(payload, parsePath(c.key));
  if (vals.length === 0) { // nothing stored under the key
    if (c.is_empty != null) return c.is_empty;
    if (c.is_null != null) return !c.is_null;
    return false;
  }
  return vals.some((v) => {
    if (c.values_count) return inRange(c.values_count, countOf(v));
    if (c.is_empty != null) return emptyValue(v) === c.is_empty;
    if (c.is_null != null) return (v === null || (Array.isArray(v) && v.includes(null))) === c.is_null;
    return Array.isArray(v) ? v.some((e) => valueHolds(c, e)) : valueHolds(c, v);
  });
}

function conditionHolds(c, payload, id, normId) {
  if ('key' in c) return fieldHolds(c, payload);
  if ('is_empty' in c) return valuesAt(payload, parsePath(c.is_empty.key)).every(emptyValue);
  if ('is_null' in c) return valuesAt(payload, parsePath(c.is_null.key)).some((v) => v === null);
  if ('has_id' in c) return id != null && c.has_id.some((x) => { const n = normId(x); return n && n.key === id; });
  if ('nested' in c) {
    const key = c.nested.key.endsWith('[]') ? c.nested.key : c.nested.key + '[]';
    return valuesAt(payload, parsePath(key)).some((o) => isObj(o) && filterHolds(c.nested.filter, o, null, normId));
  }
  return filterHolds(c, payload, id, normId);
}

function list(x) { return x === undefined || x === null ? null : Array.isArray(x) ? x : [x]; }

export function filterHolds(f, payload, id, normId) {
  const holds = (c) => conditionHolds(c, payload, id, normId);
  const should = list(f.should), must = list(f.must), mustNot = list(f.must_not);
  if (should && !should.some(holds)) return false;
  if (f.min_should && f.min_should.conditions.filter(holds).length < f.min_should.min_count) return false;
  if (must && !must.every(holds)) return false;
  if (mustNot && mustNot.some(holds)) return false;
  return true;
}

// a predicate over stored points {payload, key}; throws FilterError for what is not modelled
export function compileFilter(f, normId) {
  const check = (c) => {
    if (c && typeof c === 'object') {
      if (c.geo_polygon) throw new FilterError('the stand-in does not model geo_polygon', true);
      const own = (k) => !Array.isArray(c) && Object.prototype.hasOwnProperty.call(c, k);
      if (own('has_vector') || own('slice')) throw new FilterError('the stand-in does not model has_vector / slice conditions', true);
      for (const v of Object.values(c)) if (v && typeof v === 'object') check(v);
    }
  };
  check(f);
  return (point) => filterHolds(f, point.payload || {}, point.key, normId);
}
