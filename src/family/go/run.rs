//! One run of the layer (`go test -json -coverprofile` over the packages with generated tests)
//! and one test's rerun.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Instant;

use super::ctx::{package_arg, stopped, Ctx};
use super::events::{leaves, parse_events, GoTest};
use super::gate::gate;
use super::package::module_path;
use super::profile::parse_profile;
use super::stage::{generated_files, is_test_file, stage, Staged};
use crate::testing::exec::ExecError;
use crate::testing::report::{TestCase, TestStatus};
use crate::testing::runner::{RunOutput, RunSpec};
use crate::util::tail_lines;

pub(super) fn run(spec: &RunSpec) -> RunOutput {
    let started = Instant::now();
    let mut out = RunOutput::default();
    if !spec.tools.runner_available {
        out.env_problem = Some(format!(
            "go is not available: {}",
            spec.tools
                .install_hint
                .as_deref()
                .unwrap_or("apt-get install golang-go")
        ));
        return out;
    }
    let Some(module) = module_path(spec.repo) else {
        out.env_problem = Some(format!(
            "{} declares no module: go test needs a module",
            spec.repo.join("go.mod").display()
        ));
        return out;
    };
    let ctx = Ctx::new(spec, started + spec.timeout);
    let _ = std::fs::create_dir_all(&spec.results);
    let mut staged = generated_files(&spec.test_dir, spec.repo, spec.layer);
    let result = gate(&ctx, &mut staged, &mut out).and_then(|()| {
        if staged.is_empty() {
            out.coverage_problem = Some("no loadable test files".into());
            return Ok(());
        }
        let dirs: BTreeSet<&str> = staged.iter().map(|s| s.dir.as_str()).collect();
        run_tests(&ctx, &module, &staged, &dirs, &mut out)
    });
    if let Err(stop) = result {
        stopped(stop, &ctx.go, &mut out);
    }
    if out.coverage.is_none() && out.coverage_problem.is_none() {
        out.coverage_problem = Some(spec.tools.coverage_reason.clone());
    }
    out.duration_s = started.elapsed().as_secs_f64();
    out
}

/// The project's own tests (`tests`, module-relative `*_test.go` files): `go test` over the
/// packages that hold them, in a fresh copy of the module, with coverage as a layer run has it.
pub(super) fn baseline(spec: &RunSpec, tests: &[String]) -> RunOutput {
    let started = Instant::now();
    let mut out = RunOutput::default();
    let Some(module) = module_path(spec.repo) else {
        out.env_problem = Some(format!(
            "{} declares no module: go test needs a module",
            spec.repo.join("go.mod").display()
        ));
        return out;
    };
    let ctx = Ctx::new(spec, started + spec.timeout);
    let _ = std::fs::create_dir_all(&spec.results);
    let result = stage(spec.repo, &ctx.copy, &spec.test_dir, &[])
        .map_err(|cause| ExecError::Copy {
            from: spec.repo.to_path_buf(),
            to: ctx.copy.clone(),
            cause,
        })
        .and_then(|()| {
            let dirs: BTreeSet<&str> = tests
                .iter()
                .map(|t| t.rsplit_once('/').map_or("", |(dir, _)| dir))
                .collect();
            run_tests(&ctx, &module, &[], &dirs, &mut out)
        });
    if let Err(stop) = result {
        stopped(stop, &ctx.go, &mut out);
    }
    if out.coverage.is_none() && out.coverage_problem.is_none() {
        out.coverage_problem = Some(spec.tools.coverage_reason.clone());
    }
    out.duration_s = started.elapsed().as_secs_f64();
    out
}

/// `^(TestA|TestB)$` over the staged files' top-level tests and examples (None when nothing is
/// staged: the baseline runs everything).
fn staged_tests_pattern(ctx: &Ctx, staged: &[Staged]) -> Option<String> {
    let mut names: Vec<String> = staged
        .iter()
        .filter_map(|s| std::fs::read_to_string(ctx.copy.join(s.rel())).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| l.strip_prefix("func "))
                .filter_map(|l| l.split_once('(').map(|(name, _)| name.to_string()))
                .filter(|n| {
                    n.starts_with("Test") || n.starts_with("Example") || n.starts_with("Fuzz")
                })
                .collect::<Vec<_>>()
        })
        .collect();
    names.sort();
    names.dedup();
    (!names.is_empty()).then(|| format!("^({})$", names.join("|")))
}

