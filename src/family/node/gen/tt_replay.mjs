// Replay: the calls a search ran on one version of the code (tt_calls.mjs), run on this one.
//
// "What did my change alter?": the search lists the calls it ran on HEAD; the same list is
// replayed on a mirror of the base commit and on one of HEAD, and a call whose result or thrown
// error differs between the two is a behaviour change. Each call runs twice in the module's
// worker (tt_execution.mjs), as a search's candidate does, and what it did becomes the body of a
// test written exactly as the search writes one (tt_assertions.mjs, tt_render.mjs), so two
// versions' bodies compare as text; the bodies become one test file per module. Every call gets
// an answer, in the order given (the two versions' answers are paired by position): a call that
// cannot be asserted, or whose two runs disagree, gets no body. Only the entry point (ttgen.mjs)
// imports it.

import * as fs from 'node:fs';

import { findTypeScript, moduleKind } from './tt_analysis.mjs';
import { Oracle, returnedStep, thrownStep } from './tt_assertions.mjs';
import { program } from './tt_calls.mjs';
import { Runner } from './tt_execution.mjs';
import { bodyLines, renderFile, testFileOf } from './tt_render.mjs';

const SHOWN_MAX = 200; // "returns ..." / "throws ...": a line of a report

/**
 * The answer to a replay request: { modules: [...] }, one entry per module asked for; a module
 * that fails to load, or a replay that fails, never loses the others.
 */
export async function replay(body, pkg) {
  const modules = [];
  for (const spec of body.modules || []) {
    try {
      modules.push(await replayModule(spec, body, pkg));
    } catch (e) {
      const why = `the replay failed: ${e && e.message || e}`;
      modules.push(moduleEntry(spec, body, pkg, (spec.calls || []).map((c) => unanswered(c, why))));
    }
  }
  return { modules };
}

function moduleEntry(spec, body, pkg, replayed, source = '', importError = null) {
  const module = spec.module || '';
  const file = spec.file || '';
  return {
    module,
    test_file: testFileOf(module || 'm', body.framework || 'node', moduleKind(file, pkg), pkg, file),
    source,
    replayed,
    import_error: importError,
  };
}

/** The answer of a call the replay could not run. */
function unanswered(call, shown) {
  return {
    function: call.function || '', expr: call.expr || '', test: call.test ?? null, name: call.test || '',
    body: null, shown: cut(shown), raised: false, stable: false, missing: false, doc: null,
  };
}

function cut(text) {
  const s = String(text);
  return s.length > SHOWN_MAX ? `${s.slice(0, SHOWN_MAX - 3)}...` : s;
}

async function replayModule(spec, body, pkg) {
  const framework = body.framework || 'node';
  const kind = moduleKind(spec.file, pkg);
  if (!fs.existsSync(spec.file)) return moduleEntry(spec, body, pkg, [], '', `${spec.file} does not exist in this version`);
  if (kind === 'ts' && !findTypeScript(process.cwd())) {
    return moduleEntry(spec, body, pkg, [], '', 'TypeScript needs the project\'s own compiler: npm install --save-dev typescript');
  }
  const runner = new Runner(spec.file, kind, Math.round((Number(body.call_timeout_s) || 2) * 1000));
  const hello = await runner.start();
  if (hello.loadError) {
    runner.stop();
    return moduleEntry(spec, body, pkg, [], '', hello.loadError);
  }
  let run;
  try {
    run = new Replay(spec, kind, pkg, framework, fs.readFileSync(spec.file, 'utf8'), hello.exports || [], runner);
    const replayed = [];
    for (const call of spec.calls || []) replayed.push(await run.answer(call));
    const source = run.render(body.layer || 'replay', body.seed ?? '');
    return moduleEntry(spec, body, pkg, replayed, source);
  } finally {
    runner.stop();
  }
}

