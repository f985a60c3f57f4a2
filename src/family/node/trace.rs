//! JavaScript/TypeScript tests traced for fault localisation and the test-fix cycle: each test
//! file runs alone with the project's framework and coverage (the runner's own-suite run, in a
//! copy under the trace's scratch folder); node's runners measure coverage per process, so the
//! tests of a file share its reach, except in a file with a failing test, whose tests each run
//! alone through the framework's name filter, so that a failure's reach is its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Instant;

use regex::Regex;

use super::NodeRunner;
use crate::family::suites::{
    MutationError, Reach, SuiteMutations, SuiteTrace, TestReach, TraceJob,
};
use crate::testing::framework::Framework;
use crate::testing::report::TestCase;
use crate::testing::report::TestStatus;
use crate::testing::runner::RunOutput;
use crate::testing::runner::{Runner, SuiteSpec};
use crate::testing::toolchain::Toolchain;

/// JavaScript/TypeScript as the fixer traces it.
pub struct NodeTrace;

/// `src/x.js:12:5` in a stack trace (paths already relative to the package).
static JS_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([\w@./-]+\.(?:js|mjs|cjs|ts|mts|cts|jsx|tsx)):(\d+):\d+")
        .expect("a valid pattern")
});

const CODE_EXTS: [&str; 8] = ["js", "mjs", "cjs", "ts", "mts", "cts", "jsx", "tsx"];
/// Folders that are never the package's own code or tests.
const NOT_OURS: [&str; 6] = [
    "node_modules",
    "dist",
    "build",
    "coverage",
    "out",
    ".team-testing-fix",
];

fn ext_of(path: &str) -> &str {
    path.rsplit_once('.').map_or("", |(_, e)| e)
}

fn outside_package(path: &str) -> bool {
    path.split('/')
        .any(|d| NOT_OURS.contains(&d) || (d.starts_with('.') && d.len() > 1))
}

impl SuiteTrace for NodeTrace {
    fn unready(&self, tools: &Toolchain) -> Option<String> {
        if tools.coverage_tool.is_none() {
            return Some(format!("no coverage tool: {}", tools.coverage_reason));
        }
        let framework = Framework::parse(&tools.framework);
        (framework != Some(Framework::NodeTest) && !tools.runner_available).then(|| {
            format!(
                "{} is not installed: {}",
                tools.framework,
                tools.install_hint.as_deref().unwrap_or("npm install")
            )
        })
    }

    fn sandbox_reads(&self, tools: &Toolchain, repo: &Path) -> Vec<PathBuf> {
        let runner =
            NodeRunner::new(Framework::parse(&tools.framework).unwrap_or(Framework::NodeTest));
        runner.read_roots(tools, repo)
    }

