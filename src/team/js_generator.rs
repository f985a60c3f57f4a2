//! The built-in generator's round for a Node package (node:test, jest, vitest, mocha): the
//! JavaScript/TypeScript search (src/gen/js) over the modules in scope, one readable test file
//! per module in the session's tests/<layer>/. A revision round aims at the lines the last run
//! missed, drops the tests it found broken or flaky, and keeps the tests that found code
//! defects in the framework's expected-failure form with the evidence.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::error::{Result, RoleError};
use super::shared::feedback::{feedback, first_round};
use super::util::{sandbox_for, time_left, to_map};
use super::RoleContext;
use crate::family::node::gen::{self as js, JsGenRequest};
use crate::gen::{self, GenRequest, ModuleRef};
use crate::session::scope::load_scope;
use crate::tasks::Outcome;
use crate::testing::framework::Framework;
use crate::util::{atomic_write, mkdirs};

/// The node binary the project runs with.
const NODE: &str = "node";

/// JavaScript and TypeScript modules in the session's scope (changed files, or all of them).
pub(crate) fn modules_in_scope(ctx: &RoleContext) -> Result<Vec<ModuleRef>> {
    let scope = load_scope(ctx.session)?;
    // Only the project's source: its own tests, examples and scripts are not modules under test.
    let framework = crate::session::framework::session_framework(ctx.session, ctx.repo).ok();
    let project = crate::testing::project_files::of_repo(ctx.repo, framework);
    let files: Vec<String> = scope
        .files
        .iter()
        .filter(|f| f.kind != crate::pipeline::scope::ChangeKind::Deleted)
        .filter(|f| project.sources.contains(&f.path))
        .filter(|f| ctx.repo.join(&f.path).is_file())
        .map(|f| f.path.clone())
        .collect();
    // Programs (package.json `bin`) run when loaded: L3 runs them, L1 and L2 do not import them.
    let bins = js::bin_files(ctx.repo);
    Ok(js::modules(&files)
        .into_iter()
        .filter(|m| !bins.contains(&m.file))
        .collect())
}

/// Why the layer has nothing to do before any search (a dry run's plan), or None.
pub(crate) fn foreseen_not_applicable(ctx: &RoleContext, layer: &str) -> Option<String> {
    if layer.starts_with("L3") {
        let (_, scratch) = gen::scratch_dirs(&ctx.session.root, layer);
        return js::entry_points(NODE, ctx.repo, &scratch)
            .ok()?
            .is_empty()
            .then(|| NO_ENTRY_POINTS.to_string());
    }
    modules_in_scope(ctx)
        .ok()?
        .is_empty()
        .then(|| "no JavaScript or TypeScript module in scope".to_string())
}

const NO_ENTRY_POINTS: &str =
    "no entry points (no package.json bin, no main that reads process.argv): L3 skipped";

fn empty(layer: &str, round: Option<u64>, summary: String) -> Outcome {
    let mut out = Outcome::completed(summary);
    out.data = to_map(
        json!({"layer": layer, "test_files": [], "round": round, "is_revision": round.is_some()}),
    );
    out
}

