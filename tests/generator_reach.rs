//! Issue 18: the built-in generator reaches what it used to miss. One fixture module per cause
//! (tests/fixtures/python-reach/causes): callables for map/bind, dunders and class methods, an
//! object put in a state, validators with checksums and regexes, a module that prints, Any and
//! Protocol hints, a malformed docstring, generators and coroutines, and a module whose import
//! raises. The generated tests
//! are then run with real pytest under coverage.py from the project root.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// Runs the targeted pipeline (L1 generation, then the executor) on the fixture and returns the
/// session id.
fn generate(p: &Project) -> String {
    let out = p
        .cmd(&[
            "run",
            "--max-mutants",
            QUICK_MUTANTS,
            "test the causes",
            "--pipeline",
            "targeted",
            "--seed",
            "7",
        ])
        .run();
    out.assert_code(0);
    out.session_id()
}

/// Line numbers of `file` (relative to the fixture) whose text contains `marker`.
fn lines_with(p: &Project, file: &str, marker: &str) -> Vec<u64> {
    let text = std::fs::read_to_string(p.repo.join(file)).unwrap();
    let found: Vec<u64> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(marker))
        .map(|(i, _)| i as u64 + 1)
        .collect();
    assert!(!found.is_empty(), "{marker} is not in {file}");
    found
}

/// coverage.py's executed lines per file, of the generated tests run from the project root.
fn covered(p: &Project, tests: &Path) -> (BTreeMap<String, Vec<u64>>, String) {
    let data = p.tmp.path().join("reach.coverage");
    let env = [
        ("COVERAGE_FILE", data.display().to_string()),
        ("PYTHONPATH", p.repo.display().to_string()),
        ("PYTHONDONTWRITEBYTECODE", "1".to_string()),
    ];
    let run = Command::new("python3")
        .args([
            "-m",
            "coverage",
            "run",
            "--branch",
            "--source=causes",
            "-m",
            "pytest",
        ])
        .args(["-q", "-p", "no:cacheprovider", "-o", "addopts="])
        .arg(tests)
        .current_dir(&p.repo)
        .envs(env.clone())
        .output()
        .unwrap();
    let pytest_out = String::from_utf8_lossy(&run.stdout).into_owned();
    let json = p.tmp.path().join("reach.json");
    let report = Command::new("python3")
        .args(["-m", "coverage", "json", "-q", "-o"])
        .arg(&json)
        .current_dir(&p.repo)
        .envs(env)
        .output()
        .unwrap();
    assert!(report.status.success(), "{pytest_out}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let files = v["files"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(f, d)| {
            let lines = d["executed_lines"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_u64)
                .collect();
            (f.clone(), lines)
        })
        .collect();
    (files, pytest_out)
}

#[test]
fn every_cause_is_reached_every_test_loads_and_a_broken_module_loses_nothing_else() {
    let p = Project::fixture("python-reach");
    let id = generate(&p);
    let tests = p.session_dir(&id).join("tests").join("L1-unit");
    let written: Vec<String> = std::fs::read_dir(&tests)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".py"))
        .collect();
    // (c) The module whose import raises costs nothing else: every other module has its tests.
    for module in [
        "monad", "vector", "timer", "checks", "noisy", "hints", "docs", "flows",
    ] {
        let file = format!("test_causes_{module}.py");
        assert!(written.contains(&file), "no {file} in {written:?}");
    }
    assert!(!written.contains(&"test_causes_broken.py".to_string()));
    // No written test fails to load: pytest collects them all without an error.
    let collect = Command::new("python3")
        .args([
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
        ])
        .arg(&tests)
        .current_dir(&p.repo)
        .env("PYTHONPATH", &p.repo)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&collect.stdout);
    assert!(collect.status.success(), "{listing}");
    assert!(!listing.contains("error"), "{listing}");
    // (b) Each cause's lines are covered by the written tests.
    let (files, pytest_out) = covered(&p, &tests);
    let causes: &[(&str, &[&str])] = &[
        // callables for map and bind; the closure compose returns is called
        (
            "causes/monad.py",
            &[
                "return Maybe(function(self.value))",
                "result = kleisli(self.value)",
                "acc = reducer(acc, item)",
                "return f(inner)",
            ],
        ),
        // dunders through operators, a class method, a static method, a property set
        (
            "causes/vector.py",
            &[
                "return cls(*[int(p) for p in parts])",
                "return sum(x * y for x, y in zip(a.coords, b.coords))",
                "self.coords = (self.coords + [0] * n)[:n]",
                "return self.coords == other.coords",
                "return Vector(*[a + b for a, b in zip(self.coords, other.coords)])",
                "self.coords[i] = value",
                "return Vector(*[c * factor for c in self.coords])",
                "self.locked = True",
                "return iter(self.coords)",
            ],
        ),
        // an object in a state: stop after start, render with a label
        (
            "causes/timer.py",
            &[
                "self.laps += 1",
                "raise TimerError(\"not running\")",
                "return f\"{self.label} ({self.name}): {self.laps} laps\"",
            ],
        ),
        // a valid card number (checksum), an email and an order number from the module's regexes,
        // a wrong type reaching the isinstance guard
        (
            "causes/checks.py",
            &[
                "raise TypeError(\"a card number is a string\")",
                "d -= 9",
                "return int(found.group(1))",
            ],
        ),
        ("causes/noisy.py", &["return word.upper() + \"!\""]),
        (
            "causes/hints.py",
            &["return \"hello \" + who.name", "return items[0]"],
        ),
        ("causes/docs.py", &["return x * 2", "return \"\\n\".join"]),
        // a generator iterated, a coroutine awaited, an async generator drained
        (
            "causes/flows.py",
            &["yield n", "return key.upper()", "yield i * 10"],
        ),
    ];
    let mut missed = Vec::new();
    for (file, markers) in causes {
        let executed = files.get(*file).cloned().unwrap_or_default();
        for marker in *markers {
            let lines = lines_with(&p, file, marker);
            if !lines.iter().any(|l| executed.contains(l)) {
                missed.push(format!("{file}: {marker}"));
            }
        }
    }
    assert!(
        missed.is_empty(),
        "not covered:\n{}\n{pytest_out}",
        missed.join("\n")
    );
    // The import error is reported, and what the noisy module printed did not break the run.
    let gen = generator_task(&p, &id);
    let errors = gen["outcome"]["data"]["import_errors"].to_string();
    assert!(errors.contains("causes.broken"), "{errors}");
    // Ten modules are a long search: a short one wrote tests first, into a folder of their own
    // (never the layer's: no run judged them), said so in the log before the round ended, and
    // the folder went once the deep search had written the layer's files.
    let log = p.messages(&id);
    let said = |phase: &str| {
        log.iter().position(|m| {
            let from = m["from"].as_str().unwrap_or_default();
            from.starts_with("generator") && m["type"] == "progress" && m["data"]["phase"] == phase
        })
    };
    let (first, written) = (said("first_tests"), said("tests_written"));
    assert!(first.is_some() && first < written, "{first:?} {written:?}");
    let detail = log[first.unwrap()]["data"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("in first-tests/L1-unit/; the search goes on"),
        "{detail}"
    );
    assert!(!p
        .session_dir(&id)
        .join("first-tests")
        .join("L1-unit")
        .exists());
    let first_at = gen["outcome"]["data"]["first_tests_at"].as_str().unwrap();
    assert!(first_at < gen["completed_at"].as_str().unwrap(), "{gen}");
}
