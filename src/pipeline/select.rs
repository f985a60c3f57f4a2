//! Pipeline selection (`--pipeline auto`), the complexity score, task-analysis.json, and the
//! creation of a session's tasks from the chosen registry.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::config::{new_task, TeamConfig};
use super::scope::ChangeScope;
use crate::tasks::{layer_code, meta, Task};

pub const MODES: [&str; 3] = ["targeted", "standard", "comprehensive"];

/// Keywords in the task text that name a pipeline outright, strongest first.
const KEYWORDS: [(&str, &[&str]); 3] = [
    (
        "comprehensive",
        &[
            "comprehensive",
            "e2e",
            "end-to-end",
            "end to end",
            "full suite",
            "all layers",
            "thorough",
        ],
    ),
    ("standard", &["integration", "standard"]),
    (
        "targeted",
        &["targeted", "unit only", "quick", "smoke", "hotfix"],
    ),
];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Selection {
    pub mode: String,
    pub reason: String,
}

/// The scope table (specs/pipelines.md): a keyword in the task wins; otherwise
/// files <= 3 in <= 1 module -> targeted, files <= 10 in <= 3 modules -> standard, else comprehensive.
pub fn select_mode(task: &str, scope: &ChangeScope) -> Selection {
    let text = task.to_lowercase();
    for (mode, words) in KEYWORDS {
        if let Some(word) = words.iter().find(|w| contains_word(&text, w)) {
            return Selection {
                mode: mode.to_string(),
                reason: format!("the task mentions '{word}'"),
            };
        }
    }
    let files = scope.files.len();
    let modules = scope.modules().len();
    let mode = if files <= 3 && modules <= 1 {
        "targeted"
    } else if files <= 10 && modules <= 3 {
        "standard"
    } else {
        "comprehensive"
    };
    Selection {
        mode: mode.to_string(),
        reason: format!(
            "{files} file(s) in {modules} module(s) in scope{}",
            match (&scope.whole_project_reason, scope.whole_project) {
                (Some(why), true) => format!(" (whole project: {why})"),
                (None, true) => " (whole project)".into(),
                _ => String::new(),
            }
        ),
    }
}

fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric()) && !after.is_some_and(|c| c.is_alphanumeric())
    })
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Complexity {
    pub score: u32,
    pub level: String,
    pub factors: Vec<String>,
}

/// +1 per worker capability, +1 per layer beyond the first, +1 per parallel window,
/// +1 for more than 10 files in scope, +1 for more than 3 modules. 1-2 Low, 3-5 Medium, 6+ High.
pub fn complexity(config: &TeamConfig, mode: &str, scope: &ChangeScope) -> Complexity {
    let Ok(pipeline) = config.pipeline(mode) else {
        return Complexity {
            score: 0,
            level: "Low".into(),
            factors: vec![],
        };
    };
    let mut factors = Vec::new();
    let mut roles: Vec<&str> = pipeline.tasks.iter().map(|t| t.owner.as_str()).collect();
    roles.dedup();
    roles.sort();
    roles.dedup();
    factors.push(format!("{} capabilities", roles.len()));
    let mut score = roles.len() as u32;
    let mut layers: Vec<&str> = pipeline
        .tasks
        .iter()
        .filter_map(|t| t.layer.as_deref())
        .collect();
    layers.sort();
    layers.dedup();
    if layers.len() > 1 {
        score += layers.len() as u32 - 1;
        factors.push(format!("{} layers", layers.len()));
    }
    let windows = parallel_windows(
        pipeline
            .tasks
            .iter()
            .map(|t| (t.id.as_str(), &t.blocked_by)),
    );
    if windows > 0 {
        score += windows;
        factors.push(format!("{windows} parallel windows"));
    }
    if scope.files.len() > 10 {
        score += 1;
        factors.push(format!("{} files in scope", scope.files.len()));
    }
    if scope.modules().len() > 3 {
        score += 1;
        factors.push(format!("{} modules in scope", scope.modules().len()));
    }
    let level = match score {
        0..=2 => "Low",
        3..=5 => "Medium",
        _ => "High",
    };
    Complexity {
        score,
        level: level.into(),
        factors,
    }
}

/// Levels of the graph (longest path from a root) that hold two or more tasks: each is a window
/// whose tasks run at the same time.
fn parallel_windows<'a>(tasks: impl Iterator<Item = (&'a str, &'a Vec<String>)>) -> u32 {
    let tasks: Vec<(&str, &Vec<String>)> = tasks.collect();
    let mut depth: BTreeMap<&str, u32> = BTreeMap::new();
    // Registry tasks are listed after their dependencies, so one pass suffices.
    for (id, deps) in &tasks {
        let d = deps
            .iter()
            .filter_map(|b| depth.get(b.as_str()))
            .map(|d| d + 1)
            .max()
            .unwrap_or(0);
        depth.insert(id, d);
    }
    let mut per_level: BTreeMap<u32, u32> = BTreeMap::new();
    for d in depth.values() {
        *per_level.entry(*d).or_default() += 1;
    }
    per_level.values().filter(|&&n| n > 1).count() as u32
}

