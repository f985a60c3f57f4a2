//! Strategist: reads the change scope, detects the test framework, ranks the files in scope and
//! writes strategy/test-strategy.md plus the detected conventions to wisdom/conventions.md.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use super::error::RoleError;
use super::shared::baseline::{self, Baseline};
use super::util::{time_left, to_map};
use super::RoleContext;
use crate::pipeline::scope::{ChangeKind, ChangedFile};
use crate::session::scope::{load_scope, Scope};
use crate::tasks::{layer_code, Outcome};
use crate::testing::detect::{detect_framework, file_name, is_code, is_config, test_pattern, walk};
use crate::testing::framework::{self, Framework};
use crate::testing::symbols;
use crate::testing::toolchain::Toolchain;
use crate::util::{atomic_write, mkdirs};

const TABLE_ROWS: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Priority {
    High,
    Medium,
    Variable,
    Low,
}

/// The seed's rule: added/untracked High, modified Medium, deleted Low, config Variable.
fn priority(f: &ChangedFile) -> Priority {
    match f.kind {
        ChangeKind::Deleted => Priority::Low,
        _ if is_config(&f.path) => Priority::Variable,
        ChangeKind::Added | ChangeKind::Untracked => Priority::High,
        ChangeKind::Modified | ChangeKind::Renamed => Priority::Medium,
    }
}

fn impact(f: &ChangedFile) -> &'static str {
    match f.kind {
        ChangeKind::Deleted => "removed: callers and tests may break",
        _ if is_config(&f.path) => "configuration: behaviour may change anywhere",
        _ if test_pattern(&f.path).is_some() => "test code: existing coverage changes",
        _ if !is_code(&f.path) => "non-code file: little runtime effect",
        ChangeKind::Added | ChangeKind::Untracked => "new code: untested so far",
        _ => "changed behaviour: regressions possible",
    }
}

/// The baseline in the strategist's summary, and as its outcome data.
fn describe_baseline(b: &Baseline) -> (String, Value) {
    match b {
        Baseline::NoSuite => (
            "baseline: the project has no tests of its own".into(),
            json!({"status": "no_suite"}),
        ),
        Baseline::NotSupported(fw) => (
            format!("baseline: not run (the project's own {fw} suite is not run yet)"),
            json!({"status": "not_supported", "framework": fw}),
        ),
        Baseline::CannotRun(problem) => (
            format!("env_issue: the project's own tests could not run, going on without a baseline: {problem}"),
            json!({"status": "env_issue", "problem": problem}),
        ),
        Baseline::Ran(r) => {
            let coverage = r
                .coverage
                .flatten()
                .map_or_else(|| "coverage n/a".to_string(), |c| format!("coverage {c:.1}%"));
            let failing = r.failed.unwrap_or(0) + r.errors.unwrap_or(0);
            (
                format!(
                    "baseline: the project's own {} tests, {} passed, {failing} failing; {coverage} of the files in scope",
                    r.total,
                    r.passed.unwrap_or(0)
                ),
                json!({"status": "ran", "record": "results/baseline.json", "tests": r.total,
                       "passed": r.passed, "failing": failing, "coverage": r.coverage.flatten()}),
            )
        }
    }
}

/// Lines added/removed per path against HEAD, in one git call (binary files are left out).
fn numstat(ctx: &RoleContext, scope: &Scope) -> Result<BTreeMap<String, (u64, u64)>, RoleError> {
    let mut map = BTreeMap::new();
    if !scope.is_git || scope.base_commit.is_none() || scope.whole_project {
        return Ok(map);
    }
    let base = scope.base_commit.as_deref().unwrap_or("HEAD");
    let diff = symbols::git_diff(
        ctx.repo,
        &["--numstat", "--no-renames", base, "--"],
        time_left(ctx.deadline)?,
    )?;
    for line in diff.lines() {
        let mut parts = line.splitn(3, '\t');
        if let (Some(a), Some(r), Some(p)) = (parts.next(), parts.next(), parts.next()) {
            if let (Ok(a), Ok(r)) = (a.parse(), r.parse()) {
                map.insert(p.to_string(), (a, r));
            }
        }
    }
    Ok(map)
}

