// Analysis, reading source without running it: a small JavaScript/TypeScript tokenizer, for
// reading how the project uses its own code and what a module reads on its parameters. It
// evaluates nothing. A `/` it cannot tell apart (regex or division) is a regex only when one
// closes on the same line, so a wrong guess never swallows the rest of a file.

const PUNCT = ['>>>=', '...', '===', '!==', '**=', '<<=', '>>=', '>>>', '&&=', '||=', '??=', '=>', '?.', '??',
  '==', '!=', '<=', '>=', '&&', '||', '++', '--', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '**', '<<', '>>'];
const REGEX_AFTER = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'instanceof', 'yield', 'await']);
const NUMBER_RE = /(?:0[xXoObB][\da-fA-F_]+|\d[\d_]*\.?[\d_]*(?:[eE][+-]?\d+)?|\.\d[\d_]*(?:[eE][+-]?\d+)?)n?/y;
const IDENT_RE = /[A-Za-z_$\u0080-\uffff#][\w$\u0080-\uffff]*/y;

/** The end of the quoted string opening at `i` (its closing quote + 1; a line end if unclosed). */
function stringEnd(text, i) {
  const q = text[i];
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === q) return j + 1;
    else if (text[j] === '\n') return j;
  }
  return text.length;
}

/** The end of the template literal opening at `i`, and whether it holds `${}` substitutions. */
function templateEnd(text, i) {
  let expr = false;
  for (let j = i + 1; j < text.length; j++) {
    const c = text[j];
    if (c === '\\') { j++; continue; }
    if (c === '`') return { end: j + 1, expr };
    if (c === '$' && text[j + 1] === '{') {
      expr = true;
      j = codeEnd(text, j + 2) - 1;
    }
  }
  return { end: text.length, expr };
}

/** The index after the `}` that closes the code starting at `i` (inside `${`). */
function codeEnd(text, i) {
  let depth = 1, prev = '(';
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (/\s/.test(c)) continue;
    if (c === '/' && text[j + 1] === '/') { const e = text.indexOf('\n', j); j = e < 0 ? text.length : e; continue; }
    if (c === '/' && text[j + 1] === '*') { const e = text.indexOf('*/', j + 2); j = e < 0 ? text.length : e + 1; continue; }
    if (c === '/' && /[(,=:[!&|?{};+\-*%<>~^]/.test(prev)) {
      const e = regexEnd(text, j);
      if (e > 0) { j = e - 1; prev = 'a'; continue; }
    }
    if (c === '"' || c === "'") j = stringEnd(text, j) - 1;
    else if (c === '`') j = templateEnd(text, j).end - 1;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return j + 1;
    prev = c;
  }
  return text.length;
}

/** The end of a regex literal opening at `i`, or -1 when none closes on this line. */
function regexEnd(text, i) {
  let inClass = false;
  for (let j = i + 1; j < text.length; j++) {
    const c = text[j];
    if (c === '\n') return -1;
    if (c === '\\') { j++; continue; }
    if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '/' && !inClass) {
      let e = j + 1;
      while (e < text.length && /[a-z]/.test(text[e])) e++;
      return e;
    }
  }
  return -1;
}

function regexAllowed(prev) {
  if (!prev) return true;
  if (prev.t === 'id') return REGEX_AFTER.has(prev.v);
  if (prev.t === 'p') return ![')', ']', '}'].includes(prev.v);
  return false;
}

/**
 * Tokens of `text`: { t: 'id'|'num'|'str'|'tpl'|'re'|'p', v, s, e, nl, sp, expr }. `nl` and `sp`
 * say whether a line break or any space or comment comes before the token. Comments go to
 * `comments` when given ({ s, text }).
 */
