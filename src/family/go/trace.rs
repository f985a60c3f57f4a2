//! Go's tests traced one by one, for fault localisation and the test-fix cycle: each selected
//! test function runs alone (`go test -json -run '^Name$' -coverprofile -coverpkg=./...`) in the
//! mirror, so its outcome, its output and the lines of the module it ran are its own. The build
//! cache is shared by every run of the trace, so only the first run of a package compiles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Instant;

use regex::Regex;

use super::ctx::package_arg;
use super::events::parse_events;
use super::package::module_path;
use super::profile::parse_profile;
use crate::family::suites::{
    MutationError, Reach, SuiteMutations, SuiteTrace, TestReach, TraceJob,
};
use crate::testing::exec::Exec;
use crate::testing::report::TestStatus;
use crate::testing::toolchain::Toolchain;

/// Go as the fixer traces it.
pub struct GoTrace;

/// The longest one traced test may run (go's own `-timeout`, which fails it with its stack).
const PER_TEST: std::time::Duration = std::time::Duration::from_secs(120);

/// A test function's declaration: `func TestXxx(t *testing.T)`.
static TEST_FUNC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^func\s+(Test[A-Za-z0-9_]*)\s*\(\s*\w+\s+\*testing\.T\s*\)")
        .expect("a valid pattern")
});

/// `file.go:12` in a failure report.
static GO_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"([\w./-]+\.go):(\d+)").expect("a valid pattern"));

fn skipped_dir(path: &str) -> bool {
    path.split('/')
        .any(|d| d == "testdata" || d == "vendor" || d.starts_with('.') || d.starts_with('_'))
}

impl SuiteTrace for GoTrace {
    fn unready(&self, tools: &Toolchain) -> Option<String> {
        (!tools.runner_available).then(|| {
            format!(
                "go is not available: {}",
                tools
                    .install_hint
                    .as_deref()
                    .unwrap_or("apt-get install golang-go")
            )
        })
    }

    fn sandbox_reads(&self, tools: &Toolchain, repo: &Path) -> Vec<PathBuf> {
        crate::testing::runner::Runner::read_roots(&super::GoRunner, tools, repo)
    }