fn line_delta(
    repo: &Path,
    f: &ChangedFile,
    stat: &BTreeMap<String, (u64, u64)>,
) -> Option<(u64, u64)> {
    if let Some(d) = stat.get(&f.path) {
        return Some(*d);
    }
    // Untracked (or no commit yet): git has no diff, so every line of the file is new.
    if matches!(f.kind, ChangeKind::Added | ChangeKind::Untracked) {
        let bytes = std::fs::read(repo.join(&f.path)).ok()?;
        let lines = bytecount_lines(&bytes);
        return Some((lines, 0));
    }
    None
}

fn bytecount_lines(bytes: &[u8]) -> u64 {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count() as u64;
    newlines + u64::from(bytes.last().is_some_and(|b| *b != b'\n'))
}

struct Row {
    file: ChangedFile,
    priority: Priority,
    delta: Option<(u64, u64)>,
    /// Functions and classes the change touched (all of them for a new file).
    symbols: Vec<String>,
}

/// Most symbols listed per file.
const SYMBOLS_SHOWN: usize = 12;

/// The definitions a change touched: every definition of a new file, the ones holding changed
/// lines of a modified file, none for deleted or non-code files.
fn touched_symbols(ctx: &RoleContext, scope: &Scope, f: &ChangedFile) -> Vec<String> {
    if scope.whole_project || f.kind == ChangeKind::Deleted || !is_code(&f.path) {
        return Vec::new();
    }
    let Ok(text) = std::fs::read_to_string(ctx.repo.join(&f.path)) else {
        return Vec::new();
    };
    let defs = symbols::definitions(&f.path, &text);
    let mut names: Vec<String> = match (f.kind, &scope.base_commit) {
        (ChangeKind::Modified | ChangeKind::Renamed, Some(base)) => {
            let Ok(timeout) = time_left(ctx.deadline) else {
                return Vec::new();
            };
            let ranges = symbols::changed_ranges(ctx.repo, base, &f.path, timeout);
            symbols::touched(&defs, &ranges)
        }
        _ => defs.into_iter().map(|d| d.name).collect(),
    };
    names.dedup();
    names
}

/// The seed's change types: config files are their own kind.
fn change_type(f: &ChangedFile) -> String {
    if f.kind != ChangeKind::Deleted && is_config(&f.path) {
        return "config".into();
    }
    match f.kind {
        ChangeKind::Untracked => "added (untracked)".into(),
        other => serde_json::to_value(other)
            .map(|v| cell(&v))
            .unwrap_or_default(),
    }
}