/** One module's replay: its exports as this version has them, and the tests of what its calls did. */
class Replay {
  constructor(spec, kind, pkg, framework, text, items, runner) {
    this.spec = spec; this.kind = kind; this.pkg = pkg; this.framework = framework; this.text = text;
    this.items = items; this.runner = runner;
    this.oracle = new Oracle(spec, text, {}, []); // names tests as a search does
    this.exportNames = new Set(items.map((i) => i.name.split('.')[0]));
    this.suite = `${spec.module}`;
    this.names = new Set();
    this.tests = [];
  }

  /** What one call did here: { function, expr, test, name, body, shown, raised, stable, missing, doc }. */
  async answer(call) {
    const statements = Array.isArray(call.statements) ? call.statements.map(String) : [];
    const expr = String(call.expr || '');
    const item = this.itemName(call);
    const found = this.resolve(item);
    const out = {
      function: call.function || '', expr, test: call.test ?? null, name: this.name(call, statements, expr),
      body: null, shown: '', raised: false, stable: true, missing: !found, doc: null,
    };
    if (!found) {
      out.shown = cut(`${item || expr} does not exist in this version`);
      return out;
    }
    out.doc = docText(this.text, found.doc) ?? (found.ctor ? constructorDoc(this.text, found.doc) : null);
    try {
      const prog = program(statements, expr);
      const first = await this.runner.call(prog, { async: found.async });
      const second = await this.runner.call(prog, { async: found.async });
      const a = this.steps(statements, expr, first, found.async);
      const b = this.steps(statements, expr, second, found.async);
      const [la, lb] = [a && this.lines(a), b && this.lines(b)];
      const stable = la || lb ? JSON.stringify(la) === JSON.stringify(lb) : shown(first) === shown(second);
      Object.assign(out, { body: stable ? la : null, shown: cut(shown(first)), raised: raised(first), stable });
      if (out.body) this.tests.push({ name: out.name.slice(this.suite.length + 3), body: a, fn: item, async: false });
    } catch (e) {
      Object.assign(out, { body: null, shown: cut(`the replay failed: ${e && e.message || e}`), raised: false, stable: false });
    }
    return out;
  }

  /** The export a call calls, as the search named it (`total`, `Basket.add`): its function less the module's name. */
  itemName(call) {
    const prefix = `${this.spec.module}.`;
    const fn = String(call.function || '');
    if (fn.startsWith(prefix)) return fn.slice(prefix.length);
    const m = /^(?:new\s+)?([A-Za-z_$][\w$]*)/.exec(String(call.expr || ''));
    return m && m[1] !== 'obj' ? m[1] : '';
  }

  /** { async, doc } of an export in this version (doc: the name its comment is found by), or null. */
  resolve(name) {
    if (!name) return null;
    for (const item of this.items) {
      if (item.kind === 'function' && item.name === name) return { async: !!item.async, doc: name };
      if (item.kind !== 'class') continue;
      if (item.name === name) return { async: false, doc: name, ctor: item.style === 'class' };
      if (!name.startsWith(`${item.name}.`)) continue;
      const member = name.slice(item.name.length + 1);
      const m = [...item.methods, ...item.statics].find((x) => x.name === member);
      if (m) return { async: !!m.async, doc: member };
      if (item.getters.includes(member)) return { async: false, doc: member };
    }
    return null;
  }

  /**
   * The test's id: the search's test when the call became one, else one named as the search names
   * a test, from the call (never from what it did), so a call has the same name in both versions.
   */
  name(call, statements, expr) {
    const prefix = `${this.suite} > `;
    let name = typeof call.test === 'string' && call.test.startsWith(prefix) && call.test.length > prefix.length ? call.test : null;
    if (!name || this.names.has(name)) {
      const base = `${prefix}${this.oracle.testName(expr, [...statements, expr])}`;
      name = base;
      for (let n = 2; this.names.has(name); n++) name = `${base} (${n})`;
    }
    this.names.add(name);
    return name;
  }