/// One round of the JavaScript generator for `framework`.
pub(crate) fn js_round(
    ctx: &RoleContext,
    layer: &str,
    round: Option<u64>,
    framework: Framework,
    not_applicable: impl Fn(&str, &str) -> Outcome,
) -> Result<Outcome> {
    let modules = modules_in_scope(ctx)?;
    let dir = ctx.session.root.join("tests").join(layer);
    mkdirs(&dir)?;
    if modules.is_empty() && !layer.starts_with("L3") {
        if round.is_none() {
            return Ok(not_applicable(
                "no JavaScript or TypeScript module in scope",
                "name the code to test with --base REV (a branch's whole change), or commit the \
                 change and run with no change set (the whole project)",
            ));
        }
        return Ok(empty(
            layer,
            round,
            format!("{layer}: no JavaScript or TypeScript module in scope: 0 test files written"),
        ));
    }
    let fb = if round.is_some() {
        feedback(&ctx.session.root, layer)
    } else {
        first_round(&ctx.session.root)
    };
    let state = ctx.session.load_state()?;
    let (mirror, scratch) = gen::scratch_dirs(&ctx.session.root, layer);
    crate::workspace::mirror(ctx.repo, &mirror, &BTreeMap::new()).map_err(|cause| {
        RoleError::Mirror {
            into: mirror.clone(),
            cause,
        }
    })?;
    link_node_modules(ctx, &mirror).map_err(RoleError::io("link", &mirror))?;
    let left = time_left(ctx.deadline)?;
    let budget = ctx
        .config
        .generator_budget_s
        .min(left.as_secs_f64() * 0.8)
        .max(1.0);
    let req = JsGenRequest {
        base: GenRequest {
            modules: modules.clone(),
            layer: layer.to_string(),
            seed: state.seed.wrapping_add(round.unwrap_or(0)),
            budget_s: budget,
            call_timeout_s: ctx.config.generator_call_timeout_s,
            target_percent: ctx.config.coverage_target(layer).unwrap_or(80.0),
            missing: fb.missing.clone(),
            avoid: fb.avoid.iter().map(|a| js::unescape_xml(a)).collect(),
        },
        framework: framework.as_str().to_string(),
    };
    (ctx.progress)(
        "searching",
        Some(20.0),
        Some(format!(
            "{} module(s), budget {budget:.0}s, seed {}",
            modules.len(),
            req.base.seed
        )),
    );
    let timeout = left.min(std::time::Duration::from_secs_f64(budget + 60.0));
    let sandbox = sandbox_for(
        ctx,
        &format!("generator-{layer}"),
        js::read_roots(NODE, ctx.repo),
        &[],
    )?;
    let result = js::generate(NODE, &mirror, &scratch, &req, timeout, sandbox.as_ref())?;
    if layer.starts_with("L3") && result.stats["entry_points"].as_u64() == Some(0) {
        if round.is_none() {
            return Ok(not_applicable(
                NO_ENTRY_POINTS,
                "L3 runs once the package has an entry point",
            ));
        }
        return Ok(empty(layer, round, format!("{layer}: {NO_ENTRY_POINTS}")));
    }
    let drop: BTreeSet<String> = fb.avoid.iter().map(|a| js::unescape_xml(a)).collect();
    let installed = crate::testing::deps::node_modules(ctx.repo, &ctx.session.root);
    let form = js::expected_failure_form(framework, installed.as_deref());
    let mut written = Vec::new();
    let mut tests = 0;
    for m in result.modules.iter().filter(|m| !m.source.is_empty()) {
        let previous = std::fs::read_to_string(dir.join(&m.test_file)).unwrap_or_default();
        let combined = js::carry_over(&previous, &m.source, &fb.defects, &drop);
        let source = js::mark_expected_failures(&combined, &fb.defects, form);
        atomic_write(&dir.join(&m.test_file), source.as_bytes())?;
        written.push(format!("tests/{layer}/{}", m.test_file));
        tests += m.tests.len();
    }
    let import_errors = result.import_errors();
    (ctx.progress)(
        "tests_written",
        Some(90.0),
        Some(format!("{tests} tests in {} file(s)", written.len())),
    );
    let reached = result.reached_percent();
    let mut summary = format!(
        "{layer}: {tests} {framework} tests in {} file(s) for {} module(s); search reached {} line coverage; {} contract finding(s)",
        written.len(),
        modules.len(),
        reached.map_or("n/a".into(), |r| format!("{r:.1}%")),
        result.findings.len()
    );
    if let Some(n) = round {
        summary = format!(
            "GC round {n}: revision: {summary}; {} broken or flaky test(s) dropped, {} code-defect test(s) kept as expected failures",
            fb.avoid.len(),
            fb.defects.len()
        );
    }
    if !import_errors.is_empty() {
        summary.push_str(&format!(
            "; {} module(s) could not be loaded",
            import_errors.len()
        ));
    }
    let mut out = Outcome::completed(summary);
    out.data = to_map(json!({
        "layer": layer, "test_files": written, "round": round, "is_revision": round.is_some(),
        "seed": req.base.seed, "tests": tests, "search_coverage": reached,
        "findings": result.findings, "import_errors": import_errors, "stats": result.stats,
        "generator": "javascript",
    }));
    out.artifacts = written;
    Ok(out)
}

/// Links the node_modules the package runs with (its own, else the one fetched into the
/// session) into the mirror, which copies no dependencies.
fn link_node_modules(ctx: &RoleContext, mirror: &std::path::Path) -> std::io::Result<()> {
    let Some(real) = crate::testing::deps::node_modules(ctx.repo, &ctx.session.root) else {
        return Ok(());
    };
    let link = mirror.join("node_modules");
    if link.symlink_metadata().is_ok() {
        if std::fs::read_link(&link).ok().as_deref() == Some(real.as_path()) {
            return Ok(());
        }
        std::fs::remove_file(&link)?;
    }
    std::os::unix::fs::symlink(real, link)
}