pub fn run(ctx: &RoleContext) -> Outcome {
    let scope = match load_scope(ctx.session) {
        Ok(s) => s,
        Err(e) => return Outcome::failed(e.to_string()),
    };
    (ctx.progress)(
        "context_loaded",
        Some(10.0),
        Some(format!("{} files in scope", scope.files.len())),
    );
    let all_files = walk(ctx.repo);
    let (detected, reason) = detect_framework(ctx.repo, &all_files);
    let framework = detected.map_or(framework::UNKNOWN, Framework::as_str);
    // The family and the project's own configuration say what is source and what its tests.
    let project = crate::testing::project_files::classify(ctx.repo, detected, &all_files);
    let existing: Vec<&String> = project.tests.iter().collect();
    let tools = crate::family::toolchain(ctx.repo, detected);
    let layout = existing_layout(&all_files, &existing);
    (ctx.progress)(
        "framework_detected",
        Some(30.0),
        Some(format!(
            "{framework} ({reason}); coverage: {}",
            tools.coverage_tool.as_deref().unwrap_or("none")
        )),
    );
    let mut notes = scope.warnings.clone();
    match (&scope.base_ref, &scope.base_commit) {
        (Some(r), Some(c)) => notes.push(format!(
            "change measured from the merge base of {r} and HEAD ({}) to the working tree",
            &c[..c.len().min(12)]
        )),
        (None, Some(c)) if !scope.whole_project => notes.push(format!(
            "change measured from HEAD ({}) to the working tree and index",
            &c[..c.len().min(12)]
        )),
        _ => {}
    }
    let stat = numstat(ctx, &scope).unwrap_or_else(|e| {
        notes.push(format!("line counts unavailable: {e}"));
        BTreeMap::new()
    });
    let mut rows: Vec<Row> = scope
        .files
        .iter()
        .map(|f| Row {
            file: f.clone(),
            priority: priority(f),
            delta: line_delta(ctx.repo, f, &stat),
            symbols: touched_symbols(ctx, &scope, f),
        })
        .collect();
    rows.sort_by(|a, b| {
        a.priority
            .cmp(&b.priority)
            .then_with(|| a.file.path.cmp(&b.file.path))
    });
    let sources: std::collections::BTreeSet<&str> =
        project.sources.iter().map(String::as_str).collect();
    let priority_files: Vec<String> = rows
        .iter()
        .filter(|r| {
            matches!(r.priority, Priority::High | Priority::Medium)
                && sources.contains(r.file.path.as_str())
        })
        .map(|r| r.file.path.clone())
        .collect();
    let layers = pipeline_layers(ctx);
    let mut risks = assess_risks(&scope, &rows, detected, existing.len());
    risks.extend(toolchain_risks(&tools));
    let layer_data: Vec<Value> = layers
        .iter()
        .map(|l| {
            layer_plan(
                l,
                ctx.config.coverage_target(l),
                &priority_files,
                &scope,
                &rows,
            )
        })
        .collect();
    let mut md = render(
        &scope,
        &rows,
        &notes,
        (framework, &reason),
        &layer_data,
        &risks,
        existing.len(),
    );
    md.push_str(&render_toolchain(&tools, &layout));
    md.push_str(&render_scenario_plan(ctx));
    // What the project's own tests teach goes on the shared board for the generator.
    super::shared::discoveries::note_project(&ctx.session.root, ctx.repo, "strategist");
    let dir = ctx.session.root.join("strategy");
    if let Err(e) =
        mkdirs(&dir).and_then(|()| atomic_write(&dir.join("test-strategy.md"), md.as_bytes()))
    {
        return Outcome::failed(e.to_string());
    }
    (ctx.progress)("strategy_written", Some(80.0), None);
    if let Err(e) = append_conventions(ctx, framework, &reason, &existing, &layout) {
        return Outcome::failed(e.to_string());
    }
    let own_tests: Vec<String> = existing.iter().map(|p| p.to_string()).collect();
    // The sandbox has no network: what the project depends on is fetched first, by a fetch
    // that runs none of its code.
    let deps = if ctx.plan_only {
        crate::testing::deps::Deps::NotNeeded
    } else {
        (ctx.progress)(
            "dependencies",
            Some(82.0),
            Some("fetching what the project depends on".into()),
        );
        crate::testing::deps::prepare(ctx.repo, &ctx.session.root, detected)
    };
    if let Some((command, problem)) = deps.failed() {
        (ctx.progress)(
            "dependencies_missing",
            None,
            Some(format!(
                "`{command}` failed; runs that need the dependencies will fail: {problem}"
            )),
        );
    }
    let (baseline_text, baseline_data) = if ctx.plan_only {
        (
            format!(
                "baseline: the project's own {} test file(s) run with the real run, not in a dry run",
                own_tests.len()
            ),
            json!({"status": "planned"}),
        )
    } else {
        (ctx.progress)(
            "baseline",
            Some(85.0),
            Some("the project's own tests".into()),
        );
        match baseline::run(ctx, detected, &tools, &own_tests, &priority_files) {
            Ok(b) => describe_baseline(&b),
            Err(e) => (
                format!("env_issue: the project's own tests could not run: {e}"),
                json!({"problem": e.to_string()}),
            ),
        }
    };
    let high = rows.iter().filter(|r| r.priority == Priority::High).count();
    let mut out = Outcome::completed(format!(
        "framework {framework} ({reason}); {} files in scope, {high} high priority; {baseline_text}",
        rows.len()
    ));
    out.data = to_map(json!({
        "framework": framework, "framework_reason": reason, "priority_files": priority_files,
        "layers": layer_data, "coverage_targets": ctx.config.coverage_targets, "risks": risks,
        "existing_tests": existing.iter().take(20).collect::<Vec<_>>(),
        "test_layout": layout, "toolchain": tools, "baseline": baseline_data,
        "dependencies": deps,
        "touched": rows.iter().filter(|r| !r.symbols.is_empty())
            .map(|r| (r.file.path.clone(), json!(r.symbols))).collect::<serde_json::Map<_, _>>(),
    }));
    out.artifacts = vec!["strategy/test-strategy.md".into()];
    out
}

