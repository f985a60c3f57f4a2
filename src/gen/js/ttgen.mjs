// team-testing's offline test generator for JavaScript and TypeScript: the counterpart of ttgen.py.
// It runs with the project's own node in a mirror of the repository and talks JSON on
// stdin/stdout. The search is feedback-directed and seeded: candidate calls are built from the
// project's own calls of the module (its tests, examples, README and other modules, read but never
// run here), types (JSDoc or TypeScript), the properties the module reads on its parameters,
// parameter names and defaults, literals of the source and @example blocks; each runs in a
// worker process with a timeout under V8 precise block coverage, and a call is kept when it
// reaches code no earlier call reached. Kept calls become readable tests in the project's
// framework (node:test, jest, vitest, mocha).
//
// Modes: no argument (the generator), `--worker <file> <kind>` (runs calls for the generator),
// `--entry-points <root>` (lists L3's entry points, reading files only), and with TTGEN_GUARD set
// in the environment, a preload (`--import`) that blocks and reports effects of an entry point.

import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as nodeModule from 'node:module';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';

const MAX_CANDIDATES = 300; // per module: the search's real bound (keeps results reproducible)
const STAGNATION = 90; // candidates in a row that add nothing: the module is done
const MAX_RENDER = 300; // longer values are asserted by type and length, not spelled out
const EFFECT_MARK = 'TTGEN-EFFECT ';
const HELPER = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------------------------------------
// Effects: writes, processes and network are blocked and reported, never performed.

function installGuard(report) {
  const require = nodeModule.createRequire(import.meta.url);
  const fsm = require('node:fs');
  const fsp = require('node:fs/promises');
  const cp = require('node:child_process');
  const net = require('node:net');
  const block = (what) => {
    report(what);
    const e = new Error(`team-testing blocked an effect: ${what}`);
    e.code = 'TTGEN_BLOCKED';
    return e;
  };
  const writes = ['writeFile', 'appendFile', 'mkdir', 'mkdtemp', 'rm', 'rmdir', 'unlink', 'rename',
    'copyFile', 'cp', 'symlink', 'link', 'truncate', 'chmod', 'chown', 'utimes', 'createWriteStream'];
  const first = (args) => (typeof args[0] === 'string' ? args[0] : String(args[0]));
  for (const name of writes) {
    for (const variant of [name, `${name}Sync`]) {
      if (typeof fsm[variant] === 'function') {
        fsm[variant] = function (...args) { throw block(`fs.${variant}(${first(args)})`); };
      }
    }
    if (typeof fsp[name] === 'function') {
      fsp[name] = async function (...args) { throw block(`fs/promises.${name}(${first(args)})`); };
    }
  }
  const writing = (flags) => typeof flags === 'string' && /[wa+]/.test(flags);
  const open = fsm.open, openSync = fsm.openSync, popen = fsp.open;
  fsm.open = function (p, flags, ...rest) {
    if (writing(flags)) throw block(`fs.open(${p}, ${flags})`);
    return open.call(this, p, flags, ...rest);
  };
  fsm.openSync = function (p, flags, ...rest) {
    if (writing(flags)) throw block(`fs.openSync(${p}, ${flags})`);
    return openSync.call(this, p, flags, ...rest);
  };
  fsp.open = async function (p, flags, ...rest) {
    if (writing(flags)) throw block(`fs/promises.open(${p}, ${flags})`);
    return popen.call(this, p, flags, ...rest);
  };
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
    cp[name] = function (...args) { throw block(`child_process.${name}(${first(args)})`); };
  }
  for (const name of ['connect', 'createConnection', 'createServer']) {
    net[name] = function (...args) { throw block(`net.${name}(${first(args)})`); };
  }
  // Ending the process would end the worker: the call is stopped instead.
  if (!process.env.TTGEN_GUARD) process.exit = (code) => { throw block(`process.exit(${code ?? ''})`); };
  require('node:module').syncBuiltinESMExports();
}

// ---------------------------------------------------------------------------------------------
// TypeScript: the project's own typescript blanks out the types, keeping every position, so
// coverage offsets are offsets into the .ts file itself.

/** Source of a loader hook module; `data.ts` is the path of the project's typescript. */
export const TS_LOADER = String.raw`
import { createRequire } from 'node:module';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
let ts;
export function initialize(data) { ts = createRequire(data.root)('typescript'); }
export async function resolve(spec, context, next) {
  try { return await next(spec, context); } catch (e) {
    if (!context.parentURL || !/^\.\.?\//.test(spec)) throw e;
    const base = new URL(spec, context.parentURL);
    for (const alt of [base.href.replace(/\.js$/, '.ts'), base.href + '.ts', base.href + '/index.ts']) {
      if (existsSync(fileURLToPath(alt))) return { url: alt, shortCircuit: true, format: 'module' };
    }
    throw e;
  }
}
export async function load(url, context, next) {
  if (!/\.(ts|mts)$/.test(url)) return next(url, context);
  const text = readFileSync(fileURLToPath(url), 'utf8');
  return { format: 'module', source: blank(text), shortCircuit: true };
}
function blank(text) {
  const sf = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out = text.split('');
  const wipe = (s, e) => { for (let i = s; i < e; i++) if (out[i] !== '\n') out[i] = ' '; };
  const back = (pos, ch) => { let i = pos - 1; while (i >= 0 && /\s/.test(text[i])) i--; return text[i] === ch ? i : -1; };
  const K = ts.SyntaxKind;
  const typeOnly = new Set([K.InterfaceDeclaration, K.TypeAliasDeclaration]);
  const visit = (node) => {
    if (typeOnly.has(node.kind) || (node.modifiers || []).some((m) => m.kind === K.DeclareKeyword)) {
      wipe(node.getStart(sf), node.end); return;
    }
    if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && !node.body) { wipe(node.getStart(sf), node.end); return; }
    if ((ts.isImportDeclaration(node) && node.importClause && node.importClause.isTypeOnly) ||
        (ts.isExportDeclaration(node) && node.isTypeOnly)) { wipe(node.getStart(sf), node.end); return; }
    for (const m of node.modifiers || []) {
      if ([K.PublicKeyword, K.PrivateKeyword, K.ProtectedKeyword, K.ReadonlyKeyword, K.AbstractKeyword, K.OverrideKeyword].includes(m.kind)) wipe(m.getStart(sf), m.end);
    }
    if (node.type && (ts.isParameter(node) || ts.isVariableDeclaration(node) || ts.isPropertyDeclaration(node) ||
        ts.isFunctionLike(node))) {
      const colon = back(node.type.getStart(sf), ':');
      if (colon >= 0) wipe(colon, node.type.end);
    }
    if (node.questionToken && (ts.isParameter(node) || ts.isPropertyDeclaration(node))) wipe(node.questionToken.getStart(sf), node.questionToken.end);
    if (node.exclamationToken) wipe(node.exclamationToken.getStart(sf), node.exclamationToken.end);
    if (node.typeParameters && node.typeParameters.length) {
      const lt = back(node.typeParameters[0].getStart(sf), '<');
      let gt = node.typeParameters.end; while (gt < text.length && text[gt] !== '>') gt++;
      if (lt >= 0) wipe(lt, gt + 1);
    }
    if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && node.typeArguments && node.typeArguments.length) {
      const lt = back(node.typeArguments[0].getStart(sf), '<');
      let gt = node.typeArguments.end; while (gt < text.length && text[gt] !== '>') gt++;
      if (lt >= 0) wipe(lt, gt + 1);
    }
    if (ts.isAsExpression(node) || (ts.SyntaxKind.SatisfiesExpression && node.kind === ts.SyntaxKind.SatisfiesExpression)) {
      wipe(node.expression.end, node.end);
      ts.forEachChild(node.expression, visit); visitSelf(node.expression); return;
    }
    if (ts.isNonNullExpression(node)) wipe(node.end - 1, node.end);
    if (ts.isHeritageClause(node) && node.token === K.ImplementsKeyword) { wipe(node.getStart(sf), node.end); return; }
    if (ts.isEnumDeclaration(node) || ts.isModuleDeclaration(node) || (ts.isParameter(node) && (node.modifiers || []).length)) {
      throw new Error('TypeScript construct that needs a compiler (enum, namespace or parameter property) at offset ' + node.pos);
    }
    ts.forEachChild(node, visit);
  };
  const visitSelf = (node) => { if (ts.isNonNullExpression(node)) wipe(node.end - 1, node.end); };
  ts.forEachChild(sf, visit);
  return out.join('');
}
`;

function registerTypeScript(root) {
  const data = { root: pathToFileURL(path.join(root, 'package.json')).href };
  if (typeof nodeModule.register !== 'function') throw new Error(`TypeScript needs node's module.register (node 18.19 or 20.6 and later); this is ${process.version}`);
  nodeModule.register(`data:text/javascript,${encodeURIComponent(TS_LOADER)}`, { parentURL: import.meta.url, data });
}

