//! The executor's second line of defence: before a layer's tests are kept, they run once more
//! under the file-system watch, where every write goes to a throwaway layer and is listed,
//! whoever makes it (Python, a C extension, a child process). A test file whose run changes
//! anything outside the run's own folders is unsafe, whatever its language's hooks saw; a test
//! that passes in the sandbox and fails when its writes are real (or the other way round) owes
//! its result to a denied effect, and is unsafe too.

use std::path::{Path, PathBuf};

use super::shard_files;
use crate::artifacts::WatchRecord;
use crate::sandbox::watch::{self, Change, WatchReport};
use crate::sandbox::Sandbox;
use crate::team::RoleContext;
use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::{RunOutput, RunSpec, Runner};
use crate::testing::toolchain::Toolchain;

/// One test or test file the watch found unsafe, and what it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// A test file relative to the layer's folder (`whole_file`), or a test's selector.
    pub id: String,
    pub whole_file: bool,
    pub what: String,
}

pub struct Watched {
    pub record: WatchRecord,
    pub findings: Vec<Finding>,
}

/// Runs the layer as `spec` describes under the watch, and compares with `sandboxed`, the run
/// the executor is about to keep. `writable` are the run's own folders (real writes).
pub fn check(
    ctx: &RoleContext,
    runner: &dyn Runner,
    spec: &RunSpec,
    sandboxed: &RunOutput,
    writable: &[PathBuf],
    known_flaky: &[String],
) -> Watched {
    let unchecked = |note: String| Watched {
        record: WatchRecord {
            checked: false,
            note: Some(note),
            unwatched: Vec::new(),
        },
        findings: Vec::new(),
    };
    if !ctx.sandbox.enabled {
        return unchecked("not watched: the sandbox is off (--unsafe-no-sandbox)".into());
    }
    if let Err(why) = watch::support() {
        return unchecked(format!(
            "the file-system watch is not available here: {why}"
        ));
    }
    let workspace = ctx.session.root.join("workspace");
    let copies = runner.copy_dirs(&workspace, spec.layer);
    let root = workspace
        .join("sandbox")
        .join(format!("watch-{}", spec.layer));
    let sandbox = match Sandbox::watching(ctx.sandbox, &root, &[], writable) {
        Ok(s) => s,
        Err(e) => return unchecked(format!("the file-system watch could not be prepared: {e}")),
    };
    let results = spec.results.join("watch");
    if let Err(e) = crate::util::mkdirs(&results) {
        return unchecked(format!("the file-system watch could not be prepared: {e}"));
    }
    // The watch judges what the tests change and whether they pass, never what they cover.
    let untraced;
    let tools = if runner.coverage_is_runtime_only() {
        untraced = Toolchain {
            coverage_tool: None,
            ..spec.tools.clone()
        };
        &untraced
    } else {
        spec.tools
    };
    let watched_spec = RunSpec {
        results: results.clone(),
        sandbox: Some(&sandbox),
        tools,
        ..spec.clone()
    };
    let whole = runner.run(&watched_spec);
    let reports = sandbox.take_watch_reports();
    if let Some(error) = reports.iter().find_map(|r| r.error.clone()) {
        return unchecked(format!("the file-system watch did not run: {error}"));
    }
    if let Some(problem) = &whole.env_problem {
        return unchecked(format!("the watched run did not finish: {problem}"));
    }
    let mut record = WatchRecord {
        checked: true,
        note: None,
        unwatched: unwatched(&reports),
    };
    let mut findings = differences(runner, &spec.test_dir, sandboxed, &whole, known_flaky);
    if reports.iter().any(|r| !r.changes.is_empty()) {
        let by_file = attribute(runner, &watched_spec, &sandbox, &workspace, &copies);
        if by_file.is_empty() {
            // Changes no file makes on its own: the files together make them. When in doubt,
            // none of them is kept.
            let what = describe(&reports, &copies);
            record.note = Some(format!(
                "the layer's files together {what}; no file alone does, so none is kept"
            ));
            findings.extend(shard_files(&spec.test_dir).into_iter().map(|id| Finding {
                id,
                whole_file: true,
                what: format!("together with the layer's other files, {what}"),
            }));
        } else {
            findings.extend(by_file);
        }
    }
    Watched { record, findings }
}

/// Tests whose outcome in the watched run is not the sandboxed run's: one of them passed, the
/// other failed. Known flaky tests are left out (they differ between any two runs).
fn differences(
    runner: &dyn Runner,
    test_dir: &Path,
    sandboxed: &RunOutput,
    watched: &RunOutput,
    known_flaky: &[String],
) -> Vec<Finding> {
    let failed = |c: &TestCase| matches!(c.status, TestStatus::Failed | TestStatus::Error);
    let mut out = Vec::new();
    for case in &sandboxed.cases {
        if known_flaky.contains(&case.id) {
            continue;
        }
        let Some(other) = watched.cases.iter().find(|c| c.id == case.id) else {
            continue;
        };
        let what = match (case.status, other.status) {
            (TestStatus::Passed, _) if failed(other) => {
                "passes in the sandbox but fails when its writes are real (diverted to a \
                 throwaway layer): its result depends on what the sandbox denies"
            }
            (_, TestStatus::Passed) if failed(case) => {
                "fails in the sandbox but passes when its writes are real (diverted to a \
                 throwaway layer): its result comes from an effect the sandbox denies"
            }
            _ => continue,
        };
        out.push(Finding {
            id: runner.selector(test_dir, case),
            whole_file: false,
            what: what.to_string(),
        });
    }
    out
}

