//! How an agent writes tests for a JavaScript or TypeScript package: the framework's imports, the
//! module system of the package, and where the runner places the file (`tt-tests/<layer>/`, two
//! folders below the package root).

use std::path::Path;

use crate::family::agent::{
    check_calls, code_only, Conventions, Rule, UnsafeCall, NATIVE, NETWORK, PROCESS,
};
use crate::testing::framework::Framework;

pub(super) fn conventions(framework: Framework, repo: &Path) -> Conventions {
    let esm = std::fs::read_to_string(repo.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v.get("type").and_then(|t| t.as_str()) == Some("module"));
    // TypeScript test files where the runner compiles them itself (jest through the project's
    // transform, vitest natively); node:test and mocha get JavaScript.
    let typescript = repo.join("tsconfig.json").is_file()
        && matches!(framework, Framework::Jest | Framework::Vitest);
    let esm = esm || typescript;
    let language = if typescript {
        "TypeScript"
    } else {
        "JavaScript"
    };
    let import = |what: &str, from: &str| {
        if esm {
            format!("`import {what} from '{from}';`")
        } else {
            format!("`const {what} = require('{from}');`")
        }
    };
    let framework_idiom = match framework {
        Framework::Jest => {
            "jest's globals `describe`, `test` and `expect` (no import needed)".to_string()
        }
        Framework::Vitest => format!("vitest: {}", import("{ describe, it, expect }", "vitest")),
        Framework::Mocha => format!(
            "mocha's globals `describe` and `it`, with {}",
            import("assert", "node:assert/strict")
        ),
        _ => format!(
            "node's own runner: {} and {}",
            import("{ test }", "node:test"),
            import("assert", "node:assert/strict")
        ),
    };
    let ext = if typescript { "ts" } else { "js" };
    Conventions {
        language,
        framework: match framework {
            Framework::NodeTest => "node:test".to_string(),
            other => other.as_str().to_string(),
        },
        fence: if typescript { "typescript" } else { "javascript" },
        comment: "//",
        file_name: format!("<name>.test.{ext}"),
        idioms: vec![
            format!("Use {framework_idiom}; every test asserts something."),
            format!(
                "The file runs from `tt-tests/<layer>/`, two folders below the package root: import the code by relative path from there (`../../src/x.js`), as {} modules, never by the package's own name.",
                if esm { "ES" } else { "CommonJS" }
            ),
            "Write files only under a folder made with `fs.mkdtempSync(path.join(os.tmpdir(), 'tt-'))`; no network, no child processes, no timers left running.".into(),
        ],
        is_test_file,
    }
}

/// `<name>.test.{js,mjs,cjs,ts}` or `<name>.spec.…`.
fn is_test_file(name: &str) -> bool {
    [".test.", ".spec."].iter().any(|marker| {
        name.rsplit_once(marker)
            .is_some_and(|(stem, ext)| !stem.is_empty() && super::TEST_EXTS.contains(&ext))
    })
}

/// What a JavaScript test may not do at all. The file-system watch sees every write, whoever
/// makes it, but not the network (off in the sandbox, so a call that fails quietly passes) nor
/// another process: those, and code built at run time that no reading can judge, are refused
/// before the file runs.
const RULES: &[Rule] = &[
    Rule {
        pattern: r#"["'`](node:)?child_process["'`]"#,
        call: "child_process",
        reaches: PROCESS,
    },
    Rule {
        pattern: r"\bprocess\s*\.\s*(kill|exit|abort|dlopen|binding|_linkedBinding)\b",
        call: "process.kill/exit/dlopen",
        reaches: PROCESS,
    },
    Rule {
        pattern: r#"["'`](node:)?(net|http|https|http2|tls|dgram|dns|inspector|cluster|worker_threads|vm)["'`]"#,
        call: "a network, process or vm module",
        reaches: NETWORK,
    },
    Rule {
        pattern: r"\b(fetch|WebSocket|XMLHttpRequest|EventSource)\b",
        call: "fetch",
        reaches: NETWORK,
    },
    Rule {
        pattern: r"\beval\s*\(|\bFunction\s*\(",
        call: "eval",
        reaches: NATIVE,
    },
    Rule {
        pattern: r#"\b(require|import)\s*\(\s*[^"'`\s)]"#,
        call: "a module loaded by a computed name",
        reaches: NATIVE,
    },
    Rule {
        pattern: r#"\.node["'`]"#,
        call: "a native addon",
        reaches: NATIVE,
    },
];

pub(super) fn unsafe_calls(source: &str) -> Vec<UnsafeCall> {
    check_calls(&code_only(source, &['"', '\'', '`']), RULES, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_the_network_and_computed_code_are_refused_and_plain_tests_are_not() {
        for bad in [
            "const { execSync } = require('child_process');",
            "import http from 'node:http';",
            "test('x', async () => { try { await fetch('http://x'); } catch {} });",
            "eval(code);",
            "const m = require(name);",
            "process.kill(1);",
        ] {
            assert!(!unsafe_calls(bad).is_empty(), "{bad}");
        }
        let fine = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport fs from 'node:fs';\nimport { slugify } from '../../strings.js'; // fetch nothing\ntest('s', () => assert.equal(slugify('A b'), 'a-b'));";
        assert!(unsafe_calls(fine).is_empty(), "{:?}", unsafe_calls(fine));
    }
}
