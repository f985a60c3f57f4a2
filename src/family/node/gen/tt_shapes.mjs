// Inputs: the shapes of values. What a parameter must look like, from the module's own code (the
// properties its body reads on it, `this.request = request` followed by
// `this.request.headers['accept']`) and from its types (JSDoc record types and typedefs,
// TypeScript interfaces and type literals).
// A shape: { kind: 'object'|'string'|'number'|'boolean'|'array'|'function'|'any', fields: Map,
// of (an array's element), values (literal values it is compared with or typed as), optional }.

import { NONE, NOT_A_METHOD, expressionEnd, literalOf, partners, splitList, tokenize, unquote } from './tt_tokens.mjs';
import { isPlainObject, typeName } from './tt_values.mjs';

const STRING_METHODS = new Set(['split', 'toLowerCase', 'toUpperCase', 'trim', 'trimStart', 'trimEnd', 'startsWith', 'endsWith',
  'charAt', 'charCodeAt', 'codePointAt', 'padStart', 'padEnd', 'normalize', 'localeCompare', 'match', 'matchAll', 'replace',
  'replaceAll', 'search', 'substring', 'substr', 'toLocaleLowerCase', 'toLocaleUpperCase']);
const ARRAY_METHODS = new Set(['map', 'filter', 'forEach', 'reduce', 'reduceRight', 'some', 'every', 'find', 'findIndex', 'findLast',
  'flatMap', 'push', 'pop', 'shift', 'unshift', 'sort', 'reverse', 'splice', 'join', 'flat', 'fill']);

export function shapeOf(kind) {
  return { kind, fields: new Map(), of: null, map: null, values: [], optional: false };
}

/** The shape at `path` below `root`, made objects on the way. */
export function shapeAt(root, segs) {
  let at = root;
  for (const seg of segs) {
    if (at.kind === 'any') at.kind = 'object';
    if (at.kind !== 'object') return null;
    if (!at.fields.has(seg)) at.fields.set(seg, shapeOf('any'));
    at = at.fields.get(seg);
  }
  return at;
}

/** Functions of a module's tokens: { name, cls, params: [{ name, fields }], body: [s, e] }. */
function functionsOf(toks, match) {
  const out = [];
  const classes = []; // [name, end]
  for (let k = 0; k < toks.length; k++) {
    const tok = toks[k];
    while (classes.length && k > classes[classes.length - 1][1]) classes.pop();
    if (tok.t === 'id' && tok.v === 'class') {
      let j = k + 1;
      while (j < toks.length && toks[j].v !== '{') j++;
      if (match[j] > j) classes.push([toks[k + 1]?.t === 'id' && toks[k + 1].v !== 'extends' ? toks[k + 1].v : assignedName(toks, k), match[j]]);
      continue;
    }
    const fn = functionAt(toks, match, k, classes.length ? classes[classes.length - 1][0] : null);
    if (fn) out.push(fn);
  }
  return out;
}

/** The name a `function`, class or arrow at token `k` is assigned to (`x.y.name = function`), or null. */
function assignedName(toks, k) {
  let j = k - 1;
  if (toks[j]?.v === 'async') j--;
  if ((toks[j]?.v === '=' || toks[j]?.v === ':') && (toks[j - 1]?.t === 'id' || toks[j - 1]?.t === 'str')) {
    return toks[j - 1].t === 'str' ? unquote(toks[j - 1].v) : toks[j - 1].v;
  }
  return null;
}

