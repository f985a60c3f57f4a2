// Analysis: what a module is before any call of it. Module discovery (its module system, its
// lines of code, the project's typescript, L3's entry points), its exports as the worker finds
// them loaded, and the static facts of its source: JSDoc (types, @returns, @example), TypeScript
// types, named types, and the constants it spells out.

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as nodeModule from 'node:module';

import { IDENT, isPlainObject } from './tt_values.mjs';

// ---------------------------------------------------------------------------------------------
// Module discovery.

export function moduleKind(file, pkg) {
  if (/\.(ts|mts)$/.test(file)) return 'ts';
  if (file.endsWith('.mjs')) return 'esm';
  if (file.endsWith('.cjs')) return 'cjs';
  return pkg.type === 'module' ? 'esm' : 'cjs';
}

export function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

export function codeLines(text) {
  const lines = text.split('\n');
  const out = new Set();
  let inComment = false;
  lines.forEach((l, i) => {
    const t = l.trim();
    if (inComment) { if (t.includes('*/')) inComment = false; return; }
    if (t.startsWith('/*')) { if (!t.includes('*/')) inComment = true; return; }
    if (!t || t.startsWith('//') || /^[}\])]*;?$/.test(t) || /^(import|export)\s.*from\s/.test(t) || /^['"]use strict['"];?$/.test(t)) return;
    out.add(i + 1);
  });
  return out;
}

export function findTypeScript(root) {
  try {
    return nodeModule.createRequire(path.join(root, 'package.json')).resolve('typescript');
  } catch {
    return null;
  }
}

