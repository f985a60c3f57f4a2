//! Generator: the one generator role. Its chain of backends is the agents the user named and the
//! built-in generator; the built-in one is the project's family's (`family::Language::generator`:
//! Python's search, JavaScript/TypeScript's), run over the modules in scope, writing one readable
//! test file per module into the session's tests/<layer>/. A GC round aims at the lines still
//! missing, drops tests the executor found broken or flaky, and keeps tests that found code
//! defects in the framework's expected-failure form with the evidence; the seed's revision
//! strategies (conservative, aggressive, surgical) apply to every family. A family with no
//! built-in generator yet says so.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{json, Value};

use super::error::{Result, RoleError};
use super::search::{not_yet, search};
use super::shared::feedback::{feedback, first_round, Feedback};
use super::shared::first_tests;
use super::shared::gen_cache;
use super::shared::reflect;
use super::util::{time_left, to_map};
use super::RoleContext;
use crate::family::generator::{Generator, Revision};
use crate::family::{self, Capability};
use crate::gen::{self, GenRequest};
use crate::pipeline::controls::REFLECTIVE;
use crate::pipeline::scope::ChangeKind;
use crate::session::scope::load_scope;
use crate::tasks::Outcome;
use crate::testing::framework::{self, Framework, SessionFramework};
use crate::util::{atomic_write, mkdirs};

/// One generator task for the session's `framework` (resolved before the role starts).
pub fn run(ctx: &RoleContext, framework: &SessionFramework) -> Outcome {
    let Some(layer) = ctx.task.layer.as_deref() else {
        return Outcome::failed(format!(
            "task {} has no layer: the generator needs one",
            ctx.task.id
        ));
    };
    let round = ctx.task.gc_round();
    let name = framework::name_of(framework);
    (ctx.progress)(
        "context_loaded",
        Some(10.0),
        Some(format!("framework {name}, layer {layer}")),
    );
    // The fallback chain: each agent backend in turn, the built-in generator where it is named.
    let mut tried: Vec<Value> = Vec::new();
    for backend in ctx.agents.chain("generator") {
        let result = if backend.is_builtin() {
            builtin_round(ctx, layer, round, framework)
        } else {
            match framework {
                Ok(known) if not_yet(framework, Capability::AgentGeneration).is_none() => {
                    super::shared::agent_gen::agent_round(ctx, layer, round, &backend, *known)
                }
                _ => Err(RoleError::NotYet {
                    what: Capability::AgentGeneration.label(),
                    framework: name.to_string(),
                    reason: not_yet(framework, Capability::AgentGeneration)
                        .unwrap_or("no test framework was detected"),
                }),
            }
        };
        match result {
            Ok(mut out) => {
                if !tried.is_empty() {
                    out.data.insert("fallbacks".into(), json!(tried));
                    out.summary =
                        format!("{} (after {} failed backend(s))", out.summary, tried.len());
                }
                return out;
            }
            Err(e) => {
                (ctx.progress)(
                    "backend_failed",
                    None,
                    Some(format!("{}: {e}", backend.name)),
                );
                tried.push(json!({"backend": backend.name, "error": e.to_string()}));
            }
        }
    }
    let reasons: Vec<String> = tried
        .iter()
        .map(|t| {
            format!(
                "{}: {}",
                t["backend"].as_str().unwrap_or(""),
                t["error"].as_str().unwrap_or("")
            )
        })
        .collect();
    let has_tests = std::fs::read_dir(ctx.session.root.join("tests").join(layer))
        .is_ok_and(|mut rd| rd.any(|e| e.is_ok_and(|e| e.path().is_file())));
    if round.is_some() && has_tests {
        // A revision round that added nothing: the layer keeps its tests and the gate decides.
        let mut out = Outcome::completed(format!(
            "{layer}: no backend added an accepted test this round ({})",
            reasons.join("; ")
        ));
        out.data = to_map(json!({"layer": layer, "test_files": [], "round": round,
                                 "is_revision": true, "fallbacks": tried}));
        return out;
    }
    let mut out = Outcome::failed(format!(
        "every backend of the chain failed: {}",
        reasons.join("; ")
    ));
    out.data.insert("fallbacks".into(), json!(tried));
    out
}