    fn trace(&self, job: &TraceJob) -> Result<SuiteMutations, MutationError> {
        let mut out = SuiteMutations::default();
        let framework = Framework::parse(&job.tools.framework).unwrap_or(Framework::NodeTest);
        // The mirror has no node_modules (never copied): the repository's, or those fetched
        // into the session, linked, as the runner links them into its own copies.
        let linked = job.mirror.join("node_modules");
        let installed = crate::testing::deps::node_modules(job.repo, job.session);
        if let Some(installed) = installed.filter(|_| std::fs::symlink_metadata(&linked).is_err()) {
            std::os::unix::fs::symlink(&installed, &linked).map_err(|cause| {
                MutationError::Write {
                    path: linked.clone(),
                    cause,
                }
            })?;
        }
        let deadline = Instant::now() + job.timeout;
        let mut singles = 0;
        let files: Vec<String> = job
            .selection
            .iter()
            .map(|s| self.file_of(s))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mirror = job.mirror.display().to_string();
        // The package's own tests are not code a fix goes into, whatever their names.
        let own_tests: BTreeSet<String> =
            crate::testing::project_files::of_repo(job.mirror, Some(framework))
                .tests
                .into_iter()
                .collect();
        for (n, file) in files.iter().enumerate() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                out.problems.push(format!(
                    "out of time before {file} and {} more",
                    files.len() - n - 1
                ));
                break;
            }
            if !job.mirror.join(file).is_file() {
                // Deleted by a change: its tests are reported missing, and fail.
                out.problems.push(format!("{file} is gone"));
                continue;
            }
            let spec = SuiteSpec {
                repo: job.mirror,
                session: job.scratch,
                tests: std::slice::from_ref(file),
                tools: job.tools,
                results: job.scratch.join(format!("node-trace-{}-{n}", job.name)),
                timeout: left,
                sandbox: job.sandbox,
            };
            let _ = std::fs::create_dir_all(&spec.results);
            let run = one_file(&spec, framework, None);
            if let Some(problem) = &run.env_problem {
                out.problems.push(format!("{file}: {problem}"));
                continue;
            }
            // A file with a failing test among others: each of its tests alone, so a failing
            // test's reach is its own and not its passing neighbours' (which would hide the
            // fault behind theirs), within a bound on the runs.
            let failing = run.cases.iter().any(|c| failed(c.status));
            let mut alone: BTreeMap<String, Vec<(String, Reach)>> = BTreeMap::new();
            if failing && run.cases.len() > 1 && singles + run.cases.len() <= MAX_SINGLE_RUNS {
                singles += run.cases.len();
                for case in &run.cases {
                    let title = title_of(file, case);
                    let one = SuiteSpec {
                        repo: spec.repo,
                        session: spec.session,
                        tests: spec.tests,
                        tools: spec.tools,
                        results: spec.results.clone(),
                        timeout: deadline.saturating_duration_since(Instant::now()),
                        sandbox: spec.sandbox,
                    };
                    let single = one_file(&one, framework, Some(&title));
                    if single.env_problem.is_none() {
                        alone.insert(title, self.reach_of(&single, job.mirror, &own_tests));
                    }
                }
            }
            let reached = self.reach_of(&run, job.mirror, &own_tests);
            for case in &run.cases {
                let name = title_of(file, case);
                let reach = alone.get(&name).unwrap_or(&reached);
                let mut id = format!("{file}::{name}");
                let mut k = 2;
                while out.tests.contains_key(&id) {
                    id = format!("{file}::{name} #{k}");
                    k += 1;
                }
                let outcome = if failed(case.status) {
                    "failed"
                } else if case.status == TestStatus::Skipped {
                    "skipped"
                } else {
                    "passed"
                };
                let detail = case
                    .detail
                    .clone()
                    .or_else(|| case.message.clone())
                    .map(|d| relative(&d, &mirror));
                out.tests.insert(
                    id,
                    TestReach {
                        outcome: outcome.into(),
                        reached: reach.iter().cloned().collect(),
                        detail,
                    },
                );
            }
        }
        Ok(out)
    }

    fn is_test_file(&self, path: &str) -> bool {
        CODE_EXTS.contains(&ext_of(path))
            && !outside_package(path)
            && (crate::testing::detect::test_pattern(path).is_some()
                || path.split('/').any(|d| d == "__tests__"))
    }

    fn is_code(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        CODE_EXTS.contains(&ext_of(path))
            && !path.ends_with(".d.ts")
            && !outside_package(path)
            && !name.contains(".config.")
            && !name.starts_with('.')
            && !self.is_test_file(path)
            && !path.starts_with(&format!("{}/", super::TESTS_DIR))
    }

    /// The session's generated JavaScript tests are not carried into the fix suite yet: it is
    /// the package's own tests.
    fn test_files(&self, _dir: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// A JavaScript stack lists the innermost frame first.
    fn frames(&self, detail: &str) -> Vec<String> {
        crate::family::suites::frames_innermost_first(&JS_FRAME, detail, &|f| self.is_code(f))
    }
}

