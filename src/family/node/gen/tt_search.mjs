// Search: the feedback-directed search over one module. Candidate calls of every callable (its
// arguments from tt_inputs.mjs) run in the module's worker (tt_execution.mjs); a call is kept
// when it reaches code no earlier call reached, breaks a contract, or is a callable's first, and
// the oracle (tt_assertions.mjs) makes it a test. Seeded, and bounded by a number of candidates,
// so the same seed keeps the same calls. L3's search runs the package's entry points instead.

import * as fs from 'node:fs';
import * as path from 'node:path';

import { codeLines, docOf, docs, lineStarts, literals, moduleKind, typedefs } from './tt_analysis.mjs';
import { Oracle, engineError, kindMatches, retKind } from './tt_assertions.mjs';
import { CallList, boundaryVariants, locate, program } from './tt_calls.mjs';
import { Runner, runEntry } from './tt_execution.mjs';
import { Arguments, Inputs } from './tt_inputs.mjs';
import { accessShapes } from './tt_shapes.mjs';
import { harvestUsage } from './tt_usage.mjs';

const MAX_CANDIDATES = 300; // per module: the search's real bound (keeps results reproducible)
const STAGNATION = 90; // candidates in a row that add nothing: the module is done
const BOUNDARY_BASES = 3; // a changed export's calls that returned, whose arguments the boundary phase varies
const BOUNDARY_PER_FUNCTION = 60; // and its variants at most
const BOUNDARY_GRACE_MS = 3000; // the boundary phase runs at least this long, past the module's deadline

// ---------------------------------------------------------------------------------------------
// Seeded randomness.

