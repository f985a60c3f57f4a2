// Inputs: candidate values for the module's calls. Pools of values per kind (from parameter
// names and defaults, declared types, the module's literals and earlier results), well-known
// header values, and the arguments of a call built from the project's own calls of it and from
// what its parameters need (tt_shapes.mjs).

import { docOf } from './tt_analysis.mjs';
import { cloneShape, informative, mergeShape, shapeAt, shapeFits, shapeOf, splitTop, typeShape } from './tt_shapes.mjs';
import { NONE, literalOf } from './tt_tokens.mjs';
import { namedValues, words } from './tt_usage.mjs';
import { IDENT, typeName } from './tt_values.mjs';

// Well-known HTTP request headers and values a client really sends: the fallback when a
// parameter or field is a header the project's own usage shows no value for.
const HEADER_VALUES = {
  accept: ['text/html', 'application/json', 'text/html, application/xhtml+xml, application/xml;q=0.9, */*;q=0.8', 'text/*;q=0.5, application/json', '*/*'],
  'accept-charset': ['utf-8', 'utf-8, iso-8859-1;q=0.5', 'iso-8859-1, utf-8;q=0.7, *;q=0.3', '*'],
  'accept-encoding': ['gzip', 'gzip, deflate, br', 'gzip;q=1.0, identity; q=0.5, *;q=0', 'identity', '*'],
  'accept-language': ['en', 'en-US,en;q=0.9', 'fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5', '*'],
  authorization: ['Bearer abc.def.ghi', 'Basic dXNlcjpwYXNz'],
  'content-length': ['0', '42'],
  'content-type': ['application/json', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=xyz'],
  cookie: ['session=abc123', 'a=1; b=2'],
  host: ['example.com', 'localhost:3000'],
  'if-modified-since': ['Wed, 21 Oct 2015 07:28:00 GMT'],
  'if-none-match': ['"abc"', 'W/"abc", "def"'],
  origin: ['https://example.com'],
  range: ['bytes=0-99', 'bytes=0-0,-1'],
  referer: ['https://example.com/page'],
  'user-agent': ['Mozilla/5.0 (X11; Linux x86_64)', 'curl/8.0.1'],
  'x-forwarded-for': ['203.0.113.7', '203.0.113.7, 10.0.0.1'],
};

/** The header a name stands for (`acceptLanguage`, `Accept-Language` -> accept-language), or null. */
function headerName(name) {
  const key = words(name).join('-');
  return Object.hasOwn(HEADER_VALUES, key) ? key : null;
}

const STRINGY = /^(s|str|string|text|name|word|title|label|prefix|suffix|sep|separator|input|value|line|message|msg|key|id|slug|email|url|query|char|ch|pattern|format|template|lang|locale|code)$/i;
const NUMBERY = /^(n|num|number|count|size|index|idx|i|j|k|max|min|limit|width|height|x|y|a|b|amount|price|qty|quantity|total|len|length|step|start|end|from|to|depth|level|times|digits|precision|rate|percent|seconds|ms|age|year|offset)$/i;
const LISTY = /^(items|list|arr|array|values|xs|ys|nums|numbers|words|strings|elements|entries|rows|parts)$/i;
const OBJY = /^(opts|options|config|settings|obj|object|record|data|props|params|map|dict)$/i;
const FUNCY = /^(callback|cb|fn|func|f|predicate|pred|mapper|map_fn|reducer|compare|comparator|cmp|handler|iteratee|test|transform|visitor)$/i;

function callableFor(name) {
  const n = name.toLowerCase();
  if (/compar|cmp/.test(n)) return ['(a, b) => a - b', '(a, b) => (a < b ? -1 : a > b ? 1 : 0)'];
  if (/reduc/.test(n)) return ['(acc, x) => acc + x'];
  if (/pred|test|filter/.test(n)) return ['(x) => Boolean(x)', '(x) => typeof x === \'number\' && x > 1'];
  if (/map|transform/.test(n)) return ['(x) => x', '(x) => String(x).toUpperCase()'];
  return ['(x) => x', '() => 1'];
}

export class Inputs {
  constructor(rand, lits) {
    this.rand = rand;
    this.lits = lits;
    this.produced = { string: [], number: [], array: [], object: [] };
  }

  /** Kinds a declared type allows: string, number, boolean, array, object, function, null, undefined, any. */
  kinds(type, name, dflt) {
    if (type) {
      const t = type.replace(/\s/g, '');
      const kinds = new Set();
      const parts = t.startsWith('?') ? [t.slice(1), 'null'] : splitTop(t, '|');
      for (let p of parts) {
        p = p.replace(/^\(|\)$/g, '');
        if (p.startsWith('?')) { kinds.add('null'); p = p.slice(1); }
        if (p.endsWith('=')) { kinds.add('undefined'); p = p.slice(0, -1); }
        const lower = p.toLowerCase();
        if (lower === 'string' || /^['"]/.test(p)) kinds.add('string');
        else if (lower === 'number' || /^-?\d/.test(p)) kinds.add('number');
        else if (lower === 'boolean' || lower === 'true' || lower === 'false') kinds.add('boolean');
        else if (p.endsWith('[]') || /^(array|readonlyarray)</i.test(p) || lower === 'array') kinds.add(`array:${p.replace(/\[\]$/, '').replace(/^(Readonly)?Array<(.*)>$/i, '$2')}`);
        // Containers before functions: `Record<string, (v) => any>` is an object of functions.
        else if (lower === 'object' || p.startsWith('{') || /^(record|map|partial|readonly)</i.test(p)) kinds.add('object');
        else if (lower === 'function' || p.includes('=>')) kinds.add('function');
        else if (lower === 'null') kinds.add('null');
        else if (lower === 'undefined' || lower === 'void') kinds.add('undefined');
        else kinds.add('any');
      }
      if (dflt !== null && dflt !== undefined) kinds.add('undefined');
      return [...kinds];
    }
    const kinds = [];
    if (FUNCY.test(name)) kinds.push('function');
    else if (STRINGY.test(name)) kinds.push('string');
    else if (NUMBERY.test(name)) kinds.push('number');
    else if (LISTY.test(name)) kinds.push('array:any');
    else if (OBJY.test(name)) kinds.push('object');
    else if (/^(is|has|should|can|flag|enabled|strict|verbose)/i.test(name)) kinds.push('boolean');
    if (dflt !== null && dflt !== undefined) {
      const d = dflt.trim();
      if (/^['"`]/.test(d)) kinds.push('string');
      else if (/^-?\d/.test(d)) kinds.push('number');
      else if (/^(true|false)$/.test(d)) kinds.push('boolean');
      else if (d.startsWith('[')) kinds.push('array:any');
      else if (d.startsWith('{')) kinds.push('object');
      kinds.push('undefined');
    }
    return kinds.length ? [...new Set(kinds)] : ['any'];
  }

  /** Candidate values (as source) for one kind. */
  values(kind, name) {
    const L = this.lits;
    switch (kind.split(':')[0]) {
      case 'string': return ['""', ...L.strings.map((s) => JSON.stringify(s)), '"hello world"', '"Hello, World!"', '"a"', '"  padded  "', '"ünïcödé"', ...this.produced.string];
      case 'number': return ['0', '-1', '1', '2', '3', '7', '10', '42', '1.5', '100', 'NaN', ...L.numbers.map(String), ...this.produced.number];
      case 'boolean': return ['true', 'false'];
      case 'array': {
        const el = kind.split(':')[1] || 'any';
        const t = el.toLowerCase();
        if (t === 'string') return ['[]', '["a", "b", "c"]', '["hello", "world"]', '[""]', ...this.produced.array];
        if (t === 'number') return ['[]', '[1, 2, 3]', '[3, 1, 2]', '[-1, 0, 1]', '[5]', '[1.5, 2]', ...this.produced.array];
        return ['[]', '[1, 2, 3]', '["a", "b"]', '[0]', '[3, 1, 2]', ...this.produced.array];
      }
      case 'object': return ['{}', '{ a: 1 }', '{ name: "x", value: 2 }', ...this.produced.object];
      case 'function': return callableFor(name);
      case 'null': return ['null'];
      case 'undefined': return ['undefined'];
      default: return ['""', '"abc"', '0', '1', '-1', '[]', '[1, 2]', '{}', 'null', 'undefined', 'true', ...L.strings.slice(0, 5).map((s) => JSON.stringify(s)), ...L.numbers.slice(0, 5).map(String)];
    }
  }

  draw(param, type) {
    const kinds = this.kinds(type, param.name, param.dflt);
    const kind = this.rand.pick(kinds);
    return this.rand.pick(this.values(kind, param.name));
  }

  /** Whether a value (as source) fits the declared type. */
  fits(src, type, name, dflt) {
    if (!type) return false;
    const kinds = this.kinds(type, name, dflt);
    if (kinds.includes('any')) return true;
    // Read, never run: a literal, a small callable, or something whose type is unknown here.
    const v = literalOf(src);
    const code = String(src).trim();
    let t;
    if (v !== NONE) t = typeName(v);
    else if (/^(async\s*)?(\([^()]*\)|[A-Za-z_$][\w$]*)\s*=>/.test(code) || /^(async\s+)?function\b/.test(code)) t = 'function';
    else return false;
    return kinds.some((k) => {
      const base = k.split(':')[0];
      if (base === 'array') return t === 'array';
      if (base === 'number') return t === 'number' && !Number.isNaN(v);
      return base === t;
    });
  }

  remember(render, type) {
    if (render === null || render.length > 80) return;
    const bucket = this.produced[type];
    if (bucket && !bucket.includes(render) && bucket.length < 12) bucket.push(render);
  }
}

/**
 * The arguments of the module's calls, as source: first each call the project itself makes, then
 * values of what the parameters need (their types, the shapes the module reads on them, the strings
 * the project passes for them), then draws from the pools of `Inputs`.
 */
export class Arguments {
  constructor(rand, docs, typedefs, shapes, inputs) {
    this.rand = rand; this.docs = docs; this.typedefs = typedefs; this.shapes = shapes; this.inputs = inputs;
    this.usage = null; // how the project calls the module, once its exports are known
    this.models = new Map();
    this.namedCache = new Map();
    this.cursors = new Map();
  }

  doc(name) {
    return docOf(this.docs, name);
  }

  /**
   * Arguments (as source) for a call of `fn`: first each call the project itself makes (its
   * tests, README, other modules), then draws from what the parameters need, now and then one of
   * the project's calls again. `c` is the callable (its usage keys and shape key), or null.
   */
  args(fn, paramsList, c = null, opts = {}) {
    const list = paramsList.filter((p) => !p.rest);
    const out = this.harvestedArgs(fn, list, c) || list.map((p, i) => this.drawArg(fn, p, i, c, opts));
    // Trailing undefined arguments say nothing the shorter call does not.
    while (out.length && out[out.length - 1] === 'undefined') out.pop();
    return out;
  }

  /** The project's own calls of a callable: lists of { src, hint } per argument. */
  callsFor(c) {
    if (!c || !this.usage) return [];
    return (c.keys || []).flatMap((k) => this.usage.calls.get(k) || []);
  }

  harvestedArgs(fn, list, c) {
    const calls = this.callsFor(c);
    if (!calls.length) return null;
    const at = this.cursors.get(c.fn) || 0;
    let chosen;
    if (at < calls.length) { chosen = calls[at]; this.cursors.set(c.fn, at + 1); }
    else if (this.rand.next() < 0.3) chosen = this.rand.pick(calls);
    else return null;
    if (chosen.length < list.length && chosen.every((a) => a.src === null)) return null;
    return chosen.map((a, i) => a.src ?? this.drawArg(fn, list[i] || { name: a.hint?.name || 'arg', dflt: null }, i, c, { guided: true }));
  }

  /** One argument: the strings the project uses for this parameter, a value of its shape, or a draw. */
  drawArg(fn, p, i, c, opts = {}) {
    const m = this.model(fn, p, i, c);
    if (m.strings.length && (opts.guided || this.rand.next() < 0.7)) return JSON.stringify(this.rand.pick(m.strings));
    if (m.guides && (opts.guided || this.rand.next() < 0.85)) return this.shapeSource(m.shape, p.name, 0, false, m.pool);
    return this.inputs.draw(p, m.type);
  }

  /**
   * What is known of parameter `i` of `fn`: its declared type, its shape (types, JSDoc paths and
   * the properties the module reads on it), and the strings the project passes for it.
   */
  model(fn, p, i, c) {
    const key = `${fn}\n${c?.access ?? ''}\n${i}\n${p.name}`;
    if (this.models.has(key)) return this.models.get(key);
    const d = this.doc(fn);
    const type = d.params[p.name];
    let shape = typeShape(type, this.typedefs);
    for (const path of d.paths || []) {
      const segs = path.name.split('.');
      if (segs[0] !== p.name) continue;
      shape = shape && shape.kind === 'object' ? shape : shapeOf('object');
      const at = shapeAt(shape, segs.slice(1, -1));
      if (at) at.fields.set(segs[segs.length - 1], Object.assign(typeShape(path.type, this.typedefs) || shapeOf('any'), { optional: path.optional }));
    }
    const access = this.shapes[c?.access ?? fn.split('.').pop()]?.[p.name];
    shape = mergeShape(shape, access && cloneShape(access));
    const hints = this.callsFor(c).map((args) => args[i]?.hint).filter(Boolean);
    const names = [...new Set([p.name, ...hints.map((h) => h.name)])];
    // A plain declared type (`number[]`, `string`) is drawn as before; a shape guides where the
    // type is unknown or names more (fields, literal values).
    const kinds = this.inputs.kinds(type, p.name, p.dflt);
    const plain = !kinds.includes('any');
    const guides = informative(shape) && (!plain || shape.fields.size > 0 || shape.values.length > 0 || !!shape.map);
    let strings = [];
    if ((!shape || shape.kind === 'string' || shape.kind === 'any') && (kinds.includes('string') || kinds.includes('any'))) {
      // What callers pass (`f(req.headers['accept-charset'])`) says more than the parameter's name.
      const headers = hints.length ? hints.map((h) => h.name) : [p.name];
      strings = [...names.flatMap((n) => this.named(n)), ...headers.flatMap((n) => HEADER_VALUES[headerName(n)] || [])];
      if (shape) strings.unshift(...shape.values.filter((v) => typeof v === 'string'));
    }
    const siblings = this.siblingStrings(fn, c, p.name);
    const m = { type, shape, guides, strings: [...new Set(strings)], pool: siblings.length ? siblings : this.usageItems() };
    this.models.set(key, m);
    return m;
  }

  /** The strings the project's usage names like `name` (read once per name). */
  named(name) {
    if (!this.namedCache.has(name)) this.namedCache.set(name, namedValues(this.usage, name));
    return this.namedCache.get(name);
  }

  /** Items of the strings the project's usage and the module hold: what a list of unknown things holds. */
  usageItems() {
    if (this.items) return this.items;
    const out = new Set();
    for (const v of [...(this.usage?.strings || []), ...this.inputs.lits.strings]) {
      for (const item of v.split(/[,;]/)) if (/^[^\s=]{1,40}$/.test(item.trim())) out.add(item.trim());
    }
    this.items = [...out].slice(0, 24);
    return this.items;
  }

  /** Items of the strings the call's other parameters take (`utf-8` of `utf-8;q=0.8, *`): what a list holds. */
  siblingStrings(fn, c, own) {
    const names = new Set([...Object.keys(this.doc(fn).params), ...(c?.params || []).map((p) => p.name)]);
    names.delete(own);
    const at = (c?.params || []).findIndex((p) => p.name === own);
    for (const call of this.callsFor(c)) call.forEach((a, j) => { if (j !== at && a.hint) names.add(a.hint.name); });
    const out = new Set();
    for (const name of names) {
      for (const v of [...this.named(name), ...(HEADER_VALUES[headerName(name)] || [])]) {
        for (const item of v.split(/[,;]/)) if (/^[^\s=]{1,40}$/.test(item.trim())) out.add(item.trim());
      }
    }
    return [...out].slice(0, 24);
  }

  /** Source of a value of `shape` for a parameter or field called `name`. */
  shapeSource(shape, name, depth, inHeaders, pool) {
    const kind = shape && depth < 5 ? shape.kind : 'any';
    if (kind === 'object') return this.objectSource(shape, name, depth);
    if (kind === 'array') {
      const n = this.rand.int(4);
      const items = [];
      for (let k = 0; k < n; k++) items.push(this.shapeSource(shape.of, name.replace(/s$/, ''), depth + 1, false, pool || []));
      return `[${items.join(', ')}]`;
    }
    if (kind === 'function') return '() => undefined';
    if (kind === 'boolean') return this.rand.pick(['true', 'false']);
    if (kind === 'number') {
      const known = shape.values.filter((v) => typeof v === 'number').map(String);
      return this.rand.pick(known.length && this.rand.next() < 0.7 ? known : this.inputs.values('number'));
    }
    const strings = [...(shape?.values || []).filter((v) => typeof v === 'string'), ...this.named(name)];
    const header = headerName(name);
    if (header) strings.push(...HEADER_VALUES[header]);
    else if (inHeaders) strings.push(...this.inputs.values('string').slice(1, 6).map((s) => literalOf(s)));
    // A list's element of unknown kind is likely one of the strings around; a field of unknown
    // kind is often a flag (`if (opts.dot)`).
    if (!strings.length && pool?.length && kind === 'any') strings.push(...pool);
    if (strings.length) return JSON.stringify(this.rand.pick([...new Set(strings)]));
    if (kind === 'string') return this.rand.pick(this.inputs.values('string'));
    if (!pool && this.rand.next() < 0.5) return 'true';
    return this.inputs.draw({ name, dflt: null }, null);
  }

  objectSource(shape, name, depth) {
    const headers = /^headers?$/i.test(name);
    // A few fields at a time: an options bag of thirty flags all set says less than three.
    const often = Math.min(0.9, 4 / Math.max(1, shape.fields.size));
    let entries = [...shape.fields].filter(([, sub]) => this.rand.next() < (sub.optional ? Math.min(0.6, often) : often));
    if (!shape.fields.size && (shape.map || headers)) {
      const keys = headers ? Object.keys(HEADER_VALUES).filter(() => this.rand.next() < 0.2) : ['a', 'b'];
      entries = keys.map((k) => [k, shape.map || shapeOf('any')]);
    } else if (!shape.fields.size) return this.rand.pick(this.inputs.values('object'));
    const parts = entries.map(([k, sub]) => `${IDENT.test(k) ? k : JSON.stringify(k)}: ${this.shapeSource(sub, k, depth + 1, headers, null)}`);
    return parts.length ? `{ ${parts.join(', ')} }` : '{}';
  }

  welltyped(fn, paramsList, args) {
    const d = this.doc(fn);
    const list = paramsList.filter((p) => !p.rest);
    if (!list.length || list.some((p) => !d.params[p.name])) return false;
    return list.every((p, i) => {
      const type = d.params[p.name];
      const src = args[i] ?? 'undefined';
      // Containers and named types (`Options`, a typedef) are checked against their members;
      // a named type this module does not define (`import('./types.js').Options`,
      // `TemplateStringsArray`) cannot be judged, so no argument is known to fit it. Only
      // `any`, `unknown` and `*` take anything.
      const shape = typeShape(type, this.typedefs);
      if (shape && (shape.kind === 'object' || shape.kind === 'array')) return shapeFits(src, shape, p.dflt);
      if (!this.inputs.kinds(type, p.name, p.dflt).includes('any')) return this.inputs.fits(src, type, p.name, p.dflt);
      if (shape && shape.kind !== 'any') return shapeFits(src, shape, p.dflt);
      return splitTop(type.replace(/^\?|=$/g, ''), '|').every((alt) => /^(any|unknown|\*|null|undefined|void)$/.test(alt.trim()));
    });
  }
}