function functionAt(toks, match, k, cls) {
  const tok = toks[k];
  let name = null, open = -1;
  if (tok.t === 'id' && tok.v === 'function') {
    let j = k + 1;
    if (toks[j]?.v === '*') j++;
    if (toks[j]?.t === 'id') name = toks[j++].v;
    name = assignedName(toks, k) || name;
    if (toks[j]?.v === '<') while (j < toks.length && toks[j].v !== '(') j++;
    open = toks[j]?.v === '(' ? j : -1;
  } else if (tok.t === 'id' && toks[k + 1]?.v === '(' && cls && !NOT_A_METHOD.has(tok.v) &&
             ['{', '}', ';', 'static', 'async', 'get', 'set', '*', 'public', 'private', 'protected', 'readonly'].includes(toks[k - 1]?.v)) {
    name = tok.v === 'constructor' ? `${cls}#constructor` : tok.v;
    open = k + 1;
  } else if (tok.t === 'p' && tok.v === '(' && match[k] > k && toks[match[k] + 1]?.v === '=>') {
    name = assignedName(toks, k);
    open = k;
  } else if (tok.t === 'id' && toks[k + 1]?.v === '=>' && toks[k - 1]?.v !== '.') {
    const b = k + 2;
    const body = toks[b]?.v === '{' && match[b] > b ? [b, match[b]] : [b, expressionEnd(toks, match, b)];
    return { name: assignedName(toks, k), cls, params: [{ name: tok.v, fields: null }], body };
  }
  if (open < 0 || match[open] < 0) return null;
  let b = match[open] + 1;
  if (toks[b]?.v === ':') while (b < toks.length && toks[b].v !== '{' && toks[b].v !== '=>') b++;
  if (toks[b]?.v === '=>') b++;
  const body = toks[b]?.v === '{' && match[b] > b ? [b, match[b]] : toks[match[open] + 1]?.v === '=>' ? [b, expressionEnd(toks, match, b)] : null;
  if (!body) return null;
  return { name, cls, params: paramList(toks, match, open), body };
}

function paramList(toks, match, open) {
  return splitList(toks, match, open).map(([s, e]) => {
    let k = s;
    if (toks[k]?.v === '...') k++;
    const tok = toks[k];
    if (tok?.t === 'id' && !['public', 'private', 'protected', 'readonly'].includes(tok.v)) return { name: tok.v, fields: null };
    if (tok?.v === '{' && match[k] > k) {
      const fields = splitList(toks, match, k).map(([a]) => toks[a]).filter((t) => t.t === 'id').map((t) => t.v);
      return { name: 'options', fields };
    }
    if (toks[k + 1]?.t === 'id') return { name: toks[k + 1].v, fields: null };
    return { name: e > s ? 'arg' : null, fields: null };
  }).filter((p) => p.name);
}

/**
 * Shapes of every function's parameters, from what the module reads on them:
 * { functionName: { paramName: shape } }. A constructor's `this.field = param` makes every
 * `this.field...` in the module a read of that parameter, and a parameter handed on whole to
 * another function of the module (`return preferred(list, available)`, `this.mediaTypes(available)`)
 * takes that function's parameter's shape too.
 */
export function accessShapes(text) {
  const toks = tokenize(text);
  const match = partners(toks);
  const out = Object.create(null);
  const aliases = new Map(); // this.field -> shape of a constructor's parameter
  const links = []; // [shape, function name, parameter index]
  for (const fn of functionsOf(toks, match)) {
    if (!fn.name) continue;
    const shapes = (out[fn.name] ||= Object.create(null));
    const roots = new Map();
    for (const p of fn.params) {
      const shape = shapes[p.name] || shapeOf(p.fields ? 'object' : 'any');
      for (const f of p.fields || []) shapeAt(shape, [f]);
      shapes[p.name] = shape;
      roots.set(p.name, shape);
    }
    localAliases(toks, match, fn.body, roots);
    for (const [name, shape] of roots) readsOf(toks, match, fn.body, name, shape, aliases, links);
  }
  for (let k = 0; k + 2 < toks.length; k++) {
    if (toks[k].v === 'this' && toks[k + 1].v === '.' && aliases.has(toks[k + 2].v) && toks[k + 3]?.v !== '=') readChain(toks, match, k + 3, aliases.get(toks[k + 2].v));
  }
  // Twice: a parameter handed on through two functions.
  for (const fn of Object.values(out)) for (const shape of Object.values(fn)) settle(shape, 0);
  for (let round = 0; round < 2; round++) {
    for (const [shape, callee, j] of links) {
      const target = out[callee] && Object.values(out[callee])[j];
      if (target && target !== shape) mergeShape(shape, cloneShape(target));
    }
  }
  for (const fn of Object.values(out)) for (const shape of Object.values(fn)) settle(shape, 0);
  return out;
}

