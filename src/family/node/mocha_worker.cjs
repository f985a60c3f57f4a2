// team-testing's resident mocha: loads the project's mocha, its configuration and its
// `require`s once, then runs the test files each request names (one JSON line on stdin:
// {"files": [...], "junit": "..."}) with the xunit reporter, as `mocha <files>` would. Before
// each run every module outside node_modules is forgotten, so a source file changed on disk
// (a mutant) loads afresh. The answer is one line on stdout: the marker (argv[2]) and JSON.
// CommonJS only: an ES module cannot be unloaded, so such projects run mocha once per request.
'use strict';

const path = require('path');
const readline = require('readline');

const marker = process.argv[2];
const cwd = process.cwd();

function answer(body) {
  process.stdout.write('\n' + marker + ' ' + JSON.stringify(body) + '\n');
}

async function prepare() {
  const dir = path.dirname(require.resolve('mocha/package.json', { paths: [cwd] }));
  const Mocha = require(dir);
  const { loadOptions } = require(path.join(dir, 'lib/cli/options'));
  const { handleRequires } = require(path.join(dir, 'lib/cli/run-helpers'));
  const options = loadOptions([]);
  if (options.parallel) throw new Error('the project runs mocha in parallel mode');
  const plugins = (await handleRequires(options.require || [])) || {};
  if (plugins.globalSetup || plugins.globalTeardown) {
    throw new Error('the project has global fixtures, which run once per mocha run');
  }
  Object.assign(options, plugins);
  return { Mocha, options };
}

function forgetOwnModules() {
  for (const key of Object.keys(require.cache)) {
    if (!key.includes(`${path.sep}node_modules${path.sep}`)) delete require.cache[key];
  }
}

function runOnce({ Mocha, options }, request) {
  return new Promise((resolve) => {
    forgetOwnModules();
    const reporterOption = { output: request.junit };
    const mocha = new Mocha({
      ...options,
      reporter: 'xunit',
      reporterOption,
      reporterOptions: reporterOption,
    });
    for (const file of request.files) mocha.addFile(path.resolve(cwd, file));
    try {
      mocha.run((failures) => resolve({ failures }));
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
    setup = await prepare();
  } catch (error) {
    setup = { error: String(error && error.message ? error.message : error) };
  }
  const lines = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of lines) {
    if (!line.trim()) continue;
    if (setup.error) {
      answer({ unready: setup.error });
      continue;
    }
    answer(await runOnce(setup, JSON.parse(line)));
  }
  process.exit(0);
}

main();