export function tokenize(text, comments = null) {
  const toks = [];
  let i = text.startsWith('#!') ? Math.max(0, text.indexOf('\n')) : 0;
  let nl = false, sp = false;
  const push = (t, s, e, extra = {}) => { toks.push({ t, v: text.slice(s, e), s, e, nl, sp, ...extra }); nl = false; sp = false; i = e; };
  while (i < text.length) {
    const c = text[i];
    if (c === '\n') { nl = true; sp = true; i++; continue; }
    if (c === ' ' || c === '\t' || c === '\r' || /\s/.test(c)) { sp = true; i++; continue; }
    if (c === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) {
      const line = text[i + 1] === '/';
      const close = line ? text.indexOf('\n', i) : text.indexOf('*/', i + 2);
      const end = close < 0 ? text.length : line ? close : close + 2;
      if (comments) comments.push({ s: i, text: text.slice(i + 2, line ? end : end - 2) });
      if (!line && text.slice(i, end).includes('\n')) nl = true;
      sp = true; i = end; continue;
    }
    if (c === '"' || c === "'") { push('str', i, stringEnd(text, i)); continue; }
    if (c === '`') { const { end, expr } = templateEnd(text, i); push('tpl', i, end, { expr }); continue; }
    NUMBER_RE.lastIndex = i;
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(text[i + 1] || ''))) {
      const m = NUMBER_RE.exec(text);
      push('num', i, i + (m ? m[0].length : 1)); continue;
    }
    IDENT_RE.lastIndex = i;
    const id = IDENT_RE.exec(text);
    if (id) { push('id', i, i + id[0].length); continue; }
    if (c === '/' && regexAllowed(toks[toks.length - 1])) {
      const end = regexEnd(text, i);
      if (end > 0) { push('re', i, end); continue; }
    }
    const p = PUNCT.find((x) => text.startsWith(x, i)) || c;
    push('p', i, i + p.length);
  }
  return toks;
}

/** For each bracket token, the index of its partner (-1 when unmatched). */
export function partners(toks) {
  const match = new Int32Array(toks.length).fill(-1);
  const stack = [];
  const open = { ')': '(', ']': '[', '}': '{' };
  toks.forEach((tok, k) => {
    if (tok.t !== 'p') return;
    if (tok.v === '(' || tok.v === '[' || tok.v === '{') stack.push(k);
    else if (open[tok.v]) {
      // A stray closer pops back to its own kind, so one mismatch stays local.
      let at = stack.length - 1;
      while (at >= 0 && toks[stack[at]].v !== open[tok.v]) at--;
      if (at < 0) return;
      const o = stack[at];
      stack.length = at;
      match[o] = k; match[k] = o;
    }
  });
  return match;
}

/** The text of a string or template token's value (escapes decoded; no evaluation). */
export function unquote(raw) {
  const body = raw.slice(1, raw[raw.length - 1] === raw[0] && raw.length > 1 ? -1 : undefined);
  const simple = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v', 0: '\0' };
  return body.replace(/\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|\r?\n|[\s\S])/g, (_, e) => {
    if (e[0] === 'u' || e[0] === 'x') {
      const code = parseInt(e.replace(/^u\{?|^x|\}$/g, ''), 16);
      return code <= 0x10ffff ? String.fromCodePoint(code) : '';
    }
    if (e === '\n' || e === '\r\n') return '';
    return simple[e] ?? e;
  });
}

/** Top-level comma-separated parts [s, e) of the tokens between an opener at `open` and its partner. */
export function splitList(toks, match, open) {
  const close = match[open];
  if (close < 0) return [];
  const parts = [];
  let s = open + 1;
  for (let k = open + 1; k < close; k++) {
    const tok = toks[k];
    if (tok.t === 'p' && match[k] > k && '([{'.includes(tok.v)) { k = match[k]; continue; }
    if (tok.t === 'p' && tok.v === ',') { if (k > s) parts.push([s, k]); s = k + 1; }
  }
  if (close > s) parts.push([s, close]);
  return parts;
}

// ---------------------------------------------------------------------------------------------
// Literal values read from tokens: what a harvested argument is, without running it.

export const NONE = Symbol('none');
export const LITERAL_WORDS = { true: true, false: false, null: null, undefined, NaN, Infinity };

