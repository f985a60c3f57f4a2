//! JavaScript packages: node's built-in runner (`node --test`), or jest, vitest or
//! mocha when the project has them in node_modules. The target repository is never written to:
//! the package is copied into the session and the generated tests run inside that copy.
//!
//! Layout convention (the generator follows it): a layer's generated files are copied to
//! `<package copy>/tt-tests/<layer>/`, two folders below the package root, so a generated test
//! imports the code under test relative to the package root: `import { f } from '../../strings.js'`
//! (or `require('../../strings.js')` in a CommonJS package). The copy keeps the package's
//! package.json, so `"type": "module"` and node_modules resolve as they do in the repository.
//!
//! A run: copy the package (node_modules symlinked, not copied), copy the layer's files, an L0
//! gate (`node --check` per file; a file that does not parse is a load error and stays out),
//! then one test run writing JUnit (and LCOV when coverage is measured) under `results/`.

mod agent;
mod apply_dir;
mod attribute;
pub mod code_check;
pub mod config;
mod ctx;
pub mod edit;
mod gate;
pub mod gen;
mod mutants;
mod mutation;
mod plan;
mod rerun;
mod run;
#[cfg(test)]
mod tests;
mod toolchain;
mod trace;
mod warm;
mod workspace;

use std::path::{Path, PathBuf};

use crate::testing::framework::Framework;
use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::{ApplyFile, RunOutput, RunSpec, Runner, SuiteSpec, BASELINE};

/// Extensions of generated test files.
const TEST_EXTS: [&str; 4] = ["js", "mjs", "cjs", "ts"];
/// Folder of the package copy (and, after `apply`, of the repository) that holds the generated
/// tests, one subfolder per layer.
pub const TESTS_DIR: &str = "tt-tests";
/// The coverage tool value that means node's own coverage (see toolchain.rs).
const NODE_COVERAGE: &str = "node --experimental-test-coverage";
/// Lines of a `node --check` error kept in a LoadError.
const LOAD_ERROR_LINES: usize = 8;
/// Bytes of a failed file's stderr kept as evidence of why it did not load.
const STDERR_LIMIT: usize = 4096;

/// JavaScript/TypeScript as the roles see it.
pub struct Node;

impl crate::family::Language for Node {
    fn name(&self) -> &'static str {
        "JavaScript/TypeScript"
    }

    fn support(&self, capability: crate::family::Capability) -> crate::family::Support {
        // The whole pipeline.
        let _ = capability;
        crate::family::Support::Built
    }

    fn toolchain(
        &self,
        repo: &std::path::Path,
        framework: crate::testing::framework::Framework,
    ) -> crate::testing::toolchain::Toolchain {
        toolchain::toolchain(repo, framework)
    }

    fn runner(
        &self,
        framework: crate::testing::framework::Framework,
    ) -> Box<dyn crate::testing::runner::Runner> {
        Box::new(NodeRunner::new(framework))
    }

    fn generator(&self) -> Option<&'static dyn crate::family::generator::Generator> {
        Some(&gen::NodeGenerator)
    }

    fn suite_trace(&self) -> Option<&'static dyn crate::family::suites::SuiteTrace> {
        Some(&trace::NodeTrace)
    }

    fn suite_analysis(&self) -> Option<&'static dyn crate::family::suites::SuiteAnalysis> {
        Some(&mutation::NodeSuites)
    }

    fn conventions(
        &self,
        framework: crate::testing::framework::Framework,
        repo: &std::path::Path,
    ) -> crate::family::agent::Conventions {
        agent::conventions(framework, repo)
    }

    fn unsafe_calls(&self, source: &str) -> Vec<crate::family::agent::UnsafeCall> {
        agent::unsafe_calls(source)
    }

    fn check_code(
        &self,
        input: &crate::testing::code_check::CheckInput,
        changed: &[String],
        out: &mut crate::testing::code_check::CodeCheck,
    ) -> Result<(), crate::testing::code_check::CodeCheckError> {
        code_check::check(input, changed, out);
        Ok(())
    }
}

/// Runs node's own test runner, jest, vitest or mocha: which one is the framework's.
pub struct NodeRunner {
    framework: Framework,
}

impl NodeRunner {
    pub fn new(framework: Framework) -> Self {
        NodeRunner { framework }
    }
}