/// Most tests of one file run one by one to find which of them changes something; a file with
/// more is taken out whole.
const MAX_TESTS_ALONE: usize = 30;

/// Runs each test file of the layer alone under the watch, then each test of a file whose run
/// changed something: the tests (or, when every test of it does, or the file's loading does,
/// the files) that change something, with what they changed.
fn attribute(
    runner: &dyn Runner,
    spec: &RunSpec,
    sandbox: &Sandbox,
    workspace: &Path,
    copies: &[PathBuf],
) -> Vec<Finding> {
    let files = shard_files(&spec.test_dir);
    let alone = workspace.join(format!("watch-{}-one", spec.layer));
    let mut out = Vec::new();
    for (k, file) in files.iter().enumerate() {
        if one_file_folder(&spec.test_dir, file, &files, &alone).is_err() {
            continue;
        }
        let lone = RunSpec {
            test_dir: alone.clone(),
            run_no: format!("{}-{k}", spec.run_no),
            ..spec.clone()
        };
        let run = runner.run(&lone);
        let reports = sandbox.take_watch_reports();
        if reports.iter().all(|r| r.changes.is_empty()) {
            continue;
        }
        let tests = by_test(runner, &lone, &run, sandbox, copies);
        if tests.is_empty() {
            out.push(Finding {
                id: file.clone(),
                whole_file: true,
                what: describe(&reports, copies),
            });
        } else {
            out.extend(tests);
        }
    }
    let _ = std::fs::remove_dir_all(&alone);
    out
}

/// The tests of a lone file's run that change something when each runs by itself; empty when
/// none or every one of them does (then it is the file, its loading or all it holds).
fn by_test(
    runner: &dyn Runner,
    lone: &RunSpec,
    run: &RunOutput,
    sandbox: &Sandbox,
    copies: &[PathBuf],
) -> Vec<Finding> {
    let selectors: Vec<String> = run
        .cases
        .iter()
        .map(|c| runner.selector(&lone.test_dir, c))
        .filter(|s| !lone.deselect.contains(s))
        .collect();
    if selectors.len() < 2 || selectors.len() > MAX_TESTS_ALONE {
        return Vec::new();
    }
    let mut found = Vec::new();
    for (i, keep) in selectors.iter().enumerate() {
        let mut deselect = lone.deselect.to_vec();
        deselect.extend(selectors.iter().filter(|s| *s != keep).cloned());
        let _ = runner.run(&RunSpec {
            run_no: format!("{}-{i}", lone.run_no),
            deselect: &deselect,
            ..lone.clone()
        });
        let reports = sandbox.take_watch_reports();
        if reports.iter().any(|r| !r.changes.is_empty()) {
            found.push(Finding {
                id: keep.clone(),
                whole_file: false,
                what: describe(&reports, copies),
            });
        }
    }
    if found.len() == selectors.len() {
        return Vec::new();
    }
    found
}

/// `dest` made a copy of `test_dir` without its test files other than `keep`: the helpers and
/// configuration every file needs stay.
fn one_file_folder(
    test_dir: &Path,
    keep: &str,
    all: &[String],
    dest: &Path,
) -> std::io::Result<()> {
    let _ = std::fs::remove_dir_all(dest);
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        std::fs::create_dir_all(dest.join(&rel))?;
        for entry in std::fs::read_dir(test_dir.join(&rel))? {
            let entry = entry?;
            let path = rel.join(entry.file_name());
            let kind = entry.file_type()?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let name = path.to_string_lossy();
                if name == keep || !all.iter().any(|f| *f == name) {
                    std::fs::copy(entry.path(), dest.join(&path))?;
                }
            }
        }
    }
    Ok(())
}

/// The changes of some reports in words: the first few, then how many more. A path in the
/// run's copy of the project is named as the project's (after `apply` it would be).
fn describe(reports: &[WatchReport], copies: &[PathBuf]) -> String {
    let mut all: Vec<String> = Vec::new();
    for text in reports
        .iter()
        .flat_map(|r| r.changes.iter().map(|c| in_words(c, copies)))
    {
        // The same change seen by two children of one run (collection, then the run).
        if !all.contains(&text) {
            all.push(text);
        }
    }
    let more = all.len().saturating_sub(3) + reports.iter().map(|r| r.more).sum::<usize>();
    let mut text = all.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
    if more > 0 {
        text.push_str(&format!("; and {more} more"));
    }
    text
}

fn in_words(change: &Change, copies: &[PathBuf]) -> String {
    for copy in copies {
        if let Ok(rel) = change.path.strip_prefix(copy) {
            let inside = Change {
                path: rel.to_path_buf(),
                what: change.what.clone(),
            };
            return format!("{} in the project", inside.describe());
        }
    }
    change.describe()
}

fn unwatched(reports: &[WatchReport]) -> Vec<String> {
    let mut out: Vec<String> = reports.iter().flat_map(|r| r.unwatched.clone()).collect();
    out.sort();
    out.dedup();
    out
}
