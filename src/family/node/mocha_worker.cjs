// team-testing's resident mocha: loads the project's mocha and its configuration once, then
// runs the test files each request names (one JSON line on stdin:
// {"seq": n, "files": [...], "junit": "..."}) with the xunit reporter, as `mocha <files>` would.
// Before each run every module outside node_modules is forgotten and the project's `require`s
// run again, so a source file changed on disk (a mutant) loads afresh everywhere; the working
// folder and the environment are put back as they were. The answer is one line on stdout: the
// marker ($TT_MOCHA_MARKER), then JSON with the request's `seq`.
// It says `unready` where one mocha per run is the only faithful way (parallel mode, global
// fixtures, node flags in the configuration, mocha 8.0's array of root hooks), and `dirty` when
// a run left a timer, socket or child behind: a mocha of its own would have waited on it.
'use strict';

const path = require('path');
const readline = require('readline');

const marker = process.env.TT_MOCHA_MARKER || '@@team-testing-mocha@@';
const cwd = process.cwd();
const env = { ...process.env };

function answer(body) {
  process.stdout.write('\n' + marker + ' ' + JSON.stringify(body) + '\n');
}

function prepare() {
  const dir = path.dirname(require.resolve('mocha/package.json', { paths: [cwd] }));
  const Mocha = require(dir);
  const { loadOptions } = require(path.join(dir, 'lib/cli/options'));
  const helpers = require(path.join(dir, 'lib/cli/run-helpers'));
  const options = loadOptions([]);
  if (options.parallel) throw new Error('the project runs mocha in parallel mode');
  let isNodeFlag = () => false;
  try {
    ({ isNodeFlag } = require(path.join(dir, 'lib/cli/node-flags')));
  } catch (_) {
    // An old mocha without the list: only node-option is checked.
  }
  const flagged = Object.keys(options).find((k) => k === 'node-option' || isNodeFlag(k));
  if (flagged) throw new Error(`the configuration passes node the flag ${flagged}`);
  const files = [].concat(options.file || []).map((f) => path.resolve(cwd, f));
  return { Mocha, options, files, handleRequires: helpers.handleRequires };
}

/// How many of each kind of handle node holds open (timers, sockets, children). File system
/// requests finish on their own (the reporter's file closing): they keep no mocha waiting.
function resources() {
  const counts = {};
  const info = process.getActiveResourcesInfo ? process.getActiveResourcesInfo() : [];
  for (const kind of info.filter((k) => !k.startsWith('FSReq'))) counts[kind] = (counts[kind] || 0) + 1;
  return counts;
}

function leftBehind(before, after) {
  return Object.keys(after).some((kind) => after[kind] > (before[kind] || 0));
}

function putBack() {
  process.chdir(cwd);
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  Object.assign(process.env, env);
  for (const key of Object.keys(require.cache)) {
    if (!key.includes(`${path.sep}node_modules${path.sep}`)) delete require.cache[key];
  }
}

async function runOnce(setup, request) {
  putBack();
  const plugins = (await setup.handleRequires(setup.options.require || [])) || {};
  if (Array.isArray(plugins)) return { unready: 'this mocha returns its root hooks as a list' };
  if (plugins.globalSetup || plugins.globalTeardown) {
    return { unready: 'the project has global fixtures, which run once per mocha run' };
  }
  const reporterOption = { output: request.junit };
  const mocha = new setup.Mocha({
    ...setup.options,
    ...plugins,
    reporter: 'xunit',
    reporterOption,
    reporterOptions: reporterOption,
  });
  for (const file of setup.files.concat(request.files.map((f) => path.resolve(cwd, f)))) {
    mocha.addFile(file);
  }
  return new Promise((resolve) => {
    const finish = (failures) => {
      // A runner left listening on the process would rethrow the next run's async errors.
      try {
        if (typeof mocha.dispose === 'function') mocha.dispose();
      } catch (_) {
        // Disposing is tidying up; the run's answer stands.
      }
      resolve({ failures });
    };
    try {
      mocha.run(finish);
    } catch (error) {
      // A test file that throws while it loads: mocha's CLI prints it and exits 1.
      console.error(error && error.stack ? error.stack : String(error));
      resolve({ failures: 1, load_error: String(error && error.message) });
    }
  });
}

async function main() {
  let setup;
  try {
    setup = prepare();
  } catch (error) {
    setup = { error: String(error && error.message ? error.message : error) };
  }
  const lines = readline.createInterface({ input: process.stdin, terminal: false });
  let baseline = null;
  for await (const line of lines) {
    if (!line.trim()) continue;
    const request = JSON.parse(line);
    if (setup.error) {
      answer({ seq: request.seq, unready: setup.error });
      continue;
    }
    if (baseline === null) baseline = resources();
    let body;
    try {
      body = await runOnce(setup, request);
    } catch (error) {
      body = { unready: String(error && error.message ? error.message : error) };
    }
    // Timers run out within the run's own ticks; what is still open now a mocha of its own
    // would wait on (it runs without --exit unless configured so).
    await new Promise((resolve) => setImmediate(resolve));
    if (!setup.options.exit && leftBehind(baseline, resources())) body.dirty = true;
    answer({ seq: request.seq, ...body });
  }
  process.exit(0);
}

main();