export function rng(seed) {
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

// ---------------------------------------------------------------------------------------------
// The search over one module.

class Search {
  constructor(spec, req, pkg, rand, deadline, tsPath) {
    this.spec = spec; this.req = req; this.pkg = pkg; this.rand = rand; this.deadline = deadline;
    this.kind = moduleKind(spec.file, pkg);
    this.text = fs.readFileSync(spec.file, 'utf8');
    this.docs = docs(this.text, this.kind === 'ts', tsPath);
    const types = typedefs(this.text, this.kind === 'ts', tsPath);
    this.calls = new Arguments(rand, this.docs, types, accessShapes(this.text), new Inputs(rand, literals(this.text)));
    this.covered = new Uint8Array(this.text.length);
    this.starts = lineStarts(this.text);
    this.code = codeLines(this.text);
    this.oracle = new Oracle(spec, this.text, this.docs, req.avoid);
    this.seen = new Set();
    this.tried = 0;
    this.hangs = {};
    this.missing = new Set((req.missing || {})[spec.file] || []);
    this.instances = {}; // class -> [construction source]
    this.welltypedInstances = new Set(); // constructions whose arguments fit the documented types
    this.runner = new Runner(spec.file, this.kind, Math.round((req.call_timeout_s || 2) * 1000));
    this.callList = new CallList(spec.module); // the calls run, for a replay (L1 and L2)
  }

  /** A call of `fn` ran: noted in the call list. */
  ran(fn, setup, expr, out, boundary = false) {
    this.callList.ran(fn, setup, expr, out, boundary);
  }

  /** The oracle's record(), and the tests it kept noted with their call in the call list. */
  record(fn, setup, expr, out, opts) {
    const made = this.oracle.tests.length;
    const kept = this.oracle.record(fn, setup, expr, out, opts);
    for (const t of this.oracle.tests.slice(made)) this.callList.tested(setup, expr, `${this.oracle.describeName()} > ${t.name}`);
    return kept;
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
    return docOf(this.docs, name);
  }

  /** Reads how the project calls the module's exports (files only; nothing of it runs here). */
  learnUsage(items) {
    const names = items.filter((i) => i.name !== 'defaultExport').map((i) => i.name.split('.').pop());
    const methods = items.filter((i) => i.kind === 'class').flatMap((i) => i.methods.map((m) => m.name));
    try {
      this.calls.usage = harvestUsage(process.cwd(), this.spec.file, this.pkg, { names, methods });
    } catch (e) {
      this.calls.usage = null;
      this.oracle.finding(this.spec.module, 'generator_error', `read usage of ${this.spec.file}`, 'the project\'s own calls', String(e && e.message || e));
    }
  }

  async run(body, opts) {
    const out = await this.runner.call(body, opts);
    return out;
  }

  /** A program for the worker: setup statements, then the observed expression. */
  program(setup, expr) {
    return program(setup, expr);
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
          if (got.effects?.length) { this.oracle.sideEffect(n, src, got.effects); continue; }
          const wanted = await this.run(this.program([], want), { twice: false });
          if (!wanted.ok || wanted.render === null) {
            this.oracle.finding(n, 'skipped_example', src, want, 'skipped: the expected value is not a plain value');
            continue;
          }
          this.gain(got.covered, true);
          const body = [{ kind: 'equal', expr: src, want: wanted.render }];
          const name = this.oracle.testName(`@example ${src}`, [src, want]);
          if (!this.oracle.addTest({ name, body, fn: n, async: asyncish })) continue;
          if (!got.ok || got.render !== wanted.render) {
            const actual = got.ok ? got.render ?? got.type : `${got.threw?.name}: ${got.threw?.message}`;
            this.oracle.finding(n, 'example', src, want, actual, `${this.oracle.describeName()} > ${name}`);
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
      const guided = this.calls.callsFor(c).length > 0 || item.params.some((p, i) => this.calls.model(c.doc, p, i, c).strings.length || this.calls.model(c.doc, p, i, c).guides);
      const [tries, cap] = guided ? [16, 6] : [8, 3];
      for (let k = 0; k < tries && this.instances[item.name].length < cap; k++) {
        const args = this.calls.args(c.doc, item.params, c, { guided });
        const expr = `new ${item.name}(${args.join(', ')})`;
        if (this.instances[item.name].includes(expr)) continue;
        const out = await this.run(this.program([], expr), { twice: false });
        this.ran(item.name, [], expr, out);
        if (out.effects?.length) { this.oracle.sideEffect(item.name, expr, out.effects); continue; }
        if (out.ok) {
          this.instances[item.name].push(expr);
          if (this.calls.welltyped(c.doc, item.params, args)) this.welltypedInstances.add(expr);
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
      const args = this.calls.args(docName, c.params, c);
      return { setup: [], expr: `new ${c.cls}(${args.join(', ')})`, welltyped: this.calls.welltyped(docName, c.params, args), async: false };
    }
    if (c.cls) {
      const owners = this.instances[c.cls] || [];
      if (!owners.length) return null;
      const owner = this.rand.pick(owners);
      const setup = [`const obj = ${owner};`];
      if (c.getter) return { setup, expr: `obj.${c.getter}`, welltyped: false, async: false };
      const args = this.calls.args(docName, c.params, c);
      // An object built from ill-typed arguments breaks its methods; that is the input's fault.
      const welltyped = this.welltypedInstances.has(owner) && this.calls.welltyped(docName, c.params, args);
      return { setup, expr: `obj.${c.method}(${args.join(', ')})`, welltyped, async: c.async };
    }
    const args = this.calls.args(docName, c.params, c);
    return { setup: [], expr: `${c.target}(${args.join(', ')})`, welltyped: this.calls.welltyped(docName, c.params, args), async: c.async };
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
      if (await this.attempt(c, cand)) stale = 0;
      else stale++;
    }
  }

  /**
   * One candidate of callable `c` run, and kept as a test when it reaches new code, breaks a
   * contract or is the callable's first; whether it was kept.
   */
  async attempt(c, cand, boundary = false) {
    const out = await this.run(this.program(cand.setup, cand.expr), { async: cand.async });
    this.ran(c.fn, cand.setup, cand.expr, out, boundary);
    if (out.timeout || out.crashed) { this.hangs[c.fn] = (this.hangs[c.fn] || 0) + 1; return false; }
    if (out.effects?.length) { this.oracle.sideEffect(c.fn, [...cand.setup, cand.expr].join(' '), out.effects); return false; }
    if (out.ok) this.calls.inputs.remember(out.render, out.type);
    const { fresh } = this.gain(out.covered, false);
    // A contract broken on well-typed input is always worth a test; otherwise new code only.
    const contract = cand.welltyped && (engineError(out.threw, this.text) ||
      (out.ok && this.doc(c.doc || c.fn).returns && !kindMatches(retKind(this.doc(c.doc || c.fn).returns), out.type)));
    // Every callable gets a test of its own (a re-exporting module reaches no code of its own).
    const first = out.ok && !this.oracle.tests.some((t) => t.fn === c.fn);
    if (!fresh && !first && !(contract && !this.oracle.findings.some((f) => f.function === `${this.spec.module}.${c.fn}` && f.kind !== 'side_effect'))) return false;
    if (this.record(c.fn, cand.setup, cand.expr, out, { welltyped: cand.welltyped, async: cand.async })) {
      this.gain(out.covered, true);
      return true;
    }
    return false;
  }

  async l2(items) {
    const classes = items.filter((i) => i.kind === 'class' && (this.instances[i.name] || []).length && (i.methods.length || i.getters.length));
    const functions = this.callables(items).filter((c) => !c.cls && !c.ctor);
    const byFn = new Map(this.callables(items).map((c) => [c.fn, c]));
    let stale = 0;
    while ((classes.length || functions.length) && this.tried < MAX_CANDIDATES && stale < STAGNATION && Date.now() < this.deadline) {
      this.tried++;
      let setup, expr, fn, called, async = false;
      if (classes.length && (!functions.length || this.rand.next() < 0.7)) {
        const cls = this.rand.pick(classes);
        fn = cls.name;
        setup = [`const obj = ${this.rand.pick(this.instances[cls.name])};`];
        const n = 1 + this.rand.int(3);
        for (let k = 0; k < n && cls.methods.length; k++) {
          const m = this.rand.pick(cls.methods);
          const args = this.calls.args(m.name, m.params, byFn.get(`${cls.name}.${m.name}`));
          setup.push(`${m.async ? 'await ' : ''}obj.${m.name}(${args.join(', ')});`);
        }
        const observe = cls.getters.length && this.rand.next() < 0.5 ? null : this.rand.pick(cls.methods);
        if (observe) {
          expr = `obj.${observe.name}(${this.calls.args(observe.name, observe.params, byFn.get(`${cls.name}.${observe.name}`)).join(', ')})`;
          async = observe.async;
          called = `${cls.name}.${observe.name}`;
        } else {
          const getter = this.rand.pick(cls.getters);
          expr = `obj.${getter}`;
          called = `${cls.name}.${getter}`;
        }
      } else {
        const inner = this.rand.pick(functions), outer = this.rand.pick(functions);
        if (!outer.params.length) { stale++; continue; }
        const innerArgs = this.calls.args(inner.doc || inner.fn, inner.params, inner);
        setup = [`const value = ${inner.async ? 'await ' : ''}${inner.target}(${innerArgs.join(', ')});`];
        const outerArgs = this.calls.args(outer.doc || outer.fn, outer.params, outer);
        outerArgs[0] = 'value';
        expr = `${outer.target}(${outerArgs.join(', ')})`;
        fn = outer.fn; async = outer.async;
        called = outer.fn;
      }
      const key = [...setup, expr].join('\n');
      if (this.seen.has(key)) { stale++; continue; }
      this.seen.add(key);
      const out = await this.run(this.program(setup, expr), { async });
      this.ran(called, setup, expr, out);
      if (out.timeout || out.crashed) { stale++; continue; }
      if (out.effects?.length) { this.oracle.sideEffect(fn, key, out.effects); stale++; continue; }
      if (!out.ok && !(out.threw && out.threw.inModule && !out.threw.builtin)) { stale++; continue; }
      const { fresh } = this.gain(out.covered, false);
      // Sequences keep what reaches new code, and a few that only combine known behaviour.
      if (!fresh && this.oracle.tests.length >= 4) { stale++; continue; }
      if (this.record(fn, setup, expr, out, { async })) { this.gain(out.covered, true); stale = 0; } else stale++;
    }
  }

  /**
   * The boundary phase of a change (the request's `changed` lines of this file): for each callable
   * whose source holds a changed line, up to BOUNDARY_BASES of its calls that returned are varied
   * one argument at a time with edge values of the argument's kind, and run as a candidate is;
   * every variant is in the call list, so a replay compares the edges of the changed code.
   */
  async boundary(items) {
    const changed = new Set(((this.req.changed || {})[this.spec.file] || []).map(Number));
    if (!changed.size) return;
    const until = Math.max(this.deadline, Date.now() + BOUNDARY_GRACE_MS);
    const callables = this.callables(items);
    const ranges = new Map();
    for (const c of callables) ranges.set(c, await this.lines(c));
    this.callList.focusOn(callables, ranges, changed, this.text);
    for (const c of callables) {
      if (Date.now() >= until) break;
      const range = ranges.get(c);
      if (!range || ![...changed].some((l) => l >= range[0] && l <= range[1])) continue;
      const made = new Set();
      for (const base of this.callList.successful(c.fn, BOUNDARY_BASES)) {
        for (const v of boundaryVariants(base.expr)) {
          if (made.size >= BOUNDARY_PER_FUNCTION || Date.now() >= until || (this.hangs[c.fn] || 0) >= 2) break;
          const key = [...base.statements, v.expr].join('\n');
          if (made.has(key)) continue;
          made.add(key);
          if (this.seen.has(key)) { this.callList.mark(base.statements, v.expr); continue; }
          this.seen.add(key);
          this.tried++;
          await this.attempt(c, { setup: base.statements, expr: v.expr, welltyped: this.welltypedVariant(c, base.statements, v.args), async: c.async }, true);
        }
      }
    }
  }

  /** Whether a variant's arguments fit the callable's documented types (as candidate() judges). */
  welltypedVariant(c, setup, args) {
    const docName = c.doc || c.fn;
    if (c.ctor) return setup.length === 0 && this.calls.welltyped(docName, c.params, args);
    if (c.cls) {
      const owner = setup.length === 1 ? /^const obj = (.*);$/s.exec(setup[0])?.[1] : null;
      return !!owner && this.welltypedInstances.has(owner) && this.calls.welltyped(docName, c.params, args);
    }
    return setup.length === 0 && this.calls.welltyped(docName, c.params, args);
  }

  /** The first and last line of a callable's source in the module, or null: its text, as the worker has it, found in the file. */
  async lines(c) {
    let ref;
    if (c.ctor) ref = c.cls;
    else if (c.getter) ref = `Object.getOwnPropertyDescriptor(${c.cls}.prototype, ${JSON.stringify(c.getter)}).get`;
    else if (c.method) ref = `${c.cls}.prototype.${c.method}`;
    else ref = c.target;
    const out = await this.run(this.program([], `Function.prototype.toString.call(${ref})`), { twice: false });
    if (!out.ok || out.type !== 'string' || out.render === null) return null;
    const at = locate(this.text, JSON.parse(out.render));
    return at ? [this.lineOf(at[0]), this.lineOf(Math.max(at[0], at[1] - 1))] : null;
  }
}

/** Whether the project's jest compiles TypeScript itself: ts-jest installed and named by its config. */
function jestCompilesTypeScript(pkg) {
  if (!fs.existsSync(path.join('node_modules', 'ts-jest'))) return false;
  if (JSON.stringify(pkg.jest || {}).includes('ts-jest')) return true;
  return ['js', 'ts', 'cjs', 'mjs', 'json'].some((ext) => {
    try { return fs.readFileSync(`jest.config.${ext}`, 'utf8').includes('ts-jest'); } catch { return false; }
  });
}

/**
 * The search over one module: its load in a worker, then @examples, instances and candidate calls
 * (L1) or sequences of calls on one instance (L2). Returns the module's entry of the result, its
 * findings and counts, and the suite of tests the search kept, or why the module was not searched.
 */
export async function searchModule(spec, req, pkg, rand, deadline, tsPath) {
  const search = new Search(spec, req, pkg, rand, deadline, tsPath);
  const framework = req.framework || 'node';
  const entry = { module: spec.module, file: spec.file, test_file: '', source: '', tests: [], lines_total: search.code.size, lines_covered: 0, calls: [] };
  if (search.kind === 'ts' && !tsPath) {
    entry.import_error = 'TypeScript needs the project\'s own compiler: npm install --save-dev typescript';
    entry.import_error_kind = 'env_issue';
    return { entry, findings: [{ module: spec.module, function: spec.module, kind: 'env_issue', call: `import ${spec.file}`, expected: 'typescript in node_modules', actual: 'npm install --save-dev typescript', test: null }] };
  }
  if (search.kind === 'ts' && framework === 'jest' && !jestCompilesTypeScript(pkg)) {
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
    // What our loader cannot do (TypeScript that needs a compiler, a directory import that only
    // a bundler or CommonJS resolves) is the generator's limit, never the code's defect.
    const limit = /TypeScript construct that needs a compiler|Directory import .* is not supported/.test(hello.loadError);
    entry.import_error_kind = missing ? 'env_issue' : effect ? 'side_effect' : limit ? 'generator_error' : 'code_defect';
    const findings = effect ? [{ module: spec.module, function: spec.module, kind: 'side_effect', call: `import ${spec.file}`, expected: 'no effect outside its temporary folder', actual: hello.loadError, test: null }] : [];
    return { entry, findings };
  }
  search.gain(hello.covered, true);
  const items = hello.exports || [];
  search.oracle.exportNames = new Set(items.map((i) => i.name.split('.')[0]));
  search.learnUsage(items);
  if (req.layer.startsWith('L2')) {
    await search.constructors(items);
    await search.l2(items);
  } else {
    await search.examples(items);
    await search.constructors(items);
    await search.l1(items);
  }
  await search.boundary(items);
  search.runner.stop();
  const lines = search.coveredLines();
  entry.lines_covered = lines.length;
  // What the rendering stage needs of the search: the module, its tests and its exports.
  const suite = { spec: search.spec, kind: search.kind, pkg: search.pkg, name: search.oracle.describeName(), tests: search.oracle.tests, exportNames: search.oracle.exportNames };
  return { entry, findings: search.oracle.findings, tried: search.tried, restarts: search.runner.restarts, suite, callList: search.callList };
}

// ---------------------------------------------------------------------------------------------
// L3: the package's bin entries and `node <main>`.

/**
 * L3's search: each entry point run as a user would, in a temporary folder, with no arguments,
 * --help, --version, and the flags and words its source spells; a run that exits the same way
 * twice becomes a test (of its output too when short, the same both times, and naming no folder
 * of this machine), a run with an effect a finding.
 */
export function searchEntryPoints(req, entries) {
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
  return { tests, findings };
}
