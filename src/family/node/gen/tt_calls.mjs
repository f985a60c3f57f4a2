// Calls: the calls a module's search ran, listed for a replay on another version of the code
// (tt_replay.mjs: "what did my change alter?"), and the boundary variants of a call the search
// tries on the exports a change touched. Shared by tt_search.mjs and tt_replay.mjs.

import { NONE, literalOf, partners, splitList, tokenize } from './tt_tokens.mjs';

export const CALLS_PER_FUNCTION = 40; // the call list a replay runs: per export,
export const CALLS_PER_MODULE = 300; // and per module

/** A program for the worker: setup statements, then the observed expression. */
export function program(setup, expr) {
  return [...setup, '__observe();', `return __result(${expr});`].join('\n');
}

/**
 * Whether a run says nothing of the code's result: an effect (blocked or not), a failed setup, a
 * timeout, a crashed worker. Such a call is never listed: what it would do elsewhere is not its
 * result.
 */
export function unfit(out) {
  return !!(out.timeout || out.crashed || out.effects?.length || out.threw?.blocked || out.setupThrew || out.syntax);
}

/**
 * The distinct calls a module's search ran on its exports ({ function, statements, expr, test }),
 * in the order tried: run again on another version of the code, a call that gives another
 * result there is a behaviour change.
 */
export class CallList {
  constructor(module) {
    this.module = module;
    this.calls = new Map(); // key of (statements, expression) -> the call, in the order tried
    this.unfit = new Set(); // calls a run of which is left out: never listed
    this.focus = null; // with a change: the names a listed call must call (focusOn)
  }

  static key(statements, expr) {
    return JSON.stringify([statements, expr]);
  }

  /** A call of `fn` (`total`, `Basket.add`) ran; `boundary` when the boundary phase made it. */
  ran(fn, statements, expr, out, boundary = false) {
    const key = CallList.key(statements, expr);
    if (unfit(out)) {
      this.unfit.add(key);
      this.calls.delete(key);
      return;
    }
    if (this.unfit.has(key)) return;
    const known = this.calls.get(key);
    if (known) {
      known.boundary ||= boundary;
      known.ok ||= !!out.ok;
      return;
    }
    this.calls.set(key, { function: `${this.module}.${fn}`, statements: [...statements], expr, test: null, ok: !!out.ok, boundary });
  }

  /** The boundary phase made a call the search had run already: it is listed as one of its. */
  mark(statements, expr) {
    const known = this.calls.get(CallList.key(statements, expr));
    if (known) known.boundary = true;
  }

  /** The kept test (`<suite> > <title>`) asserting a call. */
  tested(statements, expr, test) {
    const known = this.calls.get(CallList.key(statements, expr));
    if (known && known.test === null) known.test = test;
  }

  /**
   * A change touched the lines `changed` (ranges: each callable's first and last line in `text`):
   * from now on only the calls of the callables it touched, or of those whose source calls one,
   * are listed without a test (itself or in its setup). The others cannot have changed, and each
   * call listed runs four times in a replay.
   */
  focusOn(callables, ranges, changed, text) {
    const lines = text.split('\n');
    const sourceOf = (c) => {
      const r = ranges.get(c);
      return r ? lines.slice(r[0] - 1, r[1]).join('\n') : '';
    };
    const short = (c) => (c.method || c.getter || c.fn).split('.').pop();
    const touched = callables.filter((c) => {
      const r = ranges.get(c);
      return r && [...changed].some((l) => l >= r[0] && l <= r[1]);
    });
    if (!touched.length) return;
    const names = new Set(touched.map(short));
    for (const c of callables) {
      const src = sourceOf(c);
      if ([...names].some((n) => src.includes(`${n}(`))) names.add(short(c));
    }
    this.focus = names;
  }

  /** Up to `n` calls of `fn` that returned: those of kept tests first, then in the order tried. */
  successful(fn, n) {
    const own = [...this.calls.values()].filter((c) => c.function === `${this.module}.${fn}` && c.ok);
    return [...own.filter((c) => c.test), ...own.filter((c) => !c.test)].slice(0, n);
  }

