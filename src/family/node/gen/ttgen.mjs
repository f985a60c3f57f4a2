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
//
// This file is the entry point; the stages live beside it, each a module of its own, in the order
// a run goes through them: tt_analysis.mjs (with tt_tokens.mjs and tt_usage.mjs), tt_shapes.mjs and
// tt_inputs.mjs, tt_execution.mjs, tt_search.mjs, tt_assertions.mjs, tt_render.mjs (tt_values.mjs
// is what they share), then tt_calls.mjs (the calls a search ran, and boundary variants of a
// call) and tt_replay.mjs (those calls run again in another version of the code). A worker and
// L3's preload load this file by its path.
//
// Two requests: a search ({"modules": [...], "layer", "seed", ..., "framework"}) answers each
// module's test file and, in L1 and L2, the calls its search ran ("calls": [{"function",
// "statements", "expr", "test"}]); with "changed" ({"<file>": [changed lines]}) it also varies the
// arguments of the changed exports' calls with boundary values. A replay ({"replay": {"modules":
// [{"module", "file", "calls"}], "call_timeout_s", "seed", "layer", "framework"}}) runs those
// calls in this version of the package and answers what each did ({"modules": [{"module",
// "test_file", "source", "replayed": [...], "import_error"}]}): run on the base commit and on
// HEAD, they tell what a change altered.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { entryPoints, findTypeScript } from './tt_analysis.mjs';
import { EFFECT_MARK, installGuard, worker } from './tt_execution.mjs';
import { renderEntryFile, renderFile } from './tt_render.mjs';
import { replay } from './tt_replay.mjs';
import { rng, searchEntryPoints, searchModule } from './tt_search.mjs';
import { hash } from './tt_values.mjs';

const HELPER = fileURLToPath(import.meta.url);

async function readStdin() {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

/** One module: its search, then its test file when the search kept tests. */
async function generateModule(spec, req, pkg, rand, deadline, tsPath) {
  const out = await searchModule(spec, req, pkg, rand, deadline, tsPath);
  if (out.suite && out.suite.tests.length) {
    const { text, file } = renderFile(out.suite, req.layer, req.seed, req.framework || 'node');
    out.entry.source = text;
    out.entry.test_file = file;
    out.entry.tests = out.suite.tests.map((t) => `${out.suite.name} > ${t.name}`);
  }
  // The calls the search ran, for a replay on another version of the code (tt_replay.mjs).
  if (out.callList) out.entry.calls = out.callList.listed(out.entry.tests);
  return out;
}

/** L3: the package's entry points run as a user would, and their test file. */
function endToEnd(req, pkg, framework) {
  const entries = entryPoints(process.cwd());
  const { tests, findings } = searchEntryPoints(req, entries);
  if (!tests.length) return { modules: [], findings, entries: entries.length };
  const { text, file, names } = renderEntryFile(req, pkg, framework, tests);
  return {
    modules: [{ module: 'entry_points', file: entries.map((e) => e.file).join(', '), test_file: file, source: text, tests: names, lines_total: 0, lines_covered: 0 }],
    findings,
    entries: entries.length,
  };
}

async function main() {
  const req = JSON.parse(await readStdin());
  const started = Date.now();
  let pkg = {};
  try { pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')); } catch { /* defaults */ }
  if (req.replay) {
    // The calls of an earlier search, run in this version of the package (tt_replay.mjs).
    process.stdout.write(`${JSON.stringify(await replay(req.replay, pkg))}\n`);
    return;
  }
  const framework = req.framework || 'node';
  const result = { modules: [], findings: [], stats: { generator: 'ttgen.mjs', node: process.version } };
  if (req.layer.startsWith('L3')) {
    const out = endToEnd(req, pkg, framework);
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
      const out = await generateModule(spec, req, pkg, rand, t0 + share, tsPath);
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