/// Fills the seed's PURPOSE/TASK/CONTEXT/EXPECTED/CONSTRAINTS description of a task.
pub fn describe(
    config: &TeamConfig,
    task: &Task,
    session_dir: &str,
    scope_text: &str,
    role_spec: &str,
) -> String {
    let layer = task.layer.as_deref().unwrap_or("all");
    let target = task
        .coverage_target()
        .map(|t| format!("{t:.0}"))
        .unwrap_or_else(|| "-".into());
    let fill = |s: &str| {
        s.replace("{session}", session_dir)
            .replace("{layer}", layer)
            .replace("{coverage_target}", &target)
    };
    let template = config
        .role(&task.owner)
        .and_then(|r| r.task_template.as_ref());
    let (purpose, steps, expected, constraints) = match template {
        Some(t) => (
            fill(&t.purpose),
            t.steps.iter().map(|s| fill(s)).collect::<Vec<_>>(),
            fill(&t.expected),
            fill(&t.constraints),
        ),
        None => (
            task.subject.clone(),
            vec![task.subject.clone()],
            format!("{session_dir}/"),
            "Stay within the session folder".to_string(),
        ),
    };
    let mut text = format!("PURPOSE: {purpose}\nTASK:\n");
    for step in steps {
        text.push_str(&format!("  - {step}\n"));
    }
    let upstream = if task.blocked_by.is_empty() {
        "none".to_string()
    } else {
        task.blocked_by.join(", ")
    };
    text.push_str(&format!(
        "CONTEXT:\n  - Session: {session_dir}\n  - Scope: {scope_text}\n  - Layer: {layer}\n  - Upstream artifacts: {upstream}\n  - Shared memory: {session_dir}/.msg/meta.json\nEXPECTED: {expected}\nCONSTRAINTS: {constraints}\n---\nInnerLoop: {}\nRoleSpec: {role_spec}\n",
        task.inner_loop
    ));
    text
}

/// The session's tasks for `mode`: registry entries with their inner_loop, coverage targets and
/// descriptions filled in.
pub fn build_tasks(
    config: &TeamConfig,
    mode: &str,
    session_dir: &str,
    scope_text: &str,
    role_spec_of: impl Fn(&str) -> String,
    now: &str,
) -> crate::error::Result<Vec<Task>> {
    let pipeline = config.pipeline(mode)?;
    let mut tasks = Vec::new();
    for spec in &pipeline.tasks {
        let mut task = new_task(spec, config.inner_loop_of(spec), String::new(), now);
        if let Some(layer) = &task.layer {
            task.meta.insert("layer".into(), json!(layer));
            if task.owner == config.gc.critic {
                if let Some(target) = config.coverage_target(layer) {
                    task.meta.insert("coverage_target".into(), json!(target));
                }
            }
        }
        task.description = describe(
            config,
            &task,
            session_dir,
            scope_text,
            &role_spec_of(&task.owner),
        );
        tasks.push(task);
    }
    Ok(tasks)
}

/// The GC round's two tasks: TESTGEN-<L>-fix-<n> and TESTRUN-<L>-fix-<n>.
pub fn gc_fix_tasks(
    config: &TeamConfig,
    finished_run: &Task,
    generator_instance: Option<String>,
    round: u32,
    session_dir: &str,
    now: &str,
) -> (Task, Task) {
    let layer = finished_run.layer.clone().unwrap_or_default();
    let code = layer_code(&layer).to_string();
    let gen_id = format!("TESTGEN-{code}-fix-{round}");
    let run_id = format!("TESTRUN-{code}-fix-{round}");
    let mut meta = serde_json::Map::new();
    meta.insert("layer".into(), json!(layer));
    meta.insert(meta::GC_ROUND.into(), json!(round));
    meta.insert("previous_run".into(), json!(finished_run.id));
    if let Some(base) = finished_run.meta.get(meta::ROUNDS_FROM) {
        meta.insert(meta::ROUNDS_FROM.into(), base.clone());
    }
    let base = |id: &str,
                owner: &str,
                subject: String,
                blocked_by: Vec<String>,
                instance: Option<String>| Task {
        instance,
        layer: Some(layer.clone()),
        inner_loop: true,
        meta: meta.clone(),
        created_at: now.to_string(),
        ..Task::new(id, &subject, owner, blocked_by)
    };
    let mut generate = base(
        &gen_id,
        &config.gc.generator,
        format!("Revise {layer} tests (GC #{round})"),
        vec![finished_run.id.clone()],
        generator_instance,
    );
    generate.description = format!(
        "PURPOSE: Revise tests to fix failures and improve coverage | Success: pass_rate >= {} AND coverage >= target\nTASK:\n  - Read previous test results and failure details\n  - Revise tests to address failures\n  - Improve coverage for uncovered areas\nCONTEXT:\n  - Session: {session_dir}\n  - Layer: {layer}\n  - Previous results: {} ({session_dir}/results/)\nEXPECTED: Revised test files in {session_dir}/tests/{layer}/\nCONSTRAINTS: Only modify test files\n---\nInnerLoop: true\nRoleSpec: roles/{}/role.md\n",
        config.pass_rate_target, finished_run.id, config.gc.generator
    );
    let mut run = base(
        &run_id,
        &config.gc.critic,
        format!("Re-execute {layer} (GC #{round})"),
        vec![gen_id.clone()],
        finished_run.instance.clone(),
    );
    if let Some(target) = finished_run.coverage_target() {
        run.meta.insert("coverage_target".into(), json!(target));
    }
    run.description = format!(
        "PURPOSE: Re-execute tests after revision | Success: pass_rate >= {}\nCONTEXT:\n  - Session: {session_dir}\n  - Layer: {layer}\n  - Input: tests/{layer}\nEXPECTED: {session_dir}/results/ run result of {run_id}\n---\nInnerLoop: true\nRoleSpec: roles/{}/role.md\n",
        config.pass_rate_target, config.gc.critic
    );
    (generate, run)
}