/// The layers this session's pipeline tests (from tasks.json), else every configured layer.
fn pipeline_layers(ctx: &RoleContext) -> Vec<String> {
    let mut layers: Vec<String> = Vec::new();
    if let Ok(graph) = ctx.session.load_tasks() {
        for l in graph.tasks.iter().filter_map(|t| t.layer.clone()) {
            if !layers.contains(&l) {
                layers.push(l);
            }
        }
    }
    if layers.is_empty() {
        layers = ctx.config.coverage_targets.keys().cloned().collect();
    }
    layers
}

fn layer_plan(
    layer: &str,
    target: Option<f64>,
    priority: &[String],
    scope: &Scope,
    rows: &[Row],
) -> Value {
    let (what, files): (String, Vec<String>) = match layer_code(layer) {
        "L1" => (
            "each changed source file in isolation".into(),
            priority.to_vec(),
        ),
        "L2" => {
            let configs = rows
                .iter()
                .filter(|r| r.priority == Priority::Variable)
                .map(|r| r.file.path.clone());
            (
                format!(
                    "interactions between the modules in scope ({})",
                    scope.modules.join(", ")
                ),
                configs.chain(priority.iter().cloned()).collect(),
            )
        }
        "L3" => {
            let entry = |p: &&String| {
                matches!(
                    file_name(p).split('.').next(),
                    Some("main" | "cli" | "app" | "__main__" | "server")
                )
            };
            (
                "user-facing entry points, end to end".into(),
                priority.iter().filter(entry).cloned().collect(),
            )
        }
        _ => (format!("tests of layer {layer}"), priority.to_vec()),
    };
    json!({"layer": layer, "scope": what, "coverage_target": target, "priority_files": files})
}

fn assess_risks(
    scope: &Scope,
    rows: &[Row],
    framework: Option<Framework>,
    existing: usize,
) -> Vec<Value> {
    let mut risks = Vec::new();
    let mut add = |risk: String, p: &str, i: &str, m: &str| {
        risks.push(json!({"risk": risk, "probability": p, "impact": i, "mitigation": m}));
    };
    let count = |p: Priority| rows.iter().filter(|r| r.priority == p).count();
    if count(Priority::Low) > 0 {
        add(
            format!(
                "{} deleted file(s) may leave dangling imports or callers",
                count(Priority::Low)
            ),
            "Medium",
            "High",
            "run the existing suite; search for references to the removed code",
        );
    }
    if count(Priority::Variable) > 0 {
        add(
            format!(
                "{} configuration file(s) changed",
                count(Priority::Variable)
            ),
            "Medium",
            "High",
            "cover the changed settings in L2 integration tests",
        );
    }
    if framework.is_none() {
        add(
            "no test framework detected".into(),
            "High",
            "High",
            "add a framework; the built-in runner cannot execute tests",
        );
    }
    if existing == 0 {
        add(
            "no existing tests: regressions outside the change go unnoticed".into(),
            "High",
            "Medium",
            "generate L1 tests for the priority files first",
        );
    }
    let lines: u64 = rows
        .iter()
        .filter_map(|r| r.delta)
        .map(|(a, d)| a + d)
        .sum();
    if !scope.whole_project && (rows.len() > 20 || lines > 500) {
        add(
            format!("large change: {} files, {lines} lines touched", rows.len()),
            "High",
            "High",
            "test module by module, High-priority files first",
        );
    }
    if scope.whole_project {
        add(
            format!(
                "{}: the whole project is in scope",
                scope
                    .whole_project_reason
                    .as_deref()
                    .unwrap_or("no change set")
            ),
            "Medium",
            "Medium",
            "focus on entry points and untested modules",
        );
    }
    risks
}