function findTypeScript(root) {
  try {
    return nodeModule.createRequire(path.join(root, 'package.json')).resolve('typescript');
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Values: a deterministic rendering as JavaScript source, or null when a value has none.

function isPlainObject(v) {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RESERVED = new Set(['describe', 'test', 'it', 'expect', 'assert', 'require', 'module', 'exports', 'register', 'createRequire', 'obj', 'value']);

function render(v, depth = 0) {
  if (depth > 6) return null;
  switch (typeof v) {
    case 'undefined': return 'undefined';
    case 'boolean': return String(v);
    case 'number':
      if (Number.isNaN(v)) return 'NaN';
      if (Object.is(v, -0)) return '-0';
      if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
      return String(v);
    case 'bigint': return `${v}n`;
    case 'string': return JSON.stringify(v);
    case 'object': {
      if (v === null) return 'null';
      if (Array.isArray(v)) {
        const parts = [];
        for (let i = 0; i < v.length; i++) {
          if (!(i in v)) return null;
          const r = render(v[i], depth + 1);
          if (r === null) return null;
          parts.push(r);
        }
        return `[${parts.join(', ')}]`;
      }
      if (!isPlainObject(v)) return null;
      if (Object.getOwnPropertySymbols(v).length) return null;
      const parts = [];
      for (const k of Object.keys(v)) {
        const d = Object.getOwnPropertyDescriptor(v, k);
        if (!('value' in d)) return null;
        const r = render(d.value, depth + 1);
        if (r === null) return null;
        parts.push(`${IDENT.test(k) ? k : JSON.stringify(k)}: ${r}`);
      }
      return parts.length ? `{ ${parts.join(', ')} }` : '{}';
    }
    default: return null;
  }
}

function typeName(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

// ---------------------------------------------------------------------------------------------
// Coverage: V8 precise block coverage painted onto the module's bytes.

function paint(fnCoverage, size) {
  const counts = new Int32Array(size).fill(-1);
  for (const fn of fnCoverage) {
    for (const r of fn.ranges) {
      const end = Math.min(r.endOffset, size);
      for (let i = r.startOffset; i < end; i++) counts[i] = r.count;
    }
  }
  return counts;
}

// ---------------------------------------------------------------------------------------------
// The worker: loads one module, runs the calls the generator sends, one JSON line each way.

async function worker(file, kind, root) {
  const effects = [];
  installGuard((what) => effects.push(what));
  if (kind === 'ts') registerTypeScript(root);
  // node:inspector's callback API (node >= 18; the promise one came in 19).
  const { Session } = await import('node:inspector');
  const raw = new Session();
  raw.connect();
  const session = { post: (method, params) => new Promise((resolve, reject) => raw.post(method, params || {}, (err, res) => (err ? reject(err) : resolve(res)))) };
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  const abs = path.resolve(root, file);
  const url = pathToFileURL(abs).href;
  const text = fs.readFileSync(abs, 'utf8');
  let exports;
  let loadError = null;
  try {
    if (kind === 'cjs') {
      exports = nodeModule.createRequire(abs)(abs);
    } else {
      exports = await import(url);
    }
  } catch (e) {
    loadError = `${e && e.name}: ${e && e.message}`;
  }
  const take = async () => {
    const { result } = await session.post('Profiler.takePreciseCoverage');
    const script = result.find((s) => s.url === url || s.url === abs);
    if (!script) return [];
    const counts = paint(script.functions, text.length);
    const covered = [];
    let start = -1;
    for (let i = 0; i <= counts.length; i++) {
      const on = i < counts.length && counts[i] > 0;
      if (on && start < 0) start = i;
      if (!on && start >= 0) { covered.push([start, i]); start = -1; }
    }
    return covered;
  };
  const send = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
  send({ ready: true, loadError, exports: loadError ? null : describeExports(exports, kind), covered: await take(), effects: effects.splice(0) });
  const env = exportsEnv(exports, kind);
  // A second run of a call under another clock and other random numbers: what differs between the
  // two is never asserted.
  const RealDate = Date;
  const realRandom = Math.random;
  const skew = (on) => {
    if (!on) { globalThis.Date = RealDate; Math.random = realRandom; return; }
    const shift = 86_400_000 * 3 + 12_345;
    class ShiftedDate extends RealDate {
      constructor(...a) { if (a.length === 0) super(RealDate.now() + shift); else super(...a); }
      static now() { return RealDate.now() + shift; }
    }
    globalThis.Date = ShiftedDate;
    let s = 0x2545f491;
    Math.random = () => { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; return ((s >>> 0) % 1_000_000) / 1_000_000; };
  };
  let buffer = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!line.trim()) continue;
      const req = JSON.parse(line);
      const first = await runProgram(req, env, abs, url, req.timeout_ms);
      first.effects = effects.splice(0);
      first.covered = await take();
      if (req.twice && !first.timeout) {
        skew(true);
        const second = await runProgram(req, env, abs, url, req.timeout_ms);
        skew(false);
        effects.splice(0);
        await take();
        first.stable = second.render === first.render && second.threw?.message === first.threw?.message &&
          JSON.stringify(second.steps) === JSON.stringify(first.steps);
      }
      send(first);
    }
  }
}

function exportsEnv(exports, kind) {
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

function describeExports(exports, kind) {
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

/** Whether a stack's top frame is in the module's own file. */
function thrownIn(err, abs, url) {
  const stack = String(err && err.stack || '');
  const frame = stack.split('\n').find((l) => /^\s+at /.test(l));
  return !!frame && (frame.includes(url) || frame.includes(abs));
}

async function runProgram(req, env, abs, url, timeoutMs) {
  const names = Object.keys(env).filter((n) => IDENT.test(n));
  const out = { id: req.id, steps: [] };
  let fn;
  try {
    // The program is a list of statements, the last an expression whose value is observed;
    // `__step` records the value of every statement that asks for it.
    fn = new Function('__env', '__step', '__observe', '__result', `"use strict"; const { ${names.join(', ')} } = __env; return (async () => {\n${req.body}\n})();`);
  } catch (e) {
    out.syntax = String(e.message);
    return out;
  }
  const steps = [];
  const step = (v) => { steps.push(render(v)); return v; };
  let observed = false;
  const observe = () => { observed = true; };
  let promised = false;
  const result = (v) => { promised = !!v && typeof v.then === 'function'; return v; };
  let timer;
  try {
    const ran = fn(env, step, observe, result);
    const value = await Promise.race([ran, new Promise((_, rej) => { timer = setTimeout(() => rej(Object.assign(new Error('timeout'), { ttTimeout: true })), timeoutMs); })]);
    out.ok = true;
    out.type = typeName(value);
    out.render = render(value);
    out.cls = value && typeof value === 'object' ? value.constructor?.name ?? null : null;
    out.promise = promised;
    out.length = typeof value === 'string' || Array.isArray(value) ? value.length : null;
  } catch (e) {
    if (e && e.ttTimeout) { out.timeout = true; return out; }
    out.ok = false;
    // An error before the observed expression is the sequence's, not the call's.
    out.setupThrew = !observed;
    out.promise = promised;
    out.threw = {
      name: e && e.constructor ? e.constructor.name : typeof e,
      message: e && typeof e.message === 'string' ? e.message : String(e),
      inModule: thrownIn(e, abs, url),
      builtin: e instanceof TypeError || e instanceof ReferenceError || e instanceof RangeError || e instanceof SyntaxError,
      blocked: e && e.code === 'TTGEN_BLOCKED',
      isError: e instanceof Error,
    };
  } finally {
    clearTimeout(timer);
  }
  out.steps = steps;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The generator side: a pool of workers, one per module, restarted after a hang or a crash.

class Runner {
  constructor(file, kind, timeoutMs) {
    this.file = file; this.kind = kind; this.timeoutMs = timeoutMs; this.child = null; this.nextId = 1;
    this.restarts = 0;
  }

  async start() {
    const child = spawn(process.execPath, [HELPER, '--worker', this.file, this.kind, process.cwd()], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    // Every handler is bound to its own child: a killed worker's last events never reach the
    // one that replaced it.
    this.child = child;
    this.dead = false;
    this.waiting = null;
    this.stderr = '';
    let buffer = '';
    child.stdin.on('error', () => {});
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => { if (this.child === child) this.stderr = (this.stderr + d).slice(-4000); });
    child.stdout.on('data', (d) => {
      if (this.child !== child) return;
      buffer += d;
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        let msg;
        try { msg = JSON.parse(line); } catch { continue; }
        if (this.waiting && (msg.ready || msg.id === this.expect)) {
          const w = this.waiting; this.waiting = null; w(msg);
        }
      }
    });
    child.on('exit', () => {
      if (this.child !== child) return;
      this.dead = true;
      if (this.waiting) { const w = this.waiting; this.waiting = null; w({ crashed: true, stderr: this.stderr }); }
    });
    this.expect = null;
    const hello = await this.wait(Math.max(20_000, this.timeoutMs * 5));
    if (hello.crashed || hello.timeout) {
      this.stop();
      return { loadError: `the module could not be loaded: ${tail(this.stderr)}`, exports: null, covered: [] };
    }
    return hello;
  }

  wait(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.waiting) { this.waiting = null; resolve({ timeout: true }); }
      }, ms);
      this.waiting = (v) => { clearTimeout(timer); resolve(v); };
    });
  }

  async call(body, opts = {}) {
    if (!this.child || this.dead) {
      this.restarts++;
      const hello = await this.start();
      if (hello.loadError) return { crashed: true, covered: [], effects: [] };
    }
    const id = this.nextId++;
    this.expect = id;
    const twice = opts.twice !== false;
    this.child.stdin.write(`${JSON.stringify({ id, body, twice, async: opts.async, timeout_ms: this.timeoutMs })}\n`);
    // The worker bounds an awaited promise itself; a synchronous loop only the kill ends.
    const res = await this.wait(this.timeoutMs * (twice ? 2 : 1) + 500);
    if (res.timeout || res.crashed) {
      this.stop();
      return { timeout: !!res.timeout, crashed: !!res.crashed, covered: [], effects: [] };
    }
    return res;
  }

  stop() {
    if (this.child && !this.dead) this.child.kill('SIGKILL');
    this.dead = true;
  }
}

function tail(text, n = 6) {
  return String(text).trim().split('\n').slice(-n).join('\n');
}

// ---------------------------------------------------------------------------------------------
// Seeded randomness.

function rng(seed) {
  let s = (Number(seed) >>> 0) ^ 0x9e3779b9;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
  };
}

function hash(text, n = 6) {
  return createHash('sha256').update(text).digest('hex').slice(0, n);
}

// ---------------------------------------------------------------------------------------------
// Static facts from the source: JSDoc (types, @returns, @example), TypeScript types, literals.