/** The reads of parameter `name` in a body, its `this.field = name...` aliases, and where it is handed on. */
function readsOf(toks, match, [s, e], name, shape, aliases, links) {
  for (let k = s; k < e; k++) {
    const tok = toks[k];
    if (tok.t !== 'id') continue;
    if (tok.v === name && !['.', '?.'].includes(toks[k - 1]?.v)) {
      readChain(toks, match, k + 1, shape);
      const handed = passedAt(toks, match, k);
      if (handed) links.push([shape, ...handed]);
    }
    if (tok.v === 'this' && toks[k + 1]?.v === '.' && toks[k + 2]?.t === 'id' && toks[k + 3]?.v === '=' && toks[k + 4]?.v === name) {
      const segs = chainSegments(toks, k + 5, expressionEnd(toks, match, k + 4));
      const target = segs && shapeAt(shape, segs);
      if (target) aliases.set(toks[k + 2].v, target);
    }
  }
}

/** When the name at token `k` is a whole argument of `f(...)` or `this.f(...)`: [f, its index]. */
function passedAt(toks, match, k) {
  const before = toks[k - 1]?.v, after = toks[k + 1]?.v;
  if (!(before === '(' || before === ',') || !(after === ')' || after === ',')) return null;
  let open = k - 1;
  while (open >= 0 && toks[open].v !== '(') {
    if (')]}'.includes(toks[open].v) && match[open] >= 0) open = match[open];
    if (toks[open].v === '[' || toks[open].v === '{') return null;
    open--;
  }
  const callee = toks[open - 1];
  if (open < 0 || !callee || callee.t !== 'id' || NOT_A_METHOD.has(callee.v)) return null;
  const viaThis = toks[open - 2]?.v === '.' && toks[open - 3]?.v === 'this';
  if (['.', '?.'].includes(toks[open - 2]?.v) && !viaThis) return null;
  const index = splitList(toks, match, open).findIndex(([a]) => a === k);
  return index < 0 ? null : [callee.v, index];
}

/** A shape read with `.length` and indexed by a computed key is a list. */
function settle(shape, depth) {
  if (!shape || depth > 8) return;
  if (shape.kind === 'any' && shape.indexed && shape.lengthy) shape.kind = 'array';
  for (const sub of shape.fields.values()) settle(sub, depth + 1);
}

/** `const h = req.headers` and `const { headers } = req` inside a body: h and headers read req too. */
function localAliases(toks, match, [s, e], roots) {
  const DECL = ['var', 'let', 'const'];
  for (let k = s; k < e; k++) {
    if (toks[k].v !== '=' || toks[k + 1]?.t !== 'id' || !roots.has(toks[k + 1].v)) continue;
    const lhs = toks[k - 1];
    const pattern = lhs?.v === '}' && match[k - 1] >= 0;
    if (!(DECL.includes(toks[k - 2]?.v) && lhs.t === 'id') && !(pattern && DECL.includes(toks[match[k - 1] - 1]?.v))) continue;
    const segs = chainSegments(toks, k + 2, expressionEnd(toks, match, k + 1));
    if (!segs) continue;
    const root = roots.get(toks[k + 1].v);
    if (!pattern) {
      const target = shapeAt(root, segs);
      if (target && !roots.has(lhs.v)) roots.set(lhs.v, target);
      continue;
    }
    for (const [a] of splitList(toks, match, match[k - 1])) {
      if (toks[a].t !== 'id') continue;
      const field = shapeAt(root, [...segs, toks[a].v]);
      const local = toks[a + 1]?.v === ':' && toks[a + 2]?.t === 'id' ? toks[a + 2].v : toks[a].v;
      if (field && !roots.has(local)) roots.set(local, field);
    }
  }
}

/** Segments of a property chain filling tokens [s, e) exactly, or null. */
function chainSegments(toks, s, e) {
  const segs = [];
  for (let k = s; k < e;) {
    if ((toks[k].v === '.' || toks[k].v === '?.') && toks[k + 1]?.t === 'id') { segs.push(toks[k + 1].v); k += 2; }
    else if (toks[k].v === '[' && ['str', 'num'].includes(toks[k + 1]?.t) && toks[k + 2]?.v === ']') { segs.push(toks[k + 1].t === 'str' ? unquote(toks[k + 1].v) : toks[k + 1].v); k += 3; }
    else return null;
  }
  return segs;
}