fn run_tests(
    ctx: &Ctx,
    module: &str,
    staged: &[Staged],
    dirs: &BTreeSet<&str>,
    out: &mut RunOutput,
) -> Result<(), ExecError> {
    let measure = ctx.spec.tools.coverage_tool.is_some();
    let (profile, profile_rel) = ctx.result_file("go-cover", "out");
    // A stale profile must not pass for this run's when go dies before writing its own.
    let _ = std::fs::remove_file(&profile);
    // -count=1: go caches passing results, and a cached pass is not a run.
    let mut argv = ctx.argv(&["test", "-count=1", "-json"]);
    if measure {
        argv.push(format!("-coverprofile={}", profile.display()));
    }
    // A layer runs its own tests only: the package's own tests (and their failures) are the
    // baseline's.
    if let Some(pattern) = staged_tests_pattern(ctx, staged) {
        argv.push("-run".into());
        argv.push(pattern);
    }
    argv.extend(dirs.iter().map(|d| package_arg(d)));
    out.command = argv.clone();
    let run = ctx.exec(&argv)?;
    out.exit_code = run.status;
    ctx.keep("go-test", "jsonl", &run.stdout, out);
    let parsed = parse_events(&run.stdout);
    let transcript = ctx.readable(&format!("{}{}", parsed.transcript, run.stderr), staged);
    out.output_tail = tail_lines(&transcript, 60);
    let index = TestIndex::of(ctx, staged, dirs);
    let stopped_by = transcript
        .lines()
        .find(|l| l.starts_with("panic: "))
        .map(str::to_string);
    out.cases = leaves(&parsed.tests)
        .into_iter()
        .map(|t| case_of(ctx, staged, module, &index, t, stopped_by.as_deref()))
        .collect();
    mark_deselected(&mut out.cases, ctx.spec.deselect);
    if out.cases.is_empty() && !run.success() {
        out.env_problem = Some(format!(
            "go test exited with {:?} and reported no test: {}",
            run.status,
            tail_lines(&transcript, 8)
        ));
        return Ok(());
    }
    if measure {
        match parse_profile(&profile, module) {
            Ok(report) if report.files.is_empty() => {
                out.coverage_problem = Some(
                    "the coverage profile lists no file (a test panicked and ended the run)".into(),
                );
            }
            Ok(report) => {
                out.coverage = Some(report);
                out.reports.push(profile_rel);
            }
            Err(e) => out.coverage_problem = Some(format!("go wrote no usable profile: {e}")),
        }
    }
    Ok(())
}

/// Where each test function is declared: (package folder, function) -> (file, line). A generated
/// file is named as in the layer's folder, one of the module's own as a module-relative path.
struct TestIndex(BTreeMap<(String, String), (String, u32)>);

impl TestIndex {
    fn of(ctx: &Ctx, staged: &[Staged], dirs: &BTreeSet<&str>) -> TestIndex {
        let mut index = BTreeMap::new();
        for dir in dirs {
            let entries = std::fs::read_dir(ctx.copy.join(dir)).into_iter().flatten();
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if !is_test_file(&name) {
                    continue;
                }
                let shown = match staged.iter().find(|s| s.dir == *dir && s.target == name) {
                    Some(s) => s.original.clone(),
                    None => Path::new(dir).join(&name).to_string_lossy().into_owned(),
                };
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                for (function, line) in test_functions(&text) {
                    index.insert((dir.to_string(), function), (shown.clone(), line));
                }
            }
        }
        TestIndex(index)
    }

    fn find(&self, dir: &str, function: &str) -> Option<&(String, u32)> {
        self.0.get(&(dir.to_string(), function.to_string()))
    }
}

/// Top-level functions of a Go source and the lines that declare them.
fn test_functions(text: &str) -> Vec<(String, u32)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let rest = line.strip_prefix("func ")?;
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty() && rest[name.len()..].starts_with('(')).then(|| (name, i as u32 + 1))
        })
        .collect()
}