fn cell(v: &Value) -> String {
    v.as_str()
        .map(str::to_string)
        .unwrap_or_else(|| v.to_string())
}

fn render(
    scope: &Scope,
    rows: &[Row],
    notes: &[String],
    fw: (&str, &str),
    layers: &[Value],
    risks: &[Value],
    existing: usize,
) -> String {
    let mut md = format!("# Test Strategy\n\nFramework: **{}** (detected by {}). Existing test files: {existing}.\n\n## Change Analysis\n\n", fw.0, fw.1);
    if scope.whole_project {
        let why = scope
            .whole_project_reason
            .as_deref()
            .unwrap_or("no change set was found");
        let _ = writeln!(md, "**The whole project is in scope**: {why}.\n");
    }
    for n in notes {
        let _ = writeln!(md, "- Note: {n}");
    }
    md.push_str(
        "\n| File | Change Type | +/- | Touched | Impact | Priority |\n|---|---|---|---|---|---|\n",
    );
    for r in rows.iter().take(TABLE_ROWS) {
        let delta = r
            .delta
            .map_or("n/a".to_string(), |(a, d)| format!("+{a}/-{d}"));
        let kind = if scope.whole_project {
            "in scope (no change)".to_string()
        } else {
            change_type(&r.file)
        };
        let mut touched: Vec<&str> = r
            .symbols
            .iter()
            .take(SYMBOLS_SHOWN)
            .map(String::as_str)
            .collect();
        if r.symbols.len() > SYMBOLS_SHOWN {
            touched.push("…");
        }
        let touched = if touched.is_empty() {
            "-".to_string()
        } else {
            touched.join(", ")
        };
        let _ = writeln!(
            md,
            "| {} | {kind} | {delta} | {touched} | {} | {:?} |",
            r.file.path,
            impact(&r.file),
            r.priority
        );
    }
    if rows.len() > TABLE_ROWS {
        let _ = writeln!(
            md,
            "\n… and {} more files (lower priority or name order).",
            rows.len() - TABLE_ROWS
        );
    }
    md.push_str("\n## Test Layer Recommendations\n");
    for l in layers {
        let target = l["coverage_target"]
            .as_f64()
            .map_or("none configured".into(), |t| format!("{t}%"));
        let files: Vec<String> = l["priority_files"]
            .as_array()
            .into_iter()
            .flatten()
            .map(cell)
            .collect();
        let files = if files.is_empty() {
            "none identified in scope".into()
        } else {
            files.join(", ")
        };
        let _ = write!(
            md,
            "\n### {}\n\n- Scope: {}\n- Coverage target: {target}\n- Priority files: {files}\n",
            cell(&l["layer"]),
            cell(&l["scope"])
        );
    }
    md.push_str(
        "\n## Risk Assessment\n\n| Risk | Probability | Impact | Mitigation |\n|---|---|---|---|\n",
    );
    for r in risks {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            cell(&r["risk"]),
            cell(&r["probability"]),
            cell(&r["impact"]),
            cell(&r["mitigation"])
        );
    }
    if risks.is_empty() {
        md.push_str(
            "| no elevated risk found in the change data | Low | Low | the layer gates |\n",
        );
    }
    md.push_str("\n## Test Execution Order\n\n");
    for (i, l) in layers.iter().enumerate() {
        let _ = writeln!(
            md,
            "{}. {}: {}",
            i + 1,
            cell(&l["layer"]),
            cell(&l["scope"])
        );
    }
    if existing > 0 {
        let _ = writeln!(
            md,
            "{}. Regression: the {existing} existing test files with {}",
            layers.len() + 1,
            fw.0
        );
    }
    md
}