    fn trace(&self, job: &TraceJob) -> Result<SuiteMutations, MutationError> {
        let mut out = SuiteMutations::default();
        let Some(module) = module_path(job.mirror) else {
            out.problems
                .push("go.mod declares no module: go test needs a module".into());
            return Ok(out);
        };
        let index = test_functions(job.mirror);
        let selected = select(&index, &job.selection);
        let scratch = job.scratch.join("go-trace");
        std::fs::create_dir_all(&scratch).map_err(|cause| MutationError::Write {
            path: scratch.clone(),
            cause,
        })?;
        let go = match job.tools.interpreter.as_str() {
            "" => "go".to_string(),
            g => g.to_string(),
        };
        let exec = Exec {
            sandbox: job.sandbox,
            cwd: job.mirror.to_path_buf(),
            env: vec![
                (
                    "GOCACHE".into(),
                    job.scratch.join("go-cache").display().to_string(),
                ),
                ("GOWORK".into(), "off".into()),
                ("GOTOOLCHAIN".into(), "local".into()),
                ("GOFLAGS".into(), "-modcacherw".into()),
            ],
            deadline: Instant::now() + job.timeout,
        };
        let real = std::fs::canonicalize(job.mirror).unwrap_or_else(|_| job.mirror.to_path_buf());
        let prefixes = [
            format!("{}/", job.mirror.display()),
            format!("{}/", real.display()),
        ];
        for (n, (file, name)) in selected.iter().enumerate() {
            let dir = Path::new(file)
                .parent()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default();
            let profile = scratch.join(format!("{}-{n}.out", job.name));
            let _ = std::fs::remove_file(&profile);
            let argv = vec![
                go.clone(),
                "test".into(),
                "-count=1".into(),
                "-json".into(),
                // One hanging test fails alone instead of taking the whole trace's time.
                format!("-timeout={}s", PER_TEST.as_secs()),
                "-run".into(),
                format!("^{name}$"),
                format!("-coverprofile={}", profile.display()),
                "-coverpkg=./...".into(),
                package_arg(&dir),
            ];
            let run = match exec.run(&argv) {
                Ok(run) => run,
                Err(e) => {
                    // Out of time: the tests not traced are reported missing, and fail.
                    out.problems.push(format!("{file}::{name}: {e}"));
                    break;
                }
            };
            let parsed = parse_events(&run.stdout);
            let Some(test) = parsed.tests.iter().find(|t| t.name == *name) else {
                out.problems.push(format!(
                    "{file}::{name} did not run: {}",
                    crate::util::tail_lines(&format!("{}{}", parsed.transcript, run.stderr), 6)
                ));
                continue;
            };
            let outcome = match test.status {
                Some(TestStatus::Passed) => "passed",
                Some(TestStatus::Skipped) => "skipped",
                _ => "failed",
            };
            let reached = parse_profile(&profile, &module)
                .map(|report| {
                    report
                        .files
                        .into_iter()
                        .filter(|f| !f.executed_lines.is_empty())
                        .map(|f| {
                            let abs = job.mirror.join(&f.path).display().to_string();
                            (
                                abs,
                                Reach {
                                    lines: f.executed_lines,
                                    arcs: Vec::new(),
                                },
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            // The report names files as the project does: relative to the module root.
            let detail = test
                .detail()
                .or_else(|| (outcome == "failed").then(|| parsed.transcript.clone()))
                .map(|d| {
                    prefixes
                        .iter()
                        .fold(d, |d, prefix| d.replace(prefix.as_str(), ""))
                });
            out.tests.insert(
                format!("{file}::{name}"),
                TestReach {
                    outcome: outcome.into(),
                    reached,
                    detail,
                },
            );
        }
        Ok(out)
    }

    fn is_test_file(&self, path: &str) -> bool {
        path.ends_with("_test.go") && !skipped_dir(path)
    }

    fn is_code(&self, path: &str) -> bool {
        path.ends_with(".go") && !path.ends_with("_test.go") && !skipped_dir(path)
    }

    /// The session's generated Go tests are not carried into the fix suite yet: it is the
    /// module's own tests.
    fn test_files(&self, _dir: &Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Go prints a panic's stack innermost first, and `file.go:12:` before a failed check.
    fn frames(&self, detail: &str) -> Vec<String> {
        crate::family::suites::frames_innermost_first(&GO_FRAME, detail, &|f| self.is_code(f))
    }

    /// A test is affected when it ran a modified file, its own file changed, or its package
    /// holds a modified file (code it may reach unseen: an init, a var); a file no test ran and
    /// no test is in (declarations only, a new package, go.mod) affects everything.
    fn affected(
        &self,
        reach: &BTreeMap<String, BTreeSet<String>>,
        modified: &[String],
        _source: &dyn Fn(&str) -> Option<String>,
    ) -> Option<Vec<String>> {
        let dir_of = |f: &str| {
            Path::new(f)
                .parent()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let mut out: BTreeSet<String> = BTreeSet::new();
        for file in modified {
            if !file.ends_with(".go") {
                return None;
            }
            let traced = reach
                .iter()
                .any(|(id, files)| files.contains(file) || self.file_of(id) == *file);
            if !traced {
                return None;
            }
            for (id, files) in reach {
                let test_file = self.file_of(id);
                if files.contains(file) || test_file == *file || dir_of(&test_file) == dir_of(file)
                {
                    out.insert(id.clone());
                }
            }
        }
        Some(out.into_iter().collect())
    }
}

/// Every test function of the module's test files: (mirror-relative file, name), in order.
fn test_functions(mirror: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for file in crate::testing::detect::walk(mirror) {
        if !GoTrace.is_test_file(&file) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(mirror.join(&file)) else {
            continue;
        };
        for c in TEST_FUNC.captures_iter(&text) {
            out.push((file.clone(), c[1].to_string()));
        }
    }
    out
}

/// The (file, test) pairs `selection` names: `file::Name` ids, or whole files.
fn select(index: &[(String, String)], selection: &[String]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for item in selection {
        let wanted: Vec<&(String, String)> = match item.split_once("::") {
            Some((file, name)) => index
                .iter()
                .filter(|(f, n)| f == file && n == name)
                .collect(),
            None => index.iter().filter(|(f, _)| f == item).collect(),
        };
        for pair in wanted {
            if !out.contains(pair) {
                out.push(pair.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_of_files_and_ids_names_each_test_once() {
        let index = vec![
            ("calc_test.go".to_string(), "TestAdd".to_string()),
            ("calc_test.go".to_string(), "TestClamp".to_string()),
            ("stats/stats_test.go".to_string(), "TestMean".to_string()),
        ];
        let got = select(
            &index,
            &[
                "calc_test.go".into(),
                "calc_test.go::TestAdd".into(),
                "stats/stats_test.go::TestMean".into(),
            ],
        );
        assert_eq!(got.len(), 3);
        assert_eq!(got[2].1, "TestMean");
    }

    #[test]
    fn frames_are_the_module_code_innermost_last() {
        let detail = "panic: runtime error: index out of range\n\ngoroutine 7 [running]:\nexample.com/calc/stats.Mean(...)\n\tstats/stats.go:14 +0x1d\nexample.com/calc.Average(...)\n\tcalc.go:30 +0x2a\n\tcalc_test.go:9 +0x11";
        assert_eq!(
            GoTrace.frames(detail),
            vec!["calc.go:30", "stats/stats.go:14"]
        );
    }

    #[test]
    fn a_change_affects_the_tests_of_its_package_and_those_that_ran_it() {
        let reach: BTreeMap<String, BTreeSet<String>> = [
            ("calc_test.go::TestAdd", vec!["calc.go"]),
            ("stats/stats_test.go::TestMean", vec!["stats/stats.go"]),
        ]
        .into_iter()
        .map(|(id, f)| (id.to_string(), f.into_iter().map(String::from).collect()))
        .collect();
        let none = |_: &str| None;
        assert_eq!(
            GoTrace
                .affected(&reach, &["stats/stats.go".into()], &none)
                .unwrap(),
            vec!["stats/stats_test.go::TestMean"]
        );
        assert!(GoTrace
            .affected(&reach, &["go.mod".into()], &none)
            .is_none());
        assert!(GoTrace
            .affected(&reach, &["other/new.go".into()], &none)
            .is_none());
    }
}