  /**
   * The steps of the test of one run, as the search's record() writes them: the setup, then the
   * returned value's assertion or the thrown error's; null when nothing of it is the code's to
   * assert (an effect, a failed setup, a timeout, a crash, a throw of no Error, an error whose
   * message differs from run to run).
   */
  steps(statements, expr, out, async) {
    if (!out || out.timeout || out.crashed || out.syntax || out.effects?.length || out.setupThrew) return null;
    const awaited = !!(async || out.promise);
    if (out.ok) return [...statements, returnedStep(out, `${awaited ? 'await ' : ''}${expr}`, this.exportNames)];
    const t = out.threw;
    if (!t || t.blocked || !t.isError || !out.stable) return null;
    return [...statements, thrownStep(t, expr, awaited)];
  }

  lines(steps) {
    return bodyLines(steps, this.framework, this.kind, this.pkg, this.spec.file);
  }

  /** The test file of the calls with a body: the search's imports and layout, one test each. */
  render(layer, seed) {
    if (!this.tests.length) return '';
    const suite = { spec: this.spec, kind: this.kind, pkg: this.pkg, name: this.suite, tests: this.tests, exportNames: this.exportNames };
    return renderFile(suite, layer, seed, this.framework).text;
  }
}

function raised(out) {
  return !!(out && !out.ok && out.threw && !out.timeout && !out.crashed && !out.setupThrew && !out.threw.blocked);
}

/** What a run did, in words: `returns 3`, `throws TypeError: ...`. */
function shown(out) {
  if (!out) return 'did not run';
  if (out.timeout) return 'does not finish in time';
  if (out.crashed) return 'crashes the process it runs in';
  if (out.syntax) return `cannot be compiled: ${out.syntax}`;
  if (out.effects?.length) return `changes something outside its temporary folder: ${out.effects.slice(0, 2).join('; ')}`;
  const t = out.threw;
  const words = t ? `${t.name}: ${t.message}` : '';
  if (out.setupThrew) return `its setup throws ${words}`;
  if (out.ok) {
    const what = out.render ?? (out.cls && out.cls !== 'Object' ? `a ${out.cls}` : `a value of type ${out.type}`);
    return `returns ${what}`;
  }
  if (t && t.blocked) return `stopped by the sandbox: ${t.message}`;
  return `${out.promise ? 'rejects with' : 'throws'} ${words}`;
}

// ---------------------------------------------------------------------------------------------
// Doc comments: the text of the JSDoc comment of a declaration, as this version spells it.

const NAME = '([A-Za-z_$][\\w$]*)';
const DECLARATION = new RegExp(
  '\\s*(?:export\\s+)?(?:default\\s+)?(?:declare\\s+)?(?:(?:public|private|protected|static|async|abstract|override|readonly)\\s+)*' +
  `(?:function\\s*\\*?\\s*${NAME}|(?:class)\\s+${NAME}|(?:const|let|var)\\s+${NAME}\\s*[=:]|(?:module\\.)?exports\\.${NAME}\\s*=|` +
  `(?:get\\s+|set\\s+)?\\*?\\s*${NAME}\\s*(?:[(<]|:|=))`, 'y');

/** The JSDoc comment (its text, less the `*` margins) right before the declaration of `name`, or null. */
export function docText(text, name, from = 0, to = text.length) {
  if (!name) return null;
  const short = name.split('.').pop();
  for (const m of text.slice(0, to).matchAll(/\/\*\*([\s\S]*?)\*\//g)) {
    if (m.index < from) continue;
    DECLARATION.lastIndex = m.index + m[0].length;
    const d = DECLARATION.exec(text);
    if (!d || d.slice(1).find(Boolean) !== short) continue;
    const body = m[1].split('\n').map((l) => l.replace(/^\s*\*\s?/, '').trimEnd()).join('\n').trim();
    return body || null;
  }
  return null;
}

/** The JSDoc comment of the `constructor` of class `name` (up to the next class), or null. */
function constructorDoc(text, name) {
  const at = new RegExp(`\\bclass\\s+${name.replace(/\$/g, '\\$')}\\b`).exec(text);
  if (!at) return null;
  const next = /\bclass\s+[A-Za-z_$]/g;
  next.lastIndex = at.index + at[0].length;
  const end = next.exec(text)?.index ?? text.length;
  return docText(text, 'constructor', at.index, end);
}