/** Reads the property chain after a parameter at token `k` into its shape. */
function readChain(toks, match, k, root) {
  const segs = [];
  let j = k;
  for (;;) {
    if ((toks[j]?.v === '.' || toks[j]?.v === '?.') && toks[j + 1]?.t === 'id') { segs.push(toks[j + 1].v); j += 2; continue; }
    if (toks[j]?.v === '?.' && toks[j + 1]?.v === '[') j++;
    if (toks[j]?.v === '[' && ['str', 'tpl'].includes(toks[j + 1]?.t) && toks[j + 2]?.v === ']' && !toks[j + 1].expr) {
      segs.push(unquote(toks[j + 1].v)); j += 3; continue;
    }
    break;
  }
  if (toks[j]?.v === '[' && match[j] > j) {
    // An element (`list[0]`, `list[i]`): a list, when it also has a length or a literal index.
    const at = shapeAt(root, segs);
    if (at) at.indexed = true;
    if (at && toks[j + 1]?.t === 'num') at.lengthy = true;
  }
  if (!segs.length) {
    if (toks[j]?.v === '(') setKind(root, 'function');
    return;
  }
  const last = segs[segs.length - 1];
  const called = toks[j]?.v === '(';
  if (called && STRING_METHODS.has(last)) { setKind(shapeAt(root, segs.slice(0, -1)), 'string'); return; }
  if (called && ARRAY_METHODS.has(last)) { setKind(shapeAt(root, segs.slice(0, -1)), 'array'); return; }
  if (['length', 'indexOf', 'includes', 'slice', 'concat', 'at', 'lastIndexOf', 'toString', 'valueOf', 'hasOwnProperty', 'constructor'].includes(last)) {
    const parent = shapeAt(root, segs.slice(0, -1));
    if (parent && last === 'length') parent.lengthy = true;
    return;
  }
  const leaf = shapeAt(root, segs);
  if (!leaf) return;
  if (called) setKind(leaf, 'function');
  const op = toks[j]?.v, lit = toks[j + 1];
  if (['===', '==', '!==', '!='].includes(op) && lit && (lit.t === 'str' || lit.t === 'num' || lit.v === 'true' || lit.v === 'false')) {
    const v = lit.t === 'str' ? unquote(lit.v) : lit.t === 'num' ? Number(lit.v) : lit.v === 'true';
    setKind(leaf, typeof v);
    if (!leaf.values.includes(v)) leaf.values.push(v);
  }
}

/** Whether the source `src` is a value of `shape` (its kind, and an object's required fields). */
export function shapeFits(src, shape, dflt) {
  const v = literalOf(src);
  if (v === undefined) return dflt !== null && dflt !== undefined;
  if (v === NONE) return shape.kind === 'function' && /=>|^(async\s+)?function\b/.test(String(src).trim());
  const fits = (value, sh, depth) => {
    if (!sh || sh.kind === 'any' || depth > 6) return true;
    if (sh.values.length && !sh.values.includes(value)) return false;
    if (sh.kind === 'object') {
      if (!isPlainObject(value)) return false;
      if (sh.map && !Object.values(value).every((x) => fits(x, sh.map, depth + 1))) return false;
      return [...sh.fields].every(([k, sub]) => (value[k] === undefined ? sub.optional : fits(value[k], sub, depth + 1)));
    }
    if (sh.kind === 'array') return Array.isArray(value) && value.every((x) => fits(x, sh.of, depth + 1));
    return typeName(value) === sh.kind && !(sh.kind === 'number' && Number.isNaN(value));
  };
  return fits(v, shape, 0);
}

export function cloneShape(shape) {
  if (!shape) return null;
  return { ...shape, fields: new Map([...shape.fields].map(([k, v]) => [k, cloneShape(v)])), of: cloneShape(shape.of), map: cloneShape(shape.map), values: [...shape.values] };
}

function setKind(shape, kind) {
  if (shape && (shape.kind === 'any' || (shape.kind === 'object' && !shape.fields.size))) shape.kind = kind;
}