impl Runner for NodeRunner {
    /// A node_modules that is a link (a workspace's or a shared install) is read where it is.
    fn read_roots(
        &self,
        _tools: &crate::testing::toolchain::Toolchain,
        repo: &Path,
    ) -> Vec<PathBuf> {
        let modules = repo.join("node_modules");
        match modules.canonicalize() {
            Ok(real) if modules.symlink_metadata().is_ok_and(|m| m.is_symlink()) => vec![real],
            _ => Vec::new(),
        }
    }

    fn has_tests(&self, test_dir: &Path) -> bool {
        !workspace::generated_files(test_dir).is_empty()
    }

    fn copy_dirs(&self, workspace: &Path, layer: &str) -> Vec<PathBuf> {
        vec![workspace.join(format!("node-{layer}"))]
    }

    fn workspace_dirs(&self, workspace: &Path, layer: &str) -> Vec<PathBuf> {
        vec![
            workspace.join(format!("node-{layer}")),
            workspace.join(format!("node-{layer}.tmp")),
        ]
    }

    fn run(&self, spec: &RunSpec) -> RunOutput {
        run::run(spec, self.framework)
    }

    fn rerun(&self, spec: &RunSpec, case: &TestCase) -> Option<TestStatus> {
        rerun::rerun(spec, self.framework, &case.id)
    }

    fn suite_dirs(&self, workspace: &Path) -> Vec<PathBuf> {
        self.workspace_dirs(workspace, BASELINE)
    }

    fn own_suite(&self, spec: &SuiteSpec) -> Option<RunOutput> {
        let none = spec.session.join("workspace").join("node-baseline-none");
        Some(run::baseline(
            &spec.as_run(none),
            self.framework,
            spec.tests,
        ))
    }

    fn remove_tests(
        &self,
        source: &str,
        names: &std::collections::BTreeSet<String>,
    ) -> (String, Vec<String>) {
        edit::remove_tests(source, names)
    }

    fn count_tests(&self, source: &str) -> usize {
        edit::test_count(source)
    }

    /// Where the framework finds them: `test/team_testing/` for node:test and mocha,
    /// `__tests__/team_testing/` for jest and vitest unless the project's jest or vitest config
    /// says otherwise (see apply_dir.rs), two folders below the package root as in the package
    /// copy, so their relative imports hold. Layers share the folder: the file name
    /// carries the layer (`strings.l1.test.js`). TypeScript tests go only to a jest project
    /// (the generator writes them only where the project's ts-jest compiles them); other
    /// TypeScript stays in the session: the project's own toolchain may not compile it.
    fn apply_path(&self, repo: &Path, layer: &str, file: &Path) -> Option<PathBuf> {
        let name = file.file_name()?.to_string_lossy();
        let typescript: &[&str] = if self.framework == Framework::Jest {
            &[".test.ts"]
        } else {
            &[]
        };
        let (stem, ext) = typescript
            .iter()
            .chain(&[".test.js", ".test.mjs", ".test.cjs", ".js", ".mjs", ".cjs"])
            .find_map(|x| name.strip_suffix(x).map(|s| (s, *x)))?;
        let ext = ext.strip_prefix(".test").unwrap_or(ext);
        let short = layer
            .split('-')
            .next()
            .unwrap_or(layer)
            .to_ascii_lowercase();
        let placed = apply_dir::tests_dir(repo, self.framework);
        Some(Path::new(&placed.dir).join(format!("{stem}.{short}.{}{ext}", placed.word)))
    }

    fn apply_manifest_dir(&self, repo: &Path) -> PathBuf {
        PathBuf::from(apply_dir::tests_dir(repo, self.framework).dir)
    }

    /// Tests that found code defects become the framework's expected failures, so the
    /// project's own run passes while the defects stay visible; the imports of the package are
    /// rewritten for the depth of the folder the file goes to.
    fn apply_content(&self, text: &str, file: &ApplyFile) -> String {
        // The form the project's jest supports (the session's repository has the same one).
        let form = edit::expected_failure_form(self.framework, file.node_modules);
        let marked = edit::mark_expected_failures(text, file.defects, form);
        let depth = file.dest.parent().map_or(0, |p| p.components().count());
        apply_dir::for_depth(&marked, depth)
    }

    /// Says so when the project's own runner will not find the applied tests, and what to add.
    fn apply_support(&self, repo: &Path) -> crate::error::Result<Option<String>> {
        Ok(apply_dir::tests_dir(repo, self.framework).unreached)
    }
}

/// The env problem when the node binary (`program`) cannot be started.
fn missing_node(program: &str) -> String {
    format!("{program} not found: install Node.js (apt-get install nodejs)")
}