export function entryPoints(root) {
  let pkg = {};
  try { pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')); } catch { return []; }
  const out = [];
  const add = (name, file) => {
    if (typeof file !== 'string') return;
    const rel = path.normalize(file).replace(/^\.\//, '');
    if (fs.existsSync(path.join(root, rel)) && !out.some((e) => e.file === rel)) out.push({ name, file: rel });
  };
  if (typeof pkg.bin === 'string') add(pkg.name || 'bin', pkg.bin);
  else if (pkg.bin && typeof pkg.bin === 'object') for (const k of Object.keys(pkg.bin).sort()) add(k, pkg.bin[k]);
  if (typeof pkg.main === 'string') {
    const text = (() => { try { return fs.readFileSync(path.join(root, pkg.main), 'utf8'); } catch { return ''; } })();
    // A library's main only defines things; one that reads its arguments is a program.
    if (/process\.argv/.test(text)) add('main', pkg.main);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Exports: what a loaded module offers, described for the search (names, parameters, classes).

const RESERVED = new Set(['describe', 'test', 'it', 'expect', 'assert', 'require', 'module', 'exports', 'register', 'createRequire', 'obj', 'value']);

export function exportsEnv(exports, kind) {
  if (!exports) return {};
  // `default` is no name a test can bind: it becomes `defaultExport`.
  const env = {};
  if (kind === 'cjs') {
    if (typeof exports === 'function') env.defaultExport = exports;
    for (const k of Object.keys(exports)) env[k] = exports[k];
    return env;
  }
  for (const k of Object.keys(exports)) env[k === 'default' ? 'defaultExport' : k] = exports[k];
  return env;
}

function isClass(f) {
  return typeof f === 'function' && /^class\b/.test(Function.prototype.toString.call(f));
}

/** Parameter names and default texts of a function, from its source. */
function params(f) {
  let src;
  try { src = Function.prototype.toString.call(f); } catch { return []; }
  if (isClass(f)) {
    const m = /constructor\s*\(/.exec(src);
    if (!m) return [];
    src = src.slice(m.index + m[0].length - 1);
  } else {
    const arrow = /^(?:async\s+)?([A-Za-z_$][\w$]*)\s*=>/.exec(src);
    if (arrow) return [{ name: arrow[1], dflt: null, rest: false }];
  }
  const open = src.indexOf('(');
  if (open < 0) return [];
  let depth = 0, i = open, inStr = null;
  for (; i < src.length; i++) {
    const c = src[i];
    if (inStr) { if (c === '\\') i++; else if (c === inStr) inStr = null; continue; }
    if (c === '"' || c === "'" || c === '`') inStr = c;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) { depth--; if (depth === 0) break; }
  }
  const inner = src.slice(open + 1, i);
  const parts = [];
  let cur = '';
  depth = 0; inStr = null;
  for (let j = 0; j < inner.length; j++) {
    const c = inner[j];
    if (inStr) { cur += c; if (c === '\\') { cur += inner[++j] ?? ''; } else if (c === inStr) inStr = null; continue; }
    if (c === '"' || c === "'" || c === '`') inStr = c;
    if ('([{'.includes(c)) depth++;
    if (')]}'.includes(c)) depth--;
    if (c === ',' && depth === 0) { parts.push(cur); cur = ''; continue; }
    cur += c;
  }
  if (cur.trim()) parts.push(cur);
  return parts.map((p) => {
    p = p.replace(/\/\*[\s\S]*?\*\//g, '').trim();
    const rest = p.startsWith('...');
    if (rest) p = p.slice(3);
    const eq = p.indexOf('=');
    const name = (eq >= 0 ? p.slice(0, eq) : p).trim();
    const dflt = eq >= 0 ? p.slice(eq + 1).trim() : null;
    return { name: IDENT.test(name) ? name : (name.startsWith('{') ? 'options' : name.startsWith('[') ? 'items' : 'arg'), dflt, rest, destructured: !IDENT.test(name) ? name[0] : null };
  });
}

/** A `function` with methods on its prototype: a constructor written before `class` (`new` builds it). */
function isConstructorFunction(f) {
  if (typeof f !== 'function' || isClass(f) || !f.prototype || Object.getPrototypeOf(f) !== Function.prototype) return false;
  return Object.getOwnPropertyNames(f.prototype).some((n) => {
    if (n === 'constructor') return false;
    const d = Object.getOwnPropertyDescriptor(f.prototype, n);
    return typeof d.value === 'function' || !!d.get;
  });
}

function describeClass(name, v) {
  const cls = { kind: 'class', name, params: params(v), methods: [], getters: [], statics: [], style: isClass(v) ? 'class' : 'function' };
  const proto = v.prototype;
  // An alias (`preferredCharset = charset`) is the same method: it is tested under its first name.
  const seen = new Set();
  for (const m of Object.getOwnPropertyNames(proto).sort()) {
    if (m === 'constructor') continue;
    const d = Object.getOwnPropertyDescriptor(proto, m);
    if (d.get) cls.getters.push(m);
    else if (typeof d.value === 'function' && !seen.has(d.value)) {
      seen.add(d.value);
      cls.methods.push({ name: m, params: params(d.value), async: d.value.constructor.name === 'AsyncFunction' });
    }
  }
  for (const m of Object.getOwnPropertyNames(v).sort()) {
    if (['length', 'name', 'prototype', 'arguments', 'caller'].includes(m)) continue;
    const d = Object.getOwnPropertyDescriptor(v, m);
    if (typeof d.value === 'function' && d.value !== v && !isClass(d.value) && !isConstructorFunction(d.value)) {
      cls.statics.push({ name: m, params: params(d.value), async: d.value.constructor.name === 'AsyncFunction' });
    }
  }
  return cls;
}

export function describeExports(exports, kind) {
  const env = exportsEnv(exports, kind);
  const items = [];
  const names = Object.keys(env).sort();
  const whole = env.defaultExport;
  for (const name of names) {
    const v = env[name];
    if (name === 'defaultExport' && names.some((n) => n !== 'defaultExport' && env[n] === v)) continue;
    // Names the test file itself binds (the framework's, node's module scope): not importable
    // beside them.
    if (name === '__esModule' || RESERVED.has(name)) continue;
    // The default export's name, so its callers' usage (`const x = require(...)`) is its own.
    const isDefault = whole !== undefined && v === whole;
    if (isClass(v) || isConstructorFunction(v)) {
      items.push({ ...describeClass(name, v), isDefault });
    } else if (typeof v === 'function') {
      items.push({ kind: 'function', name, params: params(v), async: v.constructor.name === 'AsyncFunction', isDefault });
    } else if (isPlainObject(v)) {
      for (const m of Object.keys(v).sort()) {
        if (typeof v[m] === 'function' && !isClass(v[m])) {
          items.push({ kind: 'function', name: `${name}.${m}`, params: params(v[m]), async: v[m].constructor.name === 'AsyncFunction' });
        }
      }
    }
  }
  return items;
}

// ---------------------------------------------------------------------------------------------
// Static facts from the source: JSDoc (types, @returns, @example), TypeScript types, literals.

export function docs(text, isTs, tsPath) {
  const out = Object.create(null); // name -> [{ params, returns, examples: [[expr, want]] }]
  const re = /\/\*\*([\s\S]*?)\*\/\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:static\s+)?(?:function\s*\*?\s*([A-Za-z_$][\w$]*)|(?:get\s+)?([A-Za-z_$][\w$]*)\s*\(|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=|class\s+([A-Za-z_$][\w$]*)|(?:exports|module\.exports)\.([A-Za-z_$][\w$]*)\s*=)/g;
  let m;
  while ((m = re.exec(text))) {
    const name = m[2] || m[3] || m[4] || m[5] || m[6];
    if (!name || ['if', 'for', 'while', 'switch', 'return'].includes(name)) continue;
    const body = m[1].split('\n').map((l) => l.replace(/^\s*\*\s?/, '')).join('\n');
    const d = { params: {}, returns: null, examples: [] };
    for (const p of jsdocTags(body, 'param')) {
      if (!p.type) continue;
      if (p.name.includes('.')) (d.paths ||= []).push(p);
      else d.params[p.name] = p.type;
    }
    const r = jsdocTags(body, 'returns').concat(jsdocTags(body, 'return'))[0];
    if (r && r.type) d.returns = r.type;
    const ex = body.split(/@example/).slice(1);
    for (const block of ex) {
      for (const line of block.split('@')[0].split('\n')) {
        const mm = /^\s*(.+?);?\s*\/\/\s*=>\s*(.+?)\s*$/.exec(line);
        if (mm) d.examples.push([mm[1].trim(), mm[2].trim()]);
      }
    }
    (out[name] ||= []).push(d);
  }
  if (isTs && tsPath) {
    try {
      const ts = nodeModule.createRequire(tsPath)(tsPath);
      const sf = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
      const add = (name, node) => {
        const d = { params: {}, returns: node.type ? node.type.getText(sf) : null, examples: [] };
        for (const p of node.parameters || []) {
          if (p.type && ts.isIdentifier(p.name)) d.params[p.name.text] = p.type.getText(sf) + (p.questionToken ? '|undefined' : '');
        }
        const prev = out[name]?.[0];
        if (prev) {
          for (const [k, v] of Object.entries(d.params)) if (!prev.params[k]) prev.params[k] = v;
          if (!prev.returns) prev.returns = d.returns;
        } else out[name] = [d];
      };
      const visit = (node) => {
        if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isConstructorDeclaration(node)) && (node.name || ts.isConstructorDeclaration(node))) {
          add(ts.isConstructorDeclaration(node) ? 'constructor' : node.name.getText(sf), node);
        }
        if (ts.isVariableDeclaration(node) && node.initializer && (ts.isArrowFunction(node.initializer) || ts.isFunctionExpression(node.initializer))) {
          add(node.name.getText(sf), node.initializer);
        }
        ts.forEachChild(node, visit);
      };
      visit(sf);
    } catch { /* no types: names and literals only */ }
  }
  return out;
}

/** The facts `docs` holds for a function or method (by its last name): the first found, or none. */
export function docOf(docs, name) {
  const short = name.includes('.') ? name.split('.').pop() : name;
  return (docs[short] || [])[0] || { params: {}, returns: null, examples: [] };
}

/** The `@tag {type} name` entries of a JSDoc body: { type, name, optional }; types may nest braces. */
function jsdocTags(body, tag) {
  const out = [];
  for (const m of body.matchAll(new RegExp(`@${tag}\\b`, 'g'))) {
    let i = m.index + m[0].length;
    while (/[ \t]/.test(body[i] || '')) i++;
    let type = null;
    if (body[i] === '{') {
      let depth = 0, j = i;
      for (; j < body.length; j++) {
        if (body[j] === '{') depth++;
        else if (body[j] === '}' && --depth === 0) break;
      }
      type = body.slice(i + 1, j).trim();
      i = j + 1;
    }
    const n = /^\s*(\[)?\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)/.exec(body.slice(i));
    out.push({ type, name: n ? n[2] : '', optional: !!(n && n[1]) || !!(type && type.endsWith('=')) });
  }
  return out;
}

/**
 * Named types of a module: JSDoc `@typedef` (with its `@property` lines) and TypeScript
 * interfaces and type aliases, as type texts `typeShape` reads.
 */
export function typedefs(text, isTs, tsPath) {
  const out = Object.create(null);
  for (const m of text.matchAll(/\/\*\*([\s\S]*?)\*\//g)) {
    const body = m[1].split('\n').map((l) => l.replace(/^\s*\*\s?/, '')).join('\n');
    const def = jsdocTags(body, 'typedef')[0];
    if (!def || !def.name) continue;
    const props = jsdocTags(body, 'property').concat(jsdocTags(body, 'prop')).filter((p) => p.name && !p.name.includes('.'));
    out[def.name] = props.length ? `{${props.map((p) => `${p.name}${p.optional ? '?' : ''}: ${p.type || 'any'}`).join('; ')}}` : def.type;
  }
  if (!isTs || !tsPath) return out;
  try {
    const ts = nodeModule.createRequire(tsPath)(tsPath);
    const sf = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const visit = (node) => {
      if (ts.isInterfaceDeclaration(node)) out[node.name.text] = `{${node.members.map((x) => x.getText(sf).replace(/[;,]\s*$/, '')).join('; ')}}`;
      if (ts.isTypeAliasDeclaration(node)) out[node.name.text] = node.type.getText(sf);
      ts.forEachChild(node, visit);
    };
    visit(sf);
  } catch { /* no named types */ }
  return out;
}

export function literals(text) {
  const strings = new Set();
  const numbers = new Set();
  const stripped = text.replace(/^\s*(import|export)\b.*from\s+['"][^'"]*['"].*$/gm, '').replace(/require\(\s*['"][^'"]*['"]\s*\)/g, '');
  for (const m of stripped.matchAll(/'((?:[^'\\\n]|\\.){0,40})'|"((?:[^"\\\n]|\\.){0,40})"/g)) {
    const s = m[1] ?? m[2];
    if (!/\\/.test(s) && !/^(use strict|node:.*)$/.test(s)) strings.add(s);
  }
  for (const m of stripped.matchAll(/(?<![\w$.])(-?\d+(?:\.\d+)?)(?![\w$])/g)) {
    const n = Number(m[1]);
    if (Number.isFinite(n) && Math.abs(n) < 1e6) numbers.add(n);
  }
  return { strings: [...strings].sort().slice(0, 30), numbers: [...numbers].sort((a, b) => a - b).slice(0, 30) };
}