/// The built-in generator: the family's search, a clear note for a family that has none.
fn builtin_round(
    ctx: &RoleContext,
    layer: &str,
    round: Option<u64>,
    framework: &SessionFramework,
) -> Result<Outcome> {
    let found = framework
        .as_ref()
        .ok()
        .and_then(|f| family::of(f.family()).generator().map(|g| (*f, g)));
    let Some((framework, generator)) = found else {
        let framework = framework::name_of(framework);
        if round.is_none() {
            return Ok(not_applicable(
                ctx,
                layer,
                &format!("no built-in generator for {framework} yet"),
                "a generator role of your own writes them (a role file with backend: command, \
                 given with --roles-dir)",
            ));
        }
        let mut out = Outcome::completed(format!(
            "no built-in generator for {framework} yet: 0 test files written"
        ));
        out.data = to_map(
            json!({"layer": layer, "test_files": [], "round": round, "is_revision": round.is_some()}),
        );
        return Ok(out);
    };
    family_round(ctx, layer, round, framework, generator)
}

/// The modules the family's generator tests among the session's scope (changed files, or all).
fn modules_in_scope(
    ctx: &RoleContext,
    framework: Option<Framework>,
    generator: &dyn Generator,
) -> Result<Vec<gen::ModuleRef>> {
    let scope = load_scope(ctx.session)?;
    let files: Vec<String> = scope
        .files
        .iter()
        .filter(|f| f.kind != ChangeKind::Deleted && ctx.repo.join(&f.path).is_file())
        .map(|f| f.path.clone())
        .collect();
    Ok(generator.modules(ctx.repo, framework, &files))
}

/// What the built-in generator knows before it searches: a layer it will find nothing to do for
/// (no generator for the framework, no module in scope for L1/L2, no entry point for L3), for a
/// dry run's plan. None when it will work, or when an agent backend comes first (what an agent
/// does is not known).
pub fn foreseen_not_applicable(
    ctx: &RoleContext,
    framework: &SessionFramework,
    layer: &str,
) -> Option<String> {
    if !ctx.agents.chain("generator").first()?.is_builtin() {
        return None;
    }
    let Some(generator) = framework
        .as_ref()
        .ok()
        .and_then(|f| family::of(f.family()).generator())
    else {
        let name = framework::name_of(framework);
        return Some(format!("no built-in generator for {name} yet"));
    };
    if layer.starts_with("L3") {
        let (_, scratch) = gen::scratch_dirs(&ctx.session.root, layer);
        mkdirs(&scratch).ok()?;
        return generator
            .entry_points(ctx.repo, &scratch)
            .ok()?
            .is_empty()
            .then(|| generator.no_entry_points().to_string());
    }
    modules_in_scope(ctx, framework.as_ref().ok().copied(), generator)
        .ok()?
        .is_empty()
        .then(|| format!("no {} in scope", generator.module_words()))
}

/// Whether reading the project's files finds no entry point for L3 (a scan that fails says
/// nothing: the search decides).
fn no_entry_points_read(ctx: &RoleContext, layer: &str, generator: &dyn Generator) -> bool {
    let (_, scratch) = gen::scratch_dirs(&ctx.session.root, layer);
    mkdirs(&scratch).is_ok()
        && generator
            .entry_points(ctx.repo, &scratch)
            .is_ok_and(|found| found.is_empty())
}

/// The layer has nothing this generator can do: the outcome says why and what the user can do,
/// and `results/<layer>-not-applicable.json` keeps it next to the run records.
fn not_applicable(ctx: &RoleContext, layer: &str, reason: &str, what_to_do: &str) -> Outcome {
    let record = json!({"layer": layer, "task_id": ctx.task.id, "status": "not_applicable",
                        "reason": reason, "what_to_do": what_to_do});
    let path = ctx
        .session
        .root
        .join("results")
        .join(format!("{layer}-not-applicable.json"));
    if let Err(e) = crate::util::atomic_write_json(&path, &record) {
        tracing::warn!("{}: {e}", path.display());
    }
    let mut out = Outcome::not_applicable(format!("{reason}; {what_to_do}"));
    out.data = to_map(
        json!({"layer": layer, "test_files": [], "not_applicable": reason,
                             "what_to_do": what_to_do}),
    );
    out
}