/// Records the framework and the test-file conventions once per task (a retry does not repeat it).
fn append_conventions(
    ctx: &RoleContext,
    fw: &str,
    reason: &str,
    existing: &[&String],
    layout: &TestLayout,
) -> Result<(), RoleError> {
    let path = ctx.session.root.join("wisdom/conventions.md");
    mkdirs(&ctx.session.root.join("wisdom"))?;
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|_| "# Conventions\n".into());
    let header = format!("## Test framework ({})", ctx.task.id);
    if text.contains(&header) {
        return Ok(());
    }
    let mut patterns: BTreeMap<&str, usize> = BTreeMap::new();
    for p in existing {
        *patterns.entry(test_pattern(p).unwrap_or("?")).or_default() += 1;
    }
    let patterns: Vec<String> = patterns.iter().map(|(p, n)| format!("{p} ({n})")).collect();
    let _ = write!(
        text,
        "\n{header}\n\n- Framework: {fw} (detected by {reason})\n- Existing test files: {}",
        existing.len()
    );
    if !patterns.is_empty() {
        let _ = write!(text, "; patterns: {}", patterns.join(", "));
    }
    text.push('\n');
    if !layout.dirs.is_empty() {
        let _ = writeln!(text, "- Test folders: {}", layout.dirs.join(", "));
    }
    if !layout.fixtures.is_empty() {
        let _ = writeln!(text, "- Fixtures: {}", layout.fixtures.join(", "));
    }
    for p in existing.iter().take(20) {
        let _ = writeln!(text, "  - {p}");
    }
    Ok(atomic_write(&path, text.as_bytes())?)
}

/// Where the project keeps its tests, so generated tests can follow it.
#[derive(Debug, Default, serde::Serialize)]
struct TestLayout {
    /// Folders holding test files, most used first.
    dirs: Vec<String>,
    /// Naming patterns with their counts: `test_*.py (12)`.
    patterns: Vec<String>,
    /// Fixture folders and files (conftest.py, fixtures/, testdata/, __fixtures__/).
    fixtures: Vec<String>,
}

fn existing_layout(all: &[String], tests: &[&String]) -> TestLayout {
    let mut dirs: BTreeMap<String, usize> = BTreeMap::new();
    let mut patterns: BTreeMap<&str, usize> = BTreeMap::new();
    for t in tests {
        let dir = t.rsplit_once('/').map(|(d, _)| d).unwrap_or(".");
        *dirs.entry(dir.to_string()).or_default() += 1;
        *patterns.entry(test_pattern(t).unwrap_or("?")).or_default() += 1;
    }
    let mut dirs: Vec<(String, usize)> = dirs.into_iter().collect();
    dirs.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut fixtures: Vec<String> = Vec::new();
    for f in all {
        let parts: Vec<&str> = f.split('/').collect();
        if file_name(f) == "conftest.py" {
            fixtures.push(f.clone());
        }
        if let Some(i) = parts
            .iter()
            .position(|p| matches!(*p, "fixtures" | "testdata" | "__fixtures__" | "test_data"))
        {
            let folder = parts[..=i].join("/");
            if !fixtures.contains(&folder) {
                fixtures.push(folder);
            }
        }
    }
    fixtures.truncate(20);
    TestLayout {
        dirs: dirs
            .into_iter()
            .take(10)
            .map(|(d, n)| format!("{d} ({n})"))
            .collect(),
        patterns: patterns.iter().map(|(p, n)| format!("{p} ({n})")).collect(),
        fixtures,
    }
}