function docs(text, isTs, tsPath) {
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
function typedefs(text, isTs, tsPath) {
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

function literals(text) {
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

// ---------------------------------------------------------------------------------------------
// Tokens: a small JavaScript/TypeScript tokenizer, for reading how the project uses its own code.
// It evaluates nothing. A `/` it cannot tell apart (regex or division) is a regex only when one
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
function tokenize(text, comments = null) {
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
function partners(toks) {
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
function unquote(raw) {
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
function splitList(toks, match, open) {
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

const NONE = Symbol('none');
const LITERAL_WORDS = { true: true, false: false, null: null, undefined, NaN, Infinity };

/** The value the tokens [s, e) spell as a plain literal, or NONE. */
function literalAt(toks, s, e) {
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
function literalOf(src) {
  const toks = tokenize(src);
  return literalAt(toks, 0, toks.length);
}

/** Source text of the tokens [s, e), one space where the original had any. */
function joinTokens(toks, s, e) {
  let out = '';
  for (let k = s; k < e; k++) out += (k > s && toks[k].sp ? ' ' : '') + toks[k].v;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Usage: how the project's own tests, examples, README and other modules call a module. Files are
// read and tokenized, never run: an argument becomes a candidate input when its tokens are a
// literal (or a name whose declaration in that file is one), and the worker, under its guards,
// is the only place any of it is ever evaluated.

const USAGE_EXTS = /\.(m|c)?(j|t)sx?$/;
const USAGE_SKIP = new Set(['node_modules', 'tt-tests', 'team_testing', 'coverage', 'dist', 'build', 'out', 'vendor']);
const MAX_USAGE_FILES = 400;
const MAX_USAGE_BYTES = 256 * 1024;
const MAX_USAGE_TOTAL = 8 * 1024 * 1024;
const MAX_CALLS_PER_NAME = 40;
const MAX_NAMED = 20000;
// Names an argument may use besides literals: they mean the same in the worker and in a test file.
const SAFE_GLOBALS = new Set(['new', 'Date', 'Map', 'Set', 'Buffer', 'URL', 'URLSearchParams', 'Array', 'Object', 'String', 'Number',
  'Boolean', 'RegExp', 'Error', 'TypeError', 'RangeError', 'Uint8Array', 'Math', 'JSON', 'Symbol', 'BigInt']);
const NOT_A_VALUE = new Set(['function', 'class', 'this', 'super', 'await', 'yield', 'import', 'require', 'async', 'delete', 'void']);
const USAGE_FILES = { list: null, toks: new Map(), resolved: new Map() };

function isTestPath(rel) {
  return /(^|\/)(test|tests|__tests__|spec|specs)\//.test(rel) || /\.(test|spec)\.[cm]?[jt]sx?$/.test(rel);
}

/**
 * The project's files that may show usage: tests, examples and markdown first, then its other
 * code, each group sorted, up to a number of files and bytes (reading stays a small part of a run).
 */
function usageFiles(root) {
  if (USAGE_FILES.list) return USAGE_FILES.list;
  const found = [];
  const walk = (dir, rel) => {
    let entries;
    try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const ent of entries) {
      if (found.length >= MAX_USAGE_FILES * 5) return;
      const r = rel ? `${rel}/${ent.name}` : ent.name;
      if (ent.isDirectory()) {
        if (!ent.name.startsWith('.') && !USAGE_SKIP.has(ent.name)) walk(path.join(dir, ent.name), r);
      } else if (ent.isFile() && (USAGE_EXTS.test(ent.name) && !ent.name.endsWith('.d.ts') || /\.(md|markdown)$/i.test(ent.name))) {
        found.push(r);
      }
    }
  };
  walk(root, '');
  const first = (r) => isTestPath(r) || /(^|\/)examples?\//.test(r) || /\.(md|markdown)$/i.test(r);
  const ordered = [...found.filter(first), ...found.filter((r) => !first(r))];
  const out = [];
  let bytes = 0;
  for (const r of ordered) {
    let size = 0;
    try { size = fs.statSync(path.join(root, r)).size; } catch { continue; }
    if (size > MAX_USAGE_BYTES) continue;
    if (out.length >= MAX_USAGE_FILES || bytes + size > MAX_USAGE_TOTAL) break;
    bytes += size;
    out.push(r);
  }
  USAGE_FILES.list = out;
  return out;
}

/** The code of a usage file (a markdown file's js/ts fences), or null for a generated test. */
function usageText(root, rel) {
  let text;
  try { text = fs.readFileSync(path.join(root, rel), 'utf8'); } catch { return null; }
  if (text.startsWith('// Generated by team-testing')) return null;
  if (!/\.(md|markdown)$/i.test(rel)) return text;
  const blocks = [];
  for (const m of text.matchAll(/^(`{3,}|~{3,})\s*(js|javascript|jsx|mjs|cjs|ts|typescript|tsx|node)?\b[^\n]*\n([\s\S]*?)^\1\s*$/gim)) {
    if (m[2]) blocks.push(m[3]);
  }
  return blocks.join('\n;\n');
}

/**
 * One usage file, read and indexed once per run: its tokens, its imports (resolved), the names it
 * declares, where it calls what (`name(`, `obj.name(`, `.name(`), and its named strings.
 */
function usageFile(root, rel, pkg) {
  if (USAGE_FILES.toks.has(rel)) return USAGE_FILES.toks.get(rel);
  const text = usageText(root, rel);
  let f = null;
  if (text !== null) {
    const comments = [];
    const toks = tokenize(text, comments);
    f = { rel, toks, match: partners(toks), comments, markdown: /\.(md|markdown)$/i.test(rel), named: [], strings: new Set() };
    f.imports = importsOf(f, root, pkg);
    f.declared = declaredNames(toks);
    f.sites = callIndex(toks, f.match);
    f.decls = declarations(f);
    namedStrings(f);
  }
  USAGE_FILES.toks.set(rel, f);
  return f;
}

/** The repository-relative file an import specifier written in `fromRel` names, or null. */
function resolveSpec(spec, fromRel, root, pkg) {
  const key = `${fromRel}\n${spec}`;
  if (USAGE_FILES.resolved.has(key)) return USAGE_FILES.resolved.get(key);
  let base = null;
  if (pkg.name && (spec === pkg.name || spec.startsWith(`${pkg.name}/`))) {
    base = path.join(root, spec.slice(pkg.name.length).replace(/^\//, '') || '.');
  } else if (/^\.\.?(\/|$)/.test(spec)) {
    base = path.resolve(root, path.dirname(fromRel), spec);
  }
  let found = null;
  if (base) {
    const tries = [base, ...['.js', '.mjs', '.cjs', '.ts', '.mts'].map((x) => base + x),
      ...['index.js', 'index.mjs', 'index.cjs', 'index.ts'].map((x) => path.join(base, x))];
    if (path.resolve(base) === path.resolve(root)) {
      for (const m of [pkg.main, pkg.module].filter((x) => typeof x === 'string')) tries.unshift(path.resolve(root, m));
    } else if (base.endsWith('.js')) tries.push(base.replace(/\.js$/, '.ts'));
    const hit = tries.find((t) => { try { return fs.statSync(t).isFile(); } catch { return false; } });
    if (hit) found = path.relative(root, path.resolve(hit)).split(path.sep).join('/');
  }
  USAGE_FILES.resolved.set(key, found);
  return found;
}

/**
 * A file's imports: { local, key, file }, where key is 'default' (the whole CommonJS export or
 * the ESM default), '*' (a namespace) or an export's name, and file the module it names.
 */
function importsOf(f, root, pkg) {
  const { toks, match } = f;
  const out = [];
  const spec = (k) => (toks[k]?.t === 'str' ? resolveSpec(unquote(toks[k].v), f.rel, root, pkg) : null);
  const add = (file, names) => { if (file) for (const [local, key] of names) out.push({ local, key, file }); };
  for (let k = 0; k < toks.length; k++) {
    const tok = toks[k];
    if (tok.t !== 'id') continue;
    if (tok.v === 'require' && toks[k + 1]?.v === '(' && toks[k + 3]?.v === ')' && toks[k - 1]?.v === '=') {
      const names = new Map();
      const lhs = k - 2;
      if (toks[lhs]?.t === 'id') names.set(toks[lhs].v, 'default');
      else if (toks[lhs]?.v === '}' && match[lhs] >= 0) destructured(toks, match, match[lhs], names);
      if (names.size) add(spec(k + 2), names);
    } else if (tok.v === 'import' && toks[k + 1]?.v !== '(' && toks[k - 1]?.v !== '.') {
      let j = k + 1;
      while (j < toks.length && j < k + 200 && toks[j].t !== 'str') j++;
      const names = new Map();
      importClause(toks, match, k + 1, j, names);
      if (names.size) add(spec(j), names);
    }
  }
  return out;
}

/** Names a file declares itself (`function name`, `const name`): its calls of them are not the module's. */
function declaredNames(toks) {
  const out = new Set();
  for (let k = 1; k < toks.length; k++) {
    if (toks[k].t === 'id' && ['function', 'class', 'var', 'let', 'const'].includes(toks[k - 1].v)) out.add(toks[k].v);
  }
  return out;
}

/** Where a file calls what: `name(` (direct), `obj.name(` (member, by obj) and `.name(` (methods, by name). */
function callIndex(toks, match) {
  const direct = new Map(), member = new Map(), methods = new Map();
  const push = (map, key, v) => { if (!map.has(key)) map.set(key, []); map.get(key).push(v); };
  for (let k = 0; k + 1 < toks.length; k++) {
    const tok = toks[k];
    if (tok.t !== 'id' || NOT_A_METHOD.has(tok.v)) continue;
    const isMember = toks[k - 1]?.v === '.' || toks[k - 1]?.v === '?.';
    if (toks[k + 1].v === '(' && match[k + 1] > k) {
      if (isMember) push(methods, tok.v, k + 1);
      else push(direct, tok.v, k + 1);
    } else if (!isMember && toks[k + 1].v === '.' && toks[k + 2]?.t === 'id' && toks[k + 3]?.v === '(' && match[k + 3] > k) {
      push(member, tok.v, [toks[k + 2].v, k + 3]);
    }
  }
  return { direct, member, methods };
}

function destructured(toks, match, open, out) {
  for (const [s, e] of splitList(toks, match, open)) {
    if (toks[s].t !== 'id') continue;
    const local = toks[s + 1]?.v === ':' && toks[s + 2]?.t === 'id' ? toks[s + 2].v : toks[s].v;
    if (e > s) out.set(local, toks[s].v);
  }
}

function importClause(toks, match, s, e, out) {
  for (let j = s; j < e; j++) {
    const tok = toks[j];
    if (tok.v === '*' && toks[j + 1]?.v === 'as' && toks[j + 2]?.t === 'id') { out.set(toks[j + 2].v, '*'); j += 2; }
    else if (tok.v === '{' && match[j] > j) {
      for (const [a, b] of splitList(toks, match, j)) {
        const parts = toks.slice(a, b).filter((t) => t.v !== 'type');
        if (!parts.length || parts[0].t !== 'id') continue;
        out.set(parts[parts.length - 1].v, parts[0].v === 'default' ? 'default' : parts[0].v);
      }
      j = match[j];
    } else if (tok.t === 'id' && tok.v !== 'from' && tok.v !== 'type' && (toks[j + 1]?.v === ',' || toks[j + 1]?.v === 'from')) {
      out.set(tok.v, 'default');
    }
  }
}

/** `name = <expr>` declarations and assignments of one file: name -> [s, e) of the expression. */
function declarations(f) {
  const { toks, match } = f;
  const out = new Map();
  for (let k = 1; k + 1 < toks.length; k++) {
    if (toks[k].v !== '=' || toks[k - 1].t !== 'id' || ['.', '?.'].includes(toks[k - 2]?.v)) continue;
    const e = expressionEnd(toks, match, k + 1);
    if (e > k + 1 && !out.has(toks[k - 1].v)) out.set(toks[k - 1].v, [k + 1, e]);
  }
  return out;
}

/** Where the expression starting at token `s` ends (a `;`, `,` or closer at its depth, or a new statement). */
function expressionEnd(toks, match, s) {
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

/**
 * The source an argument's tokens [s, e) stand for, with names declared as literals in the same
 * file put in place; null when it needs anything else (a local function, `this`, a variable).
 */
function argumentSource(toks, decls, s, e, depth = 0) {
  if (depth > 3 || e <= s) return null;
  const lit = literalAt(toks, s, e);
  if (lit !== NONE) return render(lit);
  const d = e === s + 1 && toks[s].t === 'id' ? decls.get(toks[s].v) : null;
  if (d) return argumentSource(toks, decls, d[0], d[1], depth + 1);
  let out = '';
  for (let k = s; k < e; k++) {
    const tok = toks[k];
    let text = tok.v;
    if (tok.t === 'tpl' && tok.expr) return null;
    if (tok.t === 'id') {
      const prev = toks[k - 1], next = toks[k + 1];
      const property = prev && (prev.v === '.' || prev.v === '?.');
      const key = next?.v === ':' && (prev?.v === '{' || prev?.v === ',');
      const shorthand = (prev?.v === '{' || prev?.v === ',') && (next?.v === ',' || next?.v === '}') && k > s;
      if (NOT_A_VALUE.has(tok.v)) return null;
      if (!property && !key && !Object.hasOwn(LITERAL_WORDS, tok.v) && !SAFE_GLOBALS.has(tok.v)) {
        const d = decls.get(tok.v);
        const inner = d && argumentSource(toks, decls, d[0], d[1], depth + 1);
        if (!inner) return null;
        text = shorthand ? `${tok.v}: ${inner}` : `(${inner})`;
      }
    } else if (tok.t === 'p' && tok.v === '=>') return null;
    out += (k > s && tok.sp ? ' ' : '') + text;
  }
  return out;
}

/** What a non-literal argument says about its parameter: `req.headers['accept']` -> accept, a header. */
function argumentHint(toks, s, e) {
  let name = null, header = false;
  for (let k = s; k < e; k++) {
    const tok = toks[k];
    if (tok.t === 'id' && (k === s || toks[k - 1].v === '.' || toks[k - 1].v === '?.')) name = tok.v;
    else if (tok.t === 'str' && toks[k - 1]?.v === '[' && toks[k + 1]?.v === ']') name = unquote(tok.v);
    else if (!(tok.t === 'p' && ['.', '?.', '[', ']'].includes(tok.v))) return null;
    if (name && /^headers?$/i.test(name)) header = true;
  }
  return name && { name, header: header && !/^headers?$/i.test(name) };
}

/**
 * Call sites of a module's exports across the project. `exportsInfo` lists the exports' names
 * and the method names of its classes. Returns { calls: key -> [[{ src, hint }]], named, strings },
 * where a key is an export's name, 'default' (the whole export) or `.method`, and `named` the
 * strings of the files that use the module with the names around them.
 */
function harvestUsage(root, target, pkg, exportsInfo) {
  const usage = { calls: new Map(), named: [], strings: new Set() };
  const exportNames = new Set(exportsInfo.names);
  const methods = [...new Set(exportsInfo.methods)].sort();
  for (const rel of usageFiles(root)) {
    if (rel === target) continue;
    const f = usageFile(root, rel, pkg);
    if (!f) continue;
    const bindings = new Map(f.imports.filter((i) => i.file === target).map((i) => [i.local, i.key]));
    // Tests, examples and README may reach the module by another path (a bundle, a global).
    const byName = f.markdown || isTestPath(rel) || /(^|\/)examples?\//.test(rel);
    if (!bindings.size && !byName) continue;
    const own = (name) => (bindings.has(name) ? bindings.get(name) : byName && exportNames.has(name) && !f.declared.has(name) ? name : null);
    callSites(f, own, methods, usage);
    if ((bindings.size || isTestPath(rel) || f.markdown) && usage.named.length < MAX_NAMED) {
      for (const n of f.named) usage.named.push(n);
      for (const v of f.strings) usage.strings.add(v);
    }
  }
  return usage;
}

/** The calls of one file that are the module's, in the order they are written. */
function callSites(f, own, methods, usage) {
  const { toks, match, sites } = f;
  const found = []; // [open, key]
  for (const [name, opens] of sites.direct) {
    const key = own(name);
    if (key && key !== '*') for (const open of opens) found.push([open, key]);
  }
  for (const [obj, list] of sites.member) {
    const key = own(obj);
    if (key === '*' || key === 'default') for (const [prop, open] of list) found.push([open, prop]);
  }
  for (const m of methods) for (const open of sites.methods.get(m) || []) found.push([open, `.${m}`]);
  found.sort((a, b) => a[0] - b[0]);
  for (const [open, key] of found) {
    const list = usage.calls.get(key) || [];
    if (list.length >= MAX_CALLS_PER_NAME) continue;
    const args = splitList(toks, match, open).map(([s, e]) => ({ src: argumentSource(toks, f.decls, s, e), hint: argumentHint(toks, s, e) }));
    const sig = JSON.stringify(args);
    if (!list.some((a) => JSON.stringify(a) === sig)) list.push(args);
    usage.calls.set(key, list);
  }
}

/** Words of a name: `whenAcceptCharset` -> when, accept, charset; `accept-charset` -> accept, charset. */
function words(name) {
  return String(name).replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
}

/**
 * String literals of a file with the names around them: the property they are the value of, the
 * call they are an argument of, the variable they are assigned to, and in comments the words
 * before a quoted value ("Accept header is 'text/html'").
 */
function namedStrings(f) {
  const { toks, match } = f;
  const record = (value, context) => {
    if (value.length > 120 || !value.trim()) return;
    f.strings.add(value);
    if (context) f.named.push({ words: words(context), value });
  };
  for (let k = 0; k < toks.length; k++) {
    const tok = toks[k];
    if (!(tok.t === 'str' || (tok.t === 'tpl' && !tok.expr))) continue;
    const value = unquote(tok.v);
    const prev = toks[k - 1];
    // A module specifier (`require('..')`, `from 'node:assert'`) or a directive is no value.
    if (['from', 'import'].includes(prev?.v) || (prev?.v === '(' && ['require', 'import'].includes(toks[k - 2]?.v)) || /^use (strict|client|server)$/.test(value)) continue;
    // A piece of a concatenation (`'when Accept: ' + accept`) is no value of its own.
    if (prev?.v === '+' || toks[k + 1]?.v === '+') continue;
    if (prev?.v === ':' && toks[k - 2] && ['{', ','].includes(toks[k - 3]?.v)) record(value, toks[k - 2].t === 'str' ? unquote(toks[k - 2].v) : toks[k - 2].v);
    else if (prev?.v === '=' && toks[k - 2]?.t === 'id') record(value, toks[k - 2].v);
    else if (prev?.v === '(' || prev?.v === ',') record(value, calleeOf(toks, match, k));
    else record(value, null);
  }
  for (const c of f.comments) {
    for (const m of c.text.matchAll(/'([^'\n]{1,120})'|"([^"\n]{1,120})"/g)) {
      const before = c.text.slice(0, m.index).split(/[\s,:;()]+/).filter((w) => /[A-Za-z]/.test(w)).slice(-6);
      for (const w of before) record(m[1] ?? m[2], w);
    }
  }
}

/** The name of the call whose argument list holds token `k`, or null. */
function calleeOf(toks, match, k) {
  for (let j = k - 1; j >= 0 && j > k - 400; j--) {
    const tok = toks[j];
    if (tok.t === 'p' && ')]}'.includes(tok.v) && match[j] >= 0 && match[j] < j) { j = match[j]; continue; }
    if (tok.t === 'p' && tok.v === '(') return toks[j - 1]?.t === 'id' ? toks[j - 1].v : null;
    if (tok.t === 'p' && '[{;'.includes(tok.v)) return null;
  }
  return null;
}

/** The strings the project names like `name` (its last words are the name's words). */
function namedValues(usage, name) {
  const want = words(name).join(' ');
  if (!want || !usage) return [];
  const n = want.split(' ').length;
  const out = [];
  for (const { words: w, value } of usage.named) {
    if (w.slice(-n).join(' ') === want && !out.includes(value)) out.push(value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Shapes: what a parameter must look like, from the module's own code (the properties its body
// reads on it, `this.request = request` followed by `this.request.headers['accept']`) and from
// its types (JSDoc record types and typedefs, TypeScript interfaces and type literals).
// A shape: { kind: 'object'|'string'|'number'|'boolean'|'array'|'function'|'any', fields: Map,
// of (an array's element), values (literal values it is compared with or typed as), optional }.

const STRING_METHODS = new Set(['split', 'toLowerCase', 'toUpperCase', 'trim', 'trimStart', 'trimEnd', 'startsWith', 'endsWith',
  'charAt', 'charCodeAt', 'codePointAt', 'padStart', 'padEnd', 'normalize', 'localeCompare', 'match', 'matchAll', 'replace',
  'replaceAll', 'search', 'substring', 'substr', 'toLocaleLowerCase', 'toLocaleUpperCase']);
const ARRAY_METHODS = new Set(['map', 'filter', 'forEach', 'reduce', 'reduceRight', 'some', 'every', 'find', 'findIndex', 'findLast',
  'flatMap', 'push', 'pop', 'shift', 'unshift', 'sort', 'reverse', 'splice', 'join', 'flat', 'fill']);
const NOT_A_METHOD = new Set(['if', 'for', 'while', 'switch', 'catch', 'function', 'return', 'typeof', 'with']);

function shapeOf(kind) {
  return { kind, fields: new Map(), of: null, map: null, values: [], optional: false };
}

/** The shape at `path` below `root`, made objects on the way. */
function shapeAt(root, segs) {
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
function accessShapes(text) {
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
function shapeFits(src, shape, dflt) {
  const v = literalOf(src);
  if (v === undefined) return dflt !== null && dflt !== undefined;
  if (v === NONE) return shape.kind === 'function' && /=>|^(async\s+)?function\b/.test(String(src).trim());
  const fits = (value, sh, depth) => {
    if (!sh || sh.kind === 'any' || depth > 6) return true;
    if (sh.values.length && !sh.values.includes(value)) return false;
    if (sh.kind === 'object') {
      if (!isPlainObject(value)) return false;
      return [...sh.fields].every(([k, sub]) => (value[k] === undefined ? sub.optional : fits(value[k], sub, depth + 1)));
    }
    if (sh.kind === 'array') return Array.isArray(value) && value.every((x) => fits(x, sh.of, depth + 1));
    return typeName(value) === sh.kind && !(sh.kind === 'number' && Number.isNaN(value));
  };
  return fits(v, shape, 0);
}

function cloneShape(shape) {
  if (!shape) return null;
  return { ...shape, fields: new Map([...shape.fields].map(([k, v]) => [k, cloneShape(v)])), of: cloneShape(shape.of), map: cloneShape(shape.map), values: [...shape.values] };
}

function setKind(shape, kind) {
  if (shape && (shape.kind === 'any' || (shape.kind === 'object' && !shape.fields.size))) shape.kind = kind;
}

/** `text` split at top-level `sep` characters (outside brackets and quotes). */
function splitTop(text, seps) {
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
function typeShape(text, typedefs, depth = 0) {
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
function mergeShape(a, b) {
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
function informative(shape) {
  return !!shape && (shape.fields.size > 0 || !!shape.map || shape.values.length > 0 || !['any', 'object'].includes(shape.kind));
}

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

// ---------------------------------------------------------------------------------------------
// Inputs.

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

class Inputs {
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
      const parts = t.startsWith('?') ? [t.slice(1), 'null'] : t.split('|');
      for (let p of parts) {
        p = p.replace(/^\(|\)$/g, '');
        if (p.startsWith('?')) { kinds.add('null'); p = p.slice(1); }
        if (p.endsWith('=')) { kinds.add('undefined'); p = p.slice(0, -1); }
        const lower = p.toLowerCase();
        if (lower === 'string' || /^['"]/.test(p)) kinds.add('string');
        else if (lower === 'number' || /^-?\d/.test(p)) kinds.add('number');
        else if (lower === 'boolean' || lower === 'true' || lower === 'false') kinds.add('boolean');
        else if (p.endsWith('[]') || /^(array|readonlyarray)</i.test(p) || lower === 'array') kinds.add(`array:${p.replace(/\[\]$/, '').replace(/^(Readonly)?Array<(.*)>$/i, '$2')}`);
        else if (lower === 'function' || p.includes('=>')) kinds.add('function');
        else if (lower === 'null') kinds.add('null');
        else if (lower === 'undefined' || lower === 'void') kinds.add('undefined');
        else if (lower === 'object' || p.startsWith('{') || /^record</i.test(p)) kinds.add('object');
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

// ---------------------------------------------------------------------------------------------
// The search over one module.

function moduleKind(file, pkg) {
  if (/\.(ts|mts)$/.test(file)) return 'ts';
  if (file.endsWith('.mjs')) return 'esm';
  if (file.endsWith('.cjs')) return 'cjs';
  return pkg.type === 'module' ? 'esm' : 'cjs';
}

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

function codeLines(text) {
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

class Search {
  constructor(spec, req, pkg, rand, deadline, tsPath) {
    this.spec = spec; this.req = req; this.pkg = pkg; this.rand = rand; this.deadline = deadline;
    this.kind = moduleKind(spec.file, pkg);
    this.text = fs.readFileSync(spec.file, 'utf8');
    this.docs = docs(this.text, this.kind === 'ts', tsPath);
    this.typedefs = typedefs(this.text, this.kind === 'ts', tsPath);
    this.shapes = accessShapes(this.text);
    this.usage = null; // how the project calls the module, once its exports are known
    this.models = new Map();
    this.namedCache = new Map();
    this.cursors = new Map();
    this.inputs = new Inputs(rand, literals(this.text));
    this.covered = new Uint8Array(this.text.length);
    this.starts = lineStarts(this.text);
    this.code = codeLines(this.text);
    this.tests = []; // { name, body: [lines], fn, kind: 'value'|'throws'|'rejects'|'contract'|'type' }
    this.findings = [];
    this.seen = new Set();
    this.tried = 0;
    this.hangs = {};
    this.avoid = new Set(req.avoid || []);
    this.missing = new Set((req.missing || {})[spec.file] || []);
    this.instances = {}; // class -> [construction source]
    this.runner = new Runner(spec.file, this.kind, Math.round((req.call_timeout_s || 2) * 1000));
  }

  lineOf(offset) {
    let lo = 0, hi = this.starts.length - 1;
    while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (this.starts[mid] <= offset) lo = mid; else hi = mid - 1; }
    return lo + 1;
  }

  /** Newly covered code bytes of a call (non-whitespace), and whether they reach missing lines. */
  gain(covered, commit) {
    let fresh = 0, aimed = 0;
    for (const [s, e] of covered) {
      for (let i = s; i < e && i < this.covered.length; i++) {
        if (!this.covered[i] && !/\s/.test(this.text[i])) {
          fresh++;
          if (this.missing.size && this.missing.has(this.lineOf(i))) aimed++;
          if (commit) this.covered[i] = 1;
        }
      }
    }
    return { fresh, aimed };
  }

  coveredLines() {
    const lines = new Set();
    for (let i = 0; i < this.covered.length; i++) if (this.covered[i]) lines.add(this.lineOf(i));
    return [...this.code].filter((l) => lines.has(l));
  }

  doc(name) {
    const short = name.includes('.') ? name.split('.').pop() : name;
    return (this.docs[short] || [])[0] || { params: {}, returns: null, examples: [] };
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
      // A named type (`Options`, a typedef) is checked against what it names.
      const shape = this.inputs.kinds(type, p.name, p.dflt).includes('any') ? typeShape(type, this.typedefs) : null;
      if (shape && shape.kind !== 'any') return shapeFits(args[i] ?? 'undefined', shape, p.dflt);
      return this.inputs.fits(args[i] ?? 'undefined', type, p.name, p.dflt);
    });
  }

  testName(label, body) {
    const owner = body.map(show).find((l) => l.startsWith('const obj = '));
    if (owner && /^(await )?obj\./.test(label)) label = label.replace('obj.', `${owner.slice(12, -1)}.`);
    const base = label.length > 70 ? `${label.slice(0, 67)}...` : label;
    return `${base} [${hash(body.join('\n'))}]`;
  }

  addTest(t) {
    const full = `${this.describeName()} > ${t.name}`;
    if (this.avoid.has(full) || this.avoid.has(t.name)) return false;
    if (this.tests.some((x) => x.name === t.name)) return false;
    this.tests.push(t);
    return true;
  }

  describeName() { return this.spec.module; }

  /** Reads how the project calls the module's exports (files only; nothing of it runs here). */
  learnUsage(items) {
    const names = items.filter((i) => i.name !== 'defaultExport').map((i) => i.name.split('.').pop());
    const methods = items.filter((i) => i.kind === 'class').flatMap((i) => i.methods.map((m) => m.name));
    try {
      this.usage = harvestUsage(process.cwd(), this.spec.file, this.pkg, { names, methods });
    } catch (e) {
      this.usage = null;
      this.finding(this.spec.module, 'generator_error', `read usage of ${this.spec.file}`, 'the project\'s own calls', String(e && e.message || e));
    }
  }

  finding(fn, kind, call, expected, actual, test = null) {
    this.findings.push({ module: this.spec.module, function: `${this.spec.module}.${fn}`, kind, call, expected: String(expected), actual: String(actual), test });
  }

  sideEffect(fn, call, effects) {
    const f = `${this.spec.module}.${fn}`;
    if (this.findings.some((x) => x.function === f && x.kind === 'side_effect')) return;
    this.finding(fn, 'side_effect', call, 'no effect outside its temporary folder', effects.slice(0, 3).join('; '));
  }

  /** Turns an outcome into a test (or a finding). Returns whether something was kept. */
  record(fn, setup, expr, outcome, opts = {}) {
    // A call that returned a promise is awaited, declared async or not.
    opts = { ...opts, async: !!(opts.async || outcome.promise) };
    const body = [...setup];
    const aw = opts.async ? 'await ' : '';
    const ret = this.doc(fn).returns;
    if (outcome.ok) {
      if (opts.welltyped && ret) {
        const want = retKind(ret);
        if (want && !kindMatches(want, outcome.type)) {
          body.push({ kind: 'type', expr: `${aw}${expr}`, want });
          const name = this.testName(`${expr} returns ${want}`, [...setup, expr, 'type']);
          if (this.addTest({ name, body, fn, async: !!opts.async })) {
            this.finding(fn, 'return_type', expr, `a ${ret} (JSDoc/TypeScript return type)`, `${outcome.type} ${outcome.render ?? ''}`.trim(), `${this.describeName()} > ${name}`);
          }
          return true;
        }
      }
      if (outcome.stable && outcome.render !== null && outcome.render.length <= MAX_RENDER) {
        body.push({ kind: 'equal', expr: `${aw}${expr}`, want: outcome.render });
      } else if (outcome.stable && (outcome.type === 'string' || outcome.type === 'array') && outcome.length !== null) {
        body.push({ kind: 'length', expr: `${aw}${expr}`, want: outcome.length });
      } else if (outcome.cls && outcome.cls !== 'Object' && IDENT.test(outcome.cls) && this.exportsNames.has(outcome.cls)) {
        body.push({ kind: 'instance', expr: `${aw}${expr}`, want: outcome.cls });
      } else {
        body.push({ kind: 'type', expr: `${aw}${expr}`, want: outcome.type });
      }
      const name = this.testName(expr, body.map(show));
      return this.addTest({ name, body, fn, async: !!opts.async });
    }
    const t = outcome.threw;
    if (!t || t.blocked || outcome.setupThrew) return false;
    // An error the engine raised (not one the code throws on purpose, whose message it spells out).
    const engine = t.builtin && t.inModule && !this.text.includes(t.message.slice(0, 24));
    if (engine) {
      if (opts.welltyped) {
        // A built-in error from the module's own code on input its types allow: a defect.
        const want = ret ? retKind(ret) : null;
        body.push(want ? { kind: 'type', expr: `${aw}${expr}`, want } : { kind: 'nothrow', expr, async: !!opts.async });
        const name = this.testName(`${expr} does not throw`, [...setup, expr, 'nothrow']);
        if (this.addTest({ name, body, fn, async: !!opts.async })) {
          this.finding(fn, 'builtin_exception', expr, want ? `a ${ret}` : 'no exception', `${t.name}: ${t.message}`, `${this.describeName()} > ${name}`);
        }
        return true;
      }
      return false; // ill-typed input: the input's fault, not the code's
    }
    if (!t.inModule || !t.isError || !outcome.stable) return false;
    body.push({ kind: opts.async ? 'rejects' : 'throws', expr, name: t.name, message: t.message });
    const name = this.testName(`${expr} throws`, body.map(show));
    return this.addTest({ name, body, fn, async: !!opts.async });
  }

  async run(body, opts) {
    const out = await this.runner.call(body, opts);
    return out;
  }

  /** A program for the worker: setup statements, then the observed expression. */
  program(setup, expr) {
    return [...setup, '__observe();', `return __result(${expr});`].join('\n');
  }

  async examples(items) {
    for (const item of items) {
      const names = item.kind === 'class' ? [item.name, ...item.methods.map((m) => m.name), ...item.statics.map((m) => m.name)] : [item.name];
      for (const n of names) {
        for (const [src, want] of this.doc(n).examples) {
          const key = `example ${src}`;
          if (this.seen.has(key)) continue;
          this.seen.add(key);
          const asyncish = /\bawait\b/.test(src);
          const got = await this.run(this.program([], src), { async: asyncish });
          if (got.timeout || got.crashed) continue;
          if (got.effects?.length) { this.sideEffect(n, src, got.effects); continue; }
          const wanted = await this.run(this.program([], want), { twice: false });
          if (!wanted.ok || wanted.render === null) {
            this.finding(n, 'skipped_example', src, want, 'skipped: the expected value is not a plain value');
            continue;
          }
          this.gain(got.covered, true);
          const body = [{ kind: 'equal', expr: src, want: wanted.render }];
          const name = this.testName(`@example ${src}`, [src, want]);
          if (!this.addTest({ name, body, fn: n, async: asyncish })) continue;
          if (!got.ok || got.render !== wanted.render) {
            const actual = got.ok ? got.render ?? got.type : `${got.threw?.name}: ${got.threw?.message}`;
            this.finding(n, 'example', src, want, actual, `${this.describeName()} > ${name}`);
          }
        }
      }
    }
  }

  /**
   * Instances for the methods. A constructor the project's usage or its shapes say something
   * about gets only such arguments, and more instances: junk (`new Negotiator({ a: 1 })`)
   * builds an object none of whose methods can run.
   */
  async constructors(items) {
    for (const item of items.filter((i) => i.kind === 'class')) {
      this.instances[item.name] = [];
      const c = this.ctorCallable(item);
      const guided = this.callsFor(c).length > 0 || item.params.some((p, i) => this.model(c.doc, p, i, c).strings.length || this.model(c.doc, p, i, c).guides);
      const [tries, cap] = guided ? [16, 6] : [8, 3];
      for (let k = 0; k < tries && this.instances[item.name].length < cap; k++) {
        const args = this.args(c.doc, item.params, c, { guided });
        const expr = `new ${item.name}(${args.join(', ')})`;
        if (this.instances[item.name].includes(expr)) continue;
        const out = await this.run(this.program([], expr), { twice: false });
        if (out.effects?.length) { this.sideEffect(item.name, expr, out.effects); continue; }
        if (out.ok) {
          this.instances[item.name].push(expr);
          this.gain(out.covered, true);
        }
      }
    }
  }

  /**
   * A class's constructor as a callable: its docs (a `constructor`'s, or the function's own for
   * a pre-`class` constructor), its shapes, and the names the project calls it by.
   */
  ctorCallable(item) {
    const fnStyle = item.style === 'function';
    return {
      fn: item.name, ctor: true, cls: item.name, params: item.params,
      doc: !fnStyle && this.docs.constructor ? 'constructor' : item.name,
      access: fnStyle ? item.name : `${item.name}#constructor`,
      keys: [item.name, ...(item.isDefault ? ['default'] : [])],
    };
  }

  /** Callables of the module: functions, static methods, and methods on constructed instances. */
  callables(items) {
    const out = [];
    for (const item of items) {
      if (item.kind === 'function') {
        const short = item.name.split('.').pop();
        const keys = [...new Set([item.name, short, ...(item.isDefault ? ['default'] : [])])];
        out.push({ fn: item.name, target: item.name, params: item.params, async: item.async, access: short, keys });
      }
      if (item.kind === 'class') {
        out.push(this.ctorCallable(item));
        for (const m of item.statics) out.push({ fn: `${item.name}.${m.name}`, doc: m.name, target: `${item.name}.${m.name}`, params: m.params, async: m.async, access: m.name, keys: [m.name] });
        for (const m of item.methods) out.push({ fn: `${item.name}.${m.name}`, doc: m.name, cls: item.name, method: m.name, params: m.params, async: m.async, access: m.name, keys: [`.${m.name}`] });
        for (const g of item.getters) out.push({ fn: `${item.name}.${g}`, doc: g, cls: item.name, getter: g, params: [] });
      }
    }
    return out;
  }

  /** One candidate: (setup statements, expression, well-typed?) for a callable. */
  candidate(c) {
    const docName = c.doc || c.fn;
    if (c.ctor) {
      const args = this.args(docName, c.params, c);
      return { setup: [], expr: `new ${c.cls}(${args.join(', ')})`, welltyped: this.welltyped(docName, c.params, args), async: false };
    }
    if (c.cls) {
      const owners = this.instances[c.cls] || [];
      if (!owners.length) return null;
      const setup = [`const obj = ${this.rand.pick(owners)};`];
      if (c.getter) return { setup, expr: `obj.${c.getter}`, welltyped: false, async: false };
      const args = this.args(docName, c.params, c);
      return { setup, expr: `obj.${c.method}(${args.join(', ')})`, welltyped: this.welltyped(docName, c.params, args), async: c.async };
    }
    const args = this.args(docName, c.params, c);
    return { setup: [], expr: `${c.target}(${args.join(', ')})`, welltyped: this.welltyped(docName, c.params, args), async: c.async };
  }

  /** Names of the functions and methods that hold the lines the last run missed. */
  missedFunctions() {
    const names = new Set();
    const lines = this.text.split('\n');
    const decl = /(?:function\s*\*?\s*([A-Za-z_$][\w$]*)|^\s*(?:static\s+|async\s+|get\s+|set\s+)*([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*(?::[^{]*)?\{|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=|(?:exports|module\.exports)\.([A-Za-z_$][\w$]*)\s*=)/;
    for (const line of this.missing) {
      for (let i = Math.min(line, lines.length) - 1; i >= 0; i--) {
        const m = decl.exec(lines[i]);
        if (m && !['if', 'for', 'while', 'switch', 'catch'].includes(m[1] || m[2] || m[3] || m[4])) {
          names.add(m[1] || m[2] || m[3] || m[4]);
          break;
        }
      }
    }
    return names;
  }

  /** A revision round picks the callables holding missed lines three times as often. */
  weighted(callables) {
    if (!this.missing.size) return callables;
    const missed = this.missedFunctions();
    const out = [];
    for (const c of callables) {
      const short = (c.method || c.getter || c.fn).split('.').pop();
      const n = missed.has(short) || (c.ctor && missed.has('constructor')) ? 3 : 1;
      for (let i = 0; i < n; i++) out.push(c);
    }
    return out;
  }

  async l1(items) {
    const callables = this.weighted(this.callables(items));
    // A revision round searches longer: the easy lines are covered already.
    const factor = this.missing.size ? 2 : 1;
    let stale = 0;
    while (callables.length && this.tried < MAX_CANDIDATES * factor && stale < STAGNATION * factor && Date.now() < this.deadline) {
      const c = this.tried < callables.length * 2 ? callables[this.tried % callables.length] : this.rand.pick(callables);
      this.tried++;
      if ((this.hangs[c.fn] || 0) >= 2) { stale++; continue; }
      const cand = this.candidate(c);
      if (!cand) { stale++; continue; }
      const key = [...cand.setup, cand.expr].join('\n');
      if (this.seen.has(key)) { stale++; continue; }
      this.seen.add(key);
      const out = await this.run(this.program(cand.setup, cand.expr), { async: cand.async });
      if (out.timeout || out.crashed) { this.hangs[c.fn] = (this.hangs[c.fn] || 0) + 1; stale++; continue; }
      if (out.effects?.length) { this.sideEffect(c.fn, [...cand.setup, cand.expr].join(' '), out.effects); stale++; continue; }
      if (out.ok) this.inputs.remember(out.render, out.type);
      const { fresh } = this.gain(out.covered, false);
      // A contract broken on well-typed input is always worth a test; otherwise new code only.
      const contract = cand.welltyped && ((out.threw?.builtin && out.threw?.inModule && !this.text.includes(out.threw.message.slice(0, 24))) ||
        (out.ok && this.doc(c.doc || c.fn).returns && !kindMatches(retKind(this.doc(c.doc || c.fn).returns), out.type)));
      // Every callable gets a test of its own (a re-exporting module reaches no code of its own).
      const first = out.ok && !this.tests.some((t) => t.fn === c.fn);
      if (!fresh && !first && !(contract && !this.findings.some((f) => f.function === `${this.spec.module}.${c.fn}` && f.kind !== 'side_effect'))) { stale++; continue; }
      if (this.record(c.fn, cand.setup, cand.expr, out, { welltyped: cand.welltyped, async: cand.async })) {
        this.gain(out.covered, true);
        stale = 0;
      } else stale++;
    }
  }

  async l2(items) {
    const classes = items.filter((i) => i.kind === 'class' && (this.instances[i.name] || []).length && (i.methods.length || i.getters.length));
    const functions = this.callables(items).filter((c) => !c.cls && !c.ctor);
    const byFn = new Map(this.callables(items).map((c) => [c.fn, c]));
    let stale = 0;
    while ((classes.length || functions.length) && this.tried < MAX_CANDIDATES && stale < STAGNATION && Date.now() < this.deadline) {
      this.tried++;
      let setup, expr, fn, async = false;
      if (classes.length && (!functions.length || this.rand.next() < 0.7)) {
        const cls = this.rand.pick(classes);
        fn = cls.name;
        setup = [`const obj = ${this.rand.pick(this.instances[cls.name])};`];
        const n = 1 + this.rand.int(3);
        for (let k = 0; k < n && cls.methods.length; k++) {
          const m = this.rand.pick(cls.methods);
          const args = this.args(m.name, m.params, byFn.get(`${cls.name}.${m.name}`));
          setup.push(`${m.async ? 'await ' : ''}obj.${m.name}(${args.join(', ')});`);
        }
        const observe = cls.getters.length && this.rand.next() < 0.5 ? null : this.rand.pick(cls.methods);
        if (observe) {
          expr = `obj.${observe.name}(${this.args(observe.name, observe.params, byFn.get(`${cls.name}.${observe.name}`)).join(', ')})`;
          async = observe.async;
        } else expr = `obj.${this.rand.pick(cls.getters)}`;
      } else {
        const inner = this.rand.pick(functions), outer = this.rand.pick(functions);
        if (!outer.params.length) { stale++; continue; }
        const innerArgs = this.args(inner.doc || inner.fn, inner.params, inner);
        setup = [`const value = ${inner.async ? 'await ' : ''}${inner.target}(${innerArgs.join(', ')});`];
        const outerArgs = this.args(outer.doc || outer.fn, outer.params, outer);
        outerArgs[0] = 'value';
        expr = `${outer.target}(${outerArgs.join(', ')})`;
        fn = outer.fn; async = outer.async;
      }
      const key = [...setup, expr].join('\n');
      if (this.seen.has(key)) { stale++; continue; }
      this.seen.add(key);
      const out = await this.run(this.program(setup, expr), { async });
      if (out.timeout || out.crashed) { stale++; continue; }
      if (out.effects?.length) { this.sideEffect(fn, key, out.effects); stale++; continue; }
      if (!out.ok && !(out.threw && out.threw.inModule && !out.threw.builtin)) { stale++; continue; }
      const { fresh } = this.gain(out.covered, false);
      // Sequences keep what reaches new code, and a few that only combine known behaviour.
      if (!fresh && this.tests.length >= 4) { stale++; continue; }
      if (this.record(fn, setup, expr, out, { async })) { this.gain(out.covered, true); stale = 0; } else stale++;
    }
  }
}

function retKind(ret) {
  if (!ret) return null;
  let t = ret.replace(/\s/g, '');
  const m = /^Promise<(.*)>$/.exec(t);
  if (m) t = m[1];
  if (t.includes('|') || t.startsWith('?')) return null;
  const l = t.toLowerCase();
  if (l === 'string') return 'string';
  if (l === 'number') return 'number';
  if (l === 'boolean') return 'boolean';
  if (t.endsWith('[]') || /^array/i.test(t)) return 'array';
  if (l === 'void' || l === 'undefined') return 'undefined';
  return null;
}

function kindMatches(want, got) {
  return !want || want === got;
}

function show(step) {
  return typeof step === 'string' ? step : JSON.stringify(step);
}

// ---------------------------------------------------------------------------------------------
// Rendering tests in the project's framework.

function style(framework, kind, pkg, file) {
  // Test files follow the module system of the package; TypeScript and vitest tests are ESM.
  const esm = framework === 'vitest' || kind === 'ts' || kind === 'esm' && (pkg.type === 'module' || file.endsWith('.mjs'));
  const cjsPkg = pkg.type !== 'module';
  let ext = '.test.js';
  if (esm && cjsPkg && framework !== 'vitest') ext = '.test.mjs';
  if (!esm && !cjsPkg) ext = '.test.cjs';
  return { esm, ext, framework: framework || 'node' };
}

function testFileName(module, st) {
  return `${module.replace(/[^A-Za-z0-9_]+/g, '_')}${st.ext}`;
}

function assertion(step, st, indent) {
  const jestLike = st.framework === 'jest' || st.framework === 'vitest';
  if (typeof step === 'string') return [indent + step];
  const { kind, expr, want } = step;
  switch (kind) {
    case 'equal':
      if (jestLike) return [`${indent}expect(${expr}).${/^[[{]/.test(want) ? 'toStrictEqual' : 'toBe'}(${want});`];
      return [`${indent}assert.${/^[[{]/.test(want) ? 'deepEqual' : 'equal'}(${expr}, ${want});`];
    case 'length':
      return jestLike ? [`${indent}expect(${expr}).toHaveLength(${want});`] : [`${indent}assert.equal((${expr}).length, ${want});`];
    case 'instance':
      return jestLike ? [`${indent}expect(${expr}).toBeInstanceOf(${want});`] : [`${indent}assert.ok((${expr}) instanceof ${want});`];
    case 'type': {
      if (want === 'array') return jestLike ? [`${indent}expect(Array.isArray(${expr})).toBe(true);`] : [`${indent}assert.ok(Array.isArray(${expr}));`];
      if (want === 'null') return jestLike ? [`${indent}expect(${expr}).toBeNull();`] : [`${indent}assert.equal(${expr}, null);`];
      return jestLike ? [`${indent}expect(typeof (${expr})).toBe(${JSON.stringify(want)});`] : [`${indent}assert.equal(typeof (${expr}), ${JSON.stringify(want)});`];
    }
    case 'nothrow':
      if (step.async) return jestLike ? [`${indent}await expect(${expr}).resolves.not.toThrow();`] : [`${indent}await assert.doesNotReject(${expr});`];
      return jestLike ? [`${indent}expect(() => ${expr}).not.toThrow();`] : [`${indent}assert.doesNotThrow(() => ${expr});`];
    case 'throws': {
      const msg = JSON.stringify(step.message);
      if (jestLike) return [`${indent}expect(() => ${expr}).toThrow(${msg});`];
      return [`${indent}assert.throws(() => ${expr}, { name: ${JSON.stringify(step.name)}, message: ${msg} });`];
    }
    case 'rejects': {
      const msg = JSON.stringify(step.message);
      if (jestLike) return [`${indent}await expect(${expr}).rejects.toThrow(${msg});`];
      return [`${indent}await assert.rejects(${expr}, { name: ${JSON.stringify(step.name)}, message: ${msg} });`];
    }
    default: return [];
  }
}

function header(st, spec, names, layer, seed, tsLoader) {
  const rel = `../../${spec.file}`;
  const lines = [`// Generated by team-testing (${layer}, seed ${seed}) for ${spec.file}. Edit freely; rerun to regenerate.`];
  const fw = st.framework;
  const importNames = names.filter((n) => n !== 'defaultExport');
  const hasDefault = names.includes('defaultExport');
  if (st.esm) {
    if (fw === 'vitest') lines.push(`import { describe, it as test, expect } from 'vitest';`);
    else if (fw === 'jest') lines.push(`import { describe, test, expect } from '@jest/globals';`);
    else if (fw === 'mocha') lines.push(`import assert from 'node:assert/strict';`);
    else lines.push(`import { describe, test } from 'node:test';`, `import assert from 'node:assert/strict';`);
    if (tsLoader) {
      lines.push(`import { register } from 'node:module';`);
      lines.push('', '// The module is TypeScript: the project\'s own typescript blanks its types out (positions kept).');
      lines.push(`register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(TS_LOADER)}), { parentURL: import.meta.url, data: { root: new URL('../../package.json', import.meta.url).href } });`);
      const parts = [...importNames];
      if (hasDefault) parts.unshift('default: defaultExport');
      lines.push(`const { ${parts.join(', ')} } = await import(${JSON.stringify(rel)});`);
    } else if (spec.kind === 'cjs') {
      lines.push(`import { createRequire } from 'node:module';`);
      lines.push(`const require = createRequire(import.meta.url);`);
      lines.push(...cjsImport(rel, importNames, hasDefault));
    } else {
      const parts = [];
      if (hasDefault) parts.push('defaultExport');
      if (importNames.length) parts.push(`{ ${importNames.join(', ')} }`);
      lines.push(parts.length ? `import ${parts.join(', ')} from ${JSON.stringify(rel)};` : `import ${JSON.stringify(rel)};`);
    }
  } else {
    if (fw === 'node') lines.push(`const { describe, test } = require('node:test');`, `const assert = require('node:assert/strict');`);
    else if (fw === 'mocha') lines.push(`const assert = require('node:assert/strict');`);
    lines.push(...cjsImport(rel, importNames, hasDefault));
  }
  return lines;
}

function cjsImport(rel, names, hasDefault) {
  const lines = [];
  if (hasDefault) lines.push(`const defaultExport = require(${JSON.stringify(rel)});`);
  if (names.length) lines.push(`const { ${names.join(', ')} } = require(${JSON.stringify(rel)});`);
  return lines;
}

function renderFile(search, layer, seed, framework) {
  const st = style(framework, search.kind, search.pkg, search.spec.file);
  const used = new Set();
  const all = search.tests.map((t) => t.body.map(show).join('\n')).join('\n');
  for (const n of search.exportNames) {
    const ident = n;
    if (new RegExp(`(?<![\\w$.])${ident.replace(/\$/g, '\\$')}(?![\\w$])`).test(all)) used.add(n);
  }
  const names = [...used].sort();
  const spec = { ...search.spec, kind: search.kind };
  const lines = header(st, spec, names, layer, seed, search.kind === 'ts' && (framework || 'node') === 'node');
  const testFn = st.framework === 'mocha' ? 'it' : 'test';
  lines.push('', `describe(${JSON.stringify(search.describeName())}, () => {`);
  const tests = [...search.tests].sort((a, b) => (a.fn < b.fn ? -1 : a.fn > b.fn ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  tests.forEach((t, i) => {
    if (i) lines.push('');
    const isAsync = t.async || t.body.some((s) => typeof s === 'string' ? /\bawait\b/.test(s) : /\bawait\b/.test(s.expr) || s.kind === 'rejects' || (s.kind === 'nothrow' && s.async));
    lines.push(`  ${testFn}(${JSON.stringify(t.name)}, ${isAsync ? 'async ' : ''}() => {`);
    for (const step of t.body) lines.push(...assertion(step, st, '    '));
    lines.push('  });');
  });
  lines.push('});', '');
  return { text: lines.join('\n'), file: testFileName(search.spec.module, st) };
}

// ---------------------------------------------------------------------------------------------
// L3: the package's bin entries and `node <main>`.

function entryPoints(root) {
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

function runEntry(entry, args, timeoutMs, tmp) {
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(HELPER).href, path.resolve(entry.file), ...args], {
    cwd: tmp, encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, TTGEN_GUARD: '1', NODE_OPTIONS: '' },
  });
  const effects = [];
  const stderr = String(r.stderr || '').split('\n').filter((l) => {
    if (l.startsWith(EFFECT_MARK)) { effects.push(l.slice(EFFECT_MARK.length)); return false; }
    return true;
  }).join('\n');
  return { status: r.status, stdout: String(r.stdout || ''), stderr, effects, timedOut: !!r.error };
}

function e2e(req, pkg, framework) {
  const entries = entryPoints(process.cwd());
  const st = style(framework, pkg.type === 'module' ? 'esm' : 'cjs', pkg, 'x.js');
  const tests = [];
  const findings = [];
  const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR || '/tmp', 'ttgen-e2e-'));
  const machine = [process.cwd(), tmp, process.env.HOME || '/nonexistent'].filter(Boolean);
  for (const entry of entries) {
    const text = fs.readFileSync(entry.file, 'utf8');
    const flags = [...new Set([...text.matchAll(/['"](--?[a-z][\w-]*)['"]/g)].map((m) => m[1]))].sort().slice(0, 6);
    const words = literals(text).strings.filter((s) => /^[\w.-]{1,20}$/.test(s)).slice(0, 4);
    const argSets = [[], ['--help'], ['--version'], ...flags.map((f) => [f]), ...words.map((w) => [w]), ['hello', 'world']];
    const seen = new Set();
    for (const args of argSets) {
      const key = JSON.stringify(args);
      if (seen.has(key)) continue;
      seen.add(key);
      const a = runEntry(entry, args, (req.call_timeout_s || 2) * 5000, tmp);
      if (a.timedOut) continue;
      if (a.effects.length) {
        findings.push({ module: entry.file, function: entry.file, kind: 'side_effect', call: `node ${entry.file} ${args.join(' ')}`.trim(), expected: 'no effect outside its temporary folder', actual: a.effects.slice(0, 3).join('; '), test: null });
        continue;
      }
      const b = runEntry(entry, args, (req.call_timeout_s || 2) * 5000, tmp);
      const stable = a.stdout === b.stdout && a.status === b.status && !machine.some((m) => a.stdout.includes(m));
      if (a.status !== b.status) continue;
      const outKey = `${a.status}\n${a.stdout}`;
      if (tests.some((t) => t.outKey === outKey)) continue;
      tests.push({ entry, args, status: a.status, stdout: stable && a.stdout.length <= 2000 ? a.stdout : null, outKey, name: `node ${entry.file}${args.length ? ' ' + args.join(' ') : ''} exits ${a.status}` });
    }
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  if (!tests.length) return { modules: [], findings, entries: entries.length };
  const jestLike = st.framework === 'jest' || st.framework === 'vitest';
  const lines = [`// Generated by team-testing (${req.layer}, seed ${req.seed}): the package's entry points, run as a user would.`];
  if (st.esm) {
    if (st.framework === 'vitest') lines.push(`import { describe, it as test, expect } from 'vitest';`);
    else if (st.framework === 'jest') lines.push(`import { describe, test, expect } from '@jest/globals';`);
    else lines.push(`import { describe, test } from 'node:test';`, `import assert from 'node:assert/strict';`);
    lines.push(`import { spawnSync } from 'node:child_process';`, `import { mkdtempSync, rmSync } from 'node:fs';`, `import { tmpdir } from 'node:os';`, `import { join } from 'node:path';`, `import { fileURLToPath } from 'node:url';`, '');
    lines.push(`const root = fileURLToPath(new URL('../../', import.meta.url));`);
  } else {
    if (st.framework === 'node') lines.push(`const { describe, test } = require('node:test');`, `const assert = require('node:assert/strict');`);
    lines.push(`const { spawnSync } = require('node:child_process');`, `const { mkdtempSync, rmSync } = require('node:fs');`, `const { tmpdir } = require('node:os');`, `const { join } = require('node:path');`, '');
    lines.push(`const root = join(__dirname, '..', '..');`);
  }
  lines.push('', '/** Runs an entry point in a temporary folder of its own, which it removes afterwards. */',
    'function run(file, args) {',
    `  const cwd = mkdtempSync(join(tmpdir(), 'tt-e2e-'));`,
    '  try {',
    `    return spawnSync(process.execPath, [join(root, file), ...args], { cwd, encoding: 'utf8', timeout: 20000 });`,
    '  } finally {',
    '    rmSync(cwd, { recursive: true, force: true });',
    '  }',
    '}', '', `describe('entry points', () => {`);
  const names = [];
  tests.forEach((t, i) => {
    if (i) lines.push('');
    const name = `${t.name} [${hash(t.outKey)}]`;
    names.push(name);
    lines.push(`  ${st.framework === 'mocha' ? 'it' : 'test'}(${JSON.stringify(name)}, () => {`);
    lines.push(`    const result = run(${JSON.stringify(t.entry.file)}, ${JSON.stringify(t.args)});`);
    if (jestLike) {
      lines.push(`    expect(result.status).toBe(${t.status});`);
      if (t.stdout !== null) lines.push(`    expect(result.stdout).toBe(${JSON.stringify(t.stdout)});`);
    } else {
      lines.push(`    assert.equal(result.status, ${t.status});`);
      if (t.stdout !== null) lines.push(`    assert.equal(result.stdout, ${JSON.stringify(t.stdout)});`);
    }
    lines.push('  });');
  });
  lines.push('});', '');
  return {
    modules: [{ module: 'entry_points', file: entries.map((e) => e.file).join(', '), test_file: `entry_points${st.ext}`, source: lines.join('\n'), tests: names, lines_total: 0, lines_covered: 0 }],
    findings,
    entries: entries.length,
  };
}

// ---------------------------------------------------------------------------------------------
// Main.

async function readStdin() {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

async function searchModule(spec, req, pkg, rand, deadline, tsPath) {
  const search = new Search(spec, req, pkg, rand, deadline, tsPath);
  const framework = req.framework || 'node';
  const entry = { module: spec.module, file: spec.file, test_file: '', source: '', tests: [], lines_total: search.code.size, lines_covered: 0 };
  if (search.kind === 'ts' && !tsPath) {
    entry.import_error = 'TypeScript needs the project\'s own compiler: npm install --save-dev typescript';
    entry.import_error_kind = 'env_issue';
    return { entry, findings: [{ module: spec.module, function: spec.module, kind: 'env_issue', call: `import ${spec.file}`, expected: 'typescript in node_modules', actual: 'npm install --save-dev typescript', test: null }] };
  }
  if (search.kind === 'ts' && framework === 'jest') {
    entry.import_error = 'jest runs no TypeScript without a transform: npm install --save-dev ts-jest (or use vitest)';
    entry.import_error_kind = 'env_issue';
    return { entry, findings: [] };
  }
  const hello = await search.runner.start();
  if (hello.loadError) {
    search.runner.stop();
    const missing = /Cannot find (module|package)/.test(hello.loadError);
    const effect = /team-testing blocked an effect/.test(hello.loadError);
    entry.import_error = hello.loadError;
    entry.import_error_kind = missing ? 'env_issue' : effect ? 'side_effect' : 'code_defect';
    const findings = effect ? [{ module: spec.module, function: spec.module, kind: 'side_effect', call: `import ${spec.file}`, expected: 'no effect outside its temporary folder', actual: hello.loadError, test: null }] : [];
    return { entry, findings };
  }
  search.gain(hello.covered, true);
  const items = hello.exports || [];
  search.exportNames = new Set(items.map((i) => i.name.split('.')[0]));
  search.exportsNames = search.exportNames;
  search.learnUsage(items);
  if (req.layer.startsWith('L2')) {
    await search.constructors(items);
    await search.l2(items);
  } else {
    await search.examples(items);
    await search.constructors(items);
    await search.l1(items);
  }
  search.runner.stop();
  const lines = search.coveredLines();
  entry.lines_covered = lines.length;
  if (search.tests.length) {
    const { text, file } = renderFile(search, req.layer, req.seed, framework);
    entry.source = text;
    entry.test_file = file;
    entry.tests = search.tests.map((t) => `${search.describeName()} > ${t.name}`);
  }
  return { entry, findings: search.findings, tried: search.tried, restarts: search.runner.restarts };
}

async function main() {
  const req = JSON.parse(await readStdin());
  const started = Date.now();
  let pkg = {};
  try { pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')); } catch { /* defaults */ }
  const framework = req.framework || 'node';
  const result = { modules: [], findings: [], stats: { generator: 'ttgen.mjs', node: process.version } };
  if (req.layer.startsWith('L3')) {
    const out = e2e(req, pkg, framework);
    result.modules = out.modules;
    result.findings = out.findings;
    result.stats.entry_points = out.entries;
  } else {
    const tsPath = findTypeScript(process.cwd());
    const budget = (req.budget_s || 30) * 1000;
    const perModule = {};
    for (let i = 0; i < req.modules.length; i++) {
      const spec = req.modules[i];
      const t0 = Date.now();
      const left = started + budget - t0;
      const share = Math.max(1000, left / (req.modules.length - i));
      const rand = rng((Number(req.seed) >>> 0) ^ parseInt(hash(spec.module, 8), 16));
      const out = await searchModule(spec, req, pkg, rand, t0 + share, tsPath);
      result.modules.push(out.entry);
      result.findings.push(...out.findings);
      perModule[spec.module] = { seconds: (Date.now() - t0) / 1000, candidates: out.tried ?? 0, lines_total: out.entry.lines_total, lines_covered: out.entry.lines_covered, worker_restarts: out.restarts ?? 0 };
    }
    result.stats.modules = perModule;
  }
  result.stats.seconds = (Date.now() - started) / 1000;
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (process.env.TTGEN_GUARD === '1' && !process.argv.includes('--worker')) {
  // Preloaded into an entry point under L3: effects are blocked and reported on stderr.
  installGuard((what) => process.stderr.write(`${EFFECT_MARK}${what}\n`));
} else if (process.argv[2] === '--worker') {
  worker(process.argv[3], process.argv[4], process.argv[5]).catch((e) => {
    process.stderr.write(String(e && e.stack || e));
    process.exit(3);
  });
} else if (process.argv[2] === '--entry-points') {
  process.stdout.write(`${JSON.stringify(entryPoints(process.argv[3] || process.cwd()).map((e) => e.file))}\n`);
} else if (process.argv[1] && path.resolve(process.argv[1]) === HELPER) {
  main().catch((e) => {
    process.stderr.write(String(e && e.stack || e));
    process.exit(2);
  });
}