/// task-analysis.json as the seed defines it.
pub fn task_analysis(
    config: &TeamConfig,
    task_text: &str,
    selection: &Selection,
    scope: &ChangeScope,
    tasks: &[Task],
) -> Value {
    let mode = selection.mode.as_str();
    let owners: Vec<&str> = {
        let mut seen = Vec::new();
        for t in tasks {
            if !seen.contains(&t.owner.as_str()) {
                seen.push(t.owner.as_str());
            }
        }
        seen
    };
    let capabilities: Vec<Value> = owners
        .iter()
        .filter_map(|o| config.role(o))
        .map(|r| json!({"name": r.name, "prefix": r.prefix, "keywords": r.message_types}))
        .collect();
    let roles: Vec<Value> = owners
        .iter()
        .filter_map(|o| config.role(o))
        .map(|r| json!({"name": r.name, "prefix": r.prefix, "inner_loop": r.inner_loop}))
        .collect();
    let graph: serde_json::Map<String, Value> = tasks
        .iter()
        .map(|t| {
            (
                t.id.clone(),
                json!({"role": t.owner, "blockedBy": t.blocked_by, "layer": t.layer.as_deref().map(layer_code)}),
            )
        })
        .collect();
    let targets: serde_json::Map<String, Value> = config
        .coverage_targets
        .iter()
        .map(|(l, v)| (layer_code(l).to_string(), json!(v)))
        .collect();
    json!({
        "task_description": task_text,
        "pipeline_mode": mode,
        "selection_reason": selection.reason,
        "capabilities": capabilities,
        "dependency_graph": graph,
        "roles": roles,
        "complexity": complexity(config, mode, scope),
        "coverage_targets": targets,
        "gc_loop_enabled": config.max_gc_rounds > 0,
        "scope": {
            "repo": scope.repo,
            "whole_project": scope.whole_project,
            "whole_project_reason": scope.whole_project_reason,
            "is_git": scope.is_git,
            "base_commit": scope.base_commit,
            "base_ref": scope.base_ref,
            "files": scope.files,
            "modules": scope.modules(),
            "warnings": scope.warnings,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::scope::{ChangeKind, ChangedFile};

    fn scope(paths: &[&str]) -> ChangeScope {
        ChangeScope {
            repo: ".".into(),
            is_git: true,
            base_commit: None,
            base_ref: None,
            whole_project: false,
            whole_project_reason: None,
            files: paths
                .iter()
                .map(|p| ChangedFile {
                    path: p.to_string(),
                    kind: ChangeKind::Modified,
                })
                .collect(),
            warnings: vec![],
        }
    }

    #[test]
    fn scope_table_picks_mode() {
        assert_eq!(
            select_mode("test it", &scope(&["src/a.py"])).mode,
            "targeted"
        );
        assert_eq!(
            select_mode("test it", &scope(&["src/a.py", "lib/b.py"])).mode,
            "standard"
        );
        let many: Vec<String> = (0..12).map(|i| format!("m{i}/f.py")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(select_mode("test it", &scope(&refs)).mode, "comprehensive");
    }

    #[test]
    fn keywords_win() {
        assert_eq!(
            select_mode("full e2e run", &scope(&["a.py"])).mode,
            "comprehensive"
        );
        assert_eq!(
            select_mode("quick check", &scope(&["a/b.py", "c/d.py"])).mode,
            "targeted"
        );
        // 'e2e' inside another word is not a keyword
        assert_eq!(select_mode("xe2ey", &scope(&["a.py"])).mode, "targeted");
    }

    #[test]
    fn complexity_levels() {
        let c = TeamConfig::builtin().unwrap();
        assert_eq!(
            complexity(&c, "targeted", &scope(&["a.py"])).level,
            "Medium"
        );
        assert_eq!(
            complexity(&c, "comprehensive", &scope(&["a.py"])).level,
            "High"
        );
    }
}
