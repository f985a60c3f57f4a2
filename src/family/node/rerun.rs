//! What a rerun runs: the case's file and a name filter built from its id.

use std::path::PathBuf;

use super::ctx::Ctx;
use super::run::{runner_problem, Coverage, Plan};
use super::workspace::generated_files;
use crate::testing::framework::Framework;
use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::RunSpec;

/// Runs one test again (flaky detection); its status, or None when it could not run or the
/// test is no longer there.
pub(super) fn rerun(spec: &RunSpec, framework: Framework, case_id: &str) -> Option<TestStatus> {
    if runner_problem(spec, framework).is_some() {
        return None;
    }
    let ctx = Ctx::prepare(spec, framework, false).ok()?;
    let target = Target::of(&ctx, case_id);
    let plan = ctx.rerun_plan(&target)?;
    ctx.exec(&plan.argv, &plan.env).ok()?;
    let cases = ctx
        .read_cases(&plan.junit, plan.attribution.as_deref())
        .ok()?;
    target.status_in(&cases, case_id)
}

/// What a rerun runs, from a case id.
pub(super) struct Target {
    /// Generated files to run (the case's own file when the id names one).
    pub files: Vec<PathBuf>,
    /// The test's title (`suite > test`), for the framework's name filter; None runs the whole
    /// file (a file-level failure).
    pub name: Option<String>,
}

impl Target {
    pub(super) fn of(ctx: &Ctx, case_id: &str) -> Target {
        let file_of = |rel: &str| {
            let path = ctx.layer_dir.join(rel);
            (path.is_file() && !rel.is_empty()).then_some(path)
        };
        if let Some(file) = file_of(case_id) {
            return Target {
                files: vec![file],
                name: None,
            };
        }
        let (file, rest) = case_id.split_once("::").unwrap_or(("", case_id));
        match file_of(file) {
            Some(path) => Target {
                files: vec![path],
                name: Some(rest.to_string()),
            },
            // Not one of our ids (no attribution): every file, name after the last `::`.
            None => Target {
                files: generated_files(&ctx.layer_dir),
                name: Some(case_id.rsplit("::").next().unwrap_or(case_id).to_string()),
            },
        }
    }

    /// The rerun case's status; for a whole file, Failed while it still fails to load, else
    /// the worst status of its tests.
    pub(super) fn status_in(&self, cases: &[TestCase], case_id: &str) -> Option<TestStatus> {
        if let Some(case) = cases.iter().find(|c| c.id == case_id) {
            return Some(case.status);
        }
        if self.name.is_some() || cases.is_empty() {
            return None;
        }
        let failed = cases
            .iter()
            .any(|c| matches!(c.status, TestStatus::Failed | TestStatus::Error));
        Some(if failed {
            TestStatus::Failed
        } else {
            TestStatus::Passed
        })
    }
}

impl Ctx<'_> {
    /// The command for a rerun: the case's file, a name filter, JUnit into the scratch folder
    /// (rerun reports are not kept), no coverage.
    pub(super) fn rerun_plan(&self, target: &Target) -> Option<Plan> {
        if target.files.is_empty() {
            return None;
        }
        let junit = self.scratch.join("rerun-junit.xml");
        let _ = std::fs::remove_file(&junit);
        let files: Vec<String> = target.files.iter().map(|f| self.in_copy(f)).collect();
        let mut plan = match self.framework {
            Framework::Jest => self.jest(&files, &junit, Coverage::Off, &self.scratch),
            Framework::Vitest => self.vitest(&files, &junit, Coverage::Off, &self.scratch),
            Framework::Mocha => self.mocha(&files, &junit),
            _ => return Some(self.node_rerun(&files, junit, target.name.as_deref())),
        };
        if let Some(title) = &target.name {
            self.filter_by_title(&mut plan, files.len(), title, true);
        }
        Some(plan)
    }

    /// Adds the framework's name filter to `plan` (whose last `files` arguments are its test
    /// files): the tests whose full title is `title` (`suite > test`), or, not `exact`, ends
    /// with it (a title known without its suites).
    pub(super) fn filter_by_title(&self, plan: &mut Plan, files: usize, title: &str, exact: bool) {
        let start = if exact { "^" } else { "" };
        let (flag, pattern) = match self.framework {
            // jest -t, vitest -t and mocha --grep match the full title: suites and test joined
            // by spaces.
            Framework::Jest | Framework::Vitest | Framework::Mocha => (
                if self.framework == Framework::Mocha {
                    "--grep"
                } else {
                    "-t"
                },
                format!("{start}{}$", regex_escape(&title.replace(" > ", " "))),
            ),
            // node matches each test's own name (suites always run to reach their tests).
            _ => {
                let name = title.rsplit(" > ").next().unwrap_or(title);
                ("", format!("--test-name-pattern=^{}$", regex_escape(name)))
            }
        };
        // Before the files: jest's array options would swallow what follows them.
        let at = plan.argv.len().saturating_sub(files);
        if flag.is_empty() {
            plan.argv.insert(at, pattern);
        } else {
            plan.argv.splice(at..at, [flag.to_string(), pattern]);
        }
    }

    pub(super) fn node_rerun(&self, files: &[String], junit: PathBuf, title: Option<&str>) -> Plan {
        let attribution = self.scratch.join("rerun-attribution.jsonl");
        let mut argv = self.node_runner();
        argv.extend(self.reporters(&junit, &attribution));
        if let Some(title) = title {
            // node matches each test's own name (suites always run to reach their tests), so
            // the pattern is the last segment, anchored.
            let name = title.rsplit(" > ").next().unwrap_or(title);
            argv.push(format!("--test-name-pattern=^{}$", regex_escape(name)));
        }
        argv.extend(files.iter().cloned());
        Plan {
            argv,
            env: Vec::new(),
            junit,
            attribution: Some(attribution),
            lcov: None,
        }
    }
}

/// `text` as a literal JavaScript regular expression.
pub(super) fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