fn toolchain_risks(t: &Toolchain) -> Vec<Value> {
    let mut risks = Vec::new();
    let known = t.known_framework().is_some();
    if !t.runner_available && known {
        risks.push(json!({"risk": format!("the {} runner is not available", t.framework),
            "probability": "High", "impact": "High",
            "mitigation": t.install_hint.clone().unwrap_or_else(|| "install the test runner".into())}));
    }
    if t.coverage_tool.is_none() && known {
        risks.push(
            json!({"risk": "coverage cannot be measured: the gate judges on pass rate alone",
            "probability": "High", "impact": "Medium", "mitigation": t.coverage_reason}),
        );
    }
    risks
}

/// The scenario plan's route and why it was chosen, with the scenarios per layer (when the
/// session has a plan).
fn render_scenario_plan(ctx: &RoleContext) -> String {
    let lines = crate::scenario::gate::session_gate_lines(&ctx.session.root);
    let Some((route, rest)) = lines.split_first() else {
        return String::new();
    };
    let mut md =
        format!("\n## Scenario Plan\n\nThe plan is `scenarios.csv` in the session; {route}.\n\n");
    for l in rest {
        md.push_str(&format!("- {}\n", l.trim()));
    }
    md
}

fn render_toolchain(t: &Toolchain, layout: &TestLayout) -> String {
    let mut md = String::from("\n## Toolchain\n\n");
    let _ = writeln!(
        md,
        "- Interpreter: {} ({})",
        t.interpreter,
        t.interpreter_version.as_deref().unwrap_or("not found")
    );
    let _ = writeln!(
        md,
        "- Runner: `{}`{}",
        t.runner.join(" "),
        if t.runner_available {
            String::new()
        } else {
            format!(
                " — not available: {}",
                t.install_hint.as_deref().unwrap_or("")
            )
        }
    );
    if t.known_framework() == Some(Framework::Cargo) {
        let _ = writeln!(
            md,
            "- cargo-nextest: {}",
            if t.nextest {
                "installed"
            } else {
                "not installed"
            }
        );
    }
    let _ = writeln!(
        md,
        "- Coverage: {} ({})",
        t.coverage_tool.as_deref().unwrap_or("none"),
        t.coverage_reason
    );
    md.push_str("\n## Existing Tests\n\n");
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let _ = writeln!(md, "- Folders: {}", list(&layout.dirs));
    let _ = writeln!(md, "- Naming: {}", list(&layout.patterns));
    let _ = writeln!(md, "- Fixtures: {}", list(&layout.fixtures));
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, kind: ChangeKind) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            kind,
        }
    }

    #[test]
    fn priority_follows_the_seed() {
        assert_eq!(
            priority(&file("pkg/new.py", ChangeKind::Untracked)),
            Priority::High
        );
        assert_eq!(
            priority(&file("pkg/new.py", ChangeKind::Added)),
            Priority::High
        );
        assert_eq!(
            priority(&file("pkg/mod.py", ChangeKind::Modified)),
            Priority::Medium
        );
        assert_eq!(
            priority(&file("pkg/old.py", ChangeKind::Deleted)),
            Priority::Low
        );
        assert_eq!(
            priority(&file("pyproject.toml", ChangeKind::Modified)),
            Priority::Variable
        );
        assert_eq!(
            priority(&file("docker/Dockerfile", ChangeKind::Added)),
            Priority::Variable
        );
    }

    #[test]
    fn lines_are_counted_with_or_without_final_newline() {
        assert_eq!(bytecount_lines(b""), 0);
        assert_eq!(bytecount_lines(b"a\nb\n"), 2);
        assert_eq!(bytecount_lines(b"a\nb"), 2);
    }
}