/// The seed's revision engine: how a GC round changes the tests.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Strategy {
    /// Rounds 1-2: targeted additions at the missing lines, everything validated.
    Conservative,
    /// Pass rate above 80 % with similar failures: batch changes, a larger search.
    Aggressive,
    /// A regression of more than 10 points: back to the best earlier set, minimal change.
    Surgical { restore: u64 },
}

/// The earlier round with the best pass rate (0, the first run, when none is better).
fn best_round(fb: &Feedback) -> u64 {
    fb.history
        .iter()
        .copied()
        .fold(None, |acc: Option<(u64, f64)>, r| match acc {
            Some(a) if a.1 >= r.1 => Some(a),
            _ => Some(r),
        })
        .map_or(0, |(k, _)| k)
}

fn pick_strategy(round: u64, fb: &Feedback) -> Strategy {
    if let Some(&(_, last)) = fb.history.last() {
        let best = fb.history[..fb.history.len() - 1].iter().copied().fold(
            None,
            |acc: Option<(u64, f64)>, r| match acc {
                Some(a) if a.1 >= r.1 => Some(a),
                _ => Some(r),
            },
        );
        if let Some((k, rate)) = best {
            if rate - last > 0.10 {
                return Strategy::Surgical { restore: k };
            }
        }
        if round >= 3 && last > 0.8 && fb.similar_failures >= 2 {
            return Strategy::Aggressive;
        }
    }
    Strategy::Conservative
}

