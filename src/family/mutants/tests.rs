use super::*;
use crate::family::suites::{Reach, TestReach};

/// A copy whose tests are judged by the text they run: `calc.x` holds `a + b`; the mutant
/// `a - b` fails `own::adds` (at line 7) and `L1::t.go::TestAdd`; `a * b` does not build;
/// `loop` hangs. Forks share the record of runs and say which worker they are.
struct Fake {
    file: PathBuf,
    worker: usize,
    runs: std::sync::Arc<std::sync::Mutex<Runs>>,
}

impl WorkCopy for Fake {
    fn trace(&mut self, _: Duration) -> Result<SuiteMutations, MutationError> {
        let reach = |lines: Vec<u32>| TestReach {
            outcome: "passed".into(),
            reached: [(
                self.file.display().to_string(),
                Reach {
                    lines,
                    arcs: vec![],
                },
            )]
            .into(),
            detail: None,
        };
        let mut out = SuiteMutations::default();
        out.tests.insert("own::adds".into(), reach(vec![1]));
        out.tests
            .insert("gen/t.go::TestAdd".into(), reach(vec![1, 2]));
        out.tests
            .insert("gen/t.go::TestOther".into(), reach(vec![2]));
        Ok(out)
    }

    fn suite_of(&self, id: &str) -> Option<(usize, String)> {
        match id.strip_prefix("gen/") {
            Some(local) => Some((1, local.to_string())),
            None => Some((0, id.to_string())),
        }
    }

    fn points(&mut self, modules: &[PathBuf]) -> (Points, Vec<String>) {
        let point = |line, replacement: &str| Point {
            line,
            start: 2,
            end: 3,
            replacement: replacement.into(),
            operator: format!("+ → {replacement}"),
        };
        let points = vec![
            point(1, "-"),
            point(1, "*"),
            point(2, "loop"),
            point(3, "/"),
        ];
        (
            modules
                .iter()
                .map(|m| (m.clone(), points.clone()))
                .collect(),
            vec![],
        )
    }

    fn run(&mut self, _: &Path, text: &str, tests: &[String], _: Duration) -> Verdict {
        self.runs
            .lock()
            .unwrap()
            .push((self.worker, tests.to_vec()));
        match text {
            "a + b\n\n\n" => Verdict::Passed,
            "a - b\n\n\n" => Verdict::Failed(
                [
                    ("own::adds".to_string(), Some(7)),
                    ("gen/t.go::TestAdd".to_string(), None),
                ]
                .into(),
            ),
            "a * b\n\n\n" => Verdict::Unviable("does not build".into()),
            _ => Verdict::TimedOut,
        }
    }

    fn fork(&self, n: usize) -> Result<Self, MutationError> {
        Ok(Fake {
            file: self.file.clone(),
            worker: n,
            runs: self.runs.clone(),
        })
    }
}

type Runs = Vec<(usize, Vec<String>)>;

/// The analysis of the fake's two suites (`baseline`, `L1-unit`) with `workers` workers, and
/// the runs it made.
fn analysed(workers: usize) -> (Vec<SuiteMutations>, Runs) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calc.x");
    std::fs::write(&file, "a + b\n\n\n").unwrap();
    let mut copy = Fake {
        file: file.clone(),
        worker: 0,
        runs: Default::default(),
    };
    let tools = crate::testing::toolchain::unknown();
    let modules = vec![file.clone()];
    let job = |name: &str| SuiteJob {
        name: name.into(),
        tools: &tools,
        scratch: dir.path(),
        mirror: dir.path(),
        repo: dir.path(),
        session: dir.path(),
        cwd: dir.path().to_path_buf(),
        own_config: true,
        files: vec![],
        modules: &modules,
        seed: 3,
        budget: Duration::from_secs(60),
        per_mutant: Duration::from_secs(1),
        max_mutants: 10,
        workers,
        sandbox: None,
        trace_timeout: None,
    };
    let results = analyse(&mut copy, &[job("baseline"), job("L1-unit")]);
    let results = results.into_iter().map(Result::unwrap).collect();
    let runs = copy.runs.lock().unwrap().clone();
    (results, runs)
}

#[test]
fn one_run_per_mutant_is_split_into_each_suites_verdict() {
    let (results, runs) = analysed(1);
    let [own, generated] = [&results[0], &results[1]];
    let status = |m: &SuiteMutations, replacement: &str| {
        let m = m
            .mutants
            .iter()
            .find(|m| m.operator.ends_with(replacement))
            .unwrap();
        (m.status.clone(), m.killed_by.clone())
    };
    assert_eq!(
        status(own, "-"),
        ("killed".to_string(), vec!["own::adds".to_string()])
    );
    assert_eq!(
        own.mutants
            .iter()
            .find(|m| m.operator.ends_with('-'))
            .unwrap()
            .killed_at["own::adds"],
        7
    );
    assert_eq!(
        status(generated, "-"),
        ("killed".to_string(), vec!["t.go::TestAdd".to_string()])
    );
    assert_eq!(status(own, "*").0, "error");
    // Line 2 is not the own suite's: no coverage there; the generated tests that reach it hang.
    assert_eq!(status(own, "loop").0, "no_coverage");
    assert_eq!(
        status(generated, "loop"),
        (
            "killed".to_string(),
            vec!["t.go::TestAdd".to_string(), "t.go::TestOther".to_string()]
        )
    );
    // Line 3 is no test's: it never runs.
    assert_eq!(status(generated, "/").0, "no_coverage");
    assert!(generated.tests.contains_key("t.go::TestOther"));
    // One calibration run, then one run per covered mutant, each with the tests of every suite.
    assert_eq!(runs.len(), 4, "{runs:?}");
    assert!(runs.iter().all(|(_, tests)| !tests.is_empty()));
}

#[test]
fn workers_share_the_mutants_and_the_verdicts_are_those_of_one_worker() {
    let (alone, _) = analysed(1);
    let (together, runs) = analysed(3);
    let verdicts = |r: &[SuiteMutations]| -> Vec<Vec<(String, String, Vec<String>)>> {
        r.iter()
            .map(|s| {
                s.mutants
                    .iter()
                    .map(|m| (m.operator.clone(), m.status.clone(), m.killed_by.clone()))
                    .collect()
            })
            .collect()
    };
    assert_eq!(verdicts(&alone), verdicts(&together));
    // Still one calibration run and one run per covered mutant, now on up to three copies (as
    // many as there are mutants to run).
    assert_eq!(runs.len(), 4, "{runs:?}");
    assert!(runs.iter().all(|(worker, _)| *worker < 3), "{runs:?}");
}

#[test]
fn the_failing_line_is_read_after_the_test_file_name() {
    let report = "    calc_tt_test.go:23: Add(1, 2) = 4, want 3\n";
    assert_eq!(failed_at(report, "pkg/calc_tt_test.go"), Some(23));
    let rust = "thread 'adds' panicked at tests/calc.rs:12:5:\nassertion failed";
    assert_eq!(failed_at(rust, "tests/calc.rs"), Some(12));
    assert_eq!(failed_at("at mycalc.rs:3", "calc.rs"), None);
    let js = "AssertionError: 1 == 2\n    at TestContext.<anonymous> (test/calc.test.js:8:15)";
    assert_eq!(failed_at(js, "test/calc.test.js"), Some(8));
}
