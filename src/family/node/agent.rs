//! How an agent writes tests for a JavaScript or TypeScript package: the framework's imports, the
//! module system of the package, and where the runner places the file (`tt-tests/<layer>/`, two
//! folders below the package root).

use std::path::Path;

use crate::family::agent::{Conventions, UnsafeCall};
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

/// Every run is under the sandbox and the file-system watch, which see what node and its
/// children do; no static check stands in front of them.
pub(super) fn unsafe_calls(_source: &str) -> Vec<UnsafeCall> {
    Vec::new()
}