/** `text` split at top-level `sep` characters (outside brackets and quotes). */
export function splitTop(text, seps) {
  const parts = [];
  let depth = 0, quote = null, cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) { cur += c; if (c === '\\') cur += text[++i] ?? ''; else if (c === quote) quote = null; continue; }
    if (c === '"' || c === "'" || c === '`') quote = c;
    else if ('<([{'.includes(c)) depth++;
    else if ('>)]}'.includes(c) && !(c === '>' && text[i - 1] === '=')) depth--;
    if (depth === 0 && seps.includes(c)) { parts.push(cur); cur = ''; continue; }
    cur += c;
  }
  if (cur.trim()) parts.push(cur);
  return parts.map((p) => p.trim()).filter(Boolean);
}

/** The shape a JSDoc or TypeScript type text describes (names through `typedefs`), or null. */
export function typeShape(text, typedefs, depth = 0) {
  if (!text || depth > 6) return null;
  let t = text.trim().replace(/^\?|=$/g, '').replace(/^\((.*)\)$/s, '$1').trim();
  const alts = splitTop(t, '|').filter((a) => !/^(null|undefined|void)$/.test(a));
  if (alts.length > 1) {
    const lits = alts.map((a) => literalOf(a)).filter((v) => typeof v === 'string' || typeof v === 'number');
    if (lits.length === alts.length) return Object.assign(shapeOf(typeof lits[0]), { values: lits });
    return alts.map((a) => typeShape(a, typedefs, depth + 1)).find((s) => s && s.kind === 'object') || null;
  }
  t = alts[0] || t;
  const lit = literalOf(t);
  if (typeof lit === 'string' || typeof lit === 'number') return Object.assign(shapeOf(typeof lit), { values: [lit] });
  if (t.startsWith('{') && t.endsWith('}')) return recordShape(t.slice(1, -1), typedefs, depth);
  let m = /^(?:Readonly)?Array\s*<(.*)>$/s.exec(t) || /^(.*)\[\]$/s.exec(t);
  if (m) return Object.assign(shapeOf('array'), { of: typeShape(m[1], typedefs, depth + 1) });
  m = /^(?:Record|Object\.?|Map)\s*<[^,]+,(.*)>$/s.exec(t);
  if (m) return Object.assign(shapeOf('object'), { map: typeShape(m[1], typedefs, depth + 1) || shapeOf('any') });
  if (typedefs && Object.hasOwn(typedefs, t)) return typeShape(typedefs[t], typedefs, depth + 1);
  const lower = t.toLowerCase();
  if (['string', 'number', 'boolean'].includes(lower)) return shapeOf(lower);
  if (lower === 'function' || t.includes('=>')) return shapeOf('function');
  if (lower === 'object' || lower === '*' || lower === 'any') return shapeOf(lower === 'object' ? 'object' : 'any');
  return null;
}

/** The members of a record type `a: T, b?: U; [k: string]: V` as an object shape. */
function recordShape(body, typedefs, depth) {
  const shape = shapeOf('object');
  for (const member of splitTop(body, ',;\n')) {
    const m = /^(?:readonly\s+)?(\[[^\]]*\]|['"]?[\w$-]+['"]?)(\?)?\s*(\([^)]*\))?\s*:\s*([\s\S]+)$/.exec(member);
    if (!m) continue;
    if (m[1].startsWith('[')) { shape.map = typeShape(m[4], typedefs, depth + 1) || shapeOf('any'); continue; }
    const sub = m[3] ? shapeOf('function') : typeShape(m[4], typedefs, depth + 1) || shapeOf('any');
    sub.optional = !!m[2];
    shape.fields.set(m[1].replace(/^['"]|['"]$/g, ''), sub);
  }
  return shape;
}

/** `b` merged into `a` (a's kinds win; fields are united). */
export function mergeShape(a, b) {
  if (!a) return b;
  if (!b) return a;
  if (a.kind === 'any' || (a.kind === 'object' && !a.fields.size && !a.map && b.kind !== 'any')) a.kind = b.kind;
  for (const [k, v] of b.fields) a.fields.set(k, a.fields.has(k) ? mergeShape(a.fields.get(k), v) : v);
  a.of = mergeShape(a.of, b.of);
  a.map = a.map || b.map;
  for (const v of b.values) if (!a.values.includes(v)) a.values.push(v);
  return a;
}

/** Whether a shape says more than "some value" or "some object": fields, known values, a kind. */
export function informative(shape) {
  return !!shape && (shape.fields.size > 0 || !!shape.map || shape.values.length > 0 || !['any', 'object'].includes(shape.kind));
}