/// Most tests run one by one in one trace (the rest keep their file's reach).
const MAX_SINGLE_RUNS: usize = 200;

fn failed(status: TestStatus) -> bool {
    matches!(status, TestStatus::Failed | TestStatus::Error)
}

/// The package's own-suite run of `spec`'s files, of the tests whose title ends with `title`
/// when one is given.
fn one_file(spec: &SuiteSpec, framework: Framework, title: Option<&str>) -> RunOutput {
    let none = spec.session.join("workspace").join("node-baseline-none");
    super::run::baseline_named(&spec.as_run(none), framework, spec.tests, title)
}

/// A test's title as the framework's name filter reads it: `suite > test` (node's attribution
/// gives it after the file; JUnit's classname holds the suites).
pub(super) fn title_of(file: &str, case: &TestCase) -> String {
    if let Some(rest) = case.id.strip_prefix(&format!("{file}::")) {
        return rest.to_string();
    }
    match case.classname.as_deref().filter(|c| !c.is_empty()) {
        Some(suites) => format!("{suites} > {}", case.name),
        None => case.name.clone(),
    }
}

impl NodeTrace {
    /// The lines of the package's code `run` reached, by absolute path in the mirror; the
    /// package's own tests left out.
    pub(super) fn reach_of(
        &self,
        run: &RunOutput,
        mirror: &Path,
        own_tests: &BTreeSet<String>,
    ) -> Vec<(String, Reach)> {
        run.coverage
            .iter()
            .flat_map(|c| c.files.iter())
            .filter(|f| {
                !f.executed_lines.is_empty()
                    && self.is_code(&f.path)
                    && !own_tests.contains(&f.path)
            })
            .map(|f| {
                let path = mirror.join(&f.path);
                let lines = code_lines(&path, &f.executed_lines);
                (
                    path.display().to_string(),
                    Reach {
                        lines,
                        arcs: Vec::new(),
                    },
                )
            })
            .collect()
    }
}

/// Those of `lines` of the file at `path` that hold code: node's line coverage counts every line
/// of a range that ran, blank lines and comments too, and a comment is no place for a fix.
fn code_lines(path: &Path, lines: &[u32]) -> Vec<u32> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return lines.to_vec();
    };
    let source: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .copied()
        .filter(|&n| {
            let line = (n as usize)
                .checked_sub(1)
                .and_then(|i| source.get(i))
                .map_or("", |l| l.trim());
            !(line.is_empty()
                || line.starts_with("//")
                || line.starts_with("/*")
                || line.starts_with('*'))
        })
        .collect()
}

/// `text` with the mirror's absolute paths (and `file://` URLs of them) relative to it.
fn relative(text: &str, mirror: &str) -> String {
    text.replace(&format!("file://{mirror}/"), "")
        .replace(&format!("{mirror}/"), "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_the_package_code_innermost_last() {
        let detail = relative(
            "AssertionError: 1 !== 2\n    at discount (file:///w/m/src/pricing.js:8:10)\n    at total (file:///w/m/src/cart.js:20:3)\n    at TestContext.<anonymous> (file:///w/m/test/cart.test.js:9:5)\n    at node:internal/test_runner/test:1:1",
            "/w/m",
        );
        assert_eq!(
            NodeTrace.frames(&detail),
            vec!["src/cart.js:20", "src/pricing.js:8"]
        );
    }

    #[test]
    fn code_and_tests_are_told_apart() {
        assert!(NodeTrace.is_code("src/cart.js"));
        assert!(!NodeTrace.is_code("test/cart.test.js"));
        assert!(!NodeTrace.is_code("node_modules/x/index.js"));
        assert!(!NodeTrace.is_code("vitest.config.js"));
        assert!(NodeTrace.is_test_file("test/cart.test.js"));
        assert!(!NodeTrace.is_test_file("src/cart.js"));
    }
}