/** The value the tokens [s, e) spell as a plain literal, or NONE. */
export function literalAt(toks, s, e) {
  let k = s;
  const num = (tok, sign) => {
    const raw = tok.v.replace(/_/g, '');
    if (raw.endsWith('n')) { try { return BigInt(raw.slice(0, -1)) * BigInt(sign); } catch { return NONE; } }
    const v = Number(raw);
    return Number.isNaN(v) ? NONE : v * sign;
  };
  const value = (depth) => {
    if (depth > 12 || k >= e) return NONE;
    const tok = toks[k++];
    if (tok.t === 'num') return num(tok, 1);
    if (tok.t === 'str' || (tok.t === 'tpl' && !tok.expr)) return unquote(tok.v);
    if (tok.t === 'id') return Object.hasOwn(LITERAL_WORDS, tok.v) ? LITERAL_WORDS[tok.v] : NONE;
    if (tok.t !== 'p') return NONE;
    if ((tok.v === '-' || tok.v === '+') && k < e) {
      const next = toks[k++];
      if (next.t === 'num') return num(next, tok.v === '-' ? -1 : 1);
      if (next.t === 'id' && next.v === 'Infinity') return tok.v === '-' ? -Infinity : Infinity;
      return NONE;
    }
    if (tok.v === '(') { const v = value(depth + 1); return toks[k++]?.v === ')' ? v : NONE; }
    if (tok.v === '[') return arrayRest(depth);
    if (tok.v === '{') return objectRest(depth);
    return NONE;
  };
  const arrayRest = (depth) => {
    const out = [];
    while (k < e && toks[k].v !== ']') {
      const v = value(depth + 1);
      if (v === NONE) return NONE;
      out.push(v);
      if (toks[k]?.v === ',') k++;
      else if (toks[k]?.v !== ']') return NONE;
    }
    k++;
    return out;
  };
  const objectRest = (depth) => {
    const out = {};
    while (k < e && toks[k].v !== '}') {
      const key = toks[k++];
      let name;
      if (key.t === 'id') name = key.v;
      else if (key.t === 'str') name = unquote(key.v);
      else if (key.t === 'num') name = String(Number(key.v));
      else return NONE;
      if (name === '__proto__' || toks[k++]?.v !== ':') return NONE;
      const v = value(depth + 1);
      if (v === NONE) return NONE;
      out[name] = v;
      if (toks[k]?.v === ',') k++;
      else if (toks[k]?.v !== '}') return NONE;
    }
    k++;
    return out;
  };
  const v = value(0);
  return k === e ? v : NONE;
}

/** The value of a literal written as source, or NONE: the generator's own stand-in for eval. */
export function literalOf(src) {
  const toks = tokenize(src);
  return literalAt(toks, 0, toks.length);
}

/** Source text of the tokens [s, e), one space where the original had any. */
export function joinTokens(toks, s, e) {
  let out = '';
  for (let k = s; k < e; k++) out += (k > s && toks[k].sp ? ' ' : '') + toks[k].v;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Expressions: where one ends, and the names followed by `(` that call nothing.

/** Where the expression starting at token `s` ends (a `;`, `,` or closer at its depth, or a new statement). */
export function expressionEnd(toks, match, s) {
  for (let k = s; k < toks.length; k++) {
    const tok = toks[k];
    if (tok.t === 'p' && '([{'.includes(tok.v) && match[k] > k) { k = match[k]; continue; }
    if (tok.t === 'p' && (tok.v === ';' || tok.v === ',' || ')]}'.includes(tok.v))) return k;
    if (k > s && tok.nl && continues(toks[k - 1], tok) === false) return k;
  }
  return toks.length;
}

/** Whether a line break between two tokens continues one expression (false: a new statement). */
function continues(prev, next) {
  if (prev.t === 'p' && !')]}'.includes(prev.v)) return true;
  if (next.t === 'p' && ['.', '?.', '?', ':', '+', '-', '*', '/', '%', '&&', '||', '??', '===', '!==', '==', '!=', '<', '>', '<=', '>=', '(', '['].includes(next.v)) return true;
  return false;
}

export const NOT_A_METHOD = new Set(['if', 'for', 'while', 'switch', 'catch', 'function', 'return', 'typeof', 'with']);