/// The package folder of an import path in `module` (`""` for the module itself).
fn package_dir(package: &str, module: &str) -> String {
    package
        .strip_prefix(module)
        .map(|rest| rest.trim_start_matches('/').to_string())
        .unwrap_or_default()
}

/// A go test as a case: id `<file>::<name>` (the file that declares it), its file and line, and
/// what it printed with paths made readable.
fn case_of(
    ctx: &Ctx,
    staged: &[Staged],
    module: &str,
    index: &TestIndex,
    test: &GoTest,
    stopped_by: Option<&str>,
) -> TestCase {
    let found = index.find(&package_dir(&test.package, module), test.function());
    let (file, line) = match found {
        Some((file, line)) => (Some(file.clone()), Some(*line)),
        None => (None, None),
    };
    let readable = |t: String| ctx.readable(&t, staged);
    let (status, message) = match (test.status, stopped_by) {
        (Some(status), _) => (status, test.message().map(readable)),
        // It never ended: go's own timeout panicked, or another test's panic ended the binary.
        (None, Some(panic)) => (TestStatus::Failed, Some(format!("did not finish: {panic}"))),
        (None, None) => (
            TestStatus::Skipped,
            Some("did not finish: the test binary stopped first (a panic in another test)".into()),
        ),
    };
    TestCase {
        id: format!(
            "{}::{}",
            file.as_deref().unwrap_or(&test.package),
            test.name
        ),
        name: test.name.clone(),
        classname: Some(test.package.clone()),
        file,
        line,
        status,
        duration_s: test.elapsed,
        message,
        detail: test.detail().map(readable),
    }
}

/// go 1.19 has no option to leave a test out (`-skip` came in 1.20), so quarantined tests still
/// run; their results are recorded as skipped. Whole files leave the layer folder instead.
fn mark_deselected(cases: &mut [TestCase], deselect: &[String]) {
    for case in cases.iter_mut().filter(|c| deselect.contains(&c.id)) {
        case.status = TestStatus::Skipped;
        case.message = Some("deselected (quarantined): it still ran, its result is ignored".into());
        case.detail = None;
    }
}

/// Runs one test of the copy an earlier [`run`] left again; its status, or None when there is
/// no copy, it did not run or no test has that name.
pub(super) fn rerun(spec: &RunSpec, case: &TestCase) -> Option<TestStatus> {
    let ctx = Ctx::new(spec, Instant::now() + spec.timeout);
    if !ctx.copy.join("go.mod").is_file() {
        return None;
    }
    let module = module_path(spec.repo)?;
    let dir = package_dir(case.classname.as_deref()?, &module);
    let argv = ctx.argv(&[
        "test",
        "-count=1",
        "-json",
        "-run",
        &run_pattern(&case.name),
        &package_arg(&dir),
    ]);
    let run = ctx.exec(&argv).ok()?;
    parse_events(&run.stdout)
        .tests
        .iter()
        .find(|t| t.name == case.name)?
        .status
}

/// `-run` for exactly one (sub)test: each level of `TestSub/case` anchored and escaped.
fn run_pattern(name: &str) -> String {
    name.split('/')
        .map(|part| {
            let mut escaped = String::from("^");
            for c in part.chars() {
                if "\\.+*?()|[]{}^$".contains(c) {
                    escaped.push('\\');
                }
                escaped.push(c);
            }
            escaped.push('$');
            escaped
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(run_pattern("TestAdd"), "^TestAdd$");
        assert_eq!(run_pattern("TestSub/a.b_(1)"), r"^TestSub$/^a\.b_\(1\)$");
        let src = "package calc\n\nfunc TestAdd(t *testing.T) {}\n\tfunc inner() {}\nfunc (r T) M() {}\nfunc helper[T any](x T) {}\n";
        assert_eq!(test_functions(src), [("TestAdd".to_string(), 3)]);
        assert_eq!(package_dir("example.com/calc", "example.com/calc"), "");
        assert_eq!(
            package_dir("example.com/calc/stats", "example.com/calc"),
            "stats"
        );
    }
}
