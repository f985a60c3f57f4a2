// A jest reporter that writes JUnit XML in the shape team-testing reads from jest-junit as it
// configures it: a file attribute, classname = the describe blocks joined by " > ", name = the
// test's title, and a "Test suite failed to run" case for a file that does not load. With it, a
// jest project needs no jest-junit of its own (most real ones have none). CommonJS, so every
// jest from 27 on loads it. The output path is the TT_JEST_JUNIT environment variable.
'use strict';
const fs = require('fs');
const path = require('path');

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
// Terminal colours and the control characters XML 1.0 cannot hold.
const UNPRINTABLE = /\x1b\[[0-9;]*[A-Za-z]|[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g;

function text(value) {
  return String(value).replace(UNPRINTABLE, '').replace(/[&<>"]/g, (c) => ESCAPES[c]);
}

function firstLine(message) {
  return String(message).replace(UNPRINTABLE, '').split('\n').find((l) => l.trim()) || '';
}

function testcase(classname, name, file, seconds, inner) {
  const head = `<testcase classname="${text(classname)}" name="${text(name)}" time="${seconds}" file="${text(file)}"`;
  return inner ? `${head}>${inner}</testcase>` : `${head}/>`;
}

class TeamTestingJunit {
  constructor(globalConfig) {
    this.rootDir = (globalConfig && globalConfig.rootDir) || process.cwd();
  }

  onRunComplete(_contexts, results) {
    const out = process.env.TT_JEST_JUNIT;
    if (!out) return;
    const suites = [];
    for (const file of results.testResults) {
      const cases = [];
      let failures = 0;
      let skipped = 0;
      const loadError = file.testExecError || (file.failureMessage && file.testResults.length === 0);
      if (loadError) {
        const message = file.failureMessage || (file.testExecError && file.testExecError.message) || 'failed to run';
        const rel = path.relative(this.rootDir, file.testFilePath);
        cases.push(testcase('Test suite failed to run', rel, file.testFilePath, 0,
          `<error message="${text(firstLine(message))}">${text(message)}</error>`));
        failures += 1;
      }
      for (const t of file.testResults) {
        const seconds = ((t.duration || 0) / 1000).toFixed(3);
        const classname = t.ancestorTitles.join(' > ');
        let inner = '';
        if (t.status === 'failed') {
          const message = t.failureMessages.join('\n');
          inner = `<failure message="${text(firstLine(message))}">${text(message)}</failure>`;
          failures += 1;
        } else if (t.status !== 'passed') {
          inner = '<skipped/>';
          skipped += 1;
        }
        cases.push(testcase(classname, t.title, file.testFilePath, seconds, inner));
      }
      const name = path.relative(this.rootDir, file.testFilePath);
      suites.push(`<testsuite name="${text(name)}" tests="${cases.length}" failures="${failures}" skipped="${skipped}">${cases.join('')}</testsuite>`);
    }
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>${suites.join('')}</testsuites>\n`);
  }
}

module.exports = TeamTestingJunit;