  /**
   * The calls to replay: those of the tests in the written file first, then the boundary phase's,
   * then the others in the order tried; at most CALLS_PER_FUNCTION per export and
   * CALLS_PER_MODULE in all. A test is named only when it was written.
   */
  listed(rendered) {
    const written = new Set(rendered);
    const focus = this.focus;
    const inFocus = (c) => !focus || [...c.statements, c.expr].some((t) => [...focus].some((n) => t.includes(`${n}(`)));
    const all = [...this.calls.values()]
      .map((c) => ({ ...c, test: c.test && written.has(c.test) ? c.test : null }))
      .filter((c) => c.test || inFocus(c));
    const ordered = [...all.filter((c) => c.test), ...all.filter((c) => !c.test && c.boundary), ...all.filter((c) => !c.test && !c.boundary)];
    const out = [];
    const per = new Map();
    for (const c of ordered) {
      if (out.length >= CALLS_PER_MODULE) break;
      const n = per.get(c.function) || 0;
      if (n >= CALLS_PER_FUNCTION) continue;
      per.set(c.function, n + 1);
      out.push({ function: c.function, statements: c.statements, expr: c.expr, test: c.test });
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Boundary variants: one argument of a call at a time replaced with the edge values of its kind.

const BOUNDARY = {
  string: ['""', '" "', '"a"', '"A b"'],
  number: ['0', '1', '-1', '1000000', '0.5'],
};

/** Edge values (as source) of the kind of the argument `src` spells; none for what is no literal. */
export function boundaryValues(src) {
  const toks = tokenize(src);
  if (!toks.length) return [];
  const match = partners(toks);
  if (toks[0].t === 'p' && toks[0].v === '[' && match[0] === toks.length - 1) {
    const parts = splitList(toks, match, 0);
    const first = parts.length ? `[${src.slice(toks[parts[0][0]].s, toks[parts[0][1] - 1].e)}]` : null;
    return first ? ['[]', first] : ['[]'];
  }
  if (toks[0].t === 'p' && toks[0].v === '{' && match[0] === toks.length - 1) return ['{}'];
  const v = literalOf(src);
  if (v === NONE) return [];
  if (typeof v === 'string') return BOUNDARY.string;
  if (typeof v === 'number') return BOUNDARY.number;
  if (typeof v === 'boolean') return [String(!v)];
  return []; // null and undefined stay as they are
}

/**
 * The variants of a call expression (`f(a, b)`, `new C(a)`, `obj.m(a)`): each of its outermost
 * call's arguments replaced, one at a time, with the edge values of its kind ({ expr, args }).
 */
export function boundaryVariants(expr) {
  const toks = tokenize(expr);
  const last = toks.length - 1;
  if (last < 0 || toks[last].v !== ')') return [];
  const match = partners(toks);
  const open = match[last];
  if (open < 0) return [];
  const parts = splitList(toks, match, open);
  const args = parts.map(([s, e]) => expr.slice(toks[s].s, toks[e - 1].e));
  const out = [];
  parts.forEach(([s, e], i) => {
    for (const v of boundaryValues(args[i])) {
      if (v === args[i]) continue;
      const next = [...args];
      next[i] = v;
      out.push({ expr: `${expr.slice(0, toks[s].s)}${v}${expr.slice(toks[e - 1].e)}`, args: next });
    }
  });
  return out;
}

/**
 * Where the source text `src` of a function (its `toString()`) lies in the module's text: [start,
 * end) offsets, or null. TypeScript's types are blanked out in what ran, position for position,
 * so a blank of `src` matches any character of the text.
 */
export function locate(text, src) {
  if (!src) return null;
  const at = text.indexOf(src);
  if (at >= 0) return [at, at + src.length];
  const head = /^[^\s(]+/.exec(src)?.[0];
  if (!head) return null;
  for (let i = text.indexOf(head); i >= 0 && i + src.length <= text.length; i = text.indexOf(head, i + 1)) {
    let ok = true;
    for (let j = 0; j < src.length && ok; j++) ok = src[j] === text[i + j] || /\s/.test(src[j]);
    if (ok) return [i, i + src.length];
  }
  return null;
}
