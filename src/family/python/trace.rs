//! Python's tests traced one by one: `ttmut.py` runs the selection once under coverage.py with a
//! context per test (no mutants), and reads pytest's tracebacks and imports for the fixer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::mutation::PythonSuites;
use crate::family::suites::{
    MutationError, SuiteAnalysis, SuiteJob, SuiteMutations, SuiteTrace, TraceJob,
};
use crate::testing::toolchain::Toolchain;

/// Where the fixer's carried tests sit in a mirror: never the project's code.
const CARRIED_DIR: &str = ".team-testing-fix";

impl SuiteTrace for PythonSuites {
    fn unready(&self, tools: &Toolchain) -> Option<String> {
        SuiteAnalysis::unready(self, tools)
    }

    fn sandbox_reads(&self, tools: &Toolchain, repo: &Path) -> Vec<PathBuf> {
        SuiteAnalysis::sandbox_reads(self, tools, repo)
    }

    fn trace(&self, job: &TraceJob) -> Result<SuiteMutations, MutationError> {
        let modules: Vec<PathBuf> = crate::testing::detect::walk(job.mirror)
            .into_iter()
            .filter(|p| SuiteAnalysis::is_code(self, p) && !p.starts_with(CARRIED_DIR))
            .map(|p| job.mirror.join(p))
            .collect();
        self.analyse(&SuiteJob {
            name: job.name.clone(),
            tools: job.tools,
            scratch: job.scratch,
            mirror: job.mirror,
            repo: job.repo,
            session: job.session,
            cwd: job.mirror.to_path_buf(),
            own_config: true,
            files: job.selection.clone(),
            modules: &modules,
            seed: 1,
            budget: Duration::ZERO,
            per_mutant: Duration::from_secs(1),
            max_mutants: 0,
            workers: 1,
            sandbox: job.sandbox,
            trace_timeout: Some(job.timeout),
        })
    }

    fn is_test_file(&self, path: &str) -> bool {
        SuiteAnalysis::is_test_file(self, path)
    }

    fn is_code(&self, path: &str) -> bool {
        SuiteAnalysis::is_code(self, path)
    }

    fn test_files(&self, dir: &Path) -> Vec<PathBuf> {
        super::test_files(dir)
    }

    fn frames(&self, detail: &str) -> Vec<String> {
        stack_frames(detail, &|f| SuiteAnalysis::is_code(self, f))
    }

    /// A test is affected when it ran a modified file last time, imports a modified module, or
    /// is itself modified; a change to a file no test could be traced to (a new module, a
    /// conftest) affects everything.
    fn affected(
        &self,
        reach: &BTreeMap<String, BTreeSet<String>>,
        modified: &[String],
        source: &dyn Fn(&str) -> Option<String>,
    ) -> Option<Vec<String>> {
        let mut out: BTreeSet<String> = BTreeSet::new();
        for file in modified {
            if file.ends_with("conftest.py") || !file.ends_with(".py") {
                return None;
            }
            let module = module_name(file);
            let mut any = false;
            for (id, files) in reach {
                let test_file = self.file_of(id);
                let imports = source(&test_file).is_some_and(|src| imports_module(&src, &module));
                if files.contains(file) || test_file == *file || imports {
                    out.insert(id.clone());
                    any = true;
                }
            }
            if !any && crate::testing::detect::test_pattern(file).is_none() {
                return None;
            }
        }
        Some(out.into_iter().collect())
    }
}

/// The frames of a pytest traceback in files `is_code` accepts, innermost last (`file:line`).
pub fn stack_frames(detail: &str, is_code: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in detail.lines().map(str::trim) {
        let Some((path, rest)) = line.split_once(".py:") else {
            continue;
        };
        let Some(num) = rest
            .split(':')
            .next()
            .and_then(|n| n.trim().parse::<u32>().ok())
        else {
            continue;
        };
        let file = format!("{}.py", path.trim_start_matches("../").trim());
        let at = format!("{file}:{num}");
        if is_code(&file) && !out.contains(&at) {
            out.push(at);
        }
    }
    out
}

/// `pkg/sub/mod.py` -> `pkg.sub.mod` (a `src/` layout's prefix dropped).
fn module_name(file: &str) -> String {
    let file = file.strip_prefix("src/").unwrap_or(file);
    let stem = file.trim_end_matches(".py").trim_end_matches("/__init__");
    stem.replace('/', ".")
}

/// Whether `source` imports `module` (or a package above it that re-exports it, as `from pkg
/// import mod`).
fn imports_module(source: &str, module: &str) -> bool {
    let (parent, last) = module.rsplit_once('.').unwrap_or(("", module));
    source.lines().map(str::trim).any(|l| {
        let rest = l
            .strip_prefix("import ")
            .or_else(|| l.strip_prefix("from "))
            .unwrap_or("");
        let target = rest.split([' ', ',']).next().unwrap_or("");
        target == module
            || target.starts_with(&format!("{module}."))
            || (!parent.is_empty()
                && target == parent
                && l.starts_with("from ")
                && l.split(" import ").nth(1).is_some_and(|names| {
                    names
                        .split(',')
                        .any(|n| n.trim().split(' ').next() == Some(last))
                }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_affects_the_tests_that_ran_or_import_the_file() {
        let reach: BTreeMap<String, BTreeSet<String>> = [
            ("tests/test_a.py::t1", vec!["shop/a.py"]),
            ("tests/test_b.py::t2", vec!["shop/b.py"]),
            ("tests/test_c.py::t3", vec![]),
        ]
        .into_iter()
        .map(|(id, files)| {
            (
                id.to_string(),
                files.into_iter().map(String::from).collect(),
            )
        })
        .collect();
        let sources = |f: &str| {
            Some(match f {
                "tests/test_c.py" => "from shop import a\n".to_string(),
                _ => String::new(),
            })
        };
        let got = PythonSuites
            .affected(&reach, &["shop/a.py".into()], &sources)
            .unwrap();
        assert_eq!(got, vec!["tests/test_a.py::t1", "tests/test_c.py::t3"]);
        assert!(PythonSuites
            .affected(&reach, &["conftest.py".into()], &sources)
            .is_none());
        assert!(PythonSuites
            .affected(&reach, &["shop/new.py".into()], &sources)
            .is_none());
    }

    #[test]
    fn stack_frames_are_the_project_frames_of_a_traceback_in_order() {
        let detail = "tests/test_x.py:9: in test_take\n    take(3, 3)\nshop/inventory.py:14: in take\n    raise ValueError\nE   ValueError: only 3 left\nshop/inventory.py:14: ValueError";
        let is_code = |f: &str| f.starts_with("shop/");
        assert_eq!(stack_frames(detail, &is_code), vec!["shop/inventory.py:14"]);
    }

    #[test]
    fn imports_are_recognised_in_their_forms() {
        assert!(imports_module("import shop.a\n", "shop.a"));
        assert!(imports_module("from shop.a import f\n", "shop.a"));
        assert!(imports_module("from shop import b, a\n", "shop.a"));
        assert!(!imports_module("from shop import ab\n", "shop.a"));
        assert_eq!(module_name("src/pkg/__init__.py"), "pkg");
    }
}
