// Assertions: what a kept call's test asserts, and the contracts a call breaks. Values that render
// are asserted whole, longer ones by length, objects by class or type, errors by name and
// message; a call on input its types allow that breaks its declared return type or raises a
// built-in error is a code defect, and its test says what should have happened.

import { docOf } from './tt_analysis.mjs';
import { IDENT, hash } from './tt_values.mjs';

const MAX_RENDER = 300; // longer values are asserted by type and length, not spelled out

/**
 * The oracle of one module: it turns the outcome of a call into a test that pins what the call
 * did (its value, its length, its class, its type, the error it throws), or into a contract
 * finding (a broken @example, a return type or a built-in error on well-typed input, an effect).
 */
export class Oracle {
  constructor(spec, text, docs, avoid) {
    this.spec = spec; this.text = text; this.docs = docs;
    this.avoid = new Set(avoid || []);
    this.tests = []; // { name, body: [lines], fn, kind: 'value'|'throws'|'rejects'|'contract'|'type' }
    this.findings = [];
    this.exportNames = new Set(); // the module's exports, once it is loaded: classes an instance may be of
  }

  doc(name) {
    return docOf(this.docs, name);
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
      body.push(returnedStep(outcome, `${aw}${expr}`, this.exportNames));
      const name = this.testName(expr, body.map(show));
      return this.addTest({ name, body, fn, async: !!opts.async });
    }
    const t = outcome.threw;
    if (!t || t.blocked || outcome.setupThrew) return false;
    const engine = engineError(t, this.text);
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
    body.push(thrownStep(t, expr, opts.async));
    const name = this.testName(`${expr} throws`, body.map(show));
    return this.addTest({ name, body, fn, async: !!opts.async });
  }
}

/**
 * The assertion of a call that returned (`shown` is its expression, awaited when it is async): the
 * value whole when it renders and both runs agree, else its length, its class (one of the
 * module's exports), or its type. A search's test and a replay's body (tt_replay.mjs) say it so.
 */
export function returnedStep(outcome, shown, exportNames) {
  if (outcome.stable && outcome.render !== null && outcome.render.length <= MAX_RENDER) {
    return { kind: 'equal', expr: shown, want: outcome.render };
  }
  if (outcome.stable && (outcome.type === 'string' || outcome.type === 'array') && outcome.length !== null) {
    return { kind: 'length', expr: shown, want: outcome.length };
  }
  if (outcome.cls && outcome.cls !== 'Object' && IDENT.test(outcome.cls) && exportNames.has(outcome.cls)) {
    return { kind: 'instance', expr: shown, want: outcome.cls };
  }
  return { kind: 'type', expr: shown, want: outcome.type };
}

/** The assertion of a call that threw `threw` (rejected, when async): the error's name and message. */
export function thrownStep(threw, expr, async) {
  return { kind: async ? 'rejects' : 'throws', expr, name: threw.name, message: threw.message };
}

/**
 * Whether a thrown error is one the engine raised in the module's own code (`TypeError: Cannot
 * read properties of undefined`), not one the code throws on purpose: a `throw` statement at the
 * line it was thrown from (a parser's `throw new SyntaxError(...)`), or a message the source
 * spells out.
 */
export function engineError(threw, text) {
  if (!threw || !threw.builtin || !threw.inModule) return false;
  if (text.includes(threw.message.slice(0, 24))) return false;
  const line = threw.line ? text.split('\n')[threw.line - 1] || '' : '';
  return !/\bthrow\b/.test(line);
}

export function retKind(ret) {
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

export function kindMatches(want, got) {
  return !want || want === got;
}

export function show(step) {
  return typeof step === 'string' ? step : JSON.stringify(step);
}