/// A regression of more than 10 points: go back to the best earlier round's tests (keeping the
/// defect findings marked), change nothing else.
fn surgical_round(
    ctx: &RoleContext,
    layer: &str,
    round: u64,
    restore: u64,
    fb: &Feedback,
    dir: &Path,
    (framework, generator): (Framework, &dyn Generator),
) -> Result<Outcome> {
    let from = history_dir(&ctx.session.root, layer, restore);
    if !from.is_dir() {
        return Err(RoleError::RoundNotKept {
            round: restore,
            kept_in: from,
        });
    }
    for entry in std::fs::read_dir(dir)
        .map_err(RoleError::io("read", dir))?
        .flatten()
    {
        if generator.is_test_file(&entry.file_name().to_string_lossy()) {
            std::fs::remove_file(entry.path()).map_err(RoleError::io("remove", &entry.path()))?;
        }
    }
    copy_test_files(generator, &from, dir)?;
    let node_modules = crate::testing::deps::node_modules(ctx.repo, &ctx.session.root);
    let mut written = Vec::new();
    for entry in std::fs::read_dir(dir)
        .map_err(RoleError::io("read", dir))?
        .flatten()
    {
        let path = entry.path();
        if generator.is_test_file(&entry.file_name().to_string_lossy()) {
            let text = std::fs::read_to_string(&path).map_err(RoleError::io("read", &path))?;
            // The restored tests, with the defects found since marked; nothing else changes.
            let marked = generator.revise(&Revision {
                previous: &text,
                new: &text,
                defects: &fb.defects,
                avoid: &BTreeSet::new(),
                revising: true,
                framework,
                node_modules: node_modules.as_deref(),
            });
            atomic_write(&path, marked.as_bytes())?;
            written.push(format!(
                "tests/{layer}/{}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    written.sort();
    copy_test_files(
        generator,
        dir,
        &history_dir(&ctx.session.root, layer, round),
    )?;
    let last = fb.history.last().map_or(0.0, |h| h.1);
    let mut out = Outcome::completed(format!(
        "GC round {round} (Surgical): pass rate fell to {:.1}%; restored the {} test file(s) of round {restore}",
        last * 100.0,
        written.len()
    ));
    out.data = to_map(
        json!({"layer": layer, "test_files": written, "round": round, "is_revision": true,
        "strategy": "Surgical", "restored_round": restore}),
    );
    out.artifacts = written;
    Ok(out)
}

/// Where each round's test set is kept, so a surgical round can go back to it.
fn history_dir(session: &Path, layer: &str, round: u64) -> std::path::PathBuf {
    session
        .join("tests")
        .join(".history")
        .join(layer)
        .join(round.to_string())
}

/// The family's test files of `from`, copied into `to`.
fn copy_test_files(generator: &dyn Generator, from: &Path, to: &Path) -> Result<()> {
    mkdirs(to)?;
    for entry in std::fs::read_dir(from)
        .map_err(RoleError::io("read", from))?
        .flatten()
    {
        let path = entry.path();
        if path.is_file() && generator.is_test_file(&entry.file_name().to_string_lossy()) {
            std::fs::copy(&path, to.join(entry.file_name()))
                .map_err(RoleError::io("copy", &path))?;
        }
    }
    Ok(())
}

/// One round of the family's generator.
fn family_round(
    ctx: &RoleContext,
    layer: &str,
    round: Option<u64>,
    framework: Framework,
    generator: &dyn Generator,
) -> Result<Outcome> {
    let modules = modules_in_scope(ctx, Some(framework), generator)?;
    let words = generator.module_words();
    let dir = ctx.session.root.join("tests").join(layer);
    mkdirs(&dir)?;
    // L3 tests the project's entry points, whatever modules the change touched.
    if modules.is_empty() && !layer.starts_with("L3") && round.is_none() {
        return Ok(not_applicable(
            ctx,
            layer,
            &format!("no {words} in scope"),
            "name the code to test with --base REV (a branch's whole change), or commit the \
             change and run with no change set (the whole project)",
        ));
    }
    if modules.is_empty() && !layer.starts_with("L3") {
        let mut out = Outcome::completed(format!(
            "{layer}: no {words} in scope: 0 test files written"
        ));
        out.data = to_map(
            json!({"layer": layer, "test_files": [], "round": round, "is_revision": round.is_some()}),
        );
        return Ok(out);
    }
    let mut fb = if round.is_some() {
        feedback(&ctx.session.root, layer)
    } else {
        first_round(&ctx.session.root)
    };
    let chosen = ctx
        .session
        .load_state()
        .ok()
        .and_then(|s| s.controls.strategy);
    let strategy = round.map_or(Strategy::Conservative, |r| {
        let auto = pick_strategy(r, &fb);
        match chosen.as_deref() {
            // A reflection decided this round.
            Some(REFLECTIVE) => match reflect::next_for(&ctx.session.root, layer) {
                Some(reflect::Next::Aggressive) => Strategy::Aggressive,
                Some(reflect::Next::Surgical) => Strategy::Surgical {
                    restore: best_round(&fb),
                },
                _ => auto,
            },
            // The starting strategy named with --strategy; later rounds choose their own.
            Some("aggressive") if r == 1 && auto == Strategy::Conservative => Strategy::Aggressive,
            Some("surgical") if r == 1 && auto == Strategy::Conservative => Strategy::Surgical {
                restore: best_round(&fb),
            },
            _ => auto,
        }
    });
    if let (Strategy::Surgical { restore }, Some(r)) = (strategy, round) {
        let edits = (framework, generator);
        return surgical_round(ctx, layer, r, restore, &fb, &dir, edits);
    }
    // A revision round aims only at the lines still missing, which pay less each round: it gets
    // half the first round's budget, and a quarter from the second on.
    let mut budget_factor = round.map_or(1.0, |r| 0.5f64.powi(r.min(2) as i32));
    if strategy == Strategy::Aggressive {
        // Batch change: every failing test that is not a finding goes, and the search widens
        // (half again the round's budget).
        let batch = std::mem::take(&mut fb.batch);
        fb.avoid.extend(batch);
        budget_factor *= 1.5;
    }
    // A revision round searches only the modules with lines still to reach: the others keep
    // their tests as they are. Not when tests are to be dropped or marked as defects: that is
    // the family's revision of every file.
    let untouched = fb.avoid.is_empty() && fb.defects.is_empty();
    let modules = match round {
        Some(_) if untouched && !layer.starts_with("L3") => still_missing(modules, &fb.missing),
        _ => modules,
    };
    let state = ctx.session.load_state()?;
    let left = time_left(ctx.deadline)?;
    let budget_for = |modules: usize| {
        (budget_factor * ctx.config.generator_budget(layer, modules))
            .min(left.as_secs_f64() * 0.8)
            .max(1.0)
    };
    let budget = budget_for(modules.len());
    let target = ctx.config.coverage_target(layer).unwrap_or(80.0);
    let req = GenRequest {
        modules: modules.clone(),
        layer: layer.to_string(),
        // Each round searches afresh from its own seed, reproducibly.
        seed: state.seed.wrapping_add(round.unwrap_or(0)),
        budget_s: budget,
        call_timeout_s: ctx.config.generator_call_timeout_s,
        target_percent: target,
        missing: fb.missing.clone(),
        avoid: fb.avoid.iter().map(|a| generator.test_key(a)).collect(),
        changed: match round {
            None if !layer.starts_with("L3") => changed_lines(ctx, &modules),
            _ => BTreeMap::new(),
        },
    };
    // Modules whose tests an earlier session already searched for the same code are reused
    // (L3 runs the entry points, not modules: it is always searched).
    let lookup = if state.controls.no_cache || layer.starts_with("L3") {
        gen_cache::Lookup::off(&req)
    } else {
        let root = ctx.session.sessions_root();
        gen_cache::Lookup::of(&root, ctx.repo, framework, generator, &req)
    };
    if let Some(said) = lookup.said() {
        (ctx.progress)("cache", Some(15.0), Some(said));
    }
    let rest = lookup.rest(&req, ctx.repo);
    if !rest.modules.is_empty() || layer.starts_with("L3") {
        (ctx.progress)(
            "searching",
            Some(20.0),
            Some(format!(
                "{} module(s), budget {:.0}s, seed {}",
                rest.modules.len(),
                rest.budget_s,
                req.seed
            )),
        );
    }
    // L3 with no entry point to run, read from the files: no search at all (Rust and Go never
    // have one; the Python and JavaScript helpers also say so from their search).
    let mut first = None;
    let result = if layer.starts_with("L3") && no_entry_points_read(ctx, layer, generator) {
        gen::GenResult {
            modules: Vec::new(),
            findings: Vec::new(),
            stats: json!({"entry_points": 0}),
        }
    } else if rest.modules.is_empty() && !layer.starts_with("L3") {
        lookup.merge(None, &req.modules)
    } else {
        if round.is_none() && !layer.starts_with("L3") && generator.quick_first_pass() {
            let search = |quick: &GenRequest| search(ctx, framework, layer, quick);
            first = first_tests::ahead(ctx, (framework, generator), &rest, search);
        }
        lookup.merge(Some(search(ctx, framework, layer, &rest)?), &req.modules)
    };
    let no_entry_points = result.stats["entry_points"].as_u64() == Some(0);
    if layer.starts_with("L3") && no_entry_points {
        if round.is_none() {
            return Ok(not_applicable(
                ctx,
                layer,
                generator.no_entry_points(),
                "L3 runs once the project has an entry point",
            ));
        }
        let mut out = Outcome::completed(format!("{layer}: {}", generator.no_entry_points()));
        out.data =
            to_map(json!({"layer": layer, "test_files": [], "round": round, "is_revision": true}));
        return Ok(out);
    }
    // A search that found nothing this layer tests (Rust's L2 on an API of single calls).
    if let Some(reason) = result.stats["not_applicable"].as_str() {
        if round.is_none() {
            return Ok(not_applicable(
                ctx,
                layer,
                reason,
                "the layer below tests these calls one by one",
            ));
        }
    }
    let altered = if round.is_none() && !layer.starts_with("L3") {
        compare_with_base(ctx, (layer, framework), generator, &result)
    } else {
        BTreeSet::new()
    };
    let avoid: BTreeSet<String> = req.avoid.iter().cloned().collect();
    let node_modules = crate::testing::deps::node_modules(ctx.repo, &ctx.session.root);
    let mut written = Vec::new();
    let mut tests = 0;
    for m in result.modules.iter().filter(|m| !m.source.is_empty()) {
        // A test whose call behaves otherwise on the base is the user's choice, not ours.
        let kept: BTreeSet<String> = m
            .tests
            .iter()
            .filter(|t| !altered.contains(*t))
            .cloned()
            .collect();
        let searched = if kept.len() == m.tests.len() {
            m.source.clone()
        } else {
            generator.keep_only(&m.source, &kept).unwrap_or_default()
        };
        if searched.is_empty() {
            continue;
        }
        // Tests that found code defects are findings: they survive the regeneration; what else
        // of the last round a revision keeps is the family's to say.
        let previous = std::fs::read_to_string(dir.join(&m.test_file)).unwrap_or_default();
        let source = generator.revise(&Revision {
            previous: &previous,
            new: &searched,
            defects: &fb.defects,
            avoid: &avoid,
            revising: round.is_some(),
            framework,
            node_modules: node_modules.as_deref(),
        });
        atomic_write(&dir.join(&m.test_file), source.as_bytes())?;
        written.push(format!("tests/{layer}/{}", m.test_file));
        tests += kept.len();
    }
    if let Some(first) = &first {
        first_tests::retire(first);
    }
    // The plan's scenarios with stated checks get their own files (the first round writes them;
    // revisions keep them).
    if round.is_none() && generator.writes_scenario_checks() {
        let searched: std::collections::BTreeSet<String> =
            result.modules.iter().map(|m| m.test_file.clone()).collect();
        let (files, n) =
            super::shared::scenario_tests::write(&ctx.session.root, layer, &dir, &searched)?;
        for f in &files {
            super::shared::discoveries::add(
                &ctx.session.root,
                "generator",
                &crate::scenario::board::Discovery::TestPattern {
                    name: f.rsplit('/').next().unwrap_or(f).to_string(),
                    file: f.clone(),
                    description: "a scenario's stated checks, one test each, named after it".into(),
                },
            );
        }
        written.extend(files);
        tests += n;
    }
    // The board as this round read it (agent prompts carry it; the count is on record).
    let discoveries_read = super::shared::discoveries::read(&ctx.session.root).len();
    copy_test_files(
        generator,
        &dir,
        &history_dir(&ctx.session.root, layer, round.unwrap_or(0)),
    )?;
    // The round's searches wait in the session for the executor's verdict on their tests.
    let kept_for = (layer, round.unwrap_or(0));
    if let Err(e) = lookup.leave_pending(&ctx.session.root, kept_for, &result) {
        (ctx.progress)("cache", None, Some(format!("not kept for reuse: {e}")));
    }
    let import_errors = result.import_errors();
    (ctx.progress)(
        "tests_written",
        Some(90.0),
        Some(format!("{tests} tests in {} file(s)", written.len())),
    );
    let reached = result.reached_percent();
    let mut summary = format!(
        "{layer}: {tests} {} in {} file(s) for {} module(s); search reached {} line coverage; {} contract finding(s)",
        generator.tests_noun(framework),
        written.len(),
        modules.len(),
        reached.map_or("n/a".into(), |r| format!("{r:.1}%")),
        result.findings.len()
    );
    if let Some(n) = round {
        summary = format!(
            "{} ({strategy:?}): {summary}",
            "revision",
            strategy = strategy
        );
        summary = format!(
            "GC round {n}: {summary}; {} broken or flaky test(s) dropped, {} code-defect test(s) kept as {}",
            fb.avoid.len(),
            fb.defects.len(),
            generator.defects_kept_as()
        );
    }
    if let Some(said) = lookup.said() {
        summary.push_str(&format!("; {said}"));
    }
    if let Some(headline) = behaviour_headline(&ctx.session.root) {
        summary.push_str(&format!("; {headline}"));
    }
    if !import_errors.is_empty() {
        summary.push_str(&format!(
            "; {} module(s) {}",
            import_errors.len(),
            generator.unloadable()
        ));
    }
    let mut out = Outcome::completed(summary);
    out.data = to_map(json!({
        "layer": layer, "test_files": written, "round": round, "is_revision": round.is_some(),
        "seed": req.seed, "tests": tests, "strategy": format!("{strategy:?}"), "search_coverage": reached, "findings": result.findings,
        "import_errors": import_errors, "stats": result.stats, "discoveries_read": discoveries_read,
        "cache": lookup.said(),
        "first_tests_at": first.filter(|f| f.tests > 0).map(|f| f.at),
    }));
    out.artifacts = written;
    Ok(out)
}

/// The modules whose files still have lines to reach; all of them when none has (the gate may
/// be missed on branches alone).
fn still_missing(
    modules: Vec<gen::ModuleRef>,
    missing: &BTreeMap<String, Vec<u32>>,
) -> Vec<gen::ModuleRef> {
    let open: Vec<gen::ModuleRef> = modules
        .iter()
        .filter(|m| missing.get(&m.file).is_some_and(|lines| !lines.is_empty()))
        .cloned()
        .collect();
    if open.is_empty() {
        modules
    } else {
        open
    }
}

/// The comparison with the base in the search's mirror, refreshed (a sharded search ran in
/// other hosts' mirrors); the search's tests whose call changed behaviour.
fn compare_with_base(
    ctx: &RoleContext,
    (layer, framework): (&str, Framework),
    generator: &dyn Generator,
    result: &gen::GenResult,
) -> BTreeSet<String> {
    if result.modules.iter().all(|m| m.calls.is_empty()) {
        return BTreeSet::new();
    }
    let (mirror, _) = gen::scratch_dirs(&ctx.session.root, layer);
    let fresh = crate::workspace::mirror(ctx.repo, &mirror, &BTreeMap::new()).is_ok()
        && generator
            .prepare_mirror(ctx.repo, &ctx.session.root, &mirror)
            .is_ok();
    if !fresh {
        return BTreeSet::new();
    }
    super::shared::behaviour::compare_with_base(ctx, layer, generator, &mirror, result, framework)
}

/// The lines of `modules`' files the session's change added or modified (HEAD's numbering),
/// against its base; empty when the session is not change-scoped.
fn changed_lines(ctx: &RoleContext, modules: &[gen::ModuleRef]) -> BTreeMap<String, Vec<u32>> {
    let mut all = super::shared::localise::changed_lines(ctx.session, ctx.repo);
    all.retain(|file, _| modules.iter().any(|m| &m.file == file));
    all
}

/// "Your change altered N behaviours in M functions", once the comparison found any.
fn behaviour_headline(session: &Path) -> Option<String> {
    let report: gen::behaviour::BehaviourReport =
        crate::util::read_json(&session.join(gen::behaviour::REPORT_FILE)).ok()?;
    Some(report.headline())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revision_searches_the_modules_with_lines_to_reach_or_all_when_none_has() {
        let m = |f: &str| gen::ModuleRef {
            module: f.trim_end_matches(".py").into(),
            file: f.into(),
        };
        let all = vec![m("a.py"), m("b.py"), m("c.py")];
        let missing = BTreeMap::from([("b.py".to_string(), vec![3]), ("c.py".to_string(), vec![])]);
        assert_eq!(still_missing(all.clone(), &missing), vec![m("b.py")]);
        assert_eq!(still_missing(all.clone(), &BTreeMap::new()), all);
    }

    #[test]
    fn the_revision_strategy_follows_the_seed() {
        let fb = |history: Vec<(u64, f64)>, similar| Feedback {
            history,
            similar_failures: similar,
            ..Default::default()
        };
        assert_eq!(
            pick_strategy(1, &fb(vec![(0, 0.7)], 3)),
            Strategy::Conservative
        );
        assert_eq!(
            pick_strategy(2, &fb(vec![(0, 0.9), (1, 0.75)], 0)),
            Strategy::Surgical { restore: 0 }
        );
        assert_eq!(
            pick_strategy(3, &fb(vec![(0, 0.8), (1, 0.85), (2, 0.9)], 2)),
            Strategy::Aggressive
        );
        assert_eq!(
            pick_strategy(3, &fb(vec![(0, 0.8), (1, 0.85), (2, 0.9)], 1)),
            Strategy::Conservative
        );
    }
}
