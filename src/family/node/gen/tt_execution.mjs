// Execution: the module's calls run in a worker process of their own (the helper's entry point
// with `--worker`), one per module, under V8 precise block coverage and a timeout, with writes,
// processes and network blocked and reported; L3's entry points run as a user would, under the
// same guard preloaded.

import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as nodeModule from 'node:module';
import { pathToFileURL, fileURLToPath } from 'node:url';

import { describeExports, exportsEnv } from './tt_analysis.mjs';
import { IDENT, render, typeName } from './tt_values.mjs';

export const EFFECT_MARK = 'TTGEN-EFFECT ';
// The helper's entry point beside this file: what a worker runs, and what L3's preload imports.
const HELPER = fileURLToPath(new URL('./ttgen.mjs', import.meta.url));

// ---------------------------------------------------------------------------------------------
// Effects: writes, processes and network are blocked and reported, never performed.

export function installGuard(report) {
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

export async function worker(file, kind, root) {
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

/** Whether a stack's top frame is in the module's own file. */
function thrownIn(err, abs, url) {
  const stack = String(err && err.stack || '');
  const frame = stack.split('\n').find((l) => /^\s+at /.test(l));
  return !!frame && (frame.includes(url) || frame.includes(abs));
}

/** The line of the module the error was thrown at (its stack's first frame), or null. */
function thrownAtLine(err, abs, url) {
  const stack = String(err && err.stack || '');
  const frame = stack.split('\n').find((l) => /^\s+at /.test(l));
  if (!frame || !(frame.includes(url) || frame.includes(abs))) return null;
  const m = /:(\d+):\d+\)?\s*$/.exec(frame);
  return m ? Number(m[1]) : null;
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
      // The error's own `name` (what assert.throws compares), else its class's.
      name: e && typeof e.name === 'string' ? e.name : e && e.constructor ? e.constructor.name : typeof e,
      message: e && typeof e.message === 'string' ? e.message : String(e),
      inModule: thrownIn(e, abs, url),
      line: thrownAtLine(e, abs, url),
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

export class Runner {
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
// L3: an entry point run as a user would, its effects blocked and reported on stderr.

export function runEntry(entry, args, timeoutMs, tmp) {
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
